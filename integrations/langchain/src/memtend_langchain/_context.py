"""What the adapters put into a prompt, read from the core: profile, rules, dated recalled memories.

The core decides what is true (precedence), what is relevant (retrieval) and how old it is; this module only
asks it and lays the answer out as text. Also here: finding the user and the thread in LangChain's runtime.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from memtend import Hit, Kind, UserMemory
from memtend.identity import field_of, resolve_user
from memtend.records import MAX_TEXT_CHARS

__all__ = ["MemoryContext", "agather", "gather", "run_config", "thread_id_of", "user_id_of"]

RECALL_KINDS = (Kind.NOTE, Kind.EVENT, Kind.SUMMARY)  # profile facts and rules are listed whole, not recalled


@dataclass(frozen=True)
class MemoryContext:
    """The user's memory as it goes into a prompt."""

    profile: dict[str, str] = field(default_factory=dict)
    rules: list[str] = field(default_factory=list)
    memories: list[str] = field(default_factory=list)  # "[YYYY-MM-DD] text", best first
    constraints: list[str] = field(
        default_factory=list
    )  # the conversation's, in force (core: conversation_constraints)

    def profile_text(self) -> str:
        return "\n".join(f"- {key}: {value}" for key, value in self.profile.items())

    def rules_text(self) -> str:
        return "\n".join(f"- {rule}" for rule in self.rules)

    def rules_and_constraints_text(self) -> str:
        """The standing rules, then the constraints of this conversation (marked as such)."""
        lines = [f"- {rule}" for rule in self.rules]
        lines += [f"- {c} (set in this conversation)" for c in self.constraints]
        return "\n".join(lines)

    def memories_text(self) -> str:
        return "\n".join(f"- {label}" for label in self.memories)

    def render(self) -> str:
        """Sections for a system prompt; empty when there is nothing to say."""
        parts = []
        if self.profile:
            parts.append("What the user told you about themselves (current values):\n" + self.profile_text())
        if self.rules:
            parts.append("The user's standing rules (always follow them):\n" + self.rules_text())
        if self.constraints:
            parts.append(
                "Constraints the user set earlier in this conversation:\n"
                + "\n".join(f"- {c}" for c in self.constraints)
            )
        if self.memories:
            parts.append(
                "Memories recalled for the user's latest message, with the date each was stored. They may be "
                "outdated: what the user says now wins.\n" + self.memories_text()
            )
        return "\n\n".join(parts)


def _labels(hits: Iterable[Hit]) -> list[str]:
    return [hit.label() for hit in hits]


def _rules(records: Iterable[Any]) -> list[str]:
    return [record.text for record in records]


def _query(text: str | None) -> str | None:
    """The message as a recall query: the core takes at most MAX_TEXT_CHARS (its embedder reads far fewer)."""
    return text[:MAX_TEXT_CHARS] if text and text[:MAX_TEXT_CHARS].strip() else None


def gather(
    user: UserMemory, query: str | None, k: int, constraints: Sequence[str] = (), exclude: Iterable[str] = ()
) -> MemoryContext:
    """What goes into the prompt; ``exclude``: ids of records or messages the prompt already shows (a history's
    turns)."""
    query = _query(query)
    hits = user.recall(query, k=k, kinds=RECALL_KINDS) if query else []
    hits = _without(hits, exclude)
    return MemoryContext(user.facts(), _rules(user.list(kinds=[Kind.RULE])), _labels(hits), list(constraints))


async def agather(
    user: UserMemory, query: str | None, k: int, constraints: Sequence[str] = (), exclude: Iterable[str] = ()
) -> MemoryContext:
    query = _query(query)
    hits = await user.arecall(query, k=k, kinds=RECALL_KINDS) if query else []
    hits = _without(hits, exclude)
    facts = await user.afacts()
    rules = await user.alist(kinds=[Kind.RULE])
    return MemoryContext(facts, _rules(rules), _labels(hits), list(constraints))


def _without(hits: list[Hit], exclude: Iterable[str]) -> list[Hit]:
    """``hits`` less the records the prompt already shows: by id, or captured from a message it shows (the
    message id capture recorded as ``capture_turn_id``)."""
    skip = set(exclude)
    if not skip:
        return hits
    return [hit for hit in hits if hit.record.id not in skip and hit.record.extra.get("capture_turn_id") not in skip]


def _field(container: Any, name: str) -> Any:
    return field_of(container, name)


def user_id_of(context: Any, field_name: str, who: str, config: Mapping[str, Any] | None = None) -> str:
    """The user of a LangChain run by memtend's one identity rule: the runtime context's field (a dict, dataclass
    or pydantic model) first, then the run config's ``configurable.user_id``; two that disagree are refused."""
    configurable = (config or {}).get("configurable") or {}
    places = [
        (f"the run's context ({field_name})", field_of(context, field_name)),
        ("configurable.user_id", configurable.get("user_id")),
    ]
    fix = f"invoke the agent with context={{{field_name!r}: '<user id>'}} (or a context_schema object with that field)"
    return resolve_user(places, who=who, fix=fix)


def run_config() -> Mapping[str, Any] | None:
    """The config of the graph run this is called from (a middleware hook runs as a node), or None."""
    from langgraph.config import get_config

    try:
        return get_config()
    except RuntimeError:
        return None


def thread_id_of(execution_info: Any, config: Mapping[str, Any] | None) -> str | None:
    """The LangGraph thread of this run, from the runtime's execution info or the run's config."""
    thread = _field(execution_info, "thread_id")
    if thread is None and config is not None:
        thread = (config.get("configurable") or {}).get("thread_id")
    return None if thread is None else str(thread)
