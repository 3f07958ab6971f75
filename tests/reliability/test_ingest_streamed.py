"""A ``log_many`` batch stored part by part while the next part is embedded (when the embedding function announces
its model runs, as memtend's does) is still all or nothing: several Chroma calls, the first with the journal row,
the journal row deleted after the last call (on an embedded folder, beside the next streamed batch's model run,
before any other write, on close or at exit). Killed before the last call or before the journal
row is deleted, the batch is whole after the next open; an embedding error midway takes back what was stored. The
embedder here announces its run, then sleeps (outside the GIL, as a model's run is), so parts finish one at a
time; one that does not announce gets the batch stored in one call."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from memtend import Event, Memory
from memtend import memory as memory_module
from memtend.storage.embeddings import announce_compute
from memtend.testing import HashEmbedder
from memtend.testing.chroma_calls import counting_writes

N = 100  # events per batch: four parts of the model's batch size (32)


class SlowHash(HashEmbedder):
    """HashEmbedder that takes a while per call (as a real model does, announcing its run unless ``announces`` is
    False), optionally failing from call ``fail_from``."""

    def __init__(self, delay: float = 0.05, fail_from: int | None = None, announces: bool = True) -> None:
        super().__init__()
        self.delay, self.fail_from, self.announces, self.calls = delay, fail_from, announces, 0
        self.running = False  # between its announcement and its return

    def __call__(self, input: Any) -> Any:
        self.calls += 1
        if self.fail_from is not None and self.calls >= self.fail_from:
            raise RuntimeError("the embedding service is down")
        if self.announces:
            announce_compute()
        self.running = True
        try:
            time.sleep(self.delay)
        finally:
            self.running = False
        return super().__call__(input)


class _Killed(BaseException):
    """The process dying just before a Chroma call."""


def _events(tag: str, n: int = N) -> list[Event]:
    return [
        Event(f"{tag} event {i} " + "word " * (i % 7), at=1_700_000_000.0 + i, session=f"s{i // 10}") for i in range(n)
    ]


def _reopen(mem: Memory, folder: Path) -> Memory:
    mem.close()
    return Memory(path=folder, embedding_function=SlowHash(delay=0))


def _check_whole(mem: Memory, user: str, tag: str) -> None:
    u = mem.user(user)
    events = u.list(kinds=["event"])
    assert sorted(r.text for r in events) == sorted(e.text for e in _events(tag)), "every event once"
    adds = [h.record_id for h in u.history() if h.op == "add"]
    assert sorted(adds) == sorted(r.id for r in events), "one add entry per event"
    assert mem.storage.journals() == []
    hit = u.recall(f"{tag} event 57", k=1)[0].record
    assert hit.text.startswith(f"{tag} event 57")
    stored = mem.storage.memories.get(ids=[hit.id], include=["embeddings"])["embeddings"][0]
    assert np.allclose(stored, HashEmbedder()([hit.text])[0], atol=1e-6), "each record has its own text's vector"


def test_a_batch_is_stored_in_parts_and_whole(tmp_path: Path) -> None:
    mem = Memory(path=tmp_path / "store", embedding_function=SlowHash())
    u = mem.user("ann")
    u.recall("anything")  # the index is cached, so every part also goes into it
    with counting_writes(mem) as calls:
        records = u.log_many(_events("lake"))
    assert [r.text for r in records] == [e.text for e in _events("lake")], "records come back in the caller's order"
    assert calls.count("memories.add") + calls.count("memories.upsert") >= 2, "stored in parts"
    mem._settle_journal_ends()
    _check_whole(mem, "ann", "lake")
    assert {h.record_id for h in u.history()} == {r.id for r in records}
    mem.close()


def test_an_embedder_that_does_not_announce_its_runs_gets_one_call(tmp_path: Path) -> None:
    mem = Memory(path=tmp_path / "store", embedding_function=SlowHash(delay=0.01, announces=False))
    u = mem.user("al")
    with counting_writes(mem) as calls:
        u.log_many(_events("pond"))
    assert calls.count("memories.add") + calls.count("memories.upsert") == 1, "one call, after the embedding"
    assert mem.storage.journals() == [] and mem._state.journal_ends == []
    _check_whole(mem, "al", "pond")
    mem.close()


def test_the_writes_wait_for_the_next_parts_model_run(tmp_path: Path) -> None:
    """A Chroma write holds the GIL for its whole call: each is started only once the next part's run was
    announced, never while the helper is between runs."""
    ef = SlowHash()
    mem = Memory(path=tmp_path / "store", embedding_function=ef)
    col = mem.storage.memories
    during: list[tuple[int, bool]] = []  # at each write: how many parts were begun, and whether one was running
    real_add = col.add

    def add(*args: Any, **kwargs: Any) -> Any:
        during.append((ef.calls, ef.running))
        return real_add(*args, **kwargs)

    col.add = add  # type: ignore[method-assign]
    mem.user("bo").log_many(_events("dune"))
    del col.add
    assert len(during) >= 2, "stored in parts"
    assert all(running for _, running in during[:-1]), "every write but the last beside a running part"
    assert during[-1] == (4, False), "the last write after the last part"
    mem._settle_journal_ends()
    _check_whole(mem, "bo", "dune")
    mem.close()


def test_the_gate_reads_the_batch_while_the_first_part_runs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The gate keeps the GIL but for moments, so it waits for the first model run to begin (else the helper could
    not start the embedding before the gate ended)."""
    from memtend import user_memory

    ef = SlowHash()
    mem = Memory(path=tmp_path / "store", embedding_function=ef)
    seen: list[tuple[int, bool]] = []
    real_check = user_memory.gate.check_write

    def check_write(*args: Any, **kwargs: Any) -> Any:
        seen.append((ef.calls, ef.running))
        return real_check(*args, **kwargs)

    monkeypatch.setattr(user_memory.gate, "check_write", check_write)
    mem.user("jo").log_many(_events("fen"))
    assert len(seen) == N and seen[0] == (1, True), "the gate began while the first part ran"
    mem.close()


def test_killed_before_the_last_part_is_finished_on_open(tmp_path: Path) -> None:
    mem = Memory(path=tmp_path / "store", embedding_function=SlowHash())
    u = mem.user("bob")
    col = mem.storage.memories
    seen = [0]

    def dying(real: Any) -> Any:
        def call(*args: Any, **kwargs: Any) -> Any:
            seen[0] += 1
            if seen[0] == 2:  # the first part (with the journal row) is stored, then death
                raise _Killed
            return real(*args, **kwargs)

        return call

    for name in ("add", "upsert"):
        setattr(col, name, dying(getattr(col, name)))
    with pytest.raises(_Killed):
        u.log_many(_events("boat"))
    for name in ("add", "upsert"):
        delattr(col, name)
    assert len(mem.storage.journals()) == 1
    assert 0 < len(u.list(kinds=["event"])) < N, "a part is stored: the case the journal is for"
    mem = _reopen(mem, tmp_path / "store")
    _check_whole(mem, "bob", "boat")
    mem.close()


def test_killed_before_the_journal_row_is_deleted_writes_nothing_twice(tmp_path: Path) -> None:
    mem = Memory(path=tmp_path / "store", embedding_function=SlowHash())
    mem._end_journal_later = lambda user_id, jid: None  # type: ignore[method-assign]  # death right after the last call
    mem.user("cy").log_many(_events("hill"))
    assert len(mem.storage.journals()) == 1
    mem = _reopen(mem, tmp_path / "store")  # the journal is replayed: the same ids, nothing added twice
    _check_whole(mem, "cy", "hill")
    mem.close()


def test_the_next_write_waits_for_the_journal_row_to_go(tmp_path: Path) -> None:
    mem = Memory(path=tmp_path / "store", embedding_function=SlowHash())
    u = mem.user("dee")
    u.log_many(_events("wood"))
    u.remember("a note after the batch")
    assert mem.storage.journals() == [] and mem._state.journal_ends == []
    mem.close()


def test_the_journal_row_goes_beside_the_next_batchs_model_run(tmp_path: Path) -> None:
    """On an embedded folder a finished batch's journal row is deleted inside the next streamed batch's call, while
    its model runs (a Chroma call holds the GIL: beside anything else it would stall it), never on a thread left
    running after the call returns."""
    ef = SlowHash()
    mem = Memory(path=tmp_path / "store", embedding_function=ef)
    u = mem.user("gus")
    u.log_many(_events("reef"))
    first = mem.storage.journals()
    assert len(first) == 1 and mem._journal_thread is None, "left to delete, no thread running"
    col = mem.storage.memories
    deletes: list[tuple[list[str], bool]] = []
    real_delete = col.delete

    def delete(*args: Any, **kwargs: Any) -> Any:
        deletes.append((list(kwargs.get("ids") or args[0]), ef.running))
        return real_delete(*args, **kwargs)

    col.delete = delete  # type: ignore[method-assign]
    mem.user("ida").log_many(_events("reef"))  # another user's batch: the row is the store's to delete
    del col.delete
    assert deletes == [([first[0][0]], True)], "the first batch's journal row, deleted while a part ran"
    assert [j[0] for j in mem.storage.journals()] != [first[0][0]]
    mem.close()
    mem = Memory(path=tmp_path / "store", embedding_function=SlowHash(delay=0))
    assert mem.storage.journals() == [], "close deleted the second one"
    _check_whole(mem, "gus", "reef")
    _check_whole(mem, "ida", "reef")
    mem.close()


def test_a_journal_row_left_to_delete_goes_at_exit(tmp_path: Path) -> None:
    mem = Memory(path=tmp_path / "store", embedding_function=SlowHash())
    mem.user("hal").log_many(_events("glen"))
    assert len(mem.storage.journals()) == 1
    memory_module._flush_open_memories()  # what runs at interpreter exit for a Memory never closed
    assert mem.storage.journals() == []
    mem.close()


def test_an_embedding_error_midway_takes_back_what_was_stored(tmp_path: Path) -> None:
    ef = SlowHash(fail_from=3)  # the first two parts are embedded (and stored), the third fails, and so on
    mem = Memory(path=tmp_path / "store", embedding_function=ef)
    u = mem.user("eve")
    u.remember("kept from before")
    u.recall("anything")  # a cached index, which must lose the taken-back records too
    ef.calls = 0
    with counting_writes(mem) as calls, pytest.raises(RuntimeError, match="embedding service is down"):
        u.log_many(_events("cave"))
    assert "memories.delete" in calls, "a part was stored before the error (the case to take back)"
    assert [r.text for r in u.list()] == ["kept from before"]
    assert mem.storage.journals() == []
    ef.fail_from = None
    assert {h.record.text for h in u.recall("cave event 12", k=5)} <= {"kept from before"}
    mem.close()


def test_a_text_the_gate_masks_gets_its_masked_texts_vector(tmp_path: Path) -> None:
    mem = Memory(path=tmp_path / "store", embedding_function=SlowHash())
    u = mem.user("fay")
    events = _events("road")
    events[40] = Event("my password is hunter2horse, keep it handy")
    records = u.log_many(events, redact=True)
    masked = records[40]
    assert "hunter2horse" not in masked.text
    stored = mem.storage.memories.get(ids=[masked.id], include=["embeddings"])["embeddings"][0]
    assert np.allclose(stored, HashEmbedder()([masked.text])[0], atol=1e-6)
    mem.close()
