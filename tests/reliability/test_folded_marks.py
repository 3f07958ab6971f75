"""Folded change marks: on a shared store, a single write of new rows carries its mark in its own record rows (a flag
naming the user) instead of rewriting the process's mark row; every other process still sees every write by its
next recall, and the flags stay few (see ``storage.ChangeMarks``).

Memory objects over separate EphemeralClients on one store: how processes see a server (see ``two_processes``)."""

from __future__ import annotations

import random
import threading
import time
from collections.abc import Iterator

import chromadb
import pytest
from conftest import unique_prefix
from memtend import Memory
from memtend.storage.marks import FOLD_KEY
from memtend.storage.state import FOLD_WINDOW
from memtend.testing.chroma_calls import counting_reads, counting_writes


def _flagged(memory: Memory, user_id: str = "u") -> list[str]:
    """The user's rows carrying a fold flag, once the flags being removed are gone."""
    memory._state.wait_folds()
    got = memory.storage.memories.get(where={FOLD_KEY: {"$eq": user_id}}, include=[])["ids"]
    return [i for i in got if not i.startswith("mark:")]


def _indexed(memory: Memory, user_id: str) -> set[str]:
    with memory.lock:
        return set(memory.user_index(user_id).ids())


@pytest.fixture
def three_processes(embedding_function: object) -> Iterator[tuple[Memory, Memory, Memory]]:
    prefix = unique_prefix()
    mems = [
        Memory(client=chromadb.EphemeralClient(), embedding_function=embedding_function, collection_prefix=prefix)
        for _ in range(3)
    ]
    yield mems[0], mems[1], mems[2]
    for m in mems:
        m.close()


def test_every_folded_write_is_seen_by_the_next_recall(two_processes: tuple[Memory, Memory]) -> None:
    writer, reader = two_processes
    wu, ru = writer.user("u"), reader.user("u")
    assert ru.recall("heron", k=5) == []
    kinds = []
    for i in range(2 * FOLD_WINDOW + 5):  # past two mark moves and the flags they remove
        with counting_writes(writer) as calls:
            note = wu.remember(f"foldmarkx heron number {i} on the pier") if i % 3 else wu.log(f"foldmarkx heron {i}")
        kinds.append(calls[0])
        assert note.id in _indexed(reader, "u"), f"write {i} ({calls}) is not seen by the reader"
        assert len(_flagged(writer)) < FOLD_WINDOW
    assert kinds.count("memories.add") >= 2 * (FOLD_WINDOW - 1), "most writes are folded: one row added"
    assert kinds.count("memories.upsert") >= 3, "the first write and every FOLD_WINDOW-th move the mark row"
    assert ru.get_fact("pier") is None
    wu.set_fact("pier", "foldmarkx the north pier")
    assert ru.get_fact("pier").value == "foldmarkx the north pier"  # type: ignore[union-attr]


def test_a_reader_starting_late_sees_what_was_folded_before_and_after(two_processes: tuple[Memory, Memory]) -> None:
    writer, reader = two_processes
    early = [writer.user("u").remember(f"latemarkx kingfisher {i}").id for i in range(7)]
    assert set(early) <= _indexed(reader, "u")
    later = [writer.user("u").remember(f"latemarkx kingfisher later {i}").id for i in range(FOLD_WINDOW + 3)]
    for rid in later:
        assert rid in _indexed(reader, "u")


def test_an_erasure_by_another_process_does_not_hide_the_writers_later_folded_writes(
    three_processes: tuple[Memory, Memory, Memory],
) -> None:
    """The erasure deletes the writer's mark row while its later writes are still folded: the flag names the user,
    so a reader that never saw the writer's mark (here one that first loads after the erasure) finds them."""
    writer, eraser, reader = three_processes
    writer.user("u").remember("erasemarkx first note")  # the mark row of this writer
    writer.user("u").remember("erasemarkx second note")  # folded
    eraser.erase_user("u")
    assert _indexed(reader, "u") == set()
    for i in range(3):
        with counting_writes(writer) as calls:
            note = writer.user("u").remember(f"erasemarkx after the erasure {i}")
        assert calls == ["memories.add"], "folded (the writer does not know of the erasure)"
        assert note.id in _indexed(reader, "u"), f"write {i} after the erasure is not seen"
        assert note.id in _indexed(eraser, "u")


def test_flags_go_when_the_writer_closes(embedding_function: object) -> None:
    prefix = unique_prefix()
    writer = Memory(client=chromadb.EphemeralClient(), embedding_function=embedding_function, collection_prefix=prefix)
    reader = Memory(client=chromadb.EphemeralClient(), embedding_function=embedding_function, collection_prefix=prefix)
    try:
        for user in ("a", "b"):
            for i in range(5):
                writer.user(user).remember(f"closemarkx note {i} of {user}")
        assert len(_flagged(writer, "a")) == len(_flagged(writer, "b")) == 4  # the first write moved the mark row
        assert len(_indexed(reader, "a")) == 5
        writer.close()
        assert _flagged(reader, "a") == _flagged(reader, "b") == []
        assert len(_indexed(reader, "a")) == 5 and len(_indexed(reader, "b")) == 5
    finally:
        writer.close()
        reader.close()


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_readers_stay_in_step_with_writers_of_every_kind(
    three_processes: tuple[Memory, Memory, Memory], embedding_function: object, seed: int
) -> None:
    """Two writers and a reader on one store, random single writes, deletes, facts and erasures: after each step the
    reader's kept index is the index a process loading the user afresh would build."""
    rng = random.Random(seed)
    first, second, reader = three_processes
    prefix = first.storage.memories.name.removesuffix("_memories")
    for step in range(60):
        who = rng.choice((first, second))
        u = who.user("u")
        roll = rng.random()
        if roll < 0.55:
            u.remember(f"stepmarkx note {step} about otters {rng.randrange(1000)}")
        elif roll < 0.7:
            u.log(f"stepmarkx event {step}")
        elif roll < 0.82:
            u.set_fact(rng.choice(("city", "pet", "tea")), f"stepmarkx value {step}")
        elif roll < 0.95:
            mine = u.list()
            if mine:
                u.delete(rng.choice(mine).id)
        else:
            who.erase_user("u")
        fresh = Memory(
            client=chromadb.EphemeralClient(), embedding_function=embedding_function, collection_prefix=prefix
        )
        try:
            assert _indexed(reader, "u") == _indexed(fresh, "u"), f"step {step}"
        finally:
            fresh.close()


def test_a_process_reads_nothing_more_after_its_own_folded_writes(ephemeral_memory: Memory) -> None:
    """Its own flagged rows come back with the marks' read, and are skipped: a warm recall after a folded write reads
    what it reads after a write that moved the mark row (the marks, nothing fetched)."""
    u = ephemeral_memory.user("u")
    u.remember("ownmarkx first note about herons")  # the mark row
    u.recall("herons", k=3)
    with counting_reads(ephemeral_memory) as reads:
        u.recall("herons", k=3)
    warm = [name for name, _ in reads]
    for i in range(FOLD_WINDOW + 2):
        u.remember(f"ownmarkx note {i} about herons")
        with counting_reads(ephemeral_memory) as reads:
            u.recall("herons", k=3)
        assert [name for name, _ in reads] == warm, f"after write {i}"


def test_close_while_flags_are_being_removed_finishes(
    embedding_function: object, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Close waits for the background removal of flags while holding the store's lock: the removal must not need
    that lock (a deadlock otherwise; the join's bound only keeps a hang from stopping the suite)."""
    from memtend.storage.store import Storage

    real = Storage.clear_folds

    def slow(self: Storage, ids: list[str]) -> None:
        time.sleep(0.3)  # still removing when close begins
        real(self, ids)

    monkeypatch.setattr(Storage, "clear_folds", slow)
    prefix = unique_prefix()
    writer = Memory(client=chromadb.EphemeralClient(), embedding_function=embedding_function, collection_prefix=prefix)
    for i in range(FOLD_WINDOW + 1):  # the last write moves the mark row: a removal starts
        writer.user("u").remember(f"closelockx note {i}")
    closing = threading.Thread(target=writer.close, daemon=True)
    closing.start()
    closing.join(timeout=120)
    assert not closing.is_alive(), "close is stuck behind the removal of fold flags"
    reader = Memory(client=chromadb.EphemeralClient(), embedding_function=embedding_function, collection_prefix=prefix)
    try:
        assert _flagged(reader) == [] and len(_indexed(reader, "u")) == FOLD_WINDOW + 1
    finally:
        reader.close()
