"""Atomic writes: a single remember / log / set_fact is one Chroma write (the record and its history row in one
upsert, which Chroma applies as one transaction), on every backend. Counted on the real collection objects:
their write methods are wrapped to count calls, and still do the real work."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from memtend import Memory, Source

WRITE_CALLS = ("add", "upsert", "update", "delete")


@contextmanager
def counting_writes(memory: Memory) -> Iterator[list[str]]:
    """Names of the Chroma write calls made on memtend's collections while the block runs."""
    calls: list[str] = []
    wrapped: list[tuple[Any, str]] = []
    for name, col in memory.storage.collections().items():
        for method in WRITE_CALLS:
            real = getattr(col, method)

            def counted(*args: Any, _real: Any = real, _what: str = f"{name}.{method}", **kwargs: Any) -> Any:
                calls.append(_what)
                return _real(*args, **kwargs)

            setattr(col, method, counted)
            wrapped.append((col, method))
    try:
        yield calls
    finally:
        for col, method in wrapped:
            delattr(col, method)


def test_single_writes_are_one_chroma_write(memory: Memory) -> None:
    u = memory.user("one-write")
    with counting_writes(memory) as calls:
        note = u.remember("prefers short answers")
    assert calls == ["memories.upsert"]
    with counting_writes(memory) as calls:
        event = u.log("deployed the billing service")
    assert calls == ["memories.upsert"]
    for value, outcome in (("email", "added"), ("phone", "updated"), ("phone", "unchanged")):
        with counting_writes(memory) as calls:
            result = u.set_fact("contact.method", value)
        assert result.outcome.value == outcome
        assert calls == ([] if outcome == "unchanged" else ["memories.upsert"]), outcome
    with counting_writes(memory) as calls:  # a lower source is kept out: only its history entry is written
        assert u.set_fact("contact.method", "fax", source=Source.INFERRED).outcome.value == "kept"
    assert calls == ["memories.upsert"]
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
    assert ephemeral_memory.storage.memories.count() == 0
