"""The per-user facade's review calls, with their async twins (``UserMemory`` inherits them, so its module stays
small): what waits for review (``pending``, ``proposals``) and a person's decisions on it (``accept``, ``revise``,
``approve``, ``reject``, ``restore``), thin calls into :mod:`memtend.writing.review`."""

from __future__ import annotations

import builtins
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any, Protocol

from memtend.aio import run_io
from memtend.consistency import guarded as shared_writes
from memtend.errors import InvalidInputError
from memtend.metrics.observe import instrumented
from memtend.policies import changes
from memtend.policies.changes import Change
from memtend.records import Kind, Record, Source, Status, check_name
from memtend.writing import review

if TYPE_CHECKING:
    from memtend.handle import FacadeHandle

__all__ = ["ReviewCalls", "checked_id"]


class _Gated(Protocol):
    """A record that passed validation and the gate, and the kinds of sensitive value the gate masked (what the
    facade's ``_checked`` returns)."""

    @property
    def record(self) -> Record: ...

    @property
    def redacted(self) -> tuple[str, ...]: ...


@instrumented  # each public call logged and timed (memtend.metrics.observe)
class ReviewCalls:
    """``pending``, ``proposals``, ``accept``, ``revise``, ``approve``, ``reject`` and ``restore`` of one user."""

    memory: FacadeHandle
    user_id: str
    if TYPE_CHECKING:  # the facade's own calls these use (``UserMemory`` defines them)

        def get(self, record_id: str) -> Record: ...

        def list(
            self, *, kinds: Iterable[Kind | str] | None = None, status: Status | str | None = Status.ACTIVE
        ) -> builtins.list[Record]: ...

        def _checked(
            self,
            kind: Kind,
            text: object,
            source: Source | str,
            *,
            redact: bool,
            session: str = "",
            metadata: dict[str, Any] | None = None,
        ) -> _Gated: ...

    def pending(self) -> builtins.list[Record]:
        """Records from untrusted sources waiting for review."""
        return self.list(status=Status.PENDING_REVIEW)

    def proposals(self) -> builtins.list[Record]:
        """What the agent or an extractor proposed to remember (``Memory(write_mode="propose")``), oldest first:
        never recalled or shown until accepted (``accept``) or dropped (``reject``)."""
        return self.list(status=Status.PROPOSED)

    def accept(self, record_id: str, *, text: str | None = None, redact: bool = False) -> Record:
        """Accept a proposal, optionally with ``text`` edited by a person (for a fact: the new value; gated and
        embedded again, stored as the user's words). A fact goes through precedence; returns it as it now stands."""
        return review.accept(self.memory, self.user_id, checked_id(record_id), text, redact=redact)

    def revise(
        self,
        record_id: str,
        text: str,
        *,
        source: Source | str = Source.USER,
        session: str = "",
        redact: bool = False,
        metadata: dict[str, Any] | None = None,
    ) -> Record:
        """Replace an active note, rule or event with a new text (``metadata`` laid over the old one's): it passes the
        gate (a proposal where the agent proposes); once it stands, the old one is archived with a pointer to it."""
        checked = self._checked(Kind.NOTE, text, source, redact=redact, session=session, metadata=metadata)
        return review.revise(self.memory, self.user_id, checked_id(record_id), checked.record, checked.redacted)

    def approve(self, record_id: str, *, source: Source | str = Source.USER) -> Record:
        """Accept a pending record. A pending fact is applied through precedence as vouched for by ``source``."""
        return review.approve(self.memory, self.user_id, checked_id(record_id), Source.parse(source), self.get)

    def reject(self, record_id: str) -> Record:
        """Drop a pending record or a proposal for good; returns it as it was."""

        def plan() -> tuple[Record, Change]:
            record = review.held_record(self.get(record_id), record_id, changes.HELD)
            return record, changes.reject(self.user_id, record)

        with self.memory.lock:
            return shared_writes.guarded(self.memory, self.user_id, [checked_id(record_id)], plan)

    def restore(self, record_id: str) -> Record:
        """Bring an archived record back. A superseded fact value becomes current again (the value it restores
        over is archived in its turn, so the restore can itself be undone)."""
        return review.restore(self.memory, self.user_id, checked_id(record_id), self.get)

    # ------------------------------------------------------------------ async twins (same parameters and results)
    async def apending(self) -> builtins.list[Record]:
        return await run_io(self.pending)

    async def aproposals(self) -> builtins.list[Record]:
        return await run_io(self.proposals)

    async def aaccept(self, record_id: str, *, text: str | None = None, redact: bool = False) -> Record:
        return await run_io(self.accept, record_id, text=text, redact=redact)

    async def arevise(
        self,
        record_id: str,
        text: str,
        *,
        source: Source | str = Source.USER,
        session: str = "",
        redact: bool = False,
        metadata: dict[str, Any] | None = None,
    ) -> Record:
        return await run_io(
            self.revise, record_id, text, source=source, session=session, redact=redact, metadata=metadata
        )

    async def aapprove(self, record_id: str, *, source: Source | str = Source.USER) -> Record:
        return await run_io(self.approve, record_id, source=source)

    async def areject(self, record_id: str) -> Record:
        return await run_io(self.reject, record_id)

    async def arestore(self, record_id: str) -> Record:
        return await run_io(self.restore, record_id)


def checked_id(record_id: object) -> str:
    """A record id as given to a call, checked before anything reads storage with it."""
    if not check_name(record_id, "record_id"):
        raise InvalidInputError("record_id must not be empty")
    return str(record_id)
