"""Upkeep keeps the document store's prefix rows bounded on a store other processes write (a Chroma server): the
``expiring:`` / ``partial:`` rows of a prefix left holding no document go, and never while a writer may use them."""

from __future__ import annotations

import time
from collections.abc import Iterator
from typing import Any

import pytest
from conftest import unique_prefix
from memtend import Memory, RetentionPolicy, Upkeep
from memtend.documents import MAX_FILTER_FIELDS
from memtend.records import DAY
from memtend.storage.prefix_rows import PREFIX_GRACE

BY_HAND = Upkeep(every_seconds=None, on_close=False)
WIDE = {f"k{n}": n for n in range(MAX_FILTER_FIELDS + 1)}  # more filter fields than a row keeps: a partial row


def _prefix_rows(mem: Memory, user_id: str) -> int:
    got = mem.storage.documents.collection.get(where={"user_id": {"$eq": user_id}}, include=[])
    return sum(i.startswith(("expiring:", "partial:")) for i in got["ids"])


@pytest.fixture
def server_pair(chroma_server: Any, embedding_function: object) -> Iterator[tuple[Memory, Memory]]:
    """Two handles on one server store, as two processes have (each its own client, lock and caches)."""
    prefix = unique_prefix()
    pair = [
        Memory(
            client=chroma_server.client(),
            embedding_function=embedding_function,
            collection_prefix=prefix,
            retention=RetentionPolicy(session_days=1.0),
            upkeep=BY_HAND,
        )
        for _ in range(2)
    ]
    yield pair[0], pair[1]
    for mem in pair:
        mem.close()


def test_prefix_rows_of_ended_sessions_go_on_a_server(server_pair: tuple[Memory, Memory]) -> None:
    """Each simulated day a new session writes state and expiring, partial documents; one pass a day: the prefix
    rows level off instead of growing by a few a session."""
    mem, _ = server_pair
    assert not mem.exclusive
    alice = mem.user("alice")
    docs = alice.documents()
    t0 = time.time()
    rows: list[int] = []
    for day in range(12):
        alice.session(f"day-{day}").set("cursor", f"row {day}")
        docs.put(("runs", f"day-{day}"), "wide", WIDE, ttl=DAY / 2)
        docs.put(("runs", f"day-{day}"), "gone", 1)
        docs.delete(("runs", f"day-{day}"), "gone")
        report = mem.upkeep(now=t0 + (day + 1) * DAY)
        assert report.ran and report.errors == 0
        rows.append(_prefix_rows(mem, "alice"))
    assert max(rows[4:]) <= rows[3], rows
    # what is still written is still found, by key and by a search that needs its prefix rows
    docs.put(("runs", "today"), "wide", WIDE, ttl=DAY)
    alice.session("today").set("cursor", "row today")
    assert [d.key for d in docs.search(("runs",), filter={"k1": 1})] == ["wide"]
    assert alice.session("today").get("cursor") == "row today"


def test_a_fresh_empty_prefix_keeps_its_rows_for_the_grace_period(server_pair: tuple[Memory, Memory]) -> None:
    """An empty prefix's rows written less than ``PREFIX_GRACE`` seconds before a pass stay (another process may
    be about to write under them); the first pass after it removes them."""
    mem, _ = server_pair
    docs = mem.user("alice").documents()
    before = _prefix_rows(mem, "alice")
    w = time.time()
    docs.put(("runs", "s1"), "a", 1, ttl=60)
    docs.delete(("runs", "s1"), "a")
    written = _prefix_rows(mem, "alice")
    assert written > before
    mem.upkeep(now=w + PREFIX_GRACE / 2)
    assert _prefix_rows(mem, "alice") == written
    mem.upkeep(now=w + PREFIX_GRACE * 2)
    assert _prefix_rows(mem, "alice") == before + 1  # the space's root keeps its row


def test_a_write_racing_the_pass_keeps_its_prefix_rows(server_pair: tuple[Memory, Memory]) -> None:
    """Process A's pass finds a prefix empty; before A deletes its rows, process B writes an expiring, partial
    document under it. B's document is still found by searches under the prefix (they need its rows)."""
    a, b = server_pair
    b_docs = b.user("alice").documents()
    b_docs.put(("runs", "s1"), "old", 1, ttl=60)
    b_docs.delete(("runs", "s1"), "old")  # an empty prefix whose rows are past the grace period at the pass below
    rows = a.storage.documents
    real = rows.namespaces
    raced: list[bool] = []

    def namespaces(user_id: str, space: str, prefix: Any) -> list[tuple[str, ...]]:
        found = real(user_id, space, prefix)
        if not found and not raced:  # B writes between A's check and A's delete
            raced.append(True)
            b_docs.put(("runs", "s1"), "live", WIDE, ttl=3 * DAY)
        return found

    rows.namespaces = namespaces  # type: ignore[method-assign]
    try:
        assert a.upkeep(now=time.time() + DAY).ran
    finally:
        del rows.namespaces
    assert raced
    for mem in (a, b):
        docs = mem.user("alice").documents()
        assert [d.key for d in docs.search(("runs",))] == ["live"]
        assert [d.key for d in docs.search(("runs", "s1"), filter={"k2": 2})] == ["live"]


def test_an_embedded_store_tidies_prefix_rows_of_deleted_documents(tmp_path: Any, embedding_function: object) -> None:
    """On a folder (no other process writes it) a pass removes the rows of a prefix emptied by deletes, not only
    by expiry; what is live keeps its rows."""
    mem = Memory(path=tmp_path / "store", embedding_function=embedding_function, upkeep=BY_HAND)
    docs = mem.user("alice").documents()
    before = _prefix_rows(mem, "alice")
    for n in range(5):
        docs.put(("runs", f"s{n}"), "a", WIDE, ttl=DAY)
        docs.delete(("runs", f"s{n}"), "a")
    docs.put(("runs", "kept"), "a", WIDE, ttl=DAY)
    assert _prefix_rows(mem, "alice") > before + 8
    mem.upkeep(now=time.time() + PREFIX_GRACE * 2)
    assert _prefix_rows(mem, "alice") == before + 6  # root, ("runs",) and ("runs", "kept"): both kinds
    assert [d.key for d in docs.search(("runs",), filter={"k1": 1})] == ["a"]
    mem.close()
