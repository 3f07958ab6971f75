"""The document store's remembered prefix answers (``DocumentRows.prefixes``): on an embedded folder (no other
process writes it) a search no longer asks Chroma, each time, whether an expiring or a partial document was ever
written under its prefix; every path that can change the answer drops or corrects what was remembered."""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from memtend import Memory
from memtend.documents import MAX_FILTER_FIELDS
from memtend.storage.chroma import NO_VECTOR
from memtend.storage.document_rows import DOC_JOURNAL, DOC_JOURNAL_PREFIX


@pytest.fixture
def folder_memory(tmp_path: Path, embedding_function: Any) -> Iterator[Memory]:
    mem = Memory(path=tmp_path / "store", embedding_function=embedding_function)
    yield mem
    mem.close()


class _Gets:
    """Counts the documents collection's ``get`` calls (every one still reaches Chroma)."""

    def __init__(self, memory: Memory) -> None:
        collection = memory.storage.documents.collection
        real = collection.get
        self.calls = 0

        def get(*args: Any, **kwargs: Any) -> Any:
            self.calls += 1
            return real(*args, **kwargs)

        collection.get = get  # type: ignore[method-assign]

    def during(self, call: Any) -> int:
        before = self.calls
        call()
        return self.calls - before


def test_a_repeated_search_reads_only_its_rows(folder_memory: Memory) -> None:
    docs = folder_memory.user("alice").documents()
    docs.put(("chat", "s1"), "a", {"n": 1})
    gets = _Gets(folder_memory)
    assert gets.during(lambda: docs.search(("chat", "s1"), filter={"n": 1})) == 3  # two prefix rows, the page
    assert gets.during(lambda: docs.search(("chat", "s1"), filter={"n": 1})) == 1  # the page alone
    assert gets.during(lambda: docs.search(("chat", "s1"))) == 1


def test_an_expiring_document_written_after_a_no_is_found(folder_memory: Memory) -> None:
    docs = folder_memory.user("alice").documents()
    docs.put(("chat", "s1"), "a", 1)
    assert [d.key for d in docs.search(("chat",))] == ["a"]  # remembered: nothing under ("chat",) expires
    docs.put(("chat", "s1"), "b", 2, ttl=3600)  # an expiring row is found by its own scope codes only
    docs.put(("chat", "s1"), "c", 3, ttl=0)
    assert [d.key for d in docs.search(("chat",))] == ["a", "b"]
    assert [d.key for d in docs.search(("chat", "s1"))] == ["a", "b"]


def test_a_partial_document_written_after_a_no_is_matched_in_python(folder_memory: Memory) -> None:
    docs = folder_memory.user("alice").documents()
    docs.put(("f",), "1", {"lvl": 1})
    assert [d.key for d in docs.search(("f",), filter={"lvl": 1})] == ["1"]  # remembered: no partial document
    wide = {f"field{n}": n for n in range(MAX_FILTER_FIELDS + 5)}  # too many fields: not all kept in Chroma
    docs.put(("f",), "2", {**wide, "lvl": 1})
    last = f"field{MAX_FILTER_FIELDS + 4}"
    assert [d.key for d in docs.search(("f",), filter={last: MAX_FILTER_FIELDS + 4})] == ["2"]
    assert [d.key for d in docs.search(("f",), filter={"lvl": 1})] == ["1", "2"]


def test_a_touch_that_makes_a_document_expire_is_followed(folder_memory: Memory) -> None:
    docs = folder_memory.user("alice").documents()
    docs.put(("t",), "a", 1)
    assert [d.key for d in docs.search(("t",))] == ["a"]
    assert docs.touch(("t",), ["a"], 3600) == 1  # the row moves to the expiring scope codes
    assert [d.key for d in docs.search(("t",))] == ["a"]


def test_erasure_forgets_the_users_answers(folder_memory: Memory) -> None:
    alice, bob = folder_memory.user("alice").documents(), folder_memory.user("bob").documents()
    alice.put(("chat",), "a", 1, ttl=3600)
    bob.put(("chat",), "b", 1)
    assert [d.key for d in alice.search(("chat",))] == ["a"] and [d.key for d in bob.search(("chat",))] == ["b"]
    folder_memory.erase_user("alice")
    gets = _Gets(folder_memory)
    assert gets.during(lambda: alice.search(("chat",))) == 2  # asked again: the prefix row went with the user
    assert gets.during(lambda: bob.search(("chat",))) == 1  # another user's answer stays
    alice.put(("chat",), "again", 2)
    assert [d.key for d in alice.search(("chat",))] == ["again"]


def test_removing_an_emptied_prefix_forgets_it(folder_memory: Memory) -> None:
    docs = folder_memory.user("alice").documents()
    docs.put(("t", "x"), "gone", 1, ttl=1)
    assert [d.key for d in docs.search(("t", "x"))] == ["gone"]
    assert docs.sweep(now=time.time() + 10) == 1  # the last document: its prefix rows go too (exclusive store)
    gets = _Gets(folder_memory)
    assert gets.during(lambda: docs.search(("t", "x"))) == 2  # read again, not a remembered "yes"
    docs.put(("t", "x"), "kept", 2)
    assert [d.key for d in docs.search(("t", "x"))] == ["kept"]


def test_a_replayed_journal_forgets_every_answer(folder_memory: Memory) -> None:
    docs = folder_memory.user("alice").documents()
    docs.put(("chat",), "a", 1)
    docs.search(("chat",))
    rows = folder_memory.storage.documents
    assert any(rows.prefixes.get(i) is False for i in list(rows.prefixes._known))
    body = json.dumps({"ids": [], "texts": [], "metas": [], "doomed": []})  # as a killed process leaves one
    meta = {"user_id": "alice", DOC_JOURNAL: True, "at": time.time(), "change": body}
    rows.collection.upsert(ids=[DOC_JOURNAL_PREFIX + "x"], embeddings=[NO_VECTOR], documents=[""], metadatas=[meta])
    assert rows.recover() == 1
    assert not rows.prefixes._known
    gets = _Gets(folder_memory)
    assert gets.during(lambda: docs.search(("chat",))) == 2


def test_a_store_other_processes_may_write_remembers_nothing(ephemeral_memory: Memory) -> None:
    docs = ephemeral_memory.user("alice").documents()
    docs.put(("chat",), "a", 1)
    docs.search(("chat",))
    gets = _Gets(ephemeral_memory)
    assert gets.during(lambda: docs.search(("chat",))) == 2
