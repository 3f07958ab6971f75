"""Upkeep's settings and its report: what a store's passes do and what one did (no storage here, so building
them loads neither Chroma nor the model; the passes are :mod:`memtend.upkeep.schedule`)."""

from __future__ import annotations

import math
import os
from collections.abc import Callable
from dataclasses import dataclass, field, fields

from memtend.arguments import describe
from memtend.errors import InvalidInputError
from memtend.policies.compaction import LineSummarizer, LogSummarizer
from memtend.records import now as real_clock

__all__ = ["ENVIRONMENT", "OFF_VALUES", "Upkeep", "UpkeepReport", "from_environment"]

ENVIRONMENT = "MEMTEND_UPKEEP"  # set to "off" to open stores with no scheduled upkeep (the test suite does)
OFF_VALUES = ("off", "0", "false", "no", "none")


@dataclass(frozen=True)
class Upkeep:
    """How a store keeps itself bounded (``Memory(upkeep=Upkeep(...))``; ``Memory(upkeep=None)`` turns it off).

    ``every_seconds``: time between scheduled passes (a background thread; None: no timer, passes run on close and
    by hand through ``Memory.upkeep()``). ``on_close``: run a pass when the handle closes. The budget of one pass:
    ``users_per_pass`` users, found in ``rows_per_pass`` rows, and ``documents_per_pass`` expired documents.
    ``compact_over``: a user's log is compacted, keeping the newest ``keep_recent`` events, once it holds more active
    events than this. ``lease_seconds``: how long a process's pass may hold the store before another may take over
    (one killed mid-pass). ``summarizer`` writes log summaries, ``line_summarizer`` folds a memory whose window ended
    into one line (both offline extractive when None; an LLM plugs in). ``clock``: the time passes run at.
    """

    every_seconds: float | None = 3_600.0
    on_close: bool = True
    users_per_pass: int = 50
    rows_per_pass: int = 5_000
    documents_per_pass: int = 5_000
    compact_over: int = 500
    keep_recent: int = 200
    lease_seconds: float = 900.0
    summarizer: LogSummarizer | None = None
    line_summarizer: LineSummarizer | None = None
    clock: Callable[[], float] = field(default=real_clock, compare=False)

    def __post_init__(self) -> None:
        for knob in ("users_per_pass", "rows_per_pass", "documents_per_pass", "compact_over", "keep_recent"):
            value = getattr(self, knob)
            if not isinstance(value, int) or isinstance(value, bool) or value < (0 if knob == "keep_recent" else 1):
                raise InvalidInputError(f"upkeep.{knob} must be an int >= 1, got {describe(value)}")
        if self.keep_recent > self.compact_over:
            raise InvalidInputError("upkeep.keep_recent must not exceed upkeep.compact_over")
        for knob in ("every_seconds", "lease_seconds"):
            value = getattr(self, knob)
            if value is None and knob == "every_seconds":
                continue
            if not isinstance(value, int | float) or isinstance(value, bool) or not math.isfinite(value) or value <= 0:
                raise InvalidInputError(f"upkeep.{knob} must be a finite number of seconds > 0, got {describe(value)}")
        for knob in ("summarizer", "line_summarizer", "clock"):
            value = getattr(self, knob)
            if value is not None and not callable(value):
                raise InvalidInputError(f"upkeep.{knob} must be a callable, got {describe(value)}")


def from_environment(default: Upkeep) -> Upkeep | None:
    """``default``, or None when ``MEMTEND_UPKEEP`` says off (an operator's or a test suite's switch)."""
    return None if os.environ.get(ENVIRONMENT, "").strip().lower() in OFF_VALUES else default


@dataclass(frozen=True)
class UpkeepReport:
    """What one pass did. ``ran`` is False when another process held the store's upkeep lease (nothing done);
    ``round_done``: the pass reached the end of the store (the next starts over); ``errors``: users whose step
    failed (logged; the pass went on)."""

    ran: bool
    at: float
    users: int = 0
    archived: int = 0
    folded: int = 0
    compacted: int = 0
    purged: int = 0
    history_pruned: int = 0
    session_items: int = 0
    documents: int = 0
    errors: int = 0
    round_done: bool = False
    seconds: float = 0.0

    def to_dict(self) -> dict[str, float | int | bool]:
        return {f.name: getattr(self, f.name) for f in fields(self)}
