"""Atomic writes: a single remember / log / set_fact is one Chroma write (the record and its history row in one
upsert, which Chroma applies as one transaction), on every backend. Counted on the real collection objects:
their write methods are wrapped to count calls, and still do the real work."""

from __future__ import annotations

import json
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import httpx
import pytest
from conftest import ChromaServer
from memtend import Event, Memory, RecordNotFoundError, Source, StorageUnavailableError, WriteInterruptedError
from memtend.testing import HashEmbedder
from memtend.testing.chroma_calls import counting_writes

T0 = 1_700_000_000.0


def test_single_writes_are_one_chroma_write(memory: Memory) -> None:
    """One write of the record and its history, on every backend: on a store other processes may write (a server,
    or a client this Memory does not hold the folder lock of), the change mark for them is a row of the same
    upsert on the process's first write of the user, and folded into the record's own row after it."""
    u = memory.user("one-write")
    # rows that are all new are added (no look-up of stored rows); a mark row is rewritten, so upserted
    new = ["memories.add"]
    with counting_writes(memory) as calls:
        note = u.remember("prefers short answers")
    assert calls == (new if memory.exclusive else ["memories.upsert"])
    with counting_writes(memory) as calls:
        event = u.log("deployed the billing service")
    assert calls == new
    # set_fact is one new row (a claim of the key, memtend.consistency.claims): added where this Memory holds the folder
    # lock (and a value that changes nothing, known from its cache, not written at all); elsewhere it cannot know
    # what the others wrote, so every value is written (with the mark), and what it did is read when asked
    for value, outcome in (("email", "added"), ("phone", "updated"), ("phone", "unchanged")):
        with counting_writes(memory) as calls:
            result = u.set_fact("contact.method", value)
        assert calls == (new if outcome != "unchanged" or not memory.exclusive else []), outcome
        assert result.outcome.value == outcome
    memory.flush_usage()  # the unchanged restatement's use stamp (issue 32) is a buffered write of its own
    with counting_writes(memory) as calls:  # a lower source is kept out: its claim is written, not current
        assert u.set_fact("contact.method", "fax", source=Source.INFERRED).outcome.value == "kept"
    assert calls == new
    # and each write's history arrived with it
    ops = [(h.op, h.record_id) for h in u.history()]
    assert ("add", note.id) in ops and ("add", event.id) in ops
    assert [op for op, _ in ops if op in ("update", "kept")] == ["update", "kept"]
    archived = [r for r in u.list(status="archived") if r.key == "contact.method"]
    assert [r.value for r in archived] == ["email"] and archived[0].superseded_by == u.get_fact("contact.method").id


def test_history_rows_stay_out_of_record_reads(ephemeral_memory: Memory) -> None:
    u = ephemeral_memory.user("reads")
    ids = {u.remember(f"note {i}").id for i in range(3)}
    u.set_fact("name", "Ada")
    u.set_fact("name", "Ada L.")
    records, _ = ephemeral_memory.storage.get_records("reads")
    assert ids <= {r.id for r in records} and len(records) == 5  # three notes, the fact and its archived value
    assert len(u.history()) == 5
    counts = ephemeral_memory.storage.count_user("reads")
    assert counts["memories"] == 5 and counts["history"] == 5
    assert ephemeral_memory.users() == ["reads"]
    receipt = ephemeral_memory.erase_user("reads")
    assert receipt.counts["memories"] == 5 and receipt.counts["history"] == 5
    # nothing left but the store-wide erasure mark (an in-process client may be shared: marks are kept)
    assert ephemeral_memory.storage.memories.get(include=[])["ids"] == ["erasures"]


# ------------------------------------------------------------------------------------------ retries of a batch
def test_a_named_batch_written_again_is_stored_once(memory: Memory) -> None:
    u = memory.user("batch")
    events = [Event(f"imported line {i}", at=T0 + i) for i in range(300)]
    first = u.log_many(events, batch_id="import-2024-06-01")
    second = u.log_many(events, batch_id="import-2024-06-01")  # the caller did not know whether the first landed
    assert [r.id for r in first] == [r.id for r in second]
    stored = u.list(kinds=["event"])
    assert sorted(r.text for r in stored) == sorted(e.text for e in events)
    assert len([h for h in u.history() if h.op == "add"]) == 300, "the retry wrote no second history entry"
    other = u.log_many(events[:2], batch_id="import-2024-06-02")  # another batch name: other records
    assert {r.id for r in other}.isdisjoint(r.id for r in first)
    assert memory.storage.journals() == []


# ------------------------------------------------------------------------- a write killed between its calls
class _Killed(BaseException):
    """Stands for the process dying between two Chroma calls (raised before the call reaches Chroma)."""


@contextmanager
def killed_at_call(memory: Memory, method: str | tuple[str, ...], n: int) -> Iterator[None]:
    """The ``n``-th call (1-based) of ``memories.<method>`` (of any of the methods, counted together) never
    happens: the process 'dies' just before it."""
    col = memory.storage.memories
    methods = (method,) if isinstance(method, str) else method
    seen = [0]

    def dying(real: Any) -> Any:
        def call(*args: Any, **kwargs: Any) -> Any:
            seen[0] += 1
            if seen[0] == n:
                raise _Killed
            return real(*args, **kwargs)

        return call

    for name in methods:
        setattr(col, name, dying(getattr(col, name)))
    try:
        with pytest.raises(_Killed):
            yield
    finally:
        for name in methods:
            delattr(col, name)


def _reopen(memory: Memory, folder: Path) -> Memory:
    memory.close()
    return Memory(path=folder, embedding_function=HashEmbedder())


def test_log_many_killed_midway_is_finished_on_open(tmp_path: Path) -> None:
    mem = Memory(path=tmp_path / "store", embedding_function=HashEmbedder())
    u = mem.user("kl")
    u.remember("before the batch")
    # chunk 1 (an upsert, with the journal row) and chunk 2 (added: all new) stored, then death
    with killed_at_call(mem, ("upsert", "add"), 3):
        u.log_many([f"batch event {i}" for i in range(700)])
    assert len(mem.storage.journals()) == 1
    assert 0 < len(u.list(kinds=["event"])) < 700, "a prefix is stored: the case the journal is for"
    mem = _reopen(mem, tmp_path / "store")
    u = mem.user("kl")
    texts = [r.text for r in u.list(kinds=["event"])]
    assert sorted(texts) == sorted(f"batch event {i}" for i in range(700)), "every event once"
    assert len([h for h in u.history() if h.op == "add"]) == 701  # the note and each event, once
    assert mem.storage.journals() == []
    assert u.recall("batch event 699", k=1)[0].record.text == "batch event 699"
    mem.close()


def test_compaction_split_over_calls_and_killed_is_finished_on_open(tmp_path: Path) -> None:
    mem = Memory(path=tmp_path / "store", embedding_function=HashEmbedder())
    u = mem.user("kc")
    u.log_many([Event(f"old event {i}", at=T0 + i) for i in range(1_200)])
    mem.storage.max_batch = 500  # so the compaction takes three upserts (as 5,000+ events would)
    with killed_at_call(mem, "upsert", 2):
        u.compact(keep_recent=10)
    mem = _reopen(mem, tmp_path / "store")
    u = mem.user("kc")
    summaries = u.list(kinds=["summary"])
    assert len(summaries) == 1
    archived = u.list(kinds=["event"], status="archived")
    assert len(archived) == 1_190 and {r.superseded_by for r in archived} == {summaries[0].id}
    assert len(u.list(kinds=["event"])) == 10
    ops = [h.op for h in u.history()]
    assert ops.count("compact") == 1 and ops.count("archive") == 1_190
    assert mem.storage.journals() == []
    mem.close()


def test_delete_killed_before_the_delete_is_finished_on_open(tmp_path: Path) -> None:
    mem = Memory(path=tmp_path / "store", embedding_function=HashEmbedder())
    u = mem.user("kd")
    doomed = u.remember("zzdoomedzz a note to delete")
    with killed_at_call(mem, "delete", 1):  # the journal and history row stored, the delete never sent
        u.delete(doomed.id)
    mem = _reopen(mem, tmp_path / "store")
    u = mem.user("kd")
    with pytest.raises(RecordNotFoundError):
        u.get(doomed.id)
    assert "zzdoomedzz" not in json.dumps([h.to_dict() for h in u.history()])
    assert [h.op for h in u.history()] == ["add", "delete"]
    assert mem.storage.journals() == []
    mem.close()


# ------------------------------------------------------------------------------------ a server lost mid-write
@pytest.mark.server
@pytest.mark.slow
def test_server_lost_mid_write_says_so_and_is_finished_once_it_is_back(tmp_path: Path) -> None:
    server = ChromaServer(tmp_path / "data")
    server.start()
    try:
        mem = Memory(client=server.client(), embedding_function=HashEmbedder(), collection_prefix="lostsrv")
        u = mem.user("srv")
        col = mem.storage.memories
        writes = {"add": col.add, "upsert": col.upsert}  # rows all new are added, others upserted

        def on_write(action: Any) -> None:
            """Make ``action(real_call, args, kwargs)`` stand in for each write call on the memories collection."""
            for name, real_call in writes.items():

                def call(*args: Any, _real: Any = real_call, **kwargs: Any) -> Any:
                    return action(_real, args, kwargs)

                setattr(col, name, call)

        def restore() -> None:
            for name in writes:
                delattr(col, name)

        def applied_then_lost(real_call: Any, args: Any, kwargs: Any) -> Any:
            real_call(*args, **kwargs)  # the server stores the note and its history row...
            server.stop()  # ...and is gone before its answer arrives
            raise httpx.RemoteProtocolError("Server disconnected without sending a response.")

        on_write(applied_then_lost)
        with pytest.raises(WriteInterruptedError) as info:
            u.remember("lost answer note")
        restore()
        assert isinstance(info.value, StorageUnavailableError) and info.value.record_ids
        assert "not completed" not in str(info.value) and "Do not make the call again" in str(info.value)
        server.start()
        u.remember("after the server came back")  # the user's next call finishes the interrupted one first
        assert sorted(r.text for r in u.list()) == ["after the server came back", "lost answer note"]
        assert [h.op for h in u.history()] == ["add", "add"], "each note once, each with its history"

        calls = [0]

        def dies_before_the_second_chunk(real_call: Any, args: Any, kwargs: Any) -> Any:
            calls[0] += 1
            if calls[0] == 2:
                server.stop()
            return real_call(*args, **kwargs)

        on_write(dies_before_the_second_chunk)
        with pytest.raises(WriteInterruptedError):
            u.log_many([f"srv event {i}" for i in range(600)])
        restore()
        server.start()
        u.log("the next call")
        texts = [r.text for r in u.list(kinds=["event"])]
        assert len(texts) == 601 and len(set(texts)) == 601, "the batch finished, nothing twice"
        assert len([h for h in u.history() if h.op == "add"]) == 603
        assert mem.storage.journals() == []

        server.stop()  # down before a write is sent: nothing stored, the plain error, nothing kept for later
        with pytest.raises(StorageUnavailableError) as plain:
            u.remember("never sent")
        assert not isinstance(plain.value, WriteInterruptedError)
        server.start()
        u.remember("later")
        assert "never sent" not in [r.text for r in u.list()]
        mem.close()
    finally:
        server.stop()


def _counting_gets(col: Any, gets: list[Any]) -> Any:
    real = col.get

    def counted(*args: Any, **kwargs: Any) -> Any:
        gets.append(kwargs.get("ids"))
        return real(*args, **kwargs)

    col.get = counted
    return col


def test_set_fact_reads_only_a_key_it_does_not_know_and_writes_one_new_row(tmp_path: Path) -> None:
    """On an embedded folder the key this process wrote is known without a read (memtend.consistency.slots); a process
    that has not seen it reads it once (its slot by id and its claims by key: two gets), then knows it. Each write
    is one new claim row naming its key (``fk``), with its creation entry (op ``set``, id = the claim's write id)."""
    mem = Memory(path=tmp_path / "store", embedding_function=HashEmbedder())
    u = mem.user("reads-once")
    gets: list[Any] = []
    u.set_fact("contact.method", "email")
    col = _counting_gets(mem.storage.memories, gets)
    try:
        assert u.set_fact("contact.method", "phone").outcome.value == "updated"
    finally:
        del col.get
    assert gets == []  # known from the write that set it
    mem.close()
    mem = Memory(path=tmp_path / "store", embedding_function=HashEmbedder())
    u = mem.user("reads-once")
    col = _counting_gets(mem.storage.memories, gets)
    try:
        assert u.set_fact("contact.method", "post").outcome.value == "updated"
        assert u.set_fact("contact.method", "phone").outcome.value == "updated"
    finally:
        del col.get
    fid = u.get_fact("contact.method").id
    assert gets == [[fid], None]  # once (the slot by id, the claims by key), then known
    claims = col.get(where={"fk": fid}, include=["metadatas"])
    assert len(claims["ids"]) == 4, "one row per value written, nothing rewritten"
    newest = max(
        claims["metadatas"], key=lambda m: json.loads(m["r"]).get("updated_at", json.loads(m["r"])["created_at"])
    )
    packed = json.loads(newest["r"])  # the fields packed in one value
    assert set(newest) == {"user_id", "last_used_at", "r", "fk"} and newest["fk"] == fid
    assert packed["value"] == "phone" and "superseded_by" not in packed and "status" not in packed  # stored active
    assert packed["h"]["op"] == "set" and "after" not in packed["h"], "the row is the value: its entry holds no copy"
    assert claims["ids"][claims["metadatas"].index(newest)] == f"fv:{fid[5:]}:{packed['h']['id']}"
    assert mem.storage.memories.get(ids=[fid])["ids"] == [], "no slot row: the key is its claims"
    mem.close()


def test_set_fact_on_a_shared_store_reads_nothing(ephemeral_memory: Memory) -> None:
    """On a store other processes may write, set_fact is one write and no read; its result is read once, when
    asked for (FactResult), and tells what the write did."""
    u = ephemeral_memory.user("no-read")
    gets: list[Any] = []
    col = _counting_gets(ephemeral_memory.storage.memories, gets)
    try:
        with counting_writes(ephemeral_memory) as calls:
            first = u.set_fact("city", "Paris")
            second = u.set_fact("city", "Rome", source=Source.AGENT)
            third = u.set_fact("city", "Berlin")
        # (the process's first write of the user moves its mark row; the others are folded into their claim rows)
        assert gets == [] and calls == ["memories.upsert", "memories.add", "memories.add"]
        assert [r.outcome.value for r in (first, second, third)] == ["added", "kept", "updated"]
        assert len(gets) == 2 * 3, "each result read its key once (slot by id, claims by key), when asked"
        assert third.record == u.get_fact("city") and third.record.value == "Berlin"
        assert second.record.value == "Berlin", "a result tells the fact as it stands when read"
    finally:
        del col.get
