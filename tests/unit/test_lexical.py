"""The word index: tokenising, BM25 scores, and incremental upkeep equal to a fresh build."""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Iterable

import numpy as np
import pytest
from conftest import scaled
from hypothesis import given, settings
from hypothesis import strategies as st
from memtend.index.lexical import STOPWORDS, BM25Index, stem, tokenize
from memtend.policies.retrieval import bm25 as policy_bm25


def reference_bm25(docs: dict[str, str], query: str, k1: float, b: float) -> dict[str, float]:
    """BM25 computed from scratch over ``docs``, the way the index should score them."""
    tokenised = {doc_id: tokenize(text) for doc_id, text in docs.items()}
    n = len(tokenised)
    avgdl = sum(len(t) for t in tokenised.values()) / n
    out: dict[str, float] = {}
    for doc_id, terms in tokenised.items():
        counts = Counter(terms)
        score = 0.0
        for term, qtf in Counter(tokenize(query)).items():
            tf = counts.get(term, 0)
            if not tf:
                continue
            df = sum(1 for t in tokenised.values() if term in t)
            idf = math.log(1 + (n - df + 0.5) / (df + 0.5))
            score += qtf * idf * tf * (k1 + 1) / (tf + k1 * (1 - b + b * len(terms) / avgdl))
        if score > 0:
            out[doc_id] = score
    return out


# -- tokenising -------------------------------------------------------------------------------------


def test_tokenize_lowercases_drops_stopwords_and_stems() -> None:
    assert tokenize("The Dogs were Running to the parks") == ["dog", "run", "park"]


def test_tokenize_handles_possessives_contractions_and_curly_apostrophes() -> None:
    assert tokenize("Caroline's camping trip") == ["carolin", "camp", "trip"]
    assert tokenize("Caroline\u2019s trip; I don't know") == ["carolin", "trip", "know"]


def test_tokenize_keeps_digits_and_unicode_words_drops_single_letters() -> None:
    assert tokenize("A 4 x 2023 café naïve Zürich") == ["4", "2023", "café", "naïv", "zürich"]
    assert tokenize("東京 2023") == ["東京", "2023"]


def test_tokenize_splits_on_underscores_and_punctuation() -> None:
    assert tokenize("contact_method: e-mail!") == ["contact", "method", "mail"]


def test_tokenize_without_stemming() -> None:
    assert tokenize("Running dogs", stemming=False) == ["running", "dogs"]


def test_stopwords_cover_common_function_words() -> None:
    assert {"the", "and", "what", "when", "did", "is"} <= STOPWORDS
    assert tokenize("what is it and when did they") == []


def test_stems_are_cached() -> None:
    stem.cache_clear()
    tokenize("swimming swimming swimming")
    info = stem.cache_info()
    assert info.misses == 1 and info.hits == 2


# -- scores -----------------------------------------------------------------------------------------

DOCS = {
    "a": "Melanie went camping with her kids in the mountains",
    "b": "Caroline painted a sunset over the lake",
    "c": "The kids love camping, camping and more camping at the beach",
    "d": "We talked about books and a pottery class",
}


def score_dict(index: BM25Index, query: str, ids: Iterable[str]) -> dict[str, float]:
    """BM25 by doc id of each of ``ids`` the index holds with a non-zero score (read from ``scores`` by slot)."""
    scores = index.scores(query)
    return {
        doc_id: float(scores[index.slot(doc_id)])
        for doc_id in ids
        if doc_id in index and scores[index.slot(doc_id)] > 0
    }


@pytest.mark.parametrize(("k1", "b"), [(1.2, 0.0), (1.2, 0.1), (1.5, 0.75), (0.8, 1.0)])
def test_scores_match_bm25_from_scratch(k1: float, b: float) -> None:
    index = BM25Index(k1=k1, b=b)
    for doc_id, text in DOCS.items():
        index.add(doc_id, text)
    for query in ("camping with kids", "sunset painting", "pottery books camping", "nothing matches zebra"):
        got = score_dict(index, query, DOCS)
        want = reference_bm25(DOCS, query, k1, b)
        assert got.keys() == want.keys()
        for doc_id, score in want.items():
            assert got[doc_id] == pytest.approx(score, rel=1e-12)


def test_scores_array_is_indexed_by_slot_and_free_slots_score_zero() -> None:
    index = BM25Index()
    slots = {doc_id: index.add(doc_id, text) for doc_id, text in DOCS.items()}
    index.remove("c")
    scores = index.scores("camping")
    assert scores.shape == (index.capacity,)
    assert scores[slots["c"]] == 0.0
    assert scores[slots["a"]] > 0.0
    assert scores[slots["b"]] == 0.0


def test_empty_index_and_empty_query() -> None:
    index = BM25Index()
    assert index.scores("anything").shape == (0,)
    index.add("a", "hello world")
    assert index.scores("").tolist() == [0.0]
    assert index.scores("the and of").tolist() == [0.0]


def test_repeated_query_terms_count() -> None:
    index = BM25Index()
    for doc_id, text in DOCS.items():
        index.add(doc_id, text)
    once = score_dict(index, "lake", DOCS)["b"]
    assert score_dict(index, "lake lake", DOCS)["b"] == pytest.approx(2 * once)


def test_term_frequencies_reproduce_scores() -> None:
    index = BM25Index(k1=1.2, b=0.3)
    for doc_id, text in DOCS.items():
        index.add(doc_id, text)
    index.remove("d")
    terms = tokenize("camping kids camping sunset unknownword")
    weights, tf = index.term_frequencies(terms)
    assert tf.shape == (3, index.capacity)  # camp, kid, sunset: the unknown word is dropped
    lengths = index.lengths
    avg = float(lengths.sum()) / len(index)  # free slots have length 0
    np.testing.assert_allclose(policy_bm25(weights, tf, lengths, avg, 1.2, 0.3), index.scores(terms), rtol=1e-12)


def test_lengths_view_is_read_only() -> None:
    index = BM25Index()
    index.add("a", "one two three")
    with pytest.raises(ValueError):
        index.lengths[0] = 5


def test_invalid_parameters() -> None:
    with pytest.raises(ValueError):
        BM25Index(k1=-1)
    with pytest.raises(ValueError):
        BM25Index(b=1.5)


# -- incremental upkeep -----------------------------------------------------------------------------


def test_add_replaces_text_of_existing_id_and_keeps_its_slot() -> None:
    index = BM25Index()
    slot = index.add("a", "red apples")
    assert index.add("a", "green pears") == slot
    assert len(index) == 1
    assert score_dict(index, "apples", ["a"]) == {}
    assert "a" in score_dict(index, "pears", ["a"])
    assert index.document_frequency("appl") == 0


def test_removed_slots_are_reused_and_postings_emptied() -> None:
    index = BM25Index()
    first = index.add("a", "alpha beta")
    index.add("b", "beta gamma")
    assert index.remove("a") is True
    assert index.remove("a") is False
    assert "a" not in index and len(index) == 1
    assert index.document_frequency("alpha") == 0
    assert index.add("c", "delta") == first
    assert index.capacity == 2


def test_add_and_remove_touch_only_their_own_terms() -> None:
    index = BM25Index()
    for i in range(2000):
        index.add(f"d{i}", f"common filler words number{i}")
    before = index.document_frequency("common")
    index.add("x", "rare unique tokens")
    assert index.document_frequency("common") == before
    assert index.document_frequency("rare") == 1
    index.remove("x")
    assert index.document_frequency("rare") == 0
    assert index.terms("d5") == {"common": 1, "filler": 1, "word": 1, "number5": 1}


WORDS = ["apple", "banana", "cherry", "dance", "camping", "kids", "paint", "lake", "book", "the", "and"]
text_strategy = st.lists(st.sampled_from(WORDS), min_size=0, max_size=8).map(" ".join)
ops_strategy = st.lists(
    st.tuples(st.sampled_from(["add", "remove"]), st.integers(0, 6), text_strategy), min_size=1, max_size=40
)


@settings(max_examples=scaled(150), deadline=None)
@given(ops=ops_strategy, query=text_strategy)
def test_incremental_upkeep_equals_fresh_build(ops: list[tuple[str, int, str]], query: str) -> None:
    index = BM25Index(k1=1.2, b=0.5)
    final: dict[str, str] = {}
    for op, n, text in ops:
        doc_id = f"doc{n}"
        if op == "add":
            index.add(doc_id, text)
            final[doc_id] = text
        else:
            index.remove(doc_id)
            final.pop(doc_id, None)
    fresh = BM25Index(k1=1.2, b=0.5)
    for doc_id, text in final.items():
        fresh.add(doc_id, text)
    every_id = [f"doc{n}" for n in range(7)]  # removed ones too: the index must not score them
    got, want = score_dict(index, query, every_id), score_dict(fresh, query, every_id)
    assert got.keys() == want.keys()
    for doc_id in want:
        assert got[doc_id] == pytest.approx(want[doc_id], rel=1e-12)
    assert len(index) == len(final)
    assert index.capacity <= max(len(set(n for _, n, _ in ops)), 1)
