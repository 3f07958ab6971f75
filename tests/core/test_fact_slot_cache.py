"""set_fact on an exclusive store knows its key without reading it (memtend.consistency.slots): after every kind of
write that touches a key, what the cache answers must be exactly what a read of Chroma gives: the key as readers see it
(its claims and checkpoint resolved, memtend.consistency.claims), with the creation entry and metadata keys of the slot
row when the value is the slot row's, and the row that holds the value. (The cache keeps no vector any more:
nothing reads one from it since a set_fact no longer archives the old value's row; the retrieval index takes the
claim's vector from the write itself.)"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest
from memtend import Memory
from memtend.policies.forgetting import RetentionPolicy
from memtend.records import DAY, Kind, Source, fact_id, now


def _same_as_stored(memory: Memory, user_id: str, key: str, *, cached_by_write: bool = True) -> None:
    storage = memory.storage
    slot_id = fact_id(user_id, key)
    cached = storage.slots.get(slot_id)
    assert cached is not None or not cached_by_write, "a write through this process left the slot unknown"
    if cached is None:  # dropped (a deletion): read again on next use
        storage.fact_slot(user_id, slot_id)
        cached = storage.slots.get(slot_id)
    assert cached is not None
    found, vectors = storage.get_records(user_id, [slot_id], with_embeddings=True)
    record, vector = cached
    if not found:
        assert record is None and vector is None
        return
    assert [r.id for r in found] == [slot_id], "a read of the key by its fact id gives the key alone"
    stored = found[0]
    assert record == stored
    assert record is not None and record.origin == stored.origin
    assert record.stored_keys == stored.stored_keys
    assert record.row_id == stored.row_id, "the same row holds the value"
    if vector is not None:  # read from Chroma (not written through this process): as stored
        assert vectors is not None
        # Chroma may hand back its cosine index's copy, normalised again (differs in the last bits)
        assert np.allclose(vector, vectors[0], rtol=0, atol=1e-6)


@pytest.fixture
def folder_memory(tmp_path: Path, embedding_function: Any) -> Any:
    mem = Memory(path=tmp_path / "store", embedding_function=embedding_function)
    yield mem
    mem.close()


def test_cached_slot_matches_chroma_through_every_change(folder_memory: Memory) -> None:
    memory = folder_memory
    assert memory.storage.slots.enabled
    user = memory.user("alice")
    key = "home.city"
    user.set_fact(key, "Lisbon")  # added: one claim row
    _same_as_stored(memory, "alice", key)
    user.set_fact(key, "Porto")  # updated: a second claim; the first is presented archived
    _same_as_stored(memory, "alice", key)
    assert user.set_fact(key, "Porto").outcome.value == "unchanged"
    assert user.set_fact(key, "Faro", source=Source.INFERRED).outcome.value == "kept"
    _same_as_stored(memory, "alice", key)
    assert user.recall("which city does the user live in", k=3)  # usage stamps, written by the flush
    memory.flush_usage()
    _same_as_stored(memory, "alice", key)
    archived = [e for e in user.history(fact_id("alice", key)) if e.op == "update"]
    assert archived
    old = [r for r in user.list(status="archived") if r.kind.value == "fact"]
    user.restore(old[0].id)  # a claim takes the old value back, the current one goes to the archive
    _same_as_stored(memory, "alice", key)
    pending = user.set_fact(key, "Braga", source=Source.EXTERNAL).record
    user.approve(pending.id)
    _same_as_stored(memory, "alice", key)
    assert user.get_fact(key) is not None and user.get_fact(key).value == "Braga"  # type: ignore[union-attr]
    user.delete(fact_id("alice", key))
    _same_as_stored(memory, "alice", key, cached_by_write=False)
    user.set_fact(key, "Coimbra")  # the slot is set again after its deletion
    _same_as_stored(memory, "alice", key)
    assert [e.op for e in user.history(fact_id("alice", key))][-1] == "add"
    memory.erase_user("alice")
    assert memory.storage.slots.get(fact_id("alice", key)) is None  # forgotten with the user
    assert memory.user("alice").set_fact(key, "Evora").outcome.value == "added"
    _same_as_stored(memory, "alice", key)


def test_cached_slot_follows_forgetting(tmp_path: Path, embedding_function: Any) -> None:
    with Memory(
        path=tmp_path / "store",
        embedding_function=embedding_function,
        retention=RetentionPolicy(idle_days={**RetentionPolicy().idle_days, Kind.FACT: 1.0}),
    ) as memory:
        user = memory.user("bob")
        user.set_fact("diet", "vegetarian")
        report = user.forget(now=now() + 30 * DAY)  # folded: the slot row written archived, the claim archived
        assert report.archived
        _same_as_stored(memory, "bob", "diet")
        assert user.get_fact("diet") is None
        result = user.set_fact("diet", "vegan")  # an archived slot: set again, keeping its creation time
        assert result.outcome.value == "added"
        _same_as_stored(memory, "bob", "diet")
        first = next(e for e in user.history(fact_id("bob", "diet")) if e.op == "add")
        assert first.after is not None and result.record.created_at == first.after["created_at"]
        user.purge(grace_days=0, now=now() + 60 * DAY)
        _same_as_stored(memory, "bob", "diet", cached_by_write=False)


def test_shared_stores_never_cache(ephemeral_memory: Memory) -> None:
    """Another process may write a store reached through a client: its slots are read every time."""
    assert not ephemeral_memory.storage.slots.enabled
    ephemeral_memory.user("carol").set_fact("pet", "cat")
    assert ephemeral_memory.storage.slots.get(fact_id("carol", "pet")) is None
