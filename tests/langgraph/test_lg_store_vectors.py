"""Query search on MemtendStore: the fields IndexConfig names, ranked by memtend's retrieval (the real model)."""

from __future__ import annotations

import pytest
from lg_fixtures import lg_memory_fixture  # noqa: F401  (the lg_memory fixture)
from memtend_langgraph import MemtendStore

INDEX = {"dims": 384, "fields": ["text"]}


@pytest.fixture
def indexed(lg_memory):  # type: ignore[no-untyped-def]
    store = MemtendStore(lg_memory, user_label=0, index=INDEX)  # type: ignore[arg-type]
    rows = {
        "hike": "Loves hiking in the mountains on weekends",
        "sushi": "Favourite food is sushi, especially salmon nigiri",
        "python": "Writes Python at work and prefers type hints",
        "cat": "Has a cat called Miso who sleeps all day",
        "tea": "Drinks green tea every morning instead of coffee",
    }
    for key, text in rows.items():
        store.put(("alice", "memories"), key, {"text": text, "kind": "food" if key in {"sushi", "tea"} else "other"})
    return store


def test_query_ranks_by_meaning(indexed: MemtendStore) -> None:
    found = indexed.search(("alice", "memories"), query="what does she like to eat?")
    assert found[0].key == "sushi"
    assert found[0].score is not None
    scores = [i.score for i in found if i.score is not None]
    assert scores == sorted(scores, reverse=True)
    assert indexed.search(("alice",), query="her pet animal", limit=1)[0].key == "cat"


def test_query_with_filter_and_pages(indexed: MemtendStore) -> None:
    food = indexed.search(("alice", "memories"), query="a hot drink", filter={"kind": "food"})
    assert [i.key for i in food] == ["tea", "sushi"]
    page1 = indexed.search(("alice",), query="programming language", limit=2)
    page2 = indexed.search(("alice",), query="programming language", limit=2, offset=2)
    assert page1[0].key == "python"
    assert len(page1) == 2 and len(page2) == 2
    assert not {i.key for i in page1} & {i.key for i in page2}
    assert len(indexed.search(("alice",), query="programming language", limit=10)) == 5


def test_update_reembeds_and_index_false_skips(indexed: MemtendStore) -> None:
    indexed.put(("alice", "memories"), "cat", {"text": "Owns a vintage red bicycle", "kind": "other"})
    assert indexed.search(("alice",), query="her pet animal", limit=1)[0].key != "cat"
    assert indexed.search(("alice",), query="cycling on an old bike", limit=1)[0].key == "cat"
    indexed.put(("alice", "memories"), "dog", {"text": "Walks a golden retriever dog daily"}, index=False)
    found = indexed.search(("alice",), query="walking the golden retriever dog", limit=10)
    dog = next(i for i in found if i.key == "dog")
    assert dog.score is None and found[0].key != "dog"  # not embedded: after the ranked items


def test_fields_decide_what_is_embedded(lg_memory) -> None:  # type: ignore[no-untyped-def]
    store = MemtendStore(lg_memory, user_label=0, index={"dims": 384, "fields": ["title"]})  # type: ignore[typeddict-item]
    store.put(("bob",), "a", {"title": "Quarterly budget review", "body": "volcano eruption lava"})
    store.put(("bob",), "b", {"title": "Volcano eruption in Iceland", "body": "budget spreadsheet"})
    assert store.search(("bob",), query="volcano lava", limit=1)[0].key == "b"
    store.put(("bob",), "c", {"title": "nothing", "body": "x", "tags": ["sailing boat"]}, index=["tags[0]"])
    assert store.search(("bob",), query="sailing", limit=1)[0].key == "c"


def test_query_without_index_config_returns_matches_unscored(ephemeral_memory) -> None:  # type: ignore[no-untyped-def]
    store = MemtendStore(ephemeral_memory, user_label=0)
    store.put(("carl",), "k", {"text": "anything"})
    found = store.search(("carl",), query="anything")
    assert [(i.key, i.score) for i in found] == [("k", None)]


def test_non_ascii_queries(ephemeral_memory) -> None:  # type: ignore[no-untyped-def]
    store = MemtendStore(ephemeral_memory, user_label=0, index={"dims": 384, "fields": ["text"]})  # type: ignore[typeddict-item]
    texts = {"zh": "这是中文", "ru": "Это русский", "de": "Grüße aus München"}
    for key, text in texts.items():
        store.put(("dana",), key, {"text": text})
    for key, text in texts.items():
        assert store.search(("dana",), query=text, limit=1)[0].key == key


class LetterEmbeddings:
    """A caller's own embedding model (LangChain's Embeddings interface): letter frequencies, normalised."""

    dims = 26

    def _one(self, text: str) -> list[float]:
        counts = [0.0] * self.dims
        for ch in text.lower():
            if "a" <= ch <= "z":
                counts[ord(ch) - ord("a")] += 1.0
        norm = sum(c * c for c in counts) ** 0.5 or 1.0
        return [c / norm for c in counts]

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        return [self._one(t) for t in texts]

    def embed_query(self, text: str) -> list[float]:
        return self._one(text)


def test_a_callers_embedding_model(tmp_path) -> None:  # type: ignore[no-untyped-def]
    import uuid

    import chromadb
    from langchain_core.embeddings import Embeddings
    from memtend import Memory
    from memtend.errors import InvalidInputError
    from memtend_langgraph import embedding_function

    letters = type("Letters", (LetterEmbeddings, Embeddings), {})()
    with Memory(
        client=chromadb.EphemeralClient(),
        embedding_function=embedding_function(letters),
        collection_prefix="emb" + uuid.uuid4().hex[:8],
    ) as memory:
        store = MemtendStore(memory, user_label=0, index={"dims": 26, "embed": letters, "fields": ["text"]})
        rows = {"d1": ("red apple", 4.5), "d2": ("red car", 3.0), "d3": ("green apple", 4.0), "d4": ("blue car", 3.5)}
        for key, (text, score) in rows.items():
            store.put(("eve",), key, {"text": text, "score": score})
        # only letter counts can put "blue car" first for this query: the caller's model ranked it
        found = store.search(("eve",), query="bbbbluuu", filter={"score": {"$gt": 3.2}})
        assert found[0].key == "d4" and len(found) == 3
        assert store.search(("eve",), query="ppppaaallle", limit=1)[0].key in {"d1", "d3"}
        with pytest.raises(InvalidInputError, match="embedding_function"):
            MemtendStore(memory, user_label=0, index={"dims": 26, "embed": LetterEmbeddings()})  # type: ignore[typeddict-item]
