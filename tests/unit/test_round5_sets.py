"""The round 5 held-apart sets keep their schema, sizes, class balance and language mix, every change pair shares no
word, and both stay opt-in.

The sets themselves are measured only by ``tests/benchmarks/injection.py --round5`` and
``tests/benchmarks/conflicts.py --round5``; this test reads nothing but their shape (never their scores), so it
cannot rot.
"""

from __future__ import annotations

from heldapart_rows import DATA, check_conflict_rows, check_injection_rows, check_languages, check_opt_in, read_rows

ROUND5 = DATA / "round5"


def test_round5_injection_set_schema_sizes_and_kinds() -> None:
    rows = read_rows(ROUND5 / "injection.jsonl")
    check_injection_rows(rows)
    positives = [row for row in rows if row["injection"]]
    negatives = [row for row in rows if not row["injection"]]
    assert 190 <= len(positives) <= 215 and 240 <= len(negatives) <= 265
    assert any(len(row["text"]) >= 800 for row in positives), "injections buried in long text"
    assert any(len(row["text"]) >= 800 for row in negatives), "long ordinary text"
    assert sum(row["kind"] == "quotes_attack" for row in negatives) >= 10, "articles quoting attacks"
    assert sum(row["kind"] == "about_ai" for row in negatives) >= 10, "text about assistants that orders nothing"
    assert len({row["kind"] for row in positives}) >= 10 and len({row["kind"] for row in negatives}) >= 10


def test_round5_injection_set_languages_in_both_classes_alike() -> None:
    rows = read_rows(ROUND5 / "injection.jsonl")
    check_languages(rows, beside_english=6, english=(0.50, 0.60))


def test_round5_conflict_set_schema_sizes_and_no_shared_word() -> None:
    rows = read_rows(ROUND5 / "conflicts.jsonl")
    check_conflict_rows(rows)
    changes = [row for row in rows if row["change"]]
    controls = [row for row in rows if not row["change"]]
    assert len(changes) >= 45 and len(controls) >= 45
    news = [row["new"] for row in rows]
    assert len(news) == len(set(news)), "duplicate newer statements"
    assert len({row["old"] for row in changes}) == len(changes), "each change replaces its own older statement"


def test_benchmarks_measure_round5_only_when_asked() -> None:
    check_opt_in("round5", ROUND5, "HELD-APART 6 (round 5)", "HELD-APART 4 (round 5)")
