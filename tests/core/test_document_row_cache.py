"""The document rows an embedded store keeps by id (``DocumentRows.rows``): a get of a document this process has read
does not reach Chroma again, and every change this process makes (a put, an overwrite that clears fields, a
delete, an expiry update, an erasure, a replayed journal) is what the next get sees, exactly as Chroma holds it."""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from memtend import Memory
from memtend.storage.chroma import NO_VECTOR
from memtend.storage.document_rows import DOC_JOURNAL, DOC_JOURNAL_PREFIX, doc_id
from memtend.storage.row_cache import MAX_CACHED_CHARS


@pytest.fixture
def folder_memory(tmp_path: Path, embedding_function: Any) -> Iterator[Memory]:
    mem = Memory(path=tmp_path / "store", embedding_function=embedding_function)
    yield mem
    mem.close()


def _gets(memory: Memory) -> list[Any]:
    """Every ``get`` call the documents collection receives from now on (each still reaches Chroma)."""
    collection = memory.storage.documents.collection
    real = collection.get
    calls: list[Any] = []

    def get(*args: Any, **kwargs: Any) -> Any:
        calls.append(kwargs.get("ids"))
        return real(*args, **kwargs)

    collection.get = get  # type: ignore[method-assign]
    return calls


def _as_chroma_holds(memory: Memory, user: str, namespace: tuple[str, ...], key: str) -> Any:
    """The row read from Chroma itself, past the cache."""
    rows = memory.storage.documents
    rows.rows.enabled = False
    try:
        return rows.read(user, [doc_id(user, "", namespace, key)]).get(doc_id(user, "", namespace, key))
    finally:
        rows.rows.enabled = True


def _cached(memory: Memory, user: str, namespace: tuple[str, ...], key: str) -> Any:
    i = doc_id(user, "", namespace, key)
    return memory.storage.documents.rows.lookup(user, [i], text=True)[0].get(i)


def test_a_second_get_reads_no_chroma_and_matches_what_chroma_holds(folder_memory: Memory) -> None:
    docs = folder_memory.user("alice").documents()
    docs.put(("notes",), "a", {"text": "first", "lvl": 1, "tags": ["x"]}, ttl=3600)
    assert docs.get(("notes",), "a") is not None
    docs.put(("notes",), "a", {"text": "second"})  # an overwrite that clears lvl, tags and the expiry
    calls = _gets(folder_memory)
    first = docs.get(("notes",), "a")
    assert first is not None and first.value == {"text": "second"}
    assert len(calls) == 1  # the write dropped the row it changed: read again from Chroma
    second = docs.get(("notes",), "a")
    assert second == first and len(calls) == 1  # then served from the row that read kept
    cached = _cached(folder_memory, "alice", ("notes",), "a")
    assert cached is not None and cached == _as_chroma_holds(folder_memory, "alice", ("notes",), "a")


def test_a_deleted_document_is_gone_at_once(folder_memory: Memory) -> None:
    docs = folder_memory.user("alice").documents()
    docs.put(("notes",), "a", 1)
    assert docs.get(("notes",), "a") is not None
    assert docs.delete(("notes",), "a")
    assert docs.get(("notes",), "a") is None
    calls = _gets(folder_memory)
    assert docs.get(("notes",), "a") is None and calls == []  # the absence is known too


def test_an_expiry_set_later_is_what_the_next_get_sees(folder_memory: Memory) -> None:
    docs = folder_memory.user("alice").documents()
    docs.put(("t",), "a", 1, ttl=3600)
    assert docs.get(("t",), "a") is not None
    assert docs.touch(("t",), ["a"], 1) == 1  # expires in a second from now
    cached = _cached(folder_memory, "alice", ("t",), "a")
    assert cached is None  # dropped by the change
    row = _as_chroma_holds(folder_memory, "alice", ("t",), "a")
    assert row is not None and row.expires_at is not None and row.expires_at < time.time() + 5
    assert docs.sweep(now=time.time() + 10) == 1
    assert docs.get(("t",), "a") is None


def test_erasure_forgets_the_users_rows_and_no_other_users(folder_memory: Memory) -> None:
    alice, bob = folder_memory.user("alice").documents(), folder_memory.user("bob").documents()
    alice.put(("chat",), "k", "alice's")
    bob.put(("chat",), "k", "bob's")
    assert alice.get(("chat",), "k") is not None and bob.get(("chat",), "k") is not None
    folder_memory.erase_user("alice")
    assert alice.get(("chat",), "k") is None
    got = bob.get(("chat",), "k")
    assert got is not None and got.value == "bob's"


def test_one_users_row_never_answers_another(folder_memory: Memory) -> None:
    folder_memory.user("alice").documents().put(("chat",), "k", "alice's")
    i = doc_id("alice", "", ("chat",), "k")
    assert folder_memory.storage.documents.read("bob", [i]) == {}  # an id of alice's, asked for bob: nothing


def test_a_replayed_journal_forgets_every_row(folder_memory: Memory) -> None:
    docs = folder_memory.user("alice").documents()
    docs.put(("chat",), "a", 1)
    rows = folder_memory.storage.documents
    i = doc_id("alice", "", ("chat",), "a")
    meta = dict(rows.collection.get(ids=[i], include=["metadatas"])["metadatas"][0])
    body = json.dumps({"ids": [i], "texts": ["2"], "metas": [meta], "doomed": []})  # as a killed process leaves one
    journal = {"user_id": "alice", DOC_JOURNAL: True, "at": time.time(), "change": body}
    rows.collection.upsert(ids=[DOC_JOURNAL_PREFIX + "x"], embeddings=[NO_VECTOR], documents=[""], metadatas=[journal])
    assert rows.recover() == 1
    got = docs.get(("chat",), "a")
    assert got is not None and got.value == 2


def test_a_large_document_is_read_from_chroma_each_time(folder_memory: Memory) -> None:
    docs = folder_memory.user("alice").documents()
    docs.put(("big",), "a", "x" * (MAX_CACHED_CHARS + 10))
    calls = _gets(folder_memory)
    got = docs.get(("big",), "a")
    assert got is not None and len(got.value) == MAX_CACHED_CHARS + 10 and calls


def test_threads_writing_and_reading_one_key_end_on_the_last_write(folder_memory: Memory) -> None:
    docs = folder_memory.user("alice").documents()
    docs.put(("race",), "k", -1)
    stop = threading.Event()

    def read() -> None:
        while not stop.is_set():
            docs.get(("race",), "k")

    readers = [threading.Thread(target=read) for _ in range(3)]
    for t in readers:
        t.start()
    try:
        for n in range(40):
            docs.put(("race",), "k", n)
            got = docs.get(("race",), "k")
            assert got is not None and got.value == n  # never an older value after the write returned
    finally:
        stop.set()
        for t in readers:
            t.join()
    held = _as_chroma_holds(folder_memory, "alice", ("race",), "k")
    assert _cached(folder_memory, "alice", ("race",), "k") in (None, held)


def test_a_store_other_processes_may_write_reads_chroma_every_time(ephemeral_memory: Memory) -> None:
    docs = ephemeral_memory.user("alice").documents()
    docs.put(("chat",), "a", 1)
    docs.get(("chat",), "a")
    calls = _gets(ephemeral_memory)
    assert docs.get(("chat",), "a") is not None and len(calls) == 1
