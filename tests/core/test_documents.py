"""The document store (memtend.documents) on the three backends: values, ordering, filters, namespaces, TTL,
the write gate, batches, isolation, export and erasure."""

from __future__ import annotations

import asyncio
import time

import pytest
from memtend import (
    DeleteDocument,
    DocumentTooLargeError,
    GetDocument,
    InvalidInputError,
    ListNamespaces,
    Memory,
    PutDocument,
    SearchDocuments,
    SensitiveDataError,
)
from memtend.documents import MAX_FILTER_FIELDS, MAX_VALUE_BYTES

SECRET = "AKIAIOSFODNN7EXAMPLF"  # AWS access key id shape
CARD = "4111 1111 1111 1111"


def keys(docs: list) -> list[str]:  # type: ignore[type-arg]
    return [d.key for d in docs]


# ------------------------------------------------------------------------------------------ values
def test_put_get_json_and_bytes(memory: Memory) -> None:
    docs = memory.user("alice").documents()
    assert docs.get(("a",), "k") is None
    assert docs.put(("a", "b"), "k", {"x": 1, "t": "hello", "nested": {"n": [1, 2.5, None, True]}}) is True
    blob = bytes(range(256)) * 10
    docs.put(("a",), "blob", blob)
    docs.put(("a",), "text", "plain string")
    got = docs.get(("a", "b"), "k")
    assert got is not None and got.value == {"x": 1, "t": "hello", "nested": {"n": [1, 2.5, None, True]}}
    assert got.namespace == ("a", "b") and got.key == "k" and got.expires_at is None and got.score is None
    raw = docs.get(("a",), "blob")
    assert raw is not None and raw.value == blob and isinstance(raw.value, bytes)
    assert docs.get(("a",), "text").value == "plain string"  # type: ignore[union-attr]
    assert docs.get(("a",), "k") is None  # another namespace
    many = docs.get_many(("a",), ["blob", "text", "missing"])
    assert sorted(many) == ["blob", "text"]


def test_update_keeps_created_at(memory: Memory) -> None:
    docs = memory.user("alice").documents()
    docs.put(("a",), "k", 1)
    first = docs.get(("a",), "k")
    time.sleep(0.01)
    docs.put(("a",), "k", 2)
    second = docs.get(("a",), "k")
    assert first is not None and second is not None
    assert second.value == 2 and second.created_at == first.created_at and second.updated_at > first.updated_at


def test_delete_and_delete_prefix_are_segment_bounded(memory: Memory) -> None:
    docs = memory.user("alice").documents()
    for ns in [("a",), ("a", "b"), ("ab",), ("a", "b", "c")]:
        docs.put(ns, "k1", {"ns": list(ns)})
        docs.put(ns, "k2", {"ns": list(ns)})
    assert docs.delete(("ab",), "k1") is True
    assert docs.delete(("ab",), "k1") is False
    assert docs.delete_many(("a",), ["k1", "k2", "nope"]) == 2
    assert docs.delete_prefix(("a", "b")) == 4
    assert keys(docs.search(())) == ["k2"]
    assert docs.search(())[0].namespace == ("ab",)
    assert docs.list_namespaces() == [("ab",)]


def test_invalid_input_is_refused_and_nothing_is_written(memory: Memory) -> None:
    docs = memory.user("alice").documents()
    bad = [
        ((), "k", 1),
        (("",), "k", 1),
        (("a\x00b",), "k", 1),
        ((1,), "k", 1),
        (("a",), "", 1),
        (("a",), 5, 1),
        (("a",), "k", float("nan")),
        (("a",), "k", {1: "x"}),
        (("a",), "k", {"x": object()}),
        (("a",), "k", "\ud800"),
    ]
    for ns, key, value in bad:
        with pytest.raises(InvalidInputError):
            docs.put(ns, key, value)  # type: ignore[arg-type]
    with pytest.raises(InvalidInputError):
        docs.put_many([PutDocument(("a",), "good", 1), PutDocument(("a",), "bad", float("inf"))])
    with pytest.raises(InvalidInputError):
        docs.put(("a",), "k", 1, ttl=-1)
    with pytest.raises(InvalidInputError):
        docs.search(("a",), filter={"x": {"$in": [1]}})
    assert docs.search(()) == [] and docs.list_namespaces() == []


def test_too_large_value_names_the_limit(memory: Memory) -> None:
    docs = memory.user("alice").documents()
    with pytest.raises(DocumentTooLargeError, match=str(MAX_VALUE_BYTES)):
        docs.put(("a",), "big", b"x" * (MAX_VALUE_BYTES + 1))
    with pytest.raises(DocumentTooLargeError):
        docs.put(("a",), "big", "y" * (MAX_VALUE_BYTES + 1))
    assert docs.get(("a",), "big") is None


def test_the_limit_is_the_memorys_and_names_how_to_raise_it(memory: Memory) -> None:
    memory.max_document_bytes = 1_000  # as Memory(max_document_bytes=1_000) opens it
    docs = memory.user("alice").documents()
    docs.put(("a",), "fits", "z" * 998)  # 1,000 bytes as JSON (the quotes)
    with pytest.raises(DocumentTooLargeError, match=r"at most 1000 bytes.*max_document_bytes=") as refused:
        docs.put(("a",), "big", {"text": "z" * 1_000})
    assert "zzz" not in str(refused.value)
    assert docs.get(("a",), "big") is None and docs.get(("a",), "fits") is not None
    with pytest.raises(InvalidInputError, match="max_document_bytes"):
        Memory(client=memory.storage.client, max_document_bytes=0)


@pytest.mark.slow
def test_value_split_across_rows_round_trips(memory: Memory) -> None:
    memory.max_document_bytes = 3 * 2**20
    docs = memory.user("alice").documents()
    big = bytes(range(256)) * (memory.max_document_bytes // 256)  # exactly the limit: 5 pieces of base64 text
    docs.put(("cp",), "big", big)
    got = docs.get(("cp",), "big")
    assert got is not None and got.value == big
    docs.put(("cp",), "big", b"small now")  # the extra rows go
    assert docs.get(("cp",), "big").value == b"small now"  # type: ignore[union-attr]
    assert memory.storage.documents.collection.count() == 2  # the document and its namespace row
    docs.put(("cp",), "big", big)
    assert keys(docs.search(("cp",))) == ["big"] and docs.search(("cp",))[0].value == big
    assert docs.delete(("cp",), "big") and memory.storage.documents.collection.count() == 0


# ------------------------------------------------------------------------------------------ search
def test_search_insertion_order_and_paging(memory: Memory) -> None:
    docs = memory.user("alice").documents()
    for k in ["c", "a", "b", "e", "d"]:
        docs.put(("ns",), k, {"k": k})
    docs.put(("other",), "z", 1)
    assert keys(docs.search(("ns",))) == ["c", "a", "b", "e", "d"]
    docs.put(("ns",), "a", {"k": "a2"})  # an update keeps its place
    docs.delete(("ns",), "c")
    docs.put(("ns",), "c", {"k": "c2"})  # delete and re-put moves to the end
    assert keys(docs.search(("ns",))) == ["a", "b", "e", "d", "c"]
    assert keys(docs.search(("ns",), limit=2, offset=1)) == ["b", "e"]
    assert keys(docs.search(("ns",), offset=10)) == []
    assert keys(docs.search(("ns",), order="key")) == ["a", "b", "c", "d", "e"]
    assert keys(docs.search(("ns",), order="key", descending=True, limit=2)) == ["e", "d"]
    assert keys(docs.search(("ns",), order="updated", descending=True, limit=1)) == ["c"]
    assert keys(docs.search(())) == ["a", "b", "e", "d", "z", "c"]


def test_search_filters(memory: Memory) -> None:
    docs = memory.user("alice").documents()
    docs.put(("f",), "1", {"lvl": 1, "name": "ann", "user": {"tier": "gold", "n": 3}, "flag": True})
    docs.put(("f",), "2", {"lvl": 2.0, "name": "bob", "user": {"tier": "free"}, "tags": ["x"]})
    docs.put(("f",), "3", {"lvl": "3", "name": "cy", "flag": 1})
    docs.put(("f",), "4", ["not", "an", "object"])
    docs.put(("f",), "5", b"bytes")
    long_text = "z" * 2000
    docs.put(("f",), "6", {"body": long_text})

    def found(flt: dict) -> list[str]:  # type: ignore[type-arg]
        return sorted(keys(docs.search(("f",), filter=flt)))

    assert found({"lvl": 2}) == ["2"]  # 2 == 2.0
    assert found({"lvl": {"$gt": 1}}) == ["2"]  # "3" is a string: never compared with a number
    assert found({"lvl": {"$gte": 1, "$lt": 2}}) == ["1"]
    assert found({"name": {"$gt": "b"}}) == ["2", "3"]  # strings compare with strings (checked in Python)
    assert found({"user.tier": "gold"}) == ["1"]
    assert found({"user.n": {"$lte": 3}}) == ["1"]
    assert found({"user": {"tier": "free"}}) == ["2"]  # an object compares whole
    assert found({"tags": ["x"]}) == ["2"]
    assert found({"flag": True}) == ["1"]  # True is not 1
    assert found({"flag": 1}) == ["3"]
    assert found({"name": {"$ne": "ann"}}) == ["2", "3", "4", "5", "6"]  # $ne matches a missing field
    assert found({"missing": {"$gt": 0}}) == []
    assert found({"body": long_text}) == ["6"]
    assert found({"body": {"$ne": long_text}}) == ["1", "2", "3", "4", "5"]
    assert keys(docs.search(("f",), filter={"lvl": {"$gte": 1}}, limit=1, offset=1)) == ["2"]
    wide = {f"field{n}": n for n in range(MAX_FILTER_FIELDS + 5)}  # too many fields to keep: checked in Python
    docs.put(("f",), "7", {**wide, "lvl": 9})
    assert found({"lvl": {"$gt": 1}}) == ["2", "7"] and found({f"field{MAX_FILTER_FIELDS}": MAX_FILTER_FIELDS}) == ["7"]


# ------------------------------------------------------------------------------------------ namespaces
def test_list_namespaces(memory: Memory) -> None:
    docs = memory.user("alice").documents()
    for ns in [("a", "b", "c"), ("a", "b", "d"), ("a", "x"), ("b", "b"), ("c",)]:
        docs.put(ns, "k", 1)
    assert docs.list_namespaces() == [("a", "b", "c"), ("a", "b", "d"), ("a", "x"), ("b", "b"), ("c",)]
    assert docs.list_namespaces(prefix=("a",)) == [("a", "b", "c"), ("a", "b", "d"), ("a", "x")]
    assert docs.list_namespaces(prefix=("a", "*", "d")) == [("a", "b", "d")]
    assert docs.list_namespaces(suffix=("b",)) == [("b", "b")]
    assert docs.list_namespaces(suffix=("*", "c")) == [("a", "b", "c")]
    assert docs.list_namespaces(max_depth=1) == [("a",), ("b",), ("c",)]
    assert docs.list_namespaces(max_depth=2, prefix=("a",)) == [("a", "b"), ("a", "x")]
    assert docs.list_namespaces(limit=2, offset=1) == [("a", "b", "d"), ("a", "x")]
    docs.put(("a", "x"), "k2", 2)
    docs.delete(("a", "x"), "k")
    assert ("a", "x") in docs.list_namespaces()
    docs.delete(("a", "x"), "k2")  # the last document of a namespace takes it out of the listing
    assert ("a", "x") not in docs.list_namespaces()


# ------------------------------------------------------------------------------------------ TTL
def test_ttl_expiry_refresh_touch_and_sweep(memory: Memory) -> None:
    docs = memory.user("alice").documents()
    docs.put(("t",), "gone", 1, ttl=0)
    docs.put(("t",), "stays", 2, ttl=3600)
    docs.put(("t",), "forever", 3)
    assert docs.get(("t",), "gone") is None
    assert keys(docs.search(("t",))) == ["stays", "forever"]
    stays = docs.get(("t",), "stays")
    assert stays is not None and stays.expires_at is not None and stays.expires_at > time.time() + 3500
    refreshed = docs.get(("t",), "stays", refresh_ttl=True)
    assert refreshed is not None and refreshed.expires_at is not None and refreshed.expires_at >= stays.expires_at
    assert docs.touch(("t",), ["forever", "missing"], 60) == 1
    forever = docs.get(("t",), "forever")
    assert forever is not None and forever.expires_at is not None and forever.expires_at < time.time() + 61
    assert forever.value == 3 and keys(docs.search(("t",))) == ["stays", "forever"]
    assert docs.sweep(now=time.time() + 120) == 1  # "forever" expired by then, "stays" not
    assert keys(docs.search(("t",))) == ["stays"]
    docs.put(("t",), "x", 1, ttl=10)
    other = memory.user("bob").documents()
    other.put(("t",), "y", 1, ttl=10)
    assert memory.sweep_documents(now=time.time() + 7200) == 3
    assert docs.search(()) == [] and other.search(()) == []


# ------------------------------------------------------------------------------------------ gate
def test_gate_refuses_secrets_in_text_but_not_bytes(memory: Memory) -> None:
    user = memory.user("alice")
    docs = user.documents()
    with pytest.raises(SensitiveDataError):
        docs.put(("chat",), "m1", {"content": f"my card is {CARD}"})
    with pytest.raises(SensitiveDataError):
        docs.batch([PutDocument(("chat",), "ok", {"content": "fine"}), PutDocument(("chat",), "m2", [SECRET])])
    with pytest.raises(SensitiveDataError):
        docs.put(("chat",), "m3", {f"key {SECRET}": 1})
    assert docs.search(()) == []
    docs.put(("cp",), "blob", f"card {CARD}".encode())  # bytes are opaque: not gated
    assert docs.get(("cp",), "blob").value == f"card {CARD}".encode()  # type: ignore[union-attr]
    masked = user.documents(redact=True)
    masked.put(("chat",), "m1", {"content": f"my card is {CARD}"})
    stored = docs.get(("chat",), "m1")
    assert stored is not None and CARD not in str(stored.value) and "[REDACTED:" in stored.value["content"]
    with pytest.raises(SensitiveDataError):  # a field name gives a value its meaning
        docs.put(("chat",), "m4", {"db": {"password": "Tr0ub4dor&3xyzzy"}})
    with pytest.raises(SensitiveDataError):  # a number is text too
        docs.put(("chat",), "m5", {"n": int(CARD.replace(" ", ""))})
    with pytest.raises(SensitiveDataError):  # a key cannot be masked and still name the document
        masked_store = user.documents(redact=True)
        masked_store.put(("chat",), f"k {SECRET}", 1)
    masked_store.put(("chat",), "m4", {"db": {"password": "Tr0ub4dor&3xyzzy"}, "ok": "kept"})
    m4 = docs.get(("chat",), "m4")
    assert m4 is not None and "Tr0ub4dor" not in str(m4.value) and m4.value["ok"] == "kept"
    user.documents(gate="off").put(("raw",), "k", {"content": f"card {CARD}"})
    assert docs.get(("raw",), "k").value == {"content": f"card {CARD}"}  # type: ignore[union-attr]
    with pytest.raises(InvalidInputError):
        user.documents(gate="strict")  # type: ignore[arg-type]


# ------------------------------------------------------------------------------------------ batch
def test_batch_reads_see_state_before_writes(memory: Memory) -> None:
    docs = memory.user("alice").documents()
    docs.put(("b",), "old", 1)
    out = docs.batch(
        [
            PutDocument(("b",), "new", 2),
            GetDocument(("b",), "new"),
            GetDocument(("b",), "old"),
            DeleteDocument(("b",), "old"),
            SearchDocuments(("b",)),
            ListNamespaces(),
            PutDocument(("b",), "new", 3),  # the last write of a key wins
        ]
    )
    assert out[0] is None and out[1] is None and out[2].value == 1 and out[3] is None
    assert keys(out[4]) == ["old"] and out[5] == [("b",)] and out[6] is None
    assert docs.get(("b",), "old") is None and docs.get(("b",), "new").value == 3  # type: ignore[union-attr]


def test_put_many_atomic_and_if_absent(memory: Memory) -> None:
    docs = memory.user("alice").documents()
    assert docs.put_many([PutDocument(("x",), "a", 1), PutDocument(("y", "z"), "b", 2)]) == [True, True]
    assert docs.put(("x",), "a", 9, if_absent=True) is False
    assert docs.get(("x",), "a").value == 1  # type: ignore[union-attr]
    assert docs.put_many([PutDocument(("x",), "a", 9), PutDocument(("x",), "c", 3)], if_absent=True) == [False, True]
    docs.put(("x",), "e", 1, ttl=0)  # an expired document does not block an insert
    assert docs.put(("x",), "e", 2, if_absent=True) is True


def test_large_batch_is_few_round_trips(memory: Memory) -> None:
    docs = memory.user("alice").documents()
    ops = [PutDocument(("load", str(n % 7)), f"k{n}", {"n": n}) for n in range(1200)]
    docs.batch(ops)
    got = docs.batch([GetDocument(("load", str(n % 7)), f"k{n}") for n in range(0, 1200, 3)])
    assert [d.value["n"] for d in got] == list(range(0, 1200, 3))
    assert len(docs.search(("load",), limit=2000)) == 1200
    assert len(docs.list_namespaces(prefix=("load",))) == 7


# ------------------------------------------------------------------------------------------ isolation
def test_isolation_export_owners_and_erasure(memory: Memory) -> None:
    alice, bob = memory.user("alice"), memory.user("bob")
    alice.documents().put(("threads", "t1"), "cp", b"\x00\x01")
    alice.documents().put(("threads", "t1"), "meta", {"step": 1})
    bob.documents().put(("threads", "t2"), "cp", b"\x02")
    assert bob.documents().get(("threads", "t1"), "cp") is None
    assert keys(bob.documents().search(())) == ["cp"]
    assert bob.documents().list_namespaces() == [("threads", "t2")]
    assert memory.document_owners(("threads",)) == ["alice", "bob"]
    assert memory.document_owners(("threads", "t1")) == ["alice"]
    assert memory.document_owners(("nothing",)) == []
    exported = alice.export()["documents"]
    assert [(d["namespace"], d["key"], d["type"]) for d in exported] == [
        (["threads", "t1"], "cp", "bytes"),
        (["threads", "t1"], "meta", "json"),
    ]
    assert exported[0]["value"] == "AAE=" and exported[1]["value"] == {"step": 1}
    receipt = memory.erase_user("alice")
    assert receipt.counts["documents"] >= 3  # two documents and their namespace row
    assert memory.storage.count_user("alice")["documents"] == 0
    assert alice.documents().search(()) == [] and memory.document_owners(("threads",)) == ["bob"]


# ------------------------------------------------------------------------------------------ async
def test_async_twins_and_sync_calls_inside_a_loop(ephemeral_memory: Memory) -> None:
    docs = ephemeral_memory.user("alice").documents()

    async def run() -> None:
        docs.put(("s",), "sync", 1)  # a sync call inside a running loop works
        assert await docs.aput(("s",), "k", {"v": 1}) is True
        assert (await docs.aget(("s",), "k")).value == {"v": 1}  # type: ignore[union-attr]
        assert keys(await docs.asearch(("s",))) == ["sync", "k"]
        assert await docs.alist_namespaces() == [("s",)]
        assert await docs.abatch([GetDocument(("s",), "sync")]) == [docs.get(("s",), "sync")]
        assert await docs.adelete(("s",), "k") is True
        assert await ephemeral_memory.adocument_owners(("s",)) == ["alice"]

    asyncio.run(run())
    twins = [
        "get",
        "get_many",
        "put",
        "put_many",
        "delete",
        "delete_many",
        "delete_prefix",
        "search",
        "list_namespaces",
        "touch",
        "sweep",
        "batch",
    ]
    for name in twins:
        assert asyncio.iscoroutinefunction(getattr(type(docs), "a" + name)), name


# ------------------------------------------------------------------------------------------ vector search
def test_texts_at_paths() -> None:
    from memtend.documents.values import check_index, texts_at

    value = {"a": {"b": "deep"}, "arr": [{"x": "one"}, {"x": "two"}], "n": 3, "tags": ["t1", "t2"]}
    assert texts_at(value, ["a.b"]) == ["deep"]
    assert texts_at(value, ["arr[*].x"]) == ["one", "two"]
    assert texts_at(value, ["tags[0]", "tags[-1]", "n", "missing", "arr[5].x"]) == ["t1", "t2", "3"]
    assert texts_at("plain", ["$"]) == ["plain"]
    assert texts_at({"k": "v"}, ["$"]) == ['{"k": "v"}']
    assert check_index(True) == ["$"] and check_index(None) == [] and check_index(False) == []
    for bad in (["a[x]"], ["a[0"], [""], "a.b", [1]):
        with pytest.raises(InvalidInputError):
            check_index(bad)


def test_search_by_query_ranks_indexed_fields(memory: Memory) -> None:
    docs = memory.user("alice").documents()
    notes = {
        "pets": "My dog loves running in the park every morning",
        "food": "I cook pasta with tomato sauce on Sundays",
        "work": "The quarterly report is due to finance next week",
        "car": "The car needs new tyres before winter",
    }
    for k, text in notes.items():
        docs.put(("notes",), k, {"text": text, "kind": "note" if k != "car" else "chore"}, index=["text"])
    docs.put(("notes",), "plain", {"text": "a dog and a park", "kind": "note"})  # not indexed
    docs.put(("other",), "dogs", {"text": "Dogs and parks"}, index=["text"])
    memory.user("bob").documents().put(("notes",), "b", {"text": "my dog in the park"}, index=["text"])

    found = docs.search(("notes",), query="puppy playing outside", limit=10)
    assert found[0].key == "pets" and found[0].score is not None
    assert [d.key for d in found if d.score is None] == ["plain"]  # unindexed matches follow
    scored = [d.score for d in found if d.score is not None]
    assert len(found) == 5 and scored == sorted(scored, reverse=True)
    assert keys(docs.search(("notes",), query="money and accounting", limit=1)) == ["work"]
    assert keys(docs.search(("notes",), query="money and accounting", limit=2, offset=1))[0] != "work"
    assert "car" not in keys(docs.search(("notes",), query="vehicle maintenance", filter={"kind": "note"}))
    assert keys(docs.search(("notes",), query="vehicle maintenance", filter={"kind": "chore"})) == ["car"]
    assert keys(docs.search((), query="dogs in parks", limit=2)) == ["pets", "dogs"] or keys(
        docs.search((), query="dogs in parks", limit=2)
    ) == ["dogs", "pets"]
    assert docs.touch(("notes",), ["pets"], 3600) == 1  # a new expiry keeps the document's vectors
    assert docs.search(("notes",), query="puppy playing outside", limit=1)[0].key == "pets"
    docs.put(("notes",), "pets", {"text": "My dog loves running in the park"}, index=False)  # no longer embedded
    assert docs.search(("notes",), query="puppy playing outside", limit=10)[0].key != "pets"
    docs.delete(("notes",), "work")
    assert "work" not in keys(docs.search(("notes",), query="money and accounting", limit=10))
    assert memory.user("bob").documents().search(("notes",), query="dog")[0].key == "b"


# ------------------------------------------------------------------------------------------ reserved space
def test_core_data_is_out_of_reach_of_public_calls(memory: Memory) -> None:
    alice = memory.user("alice")
    alice.session("t1").set("branch", "main")
    alice.ledger("t1").record("deploy", {"env": "prod"}, "ok")
    alice.store("notes").put("k", {"v": 1})
    docs = alice.documents()
    assert docs.search(()) == [] and docs.list_namespaces() == []
    assert docs.get(("session", "t1"), "branch") is None and docs.get(("store", "notes"), "k") is None
    docs.put(("session", "t1"), "branch", "public")  # the same labels in the public space collide with nothing
    assert alice.session("t1").get("branch") == "main" and docs.get(("session", "t1"), "branch").value == "public"  # type: ignore[union-attr]
    assert alice.store("session:t1").items() == []  # a store with that name is not the session's state
    assert docs.delete_prefix(()) == 1 and alice.session("t1").get("branch") == "main"
    assert memory.document_owners(("session",)) == []
    assert {i["kind"] for i in alice.export()["store"]} == {"session", "ledger", "store"}
