"""The round 5 held-apart sets keep their schema, sizes, class balance and language mix, every change pair shares no
word, and both stay opt-in.

The sets themselves are measured only by ``tests/benchmarks/injection.py --round5`` and
``tests/benchmarks/conflicts.py --round5``; this test reads nothing but their shape (never their scores), so it
cannot rot.
"""

from __future__ import annotations

from heldapart_rows import DATA, check_conflict_set, check_injection_set, check_languages, check_opt_in, read_rows

ROUND5 = DATA / "round5"


def test_round5_injection_set_schema_sizes_and_kinds() -> None:
    rows = read_rows(ROUND5 / "injection.jsonl")
    check_injection_set(rows, long_injections=1, long_ordinary=1, quotes_attack=10, about_ai=10)


def test_round5_injection_set_languages_in_both_classes_alike() -> None:
    rows = read_rows(ROUND5 / "injection.jsonl")
    check_languages(rows, beside_english=6, english=(0.50, 0.60))


def test_round5_conflict_set_schema_sizes_and_no_shared_word() -> None:
    check_conflict_set(read_rows(ROUND5 / "conflicts.jsonl"), at_least=45)


def test_benchmarks_measure_round5_only_when_asked() -> None:
    check_opt_in("round5", ROUND5, "HELD-APART 6 (round 5)", "HELD-APART 4 (round 5)")
