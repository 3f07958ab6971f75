"""The user's controls, as an agent's tools give them: "what do you remember about me?" (the user's facts, notes and
rules, with ids) and "forget that" (one memory deleted by id, through ``UserMemory.delete``). Every adapter's tool
set answers with these texts, so what the agent sees and may do is the core's in every framework.

A forget asked for in a conversation holding unreviewed untrusted content (see ``SessionState``) is refused: a
planted instruction in a web page must not erase what the user said; the user can still delete it in the
application (``memtend delete``, the inspector)."""

from __future__ import annotations

import builtins
import time
from collections.abc import Iterable
from typing import TYPE_CHECKING, Protocol

from memtend.errors import MemtendError, RecordNotFoundError
from memtend.records import Kind, Record, Status, check_name
from memtend.results import DeleteReport

if TYPE_CHECKING:
    from memtend.working.session import SessionState

__all__ = [
    "FORGET_DESCRIPTION",
    "LISTED_KINDS",
    "MEMORIES_DESCRIPTION",
    "aforget_memory",
    "alist_memories",
    "forget_memory",
    "list_memories",
]

LISTED_KINDS = (Kind.FACT, Kind.RULE, Kind.NOTE)
MAX_LISTED = 100  # the newest shown; a longer list says how many more there are
MEMORIES_DESCRIPTION = (
    "List what is remembered about the user (profile facts, standing rules, notes), each with its id. Use it when "
    "the user asks what you remember about them, or before forgetting something."
)
FORGET_DESCRIPTION = (
    "Forget one memory about the user for good, by its id (as the memories tool lists it). Use it only when the "
    "user asks you to forget something."
)


class _User(Protocol):
    """What these controls need of a ``UserMemory``."""

    user_id: str

    def list(
        self, *, kinds: Iterable[Kind | str] | None = ..., status: Status | str | None = ...
    ) -> builtins.list[Record]: ...

    async def alist(
        self, *, kinds: Iterable[Kind | str] | None = ..., status: Status | str | None = ...
    ) -> builtins.list[Record]: ...

    def delete(self, record_id: str) -> DeleteReport: ...

    async def adelete(self, record_id: str) -> DeleteReport: ...

    def proposals(self) -> builtins.list[Record]: ...

    async def aproposals(self) -> builtins.list[Record]: ...

    def session(self, session_id: str) -> SessionState: ...


def _render(records: list[Record], waiting: int) -> str:
    if not records:
        text = "nothing is remembered about the user"
    else:
        shown = sorted(records, key=lambda r: (LISTED_KINDS.index(r.kind), -r.updated_at, r.id))[:MAX_LISTED]
        lines = [f"- [{r.id}] {r.kind.value}, {_date(r.updated_at)}: {r.text}" for r in shown]
        if len(records) > len(shown):
            lines.append(f"({len(records) - len(shown)} more not shown)")
        text = "\n".join(lines)
    if waiting:
        text += f"\n({waiting} proposed memories wait for the user's review; they are not used until accepted)"
    return text


def _date(t: float) -> str:
    return time.strftime("%Y-%m-%d", time.gmtime(t))


def list_memories(user: _User) -> str:
    """The user's active facts, rules and notes, one a line with id, kind and date (the newest first within a
    kind), and how many proposals wait (never their text: proposals are not shown before acceptance)."""
    return _render(user.list(kinds=LISTED_KINDS), len(user.proposals()))


async def alist_memories(user: _User) -> str:
    return _render(await user.alist(kinds=LISTED_KINDS), len(await user.aproposals()))


_UNTRUSTED = (
    "refused: this conversation holds untrusted content (a tool's output), so memories are not deleted from it; "
    "the user can delete this memory in the application"
)


def _bad_id(record_id: object) -> str | None:
    if not isinstance(record_id, str) or not record_id.strip():
        return "error: give the id of one memory, as the memories tool lists it"
    check_name(record_id, "record_id")
    return None


def _forgotten(report: DeleteReport) -> str:
    return f"forgotten: {report.record.kind.value} {report.record.id}"


def forget_memory(user: _User, record_id: str, *, session: str = "") -> str:
    """Delete one of the user's memories for good (summaries built from it are rebuilt); ``session``: the
    conversation asking, refused while it holds unreviewed untrusted content. Answers in one line."""
    try:
        refusal = _bad_id(record_id) or (_UNTRUSTED if session and user.session(session).untrusted() else None)
        return refusal if refusal is not None else _forgotten(user.delete(record_id))
    except RecordNotFoundError:
        return "error: no memory of this user has that id; list the memories for their ids"
    except MemtendError as exc:
        return f"error: {exc}"


async def aforget_memory(user: _User, record_id: str, *, session: str = "") -> str:
    try:
        refusal = _bad_id(record_id) or (_UNTRUSTED if session and await user.session(session).auntrusted() else None)
        return refusal if refusal is not None else _forgotten(await user.adelete(record_id))
    except RecordNotFoundError:
        return "error: no memory of this user has that id; list the memories for their ids"
    except MemtendError as exc:
        return f"error: {exc}"
