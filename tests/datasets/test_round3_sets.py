"""The round 3 held-apart sets keep their schema, sizes and language mix, and every change pair shares no word.

The sets themselves are measured only by ``tests/benchmarks/injection.py --round3`` and
``tests/benchmarks/conflicts.py --round3``; this test reads nothing but their shape, so it cannot rot.
"""

from __future__ import annotations

from collections import Counter

from heldapart_rows import DATA, benchmark_module, check_conflict_rows, check_injection_rows, content_words, read_rows

ROUND3 = DATA / "round3"


def test_injection_set_schema_sizes_and_languages() -> None:
    rows = read_rows(ROUND3 / "injection.jsonl")
    check_injection_rows(rows)
    positives = Counter(row["lang"] for row in rows if row["injection"])
    negatives = Counter(row["lang"] for row in rows if not row["injection"])
    assert sum(positives.values()) >= 100 and sum(negatives.values()) >= 150
    assert positives["en"] >= 40 and all(positives[lang] >= 20 for lang in ("es", "de", "fr"))
    assert all(negatives[lang] >= 20 for lang in ("es", "de", "fr")) and negatives["en"] >= 40
    assert len(set(positives) - {"en", "es", "de", "fr"}) >= 3, "a handful of other languages"
    assert len({row["kind"] for row in rows if row["injection"]}) >= 8


def test_conflict_set_schema_sizes_and_no_shared_word() -> None:
    rows = read_rows(ROUND3 / "conflicts.jsonl")
    check_conflict_rows(rows)
    changes = [row for row in rows if row["change"]]
    controls = [row for row in rows if not row["change"]]
    assert len(changes) >= 40 and len(controls) >= 40


def test_content_words_drops_function_words_and_cues() -> None:
    assert content_words("I moved to Berlin now.") == {"moved", "berlin"}
    assert content_words("My dentist is Dr. Alvarez") == {"dentist", "dr", "alvarez"}


def test_benchmarks_measure_round3_only_when_asked() -> None:
    for script, data in (("injection.py", "injection.jsonl"), ("conflicts.py", "conflicts.jsonl")):
        module = benchmark_module(script, f"round3_{script[:-3]}")
        assert module.SPLITS["round3"] == ROUND3 / data and module.LABELS["round3"].endswith("(round 3)")
        assert "round3" not in module.run.__defaults__[0], "round 3 is opt-in (--round3)"
