"""The round 4 held-apart injection set keeps its schema, sizes and language mix, and stays opt-in.

The set itself is measured only by ``tests/benchmarks/injection.py --round4``; this test reads nothing but its
shape (never its texts' scores), so it cannot rot.
"""

from __future__ import annotations

import importlib.util
import json
from collections import Counter
from pathlib import Path
from typing import Any

ROUND4 = Path(__file__).resolve().parents[1] / "benchmarks" / "data" / "round4"


def _rows() -> list[dict[str, Any]]:
    with (ROUND4 / "injection.jsonl").open(encoding="utf-8") as fh:
        return [json.loads(line) for line in fh if line.strip()]


def test_round4_injection_set_schema_and_sizes() -> None:
    rows = _rows()
    for row in rows:
        assert set(row) == {"text", "injection", "lang", "kind"}, row
        assert isinstance(row["text"], str) and row["text"].strip()
        assert isinstance(row["injection"], bool) and row["kind"] and len(row["lang"]) == 2
    texts = [row["text"] for row in rows]
    assert len(texts) == len(set(texts)), "duplicate texts"
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
    spec = importlib.util.spec_from_file_location("round4_injection", ROUND4.parents[1] / "injection.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    assert module.SPLITS["round4"] == ROUND4 / "injection.jsonl"
    assert module.LABELS["round4"] == "HELD-APART 5 (round 4)"
    assert "round4" not in module.run.__defaults__[0], "round 4 is opt-in (--round4)"
