"""What ``capture`` reports: every candidate with its reason and what became of it, and what was dropped."""

from __future__ import annotations

from dataclasses import dataclass, field

from memtend.policies.capture import Candidate, Dropped
from memtend.records import Record

__all__ = ["CaptureReport", "Captured"]

_TALLY = {
    "added": "kept",
    "updated": "kept",
    "revised": "kept",
    "proposed": "proposed",
    "held": "proposed",
    "skipped": "dropped",
}


@dataclass(frozen=True)
class Captured:
    """One candidate and its fate: ``action`` is ``added``, ``duplicate`` / ``refreshed`` (an active memory said
    the same: it was refreshed, nothing added), ``updated`` (a keyed fact's new value; the old one archived,
    restorable), ``revised`` (an instruction kept at a session's end that revises one kept before: the old one
    archived, restorable), ``unchanged`` (the fact already had this value), ``kept`` (the fact's current value stays: it
    came from a more trusted source, or was said later), ``held`` (held for review), ``proposed`` (a proposal
    waiting to be accepted: ``Memory(write_mode="propose")``) or ``skipped`` (refused: see
    ``why``)."""

    candidate: Candidate
    action: str
    why: str = ""
    record: Record | None = None


@dataclass(frozen=True)
class CaptureReport:
    """Everything one ``capture`` call did: ``captured`` per candidate, ``dropped`` what was not kept (and why),
    and ``origin``: which extractor decided (``offline``, ``llm``, or ``offline-fallback`` when a model failed)."""

    captured: list[Captured] = field(default_factory=list)
    dropped: list[Dropped] = field(default_factory=list)
    origin: str = "offline"

    @property
    def written(self) -> list[Record]:
        """The records added or changed (refreshed ones included)."""
        return [c.record for c in self.captured if c.record is not None and c.action != "skipped"]

    def tally(self) -> dict[str, int]:
        """The call log's view (never a text): how many candidates were ``kept`` (added, or a fact's new value),
        ``merged`` (an active memory already said it: refreshed, unchanged, or the current value stays),
        ``proposed`` (waiting: a proposal, or held for review) and ``dropped`` (not kept, or refused)."""
        out = {"kept": 0, "merged": 0, "proposed": 0, "dropped": len(self.dropped)}
        for c in self.captured:
            out[_TALLY.get(c.action, "merged")] += 1
        return out

    def actions(self) -> dict[str, int]:
        """How many candidates met each fate."""
        out: dict[str, int] = {}
        for c in self.captured:
            out[c.action] = out.get(c.action, 0) + 1
        return out
