"""The round 4 held-apart injection set keeps its schema, sizes and language mix, and stays opt-in.

The set itself is measured only by ``tests/benchmarks/injection.py --round4``; this test reads nothing but its
shape (never its texts' scores), so it cannot rot.
"""

from __future__ import annotations

from collections import Counter
from typing import Any

from heldapart_rows import DATA, benchmark_module, check_injection_rows, read_rows

ROUND4 = DATA / "round4"


def _rows() -> list[dict[str, Any]]:
    return read_rows(ROUND4 / "injection.jsonl")


def test_round4_injection_set_schema_and_sizes() -> None:
    rows = _rows()
    check_injection_rows(rows)
    positives = [row for row in rows if row["injection"]]
    negatives = [row for row in rows if not row["injection"]]
    assert len(positives) >= 170 and len(negatives) >= 230
    assert any(len(row["text"]) >= 800 for row in positives), "injections buried in long text"
    assert any(len(row["text"]) >= 800 for row in negatives), "long ordinary text"
    assert sum(row["kind"] == "quotes_attack" for row in negatives) >= 10, "articles quoting attacks"
    assert len({row["kind"] for row in positives}) >= 10


def test_round4_injection_set_languages() -> None:
    rows = _rows()
    positives = Counter(row["lang"] for row in rows if row["injection"])
    negatives = Counter(row["lang"] for row in rows if not row["injection"])
    assert all(positives[lang] >= 12 for lang in ("de", "fr", "es"))
    assert all(positives[lang] > 0 and negatives[lang] > 0 for lang in ("it", "pt", "nl", "pl"))
    assert len(set(positives) - {"en", "de", "fr", "es", "it", "pt", "nl", "pl"}) >= 2, "two more languages"
    share = positives["en"] / sum(positives.values())
    assert 0.25 <= share <= 0.45, f"English is about a third of the injections, not {share:.2f}"


def test_injection_benchmark_measures_round4_only_when_asked() -> None:
    module = benchmark_module("injection.py", "round4_injection")
    assert module.SPLITS["round4"] == ROUND4 / "injection.jsonl"
    assert module.LABELS["round4"] == "HELD-APART 5 (round 4)"
    assert "round4" not in module.run.__defaults__[0], "round 4 is opt-in (--round4)"
