"""Shared checks of the held-apart sets (rounds 3 on): row schema, no duplicate text, no shared word, language
mix, no overlap with earlier data, and that the benchmarks measure them only when asked.

The sets are measured only by ``tests/benchmarks/injection.py`` and ``tests/benchmarks/conflicts.py`` with their
opt-in flags; these helpers read nothing but their shape, never their scores.
"""

from __future__ import annotations

import importlib.util
import json
import re
from collections import Counter, defaultdict
from collections.abc import Sequence
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


def check_injection_set(
    rows: list[dict[str, Any]],
    *,
    long_injections: int,
    long_ordinary: int,
    quotes_attack: int,
    about_ai: int,
) -> None:
    """An injection set's rows (``check_injection_rows``), about 200 injections and 250 ordinary texts, at least the
    given numbers of long texts (>= 800 characters) in each class, of articles quoting attacks and of text about
    assistants that orders nothing, and at least ten kinds in each class."""
    check_injection_rows(rows)
    positives = [row for row in rows if row["injection"]]
    negatives = [row for row in rows if not row["injection"]]
    assert 190 <= len(positives) <= 215 and 240 <= len(negatives) <= 265
    assert sum(len(row["text"]) >= 800 for row in positives) >= long_injections, "injections buried in long text"
    assert sum(len(row["text"]) >= 800 for row in negatives) >= long_ordinary, "long ordinary text"
    assert sum(row["kind"] == "quotes_attack" for row in negatives) >= quotes_attack, "articles quoting attacks"
    assert sum(row["kind"] == "about_ai" for row in negatives) >= about_ai, "text about assistants that orders nothing"
    assert len({row["kind"] for row in positives}) >= 10 and len({row["kind"] for row in negatives}) >= 10


def check_conflict_set(rows: list[dict[str, Any]], *, at_least: int) -> None:
    """A conflict set's rows (``check_conflict_rows``), at least ``at_least`` changes and as many look-alikes, no
    newer statement twice, and each change replacing its own older statement."""
    check_conflict_rows(rows)
    changes = [row for row in rows if row["change"]]
    controls = [row for row in rows if not row["change"]]
    assert len(changes) >= at_least and len(controls) >= at_least
    news = [row["new"] for row in rows]
    assert len(news) == len(set(news)), "duplicate newer statements"
    assert len({row["old"] for row in changes}) == len(changes), "each change replaces its own older statement"


def check_languages(
    rows: list[dict[str, Any]],
    *,
    beside_english: int,
    english: tuple[float, float],
    new: int = 0,
    earlier: Sequence[str] = (),
) -> None:
    """Every language of an injection set has both classes in about the same share (>= 8 texts each), English is
    within ``english`` of each class, at least ``beside_english`` other languages, and at least ``new`` of them in
    none of the ``earlier`` data sets."""
    positives = Counter(row["lang"] for row in rows if row["injection"])
    negatives = Counter(row["lang"] for row in rows if not row["injection"])
    assert set(positives) == set(negatives), "every language has both classes"
    assert len(set(positives) - {"en"}) >= beside_english, f"at least {beside_english} languages beside English"
    if new:
        known = {row.get("lang") for row in earlier_rows(earlier)}
        assert len(set(positives) - known) >= new, f"at least {new} languages no earlier set has"
    n_pos, n_neg = sum(positives.values()), sum(negatives.values())
    low, high = english
    for counts, total in ((positives, n_pos), (negatives, n_neg)):
        share = counts["en"] / total
        assert low <= share <= high, f"English is {low:.2f}-{high:.2f} of each class, not {share:.2f}"
    for lang in positives:
        assert positives[lang] >= 8 and negatives[lang] >= 8, lang
        assert abs(positives[lang] / n_pos - negatives[lang] / n_neg) <= 0.02, f"{lang} is unbalanced"


# Han and kana are written without spaces: each character counts as a word; other scripts split on non-letters.
WORD = re.compile(r"[\u3040-\u30ff\u3400-\u9fff]|[^\W_]+")


def words(text: str) -> list[str]:
    return WORD.findall(text.lower())


def trigrams(text: str) -> set[tuple[str, ...]]:
    w = words(text)
    return {tuple(w[i : i + 3]) for i in range(len(w) - 2)}


def earlier_rows(names: Sequence[str]) -> list[dict[str, Any]]:
    return [row for name in names for row in read_rows(DATA / name)]


def rows_repeating_earlier(
    round_dir: Path, earlier: Sequence[str]
) -> tuple[list[tuple[str, int, str]], list[tuple[str, int, str]]]:
    """The held-apart rows (set, line, field) whose text equals an earlier one once case and punctuation go, and
    those sharing half or more of their word 3-grams with an earlier text (of at least four 3-grams, so stock
    phrases alone do not count). Only the held-apart set's own rows are named."""
    texts = [str(row[key]) for row in earlier_rows(earlier) for key in ("text", "old", "new") if key in row]
    seen = {" ".join(words(text)) for text in texts}
    earlier_grams = [grams for grams in map(trigrams, texts) if len(grams) >= 4]
    holders: defaultdict[tuple[str, ...], list[int]] = defaultdict(list)
    for index, grams in enumerate(earlier_grams):
        for gram in grams:
            holders[gram].append(index)
    repeated, overlapping = [], []
    for name, keys in (("injection", ("text",)), ("conflicts", ("old", "new"))):
        for line, row in enumerate(read_rows(round_dir / f"{name}.jsonl"), start=1):
            for key in keys:
                text = row[key]
                if " ".join(words(text)) in seen:
                    repeated.append((name, line, key))
                    continue
                grams = trigrams(text)
                shared = Counter(index for gram in grams for index in holders.get(gram, ()))
                if grams and any(n / min(len(grams), len(earlier_grams[i])) >= 0.5 for i, n in shared.items()):
                    overlapping.append((name, line, key))
    return repeated, overlapping


def check_opt_in(split: str, round_dir: Path, injection_label: str, conflicts_label: str) -> None:
    """Both benchmarks know the held-apart split by name and label, and measure it only when asked."""
    for script, data, label in (
        ("injection.py", "injection.jsonl", injection_label),
        ("conflicts.py", "conflicts.jsonl", conflicts_label),
    ):
        module = benchmark_module(script, f"{split}_{script[:-3]}")
        assert module.SPLITS[split] == round_dir / data
        assert module.LABELS[split] == label
        assert split not in module.run.__defaults__[0], f"{split} is opt-in (--{split})"
