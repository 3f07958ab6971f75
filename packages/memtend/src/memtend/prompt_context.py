"""What an agent is told about its user on every turn, and what of a conversation is kept: one place for adapters.

Framework adapters (a LlamaIndex memory, a LangChain middleware, ...) put the same three things in front of the
model: the user's profile (current facts), the user's rules (pinned), and the memories recalled for the
conversation, each labelled with its date. :func:`user_context` gathers them and :meth:`UserContext.render`
writes the system-prompt text, so every adapter shows the same thing the same way.

:func:`conversation_constraints` is what the user asked of this conversation that still holds: every instruction
of theirs (and of any compaction summary), a revised one in its latest version only, one-off requests left out
(the transcript summary's rules, :mod:`memtend.transcripts.summary.constraints`); an adapter with no transcript
at hand keeps them per session with :meth:`memtend.UserMemory.constraints`.

:func:`conversation_query` is the text recalled against (the latest user turn), and :func:`transcript_events`
decides which messages of a conversation become events in the user's long-term log (user and assistant text;
no tool results, system prompts or compaction summaries), so an adapter capturing history holds no such rule.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from memtend.arguments import check_texts, describe
from memtend.errors import InvalidInputError
from memtend.records import Kind, Source, Status
from memtend.transcripts.messages import Message, ensure_messages

if TYPE_CHECKING:
    from memtend.results import Event, Hit
    from memtend.user_memory import UserMemory

CONTEXT_HEADER = "What you know about this user (kept by memtend; dates are when each was recorded):"
RECALLED_KINDS = (Kind.NOTE, Kind.EVENT, Kind.SUMMARY)
MAX_QUERY_CHARS = 2000


@dataclass(frozen=True)
class UserContext:
    """The user's profile, rules and recalled memories, plus any constraints of the current conversation."""

    profile: dict[str, str] = field(default_factory=dict)
    rules: list[str] = field(default_factory=list)
    recalled: list[Hit] = field(default_factory=list)
    constraints: list[str] = field(default_factory=list)

    @property
    def empty(self) -> bool:
        return not (self.profile or self.rules or self.recalled or self.constraints)

    def render(self) -> str:
        """The system-prompt text: one section per part that has content; empty string when nothing is known."""
        if self.empty:
            return ""
        parts = [CONTEXT_HEADER]
        if self.profile:
            parts.append("Profile:\n" + "\n".join(f"- {key}: {value}" for key, value in self.profile.items()))
        if self.rules:
            parts.append("Rules (always follow):\n" + "\n".join(f"- {rule}" for rule in self.rules))
        if self.constraints:
            parts.append("Constraints from this conversation:\n" + "\n".join(f"- {c}" for c in self.constraints))
        if self.recalled:
            parts.append("Relevant memories:\n" + render_hits(self.recalled))
        return "\n\n".join(parts)


def current_constraints(constraints: Iterable[str]) -> list[str]:
    """The constraints still in force: those a later revision replaced (marked by the summary code) left out."""
    from memtend.transcripts.summary.constraints import is_replaced

    return [c for c in constraints if not is_replaced(c)]


def conversation_constraints(messages: Sequence[Message]) -> list[str]:
    """The user's constraints of a conversation that still hold, in order: their instructions and those carried
    by compaction summaries, each revised one in its latest version only; requests are not constraints."""
    from memtend.transcripts.summary import extract_constraints

    return current_constraints(extract_constraints(ensure_messages(messages)))


def render_hits(hits: Iterable[Hit]) -> str:
    """One ``- [date] text`` line per recalled memory, best first."""
    return "\n".join(f"- {hit.label()}" for hit in hits)


def conversation_query(messages: Sequence[Message], explicit: str | None = None) -> str | None:
    """The text to recall memories against: ``explicit`` when given, else the latest non-empty user turn."""
    messages = ensure_messages(messages)
    if explicit is not None and not isinstance(explicit, str):
        raise InvalidInputError(f"the explicit query must be a str or None, got {describe(explicit)}")
    if explicit is not None and explicit.strip():
        return explicit.strip()[:MAX_QUERY_CHARS]
    for message in reversed(messages):
        if message.role == "user" and message.content.strip() and not _is_summary(message):
            return message.content.strip()[:MAX_QUERY_CHARS]
    return None


def user_context(user: UserMemory, query: str | None, *, k: int = 5, constraints: Sequence[str] = ()) -> UserContext:
    """Gather the user's profile, active rules and the ``k`` memories best matching ``query`` (none without one)."""
    from memtend.user_memory import UserMemory

    if not isinstance(user, UserMemory):
        raise InvalidInputError(f"user must be a UserMemory (memory.user(user_id)), got {describe(user)}")
    constraints = current_constraints(check_texts(constraints, "constraints"))
    rules = [record.text for record in user.list(kinds=[Kind.RULE], status=Status.ACTIVE)]
    recalled = user.recall(query, k=k, kinds=RECALLED_KINDS) if query else []
    return UserContext(profile=user.facts(), rules=rules, recalled=list(recalled), constraints=list(constraints))


async def auser_context(
    user: UserMemory, query: str | None, *, k: int = 5, constraints: Sequence[str] = ()
) -> UserContext:
    """Async twin of :func:`user_context`: runs it in a worker thread."""
    import asyncio

    return await asyncio.to_thread(user_context, user, query, k=k, constraints=constraints)


def transcript_events(messages: Iterable[Message], *, session: str = "") -> list[Event]:
    """The events a conversation leaves in the long-term log: each non-empty user or assistant text turn,
    in order, with its role as metadata (user turns with source ``user``, assistant turns ``agent``).

    Tool output is untrusted content: an assistant turn that comes after a tool result, before the next user
    turn, may repeat it (an instruction planted in a page the tool fetched), so it is logged as external content,
    held for review, never as a trusted memory."""
    from memtend.results import Event

    events = []
    after_tool = False
    for message in ensure_messages(messages):
        if message.role == "user":
            after_tool = False
        elif message.role == "tool":
            after_tool = True
        if message.role not in ("user", "assistant") or not message.content.strip() or _is_summary(message):
            continue
        source = Source.USER if message.role == "user" else Source.EXTERNAL if after_tool else Source.AGENT
        events.append(
            Event(text=message.content.strip(), session=session, metadata={"role": message.role}, source=source)
        )
    return events


def _is_summary(message: Message) -> bool:
    from memtend.transcripts.summary import is_summary_message

    return is_summary_message(message)
