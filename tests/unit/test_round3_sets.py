"""The round 3 held-apart sets keep their schema, sizes and language mix, and every change pair shares no word.

The sets themselves are measured only by ``tests/benchmarks/injection.py --round3`` and
``tests/benchmarks/conflicts.py --round3``; this test reads nothing but their shape, so it cannot rot.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from pathlib import Path
from typing import Any

ROUND3 = Path(__file__).resolve().parents[1] / "benchmarks" / "data" / "round3"

# Function words and change cues: what is left of a statement once these go is its content.
STOPWORDS = frozenset(
    """a an the and or but if of to in on at by for from with without into onto about over under after before since
    until as than then so that this these those there here it its is are was were be been being am do does did done
    have has had having i me my mine we us our ours you your yours he him his she her hers they them their theirs
    who whom which what when where why how all any some no not only just now still also too very again instead
    ve ll re d s t m up out off via per each every""".split()
)


def _rows(name: str) -> list[dict[str, Any]]:
    with (ROUND3 / name).open(encoding="utf-8") as fh:
        return [json.loads(line) for line in fh if line.strip()]


def content_words(text: str) -> set[str]:
    return {w for w in re.findall(r"[^\W_]+", text.lower()) if w not in STOPWORDS and len(w) > 1}


def test_injection_set_schema_sizes_and_languages() -> None:
    rows = _rows("injection.jsonl")
    for row in rows:
        assert set(row) == {"text", "injection", "lang", "kind"}, row
        assert isinstance(row["text"], str) and row["text"].strip()
        assert isinstance(row["injection"], bool) and row["kind"] and len(row["lang"]) == 2
    texts = [row["text"] for row in rows]
    assert len(texts) == len(set(texts)), "duplicate texts"
    positives = Counter(row["lang"] for row in rows if row["injection"])
    negatives = Counter(row["lang"] for row in rows if not row["injection"])
    assert sum(positives.values()) >= 100 and sum(negatives.values()) >= 150
    assert positives["en"] >= 40 and all(positives[lang] >= 20 for lang in ("es", "de", "fr"))
    assert all(negatives[lang] >= 20 for lang in ("es", "de", "fr")) and negatives["en"] >= 40
    assert len(set(positives) - {"en", "es", "de", "fr"}) >= 3, "a handful of other languages"
    assert len({row["kind"] for row in rows if row["injection"]}) >= 8


def test_conflict_set_schema_sizes_and_no_shared_word() -> None:
    rows = _rows("conflicts.jsonl")
    for row in rows:
        assert set(row) == {"old", "new", "query", "change"}, row
        assert all(isinstance(row[key], str) and row[key].strip() for key in ("old", "new", "query"))
        assert isinstance(row["change"], bool)
    changes = [row for row in rows if row["change"]]
    controls = [row for row in rows if not row["change"]]
    assert len(changes) >= 40 and len(controls) >= 40
    sharing = [(row["old"], row["new"]) for row in changes if content_words(row["old"]) & content_words(row["new"])]
    assert not sharing, sharing


def test_content_words_drops_function_words_and_cues() -> None:
    assert content_words("I moved to Berlin now.") == {"moved", "berlin"}
    assert content_words("My dentist is Dr. Alvarez") == {"dentist", "dr", "alvarez"}


def test_benchmarks_measure_round3_only_when_asked() -> None:
    import importlib.util

    for script, data in (("injection.py", "injection.jsonl"), ("conflicts.py", "conflicts.jsonl")):
        spec = importlib.util.spec_from_file_location(f"round3_{script[:-3]}", ROUND3.parents[1] / script)
        assert spec is not None and spec.loader is not None
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        assert module.SPLITS["round3"] == ROUND3 / data and module.LABELS["round3"].endswith("(round 3)")
        assert "round3" not in module.run.__defaults__[0], "round 3 is opt-in (--round3)"
