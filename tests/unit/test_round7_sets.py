"""The round 7 held-apart sets keep their schema, sizes, class balance and language mix, every change pair shares no
word, none of their texts repeats earlier data, and both stay opt-in.

The sets are measured only by ``tests/benchmarks/injection.py --round7`` and ``tests/benchmarks/conflicts.py
--round7``; this test reads nothing but their shape (never their scores), so it cannot rot. The overlap check
compares them with every data set under ``tests/benchmarks/data`` written before them and, when it fails, names
only round 7 rows.
"""

from __future__ import annotations

import re
from collections import Counter, defaultdict

from heldapart_rows import DATA, benchmark_module, check_conflict_rows, check_injection_rows, read_rows

ROUND7 = DATA / "round7"
# The data sets that existed when round 7 was written: it is compared with these (sets written later are not its
# concern, and their authors never read round 7).
EARLIER = (
    "conflicts_fresh.jsonl conflicts_heldout.jsonl conflicts_tune.jsonl conflicts_tune2.jsonl conflicts_tune3.jsonl "
    "injection_fresh.jsonl injection_fresh2.jsonl injection_heldout.jsonl injection_tune.jsonl injection_tune3.jsonl "
    "injection_tune4.jsonl injection_tune5.jsonl injection_tune6.jsonl injection_tune7.jsonl round3/conflicts.jsonl "
    "round3/injection.jsonl round4/injection.jsonl round5/conflicts.jsonl round5/injection.jsonl "
    "round6/conflicts.jsonl round6/injection.jsonl secrets_heldout.jsonl secrets_heldout2.jsonl secrets_tune.jsonl"
).split()
# Han and kana are written without spaces: each character counts as a word; other scripts split on non-letters.
WORD = re.compile(r"[\u3040-\u30ff\u3400-\u9fff]|[^\W_]+")


def words(text: str) -> list[str]:
    return WORD.findall(text.lower())


def trigrams(text: str) -> set[tuple[str, ...]]:
    w = words(text)
    return {tuple(w[i : i + 3]) for i in range(len(w) - 2)}


def earlier_rows() -> list[dict[str, object]]:
    return [row for name in EARLIER for row in read_rows(DATA / name)]


def test_round7_injection_set_schema_sizes_and_kinds() -> None:
    rows = read_rows(ROUND7 / "injection.jsonl")
    check_injection_rows(rows)
    positives = [row for row in rows if row["injection"]]
    negatives = [row for row in rows if not row["injection"]]
    assert 190 <= len(positives) <= 215 and 240 <= len(negatives) <= 265
    assert sum(len(row["text"]) >= 800 for row in positives) >= 10, "injections buried in long text"
    assert sum(len(row["text"]) >= 800 for row in negatives) >= 5, "long ordinary text"
    assert sum(row["kind"] == "quotes_attack" for row in negatives) >= 20, "articles quoting attacks"
    assert sum(row["kind"] == "about_ai" for row in negatives) >= 15, "text about assistants that orders nothing"
    assert len({row["kind"] for row in positives}) >= 10 and len({row["kind"] for row in negatives}) >= 10


def test_round7_injection_set_languages_in_both_classes_alike() -> None:
    rows = read_rows(ROUND7 / "injection.jsonl")
    positives = Counter(row["lang"] for row in rows if row["injection"])
    negatives = Counter(row["lang"] for row in rows if not row["injection"])
    assert set(positives) == set(negatives), "every language has both classes"
    assert len(set(positives) - {"en"}) >= 8, "at least eight languages beside English"
    earlier = {row.get("lang") for row in earlier_rows()}
    assert len(set(positives) - earlier) >= 2, "at least two languages no earlier set has"
    n_pos, n_neg = sum(positives.values()), sum(negatives.values())
    for counts, total in ((positives, n_pos), (negatives, n_neg)):
        share = counts["en"] / total
        assert 0.45 <= share <= 0.55, f"English is about half of each class, not {share:.2f}"
    for lang in positives:
        assert positives[lang] >= 8 and negatives[lang] >= 8, lang
        assert abs(positives[lang] / n_pos - negatives[lang] / n_neg) <= 0.02, f"{lang} is unbalanced"


def test_round7_conflict_set_schema_sizes_and_no_shared_word() -> None:
    rows = read_rows(ROUND7 / "conflicts.jsonl")
    check_conflict_rows(rows)
    changes = [row for row in rows if row["change"]]
    controls = [row for row in rows if not row["change"]]
    assert len(changes) >= 45 and len(controls) >= 45
    news = [row["new"] for row in rows]
    assert len(news) == len(set(news)), "duplicate newer statements"
    assert len({row["old"] for row in changes}) == len(changes), "each change replaces its own older statement"


def test_round7_texts_repeat_no_earlier_data() -> None:
    """No round 7 text equals an earlier one once case and punctuation go, and none shares half or more of its word
    3-grams with an earlier text (of at least four 3-grams, so stock phrases alone do not count)."""
    earlier = [str(row[key]) for row in earlier_rows() for key in ("text", "old", "new") if key in row]
    seen = {" ".join(words(text)) for text in earlier}
    earlier_grams = [grams for grams in map(trigrams, earlier) if len(grams) >= 4]
    holders: defaultdict[tuple[str, ...], list[int]] = defaultdict(list)
    for index, grams in enumerate(earlier_grams):
        for gram in grams:
            holders[gram].append(index)
    repeated, overlapping = [], []
    for name, keys in (("injection", ("text",)), ("conflicts", ("old", "new"))):
        for line, row in enumerate(read_rows(ROUND7 / f"{name}.jsonl"), start=1):
            for key in keys:
                text = row[key]
                if " ".join(words(text)) in seen:
                    repeated.append((name, line, key))
                    continue
                grams = trigrams(text)
                shared = Counter(index for gram in grams for index in holders.get(gram, ()))
                if grams and any(n / min(len(grams), len(earlier_grams[i])) >= 0.5 for i, n in shared.items()):
                    overlapping.append((name, line, key))
    assert not repeated, f"round 7 rows equal to earlier data: {repeated}"
    assert not overlapping, f"round 7 rows overlapping earlier data: {overlapping}"


def test_benchmarks_measure_round7_only_when_asked() -> None:
    for script, data, label in (
        ("injection.py", "injection.jsonl", "HELD-APART 8 (round 7)"),
        ("conflicts.py", "conflicts.jsonl", "HELD-APART 6 (round 7)"),
    ):
        module = benchmark_module(script, f"round7_{script[:-3]}")
        assert module.SPLITS["round7"] == ROUND7 / data
        assert module.LABELS["round7"] == label
        assert "round7" not in module.run.__defaults__[0], "round 7 is opt-in (--round7)"
