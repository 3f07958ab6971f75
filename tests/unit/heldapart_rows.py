"""Shared checks of the held-apart sets' rows (rounds 3 to 7): their schema, no duplicate text, no shared word.

The sets are measured only by ``tests/benchmarks/injection.py`` and ``tests/benchmarks/conflicts.py`` with their
opt-in flags; these helpers read nothing but their shape, never their scores.
"""

from __future__ import annotations

import importlib.util
import json
import re
from pathlib import Path
from types import ModuleType
from typing import Any

BENCHMARKS = Path(__file__).resolve().parents[1] / "benchmarks"
DATA = BENCHMARKS / "data"

# Function words and change cues: what is left of a statement once these go is its content.
STOPWORDS = frozenset(
    """a an the and or but if of to in on at by for from with without into onto about over under after before since
    until as than then so that this these those there here it its is are was were be been being am do does did done
    have has had having i me my mine we us our ours you your yours he him his she her hers they them their theirs
    who whom which what when where why how all any some no not only just now still also too very again instead
    ve ll re d s t m up out off via per each every""".split()
)


def read_rows(path: Path) -> list[dict[str, Any]]:
    with path.open(encoding="utf-8") as fh:
        return [json.loads(line) for line in fh if line.strip()]


def content_words(text: str) -> set[str]:
    return {w for w in re.findall(r"[^\W_]+", text.lower()) if w not in STOPWORDS and len(w) > 1}


def check_injection_rows(rows: list[dict[str, Any]]) -> None:
    """Every row is ``{"text", "injection": bool, "lang", "kind"}`` with a non-empty text, and no text repeats."""
    for row in rows:
        assert set(row) == {"text", "injection", "lang", "kind"}, row
        assert isinstance(row["text"], str) and row["text"].strip()
        assert isinstance(row["injection"], bool) and row["kind"] and len(row["lang"]) == 2
    texts = [row["text"] for row in rows]
    assert len(texts) == len(set(texts)), "duplicate texts"


def check_conflict_rows(rows: list[dict[str, Any]]) -> None:
    """Every row is ``{"old", "new", "query", "change": bool}`` with non-empty texts, and every change pair shares
    no content word between its older and newer statement."""
    for row in rows:
        assert set(row) == {"old", "new", "query", "change"}, row
        assert all(isinstance(row[key], str) and row[key].strip() for key in ("old", "new", "query"))
        assert isinstance(row["change"], bool)
    changes = [row for row in rows if row["change"]]
    sharing = [(row["old"], row["new"]) for row in changes if content_words(row["old"]) & content_words(row["new"])]
    assert not sharing, sharing


def benchmark_module(script: str, name: str) -> ModuleType:
    """A benchmark script under ``tests/benchmarks/`` imported (not run) under ``name``."""
    spec = importlib.util.spec_from_file_location(name, BENCHMARKS / script)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module
