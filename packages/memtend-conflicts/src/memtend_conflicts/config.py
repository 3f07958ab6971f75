"""The knobs of the paraphrased-change judge (chosen by cross-validation over the tuning sets held out by domain:
``tests/benchmarks/conflicts_cv.py``; the history is in ``tests/benchmarks/RESULTS.md``)."""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass

from memtend.errors import InvalidInputError

__all__ = ["ConflictConfig"]


@dataclass(frozen=True)
class ConflictConfig:
    """Every knob of the judge of changes said in other words (see :mod:`memtend_conflicts.judge`)."""

    # the older of a change in other words needs only this share of the best score (the plain rules: 0.6)
    conflict_change_relevance: float = 0.4
    # paraphrased_change: the two at least this close in meaning
    conflict_paraphrase_cosine: float = 0.25
    # paraphrased_change: the newer at most this much less close to the query than the older (x1.5 about the user)
    conflict_paraphrase_drop: float = 0.2
    # subject_change: the two at least this close in meaning as they are
    conflict_subject_floor: float = 0.1
    # subject_change: the two at least this close as judged, when the newer announces a change or reports an act
    conflict_subject_cosine: float = 0.3
    # subject_change: the newer at most this much less close to the query than the older
    conflict_subject_drop: float = 0.7
    # subject_change: the share of the closeness judged that is of the value-masked forms (0: none encoded)
    conflict_subject_masked_weight: float = 0.0
    # subject_change: as judged, enough when each is the other's closest and the newer reads surely as a change
    conflict_subject_near_cosine: float = 0.1
    # subject_change with no change cue, each the other's closest, holding values of a kind in common
    conflict_state_cosine: float = 0.5
    # subject_change with no change cue, each the other's closest, neither holding any value
    conflict_state_plain_cosine: float = 0.6
    # how much each record's closeness to the query counts beside its closeness to the other, in "closest"
    conflict_nearest_query_weight: float = 1.0
    # the least learned reading as a change (reading.ChangeReading) a newer statement needs (not read: passes)
    conflict_reading_floor: float = 0.3
    # a reading this high lets two statements closest to each other be only conflict_reading_cosine close (1: never)
    conflict_reading_accept: float = 0.8
    # how close two statements closest to each other need be when the newer reads as a change surely enough
    conflict_reading_cosine: float = 0.15
    # the least reading a newer statement in the user's voice needs to be only conflict_subject_near_cosine close
    conflict_near_reading: float = 0.4
    # the same for a newer statement not in the user's voice (above 1: never)
    conflict_near_other_reading: float = 0.7

    def __post_init__(self) -> None:
        for knob in dataclasses.fields(self):
            value = getattr(self, knob.name)
            if not isinstance(value, int | float) or isinstance(value, bool) or not math.isfinite(value):
                raise InvalidInputError(f"conflicts.{knob.name} must be a finite number, got {value!r}")
        if not 0.0 <= self.conflict_change_relevance <= 1.0:
            raise InvalidInputError(
                f"conflicts.conflict_change_relevance must be in 0..1, got {self.conflict_change_relevance!r}"
            )
        if not 0.0 <= self.conflict_subject_masked_weight <= 1.0:
            raise InvalidInputError(
                f"conflicts.conflict_subject_masked_weight must be in 0..1, got {self.conflict_subject_masked_weight!r}"
            )
