"""MemtendStore as LangGraph's store tests expect of a backend, on every real Chroma backend.

The ground covered follows LangGraph's own store tests (checkpoint's test_store.py, checkpoint-sqlite's
test_store.py and test_ttl.py): CRUD, batch ordering, filters and pagination, namespace listing, TTL, vector
search, async twins. The tests are this project's own. The user is label 0 of each namespace; the store is opened
for cross-user administration so that searches and listings above the user label work too.
"""

from __future__ import annotations

import time
from datetime import datetime

import pytest
from langgraph.store.base import (
    GetOp,
    InvalidNamespaceError,
    Item,
    ListNamespacesOp,
    MatchCondition,
    PutOp,
    SearchItem,
    SearchOp,
)
from lg_fixtures import lg_memory_fixture  # noqa: F401  (the lg_memory fixture)
from memtend.errors import InvalidInputError
from memtend_langgraph import MemtendStore


@pytest.fixture
def store(lg_memory):  # type: ignore[no-untyped-def]
    with MemtendStore(lg_memory, user_label=0, cross_user=True) as opened:
        yield opened


# ---------------------------------------------------------------------------------------------------- CRUD
def test_put_get_update_delete(store: MemtendStore) -> None:
    store.put(("docs", "drafts"), "d1", {"title": "Plan", "words": 3})
    item = store.get(("docs", "drafts"), "d1")
    assert isinstance(item, Item)
    assert (item.namespace, item.key, item.value) == (("docs", "drafts"), "d1", {"title": "Plan", "words": 3})
    assert isinstance(item.created_at, datetime) and item.created_at.tzinfo is not None

    time.sleep(0.01)
    store.put(("docs", "drafts"), "d1", {"title": "Plan v2"})
    updated = store.get(("docs", "drafts"), "d1")
    assert updated is not None and updated.value == {"title": "Plan v2"}
    assert updated.created_at == item.created_at  # creation time survives an update
    assert updated.updated_at > item.updated_at

    assert store.get(("docs", "other"), "d1") is None
    assert store.get(("docs",), "d1") is None  # a parent namespace is another namespace
    store.delete(("docs", "drafts"), "d1")
    assert store.get(("docs", "drafts"), "d1") is None
    store.delete(("docs", "drafts"), "never-there")  # deleting nothing is fine


def test_values_round_trip_exactly(store: MemtendStore) -> None:
    value = {"s": "héllo ✓ 中文", "i": -3, "f": 0.25, "b": False, "n": None, "l": [1, [2, {"x": "y"}]], "d": {}}
    store.put(("types",), "k", value)
    assert store.get(("types",), "k").value == value  # type: ignore[union-attr]
    store.put(("types",), 42, {"int key": True})  # type: ignore[arg-type]
    assert store.get(("types",), "42").value == {"int key": True}  # type: ignore[union-attr]


def test_namespace_rules(store: MemtendStore) -> None:
    for bad in [(), ("a", "b.c"), ("a", ""), ("langgraph", "x")]:
        with pytest.raises(InvalidNamespaceError):
            store.put(bad, "k", {"v": 1})
    # "langgraph" is reserved only as the root of a put; inside a namespace it is an ordinary label
    store.put(("team", "langgraph", "x"), "k", {"v": 1})
    assert store.get(("team", "langgraph", "x"), "k").value == {"v": 1}  # type: ignore[union-attr]
    # ops handed to batch() directly are not validated by LangGraph, and work
    store.batch([PutOp(("langgraph", "direct"), "k", {"v": 2})])
    assert store.get(("langgraph", "direct"), "k").value == {"v": 2}  # type: ignore[union-attr]
    assert store.search(("langgraph", "direct"))[0].value == {"v": 2}


def test_odd_labels_are_literal(store: MemtendStore) -> None:
    labels = ["with space", "new\nline", "per%cent", "under_score", "[bracket]", "*", "ÜNI", "Case", "case"]
    for label in labels:
        store.put(("odd", label), "k", {"label": label})
    for label in labels:
        found = store.search(("odd", label))
        assert [i.value["label"] for i in found] == [label], label
    assert len(store.list_namespaces(prefix=("odd",))) == len(labels)


# ---------------------------------------------------------------------------------------------------- batch
def test_batch_results_in_op_order(store: MemtendStore) -> None:
    store.put(("b", "x"), "k1", {"n": 1})
    store.put(("b", "y"), "k2", {"n": 2})
    results = store.batch(
        [
            GetOp(("b", "x"), "k1"),
            PutOp(("b", "y"), "k3", {"n": 3}),
            SearchOp(("b",), filter={"n": 1}),
            ListNamespacesOp(match_conditions=(MatchCondition("prefix", ("b",)),)),
            GetOp(("b",), "missing"),
            PutOp(("b", "x"), "k1", None),
        ]
    )
    assert len(results) == 6
    assert isinstance(results[0], Item) and results[0].value == {"n": 1}
    assert results[1] is None
    assert [i.key for i in results[2]] == ["k1"] and isinstance(results[2][0], SearchItem)
    assert results[3] == [("b", "x"), ("b", "y")]
    assert results[4] is None and results[5] is None
    assert store.get(("b", "y"), "k3").value == {"n": 3}  # type: ignore[union-attr]
    assert store.get(("b", "x"), "k1") is None


def test_batch_reads_see_the_state_before_its_writes(store: MemtendStore) -> None:
    store.put(("pre",), "k", {"v": "old"})
    got, _, searched, _ = store.batch(
        [
            GetOp(("pre",), "k"),
            PutOp(("pre",), "k", {"v": "new"}),
            SearchOp(("pre",)),
            PutOp(("pre",), "k2", {"v": "added"}),
        ]
    )
    assert got.value == {"v": "old"}
    assert [i.value for i in searched] == [{"v": "old"}]
    assert store.get(("pre",), "k").value == {"v": "new"}  # type: ignore[union-attr]


def test_the_last_put_of_a_key_in_a_batch_wins(store: MemtendStore) -> None:
    store.batch([PutOp(("w",), "k", {"v": 1}), PutOp(("w",), "k", {"v": 2}), PutOp(("w",), "gone", {"v": 0})])
    store.batch([PutOp(("w",), "gone", None), PutOp(("w",), "k", {"v": 3}), PutOp(("w",), "k", None)])
    assert store.get(("w",), "k") is None
    assert store.get(("w",), "gone") is None
    store.batch([PutOp(("w",), "k", None), PutOp(("w",), "k", {"v": 4})])
    assert store.get(("w",), "k").value == {"v": 4}  # type: ignore[union-attr]


def test_a_big_batch_for_one_user_is_one_core_batch(store: MemtendStore, monkeypatch: pytest.MonkeyPatch) -> None:
    import memtend_langgraph.store as store_module
    from memtend.storage.document_rows import DocumentRows

    calls: list[list[int]] = []
    writes: list[int] = []
    real = store_module.batch_across_users
    real_write = DocumentRows.write_users

    def counted(parts):  # type: ignore[no-untyped-def]
        calls.append([len(ops) for _, ops in parts])
        return real(parts)

    def counted_write(self, parts):  # type: ignore[no-untyped-def]
        writes.append(len(parts))
        return real_write(self, parts)

    monkeypatch.setattr(store_module, "batch_across_users", counted)
    monkeypatch.setattr(DocumentRows, "write_users", counted_write)
    ops = [PutOp(("bulk", str(i % 7)), f"k{i}", {"i": i}) for i in range(300)]
    ops += [GetOp(("bulk", "3"), "k3"), SearchOp(("bulk",), limit=5)]
    results = store.batch(ops)
    assert calls == [[302]]  # one core batch of one user's 302 ops
    assert writes == [1]  # applied as one storage write
    assert results[-2] is None and results[-1] == []  # reads see the state before the batch
    assert len(store.search(("bulk",), limit=1000)) == 300


# ---------------------------------------------------------------------------------------------------- search
@pytest.fixture
def catalogue(store: MemtendStore) -> MemtendStore:
    rows = [
        (("shop", "fruit"), "apple", {"name": "apple", "price": 3, "colour": "red", "meta": {"origin": "NZ"}}),
        (("shop", "fruit"), "kiwi", {"name": "kiwi", "price": 5, "colour": "green", "meta": {"origin": "NZ"}}),
        (("shop", "veg"), "leek", {"name": "leek", "price": 2, "colour": "green", "meta": {"origin": "FR"}}),
        (("shop", "veg"), "beet", {"name": "beet", "price": 4, "colour": "red", "tags": ["root", "sweet"]}),
        (("shopping",), "list", {"name": "list", "price": 0}),
    ]
    for namespace, key, value in rows:
        store.put(namespace, key, value)
    return store


def keys(items: list[SearchItem]) -> list[str]:
    return [i.key for i in items]


def test_search_prefix_is_segment_bounded(catalogue: MemtendStore) -> None:
    assert keys(catalogue.search(("shop",))) == ["apple", "kiwi", "leek", "beet"]  # insertion order
    assert keys(catalogue.search(("shop", "veg"))) == ["leek", "beet"]
    assert keys(catalogue.search(("shopping",))) == ["list"]
    assert catalogue.search(("sho",)) == []
    assert catalogue.search(("Shop",)) == []  # case-sensitive
    assert sorted(keys(catalogue.search((), limit=20))) == ["apple", "beet", "kiwi", "leek", "list"]
    assert keys(catalogue.search(["shop", "veg"])) == ["leek", "beet"]  # type: ignore[arg-type]


def test_search_filters(catalogue: MemtendStore) -> None:
    def found(**flt: object) -> list[str]:
        return sorted(keys(catalogue.search(("shop",), filter=flt)))

    assert found(colour="red") == ["apple", "beet"]
    assert found(colour="red", price=3) == ["apple"]
    assert found(price={"$eq": 5}) == ["kiwi"]
    assert found(price={"$ne": 5}) == ["apple", "beet", "leek"]
    assert found(price={"$gt": 3}) == ["beet", "kiwi"]
    assert found(price={"$gte": 3}) == ["apple", "beet", "kiwi"]
    assert found(price={"$lt": 3}) == ["leek"]
    assert found(price={"$lte": 3}) == ["apple", "leek"]
    assert found(price={"$gt": 2, "$lt": 5}) == ["apple", "beet"]
    assert found(meta={"origin": "NZ"}) == ["apple", "kiwi"]  # nested dicts compared whole
    assert found(**{"meta.origin": "FR"}) == ["leek"]  # dotted keys are paths into the value
    assert found(tags=["root", "sweet"]) == ["beet"]
    assert found(missing={"$gt": 1}) == []  # a comparison on a missing field matches nothing
    assert found(colour="blue") == []
    assert found(name="x' OR 1=1 --") == []  # values are data, never code
    with pytest.raises(InvalidInputError):
        catalogue.search(("shop",), filter={"price": {"$regex": ".*"}})


def test_search_pages_with_limit_and_offset(catalogue: MemtendStore) -> None:
    assert keys(catalogue.search(("shop",), limit=2)) == ["apple", "kiwi"]
    assert keys(catalogue.search(("shop",), limit=2, offset=2)) == ["leek", "beet"]
    assert catalogue.search(("shop",), limit=2, offset=4) == []
    assert keys(catalogue.search(("shop",), filter={"colour": "green"}, limit=1, offset=1)) == ["leek"]


# ---------------------------------------------------------------------------------------------------- namespaces
@pytest.fixture
def tree(store: MemtendStore) -> MemtendStore:
    for ns in [
        ("a", "b", "c"),
        ("a", "b", "d", "e"),
        ("a", "b", "d", "i"),
        ("a", "b", "f"),
        ("a", "c", "f"),
        ("b", "a", "f"),
        ("users", "123"),
        ("users", "456", "settings"),
        ("admin", "users", "789"),
    ]:
        store.put(ns, "k", {"at": "/".join(ns)})
    return store


def test_list_namespaces_matching(tree: MemtendStore) -> None:
    ab = [("a", "b", "c"), ("a", "b", "d", "e"), ("a", "b", "d", "i"), ("a", "b", "f")]
    assert tree.list_namespaces(prefix=("a", "b")) == ab
    assert tree.list_namespaces(suffix=("f",)) == [("a", "b", "f"), ("a", "c", "f"), ("b", "a", "f")]
    assert tree.list_namespaces(prefix=("a",), suffix=("f",)) == [("a", "b", "f"), ("a", "c", "f")]
    assert tree.list_namespaces(prefix=("a", "*", "f")) == [("a", "b", "f"), ("a", "c", "f")]
    assert tree.list_namespaces(suffix=("*", "f")) == [("a", "b", "f"), ("a", "c", "f"), ("b", "a", "f")]
    assert tree.list_namespaces(prefix=("users", "*")) == [("users", "123"), ("users", "456", "settings")]
    assert tree.list_namespaces(prefix=("*", "users"), suffix=("*", "settings")) == []
    assert tree.list_namespaces(suffix=("a", "b", "f")) == [("a", "b", "f")]
    assert tree.list_namespaces(suffix=("x", "a", "b", "f")) == []  # a suffix longer than the namespace
    assert tree.list_namespaces(prefix=("nonexistent",)) == []
    assert tree.list_namespaces(prefix=("users", "123")) == [("users", "123")]
    assert len(tree.list_namespaces()) == 9


def test_list_namespaces_depth_and_pages(tree: MemtendStore) -> None:
    assert tree.list_namespaces(prefix=("a", "b"), max_depth=3) == [("a", "b", "c"), ("a", "b", "d"), ("a", "b", "f")]
    assert tree.list_namespaces(max_depth=1) == [("a",), ("admin",), ("b",), ("users",)]
    assert tree.list_namespaces(prefix=("a", "b"), limit=2) == [("a", "b", "c"), ("a", "b", "d", "e")]
    assert tree.list_namespaces(prefix=("a", "b"), offset=2) == [("a", "b", "d", "i"), ("a", "b", "f")]
    assert tree.list_namespaces(limit=3, offset=3) == [("a", "b", "f"), ("a", "c", "f"), ("admin", "users", "789")]
    tree.delete(("users", "123"), "k")
    assert ("users", "123") not in tree.list_namespaces()  # a namespace lives as long as an item in it


def test_list_namespaces_pages_across_many(store: MemtendStore) -> None:
    store.batch([PutOp(("pages", f"sub_{i:02d}"), "k", {"i": i}) for i in range(20)])
    assert store.list_namespaces(prefix=("pages",), limit=5, offset=15) == [
        ("pages", f"sub_{i}") for i in range(15, 20)
    ]
    assert store.list_namespaces(prefix=("pages",), limit=100) == [("pages", f"sub_{i:02d}") for i in range(20)]


# ---------------------------------------------------------------------------------------------------- async
async def test_async_twins(store: MemtendStore) -> None:
    await store.aput(("as", "one"), "k", {"v": 1})
    await store.aput(("as", "two"), "k", {"v": 2})
    assert (await store.aget(("as", "one"), "k")).value == {"v": 1}  # type: ignore[union-attr]
    assert keys(await store.asearch(("as",), filter={"v": {"$gt": 1}})) == ["k"]
    assert await store.alist_namespaces(prefix=("as",)) == [("as", "one"), ("as", "two")]
    assert await store.alist_namespaces(suffix=("two",)) == [("as", "two")]
    results = await store.abatch([GetOp(("as", "two"), "k"), PutOp(("as", "two"), "k", None)])
    assert results[0].value == {"v": 2} and results[1] is None
    await store.adelete(("as", "one"), "k")
    assert await store.aget(("as", "one"), "k") is None
    assert await store.aget(("as", "two"), "k") is None


@pytest.mark.slow
async def test_a_batch_of_thousands_of_mixed_ops(store: MemtendStore) -> None:
    first = [PutOp(("load", f"n{i % 20}"), f"k{i}", {"i": i, "even": i % 2 == 0}) for i in range(3000)]
    await store.abatch(first)
    mixed: list = []
    for i in range(0, 3000, 3):
        mixed.append(GetOp(("load", f"n{i % 20}"), f"k{i}"))
        mixed.append(PutOp(("load", f"n{i % 20}"), f"k{i}", None if i % 2 else {"i": -i}))
    mixed.append(SearchOp(("load",), filter={"even": True}, limit=5000))
    results = await store.abatch(mixed)
    gets = results[0:-1:2]
    assert [g.value["i"] for g in gets] == list(range(0, 3000, 3))  # the state before the batch
    assert len(results[-1]) == 1500
    assert store.get(("load", "n3"), "k3") is None
    assert store.get(("load", "n6"), "k6").value == {"i": -6}  # type: ignore[union-attr]
    assert len(store.search(("load",), limit=5000)) == 3000 - 500
