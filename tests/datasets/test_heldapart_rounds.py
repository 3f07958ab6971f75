"""The held-apart sets of rounds 6 to 12 keep their schema, sizes, class balance and language mix, every change
pair shares no word, none of their texts repeats data written before them, and both stay opt-in.

The sets are measured only by ``tests/benchmarks/injection.py --roundN`` and ``tests/benchmarks/conflicts.py
--roundN``; this test reads nothing but their shape (never their scores), so it cannot rot. The overlap check
compares each round with the data sets that existed when it was written (sets written later are not its concern,
and their authors never read it) and, when it fails, names only that round's rows.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import pytest
from heldapart_rows import (
    DATA,
    check_conflict_set,
    check_injection_set,
    check_languages,
    check_opt_in,
    read_rows,
    rows_repeating_earlier,
)

_BEFORE_ROUND6 = (
    "conflicts_fresh.jsonl conflicts_heldout.jsonl conflicts_tune.jsonl conflicts_tune2.jsonl conflicts_tune3.jsonl "
    "injection_fresh.jsonl injection_fresh2.jsonl injection_heldout.jsonl injection_tune.jsonl injection_tune3.jsonl "
    "injection_tune4.jsonl injection_tune5.jsonl injection_tune6.jsonl round3/conflicts.jsonl round3/injection.jsonl "
    "round4/injection.jsonl round5/conflicts.jsonl round5/injection.jsonl secrets_heldout.jsonl "
    "secrets_heldout2.jsonl secrets_tune.jsonl"
).split()

_BEFORE_ROUND9 = (
    *_BEFORE_ROUND6,
    "conflicts_tune4.jsonl",
    "injection_tune7.jsonl",
    "injection_tune8.jsonl",
    "round6/conflicts.jsonl",
    "round6/injection.jsonl",
    "round7/conflicts.jsonl",
    "round7/injection.jsonl",
    "round8/conflicts.jsonl",
    "round8/injection.jsonl",
)

_BEFORE_ROUND11 = (
    *_BEFORE_ROUND9,
    "conflicts_tune5.jsonl",
    "injection_tune9.jsonl",
    "round9/conflicts.jsonl",
    "round9/injection.jsonl",
    "round10/conflicts.jsonl",
    "round10/injection.jsonl",
)

_BEFORE_ROUND12 = (
    *_BEFORE_ROUND11,
    "conflicts_tune6.jsonl",
    "injection_tune10.jsonl",
    "round11/conflicts.jsonl",
    "round11/injection.jsonl",
)


@dataclass(frozen=True)
class Round:
    split: str
    earlier: tuple[str, ...]  # the data sets that existed when the round was written
    new_languages: int  # languages no earlier set has
    conflicts_at_least: int  # changes, and as many look-alikes
    labels: tuple[str, str]  # in injection.py, in conflicts.py

    @property
    def folder(self) -> Path:
        return DATA / self.split


ROUNDS = (
    Round("round6", tuple(_BEFORE_ROUND6), 3, 50, ("HELD-APART 7 (round 6)", "HELD-APART 5 (round 6)")),
    Round(
        "round7",
        (*_BEFORE_ROUND6, "injection_tune7.jsonl", "round6/conflicts.jsonl", "round6/injection.jsonl"),
        2,
        45,
        ("HELD-APART 8 (round 7)", "HELD-APART 6 (round 7)"),
    ),
    Round(
        "round8",
        (
            *_BEFORE_ROUND6,
            "injection_tune7.jsonl",
            "round6/conflicts.jsonl",
            "round6/injection.jsonl",
            "round7/conflicts.jsonl",
            "round7/injection.jsonl",
        ),
        4,
        50,
        ("HELD-APART 9 (round 8)", "HELD-APART 7 (round 8)"),
    ),
    Round(
        "round9",
        _BEFORE_ROUND9,
        2,
        50,
        ("HELD-APART 10 (round 9)", "HELD-APART 8 (round 9)"),
    ),
    Round(
        "round10",
        (*_BEFORE_ROUND9, "round9/conflicts.jsonl", "round9/injection.jsonl"),
        2,
        50,
        ("HELD-APART 11 (round 10)", "HELD-APART 9 (round 10)"),
    ),
    Round(
        "round11",
        _BEFORE_ROUND11,
        2,
        50,
        ("HELD-APART 12 (round 11)", "HELD-APART 10 (round 11)"),
    ),
    Round(
        "round12",
        _BEFORE_ROUND12,
        2,
        50,
        ("HELD-APART 13 (round 12)", "HELD-APART 11 (round 12)"),
    ),
)
each_round = pytest.mark.parametrize("r", ROUNDS, ids=[r.split for r in ROUNDS])


@each_round
def test_injection_set_schema_sizes_and_kinds(r: Round) -> None:
    rows = read_rows(r.folder / "injection.jsonl")
    check_injection_set(rows, long_injections=10, long_ordinary=5, quotes_attack=20, about_ai=15)


@each_round
def test_injection_set_languages_in_both_classes_alike(r: Round) -> None:
    rows = read_rows(r.folder / "injection.jsonl")
    check_languages(rows, beside_english=8, english=(0.45, 0.55), new=r.new_languages, earlier=r.earlier)


@each_round
def test_conflict_set_schema_sizes_and_no_shared_word(r: Round) -> None:
    check_conflict_set(read_rows(r.folder / "conflicts.jsonl"), at_least=r.conflicts_at_least)


@each_round
def test_texts_repeat_no_earlier_data(r: Round) -> None:
    """No text of the round equals an earlier one once case and punctuation go, and none shares half or more of its
    word 3-grams with an earlier text (of at least four 3-grams, so stock phrases alone do not count)."""
    repeated, overlapping = rows_repeating_earlier(r.folder, r.earlier)
    assert not repeated, f"{r.split} rows equal to earlier data: {repeated}"
    assert not overlapping, f"{r.split} rows overlapping earlier data: {overlapping}"


@each_round
def test_benchmarks_measure_the_round_only_when_asked(r: Round) -> None:
    check_opt_in(r.split, r.folder, *r.labels)
