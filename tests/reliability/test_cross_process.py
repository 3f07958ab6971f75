"""Processes sharing a store see each other's writes and erasures by the next recall, whatever their clocks say.

In-process pairs of Memory objects over two EphemeralClients (separate states, one store: how two processes see a
server), and real processes on a ``chroma run`` server.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import TypeVar

import memtend.user_memory
import memtend.writing.apply
import pytest
from memtend import Memory

T = TypeVar("T")


def _skewed(monkeypatch: pytest.MonkeyPatch, seconds: float, call: Callable[[], T]) -> T:
    """Run ``call`` as a process whose clock is ``seconds`` off would."""
    with monkeypatch.context() as m:
        for module in (memtend.writing.apply, memtend.user_memory):  # the write path and the facade read the clock
            m.setattr(module, "now", lambda: time.time() + seconds)
        return call()


@pytest.mark.parametrize("skew", [-30.0, -3600.0, 3600.0])
def test_a_writer_with_a_wrong_clock_is_seen_at_once(
    two_processes: tuple[Memory, Memory], monkeypatch: pytest.MonkeyPatch, skew: float
) -> None:
    writer, reader = two_processes
    wu, ru = writer.user("u"), reader.user("u")
    assert ru.recall("otter", k=5) == []  # the reader's index is loaded (and empty)
    for i in range(5):
        note = _skewed(monkeypatch, skew, lambda i=i: wu.remember(f"skewmarkx otter number {i} by the river"))
        got = {h.record.id for h in ru.recall("otter by the river", k=10)}
        assert note.id in got, f"write {i} of a writer {skew:+.0f} s off is not seen by the next recall"
    gone = wu.list()[0]
    _skewed(monkeypatch, skew, lambda: wu.delete(gone.id))
    assert gone.id not in {h.record.id for h in ru.recall("otter by the river", k=10)}
    _skewed(monkeypatch, skew, lambda: wu.set_fact("pet", "skewmarkx an otter"))
    assert "pet: skewmarkx an otter" in {h.text for h in ru.recall("pet otter", k=10)}


def test_an_erasure_and_a_recreation_are_seen_by_the_next_recall(two_processes: tuple[Memory, Memory]) -> None:
    writer, reader = two_processes
    for i in range(8):
        text = f"recreatemarkx round {i}: a heron on the pier"
        writer.user("u").remember(text)
        assert [h.text for h in reader.user("u").recall("heron pier", k=5)] == [text]
        writer.erase_user("u")
        assert reader.user("u").recall("heron pier", k=5) == [], f"round {i}: the erased text is still recalled"


def test_a_delete_by_another_process_is_not_recalled(two_processes: tuple[Memory, Memory]) -> None:
    writer, reader = two_processes
    notes = [writer.user("u").remember(f"delmarkx kingfisher sighting {i}") for i in range(4)]
    assert len(reader.user("u").recall("kingfisher sighting", k=10)) == 4
    for n in notes[:3]:
        writer.user("u").delete(n.id)
    assert [h.record.id for h in reader.user("u").recall("kingfisher sighting", k=10)] == [notes[3].id]
