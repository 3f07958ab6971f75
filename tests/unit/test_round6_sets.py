"""The round 6 held-apart sets keep their schema, sizes, class balance and language mix, every change pair shares no
word, none of their texts repeats earlier data, and both stay opt-in.

The sets are measured only by ``tests/benchmarks/injection.py --round6`` and ``tests/benchmarks/conflicts.py
--round6``; this test reads nothing but their shape (never their scores), so it cannot rot. The overlap check
compares them with every data set under ``tests/benchmarks/data`` written before them and, when it fails, names
only round 6 rows.
"""

from __future__ import annotations

from heldapart_rows import (
    DATA,
    check_conflict_set,
    check_injection_set,
    check_languages,
    check_opt_in,
    read_rows,
    rows_repeating_earlier,
)

ROUND6 = DATA / "round6"
# The data sets that existed when round 6 was written: it is compared with these (sets written later are not its
# concern, and their authors never read round 6).
EARLIER = (
    "conflicts_fresh.jsonl conflicts_heldout.jsonl conflicts_tune.jsonl conflicts_tune2.jsonl conflicts_tune3.jsonl "
    "injection_fresh.jsonl injection_fresh2.jsonl injection_heldout.jsonl injection_tune.jsonl injection_tune3.jsonl "
    "injection_tune4.jsonl injection_tune5.jsonl injection_tune6.jsonl round3/conflicts.jsonl round3/injection.jsonl "
    "round4/injection.jsonl round5/conflicts.jsonl round5/injection.jsonl secrets_heldout.jsonl "
    "secrets_heldout2.jsonl secrets_tune.jsonl"
).split()


def test_round6_injection_set_schema_sizes_and_kinds() -> None:
    rows = read_rows(ROUND6 / "injection.jsonl")
    check_injection_set(rows, long_injections=10, long_ordinary=5, quotes_attack=20, about_ai=15)


def test_round6_injection_set_languages_in_both_classes_alike() -> None:
    rows = read_rows(ROUND6 / "injection.jsonl")
    check_languages(rows, beside_english=8, english=(0.45, 0.55), new=3, earlier=EARLIER)


def test_round6_conflict_set_schema_sizes_and_no_shared_word() -> None:
    check_conflict_set(read_rows(ROUND6 / "conflicts.jsonl"), at_least=50)


def test_round6_texts_repeat_no_earlier_data() -> None:
    """No round 6 text equals an earlier one once case and punctuation go, and none shares half or more of its word
    3-grams with an earlier text (of at least four 3-grams, so stock phrases alone do not count)."""
    repeated, overlapping = rows_repeating_earlier(ROUND6, EARLIER)
    assert not repeated, f"round 6 rows equal to earlier data: {repeated}"
    assert not overlapping, f"round 6 rows overlapping earlier data: {overlapping}"


def test_benchmarks_measure_round6_only_when_asked() -> None:
    check_opt_in("round6", ROUND6, "HELD-APART 7 (round 6)", "HELD-APART 5 (round 6)")
