"""Memory(on_change=...): every write, archive, redaction, deletion and erasure reaches the hook as a typed event,
once stored, and never a refused value."""

from __future__ import annotations

import json
from dataclasses import asdict

import pytest
from memtend import ChangeEvent, ChangeType, InvalidInputError, Memory, SensitiveDataError, Source
from memtend.policies.forgetting import DAY

T0 = 1_700_000_000.0
CARD = "4111 1111 1111 1111"


@pytest.fixture
def seen(ephemeral_memory: Memory) -> list[ChangeEvent]:
    events: list[ChangeEvent] = []
    ephemeral_memory.on_change = events.append
    return events


def _types(events: list[ChangeEvent]) -> list[tuple[str, str]]:
    return [(e.type.value, e.op) for e in events]


def test_writes_updates_and_archives_are_seen(ephemeral_memory: Memory, seen: list[ChangeEvent]) -> None:
    u = ephemeral_memory.user("hooked")
    note = u.remember("Prefers tea")
    assert _types(seen) == [("write", "add")]
    assert seen[0].record == note and seen[0].user_id == "hooked" and seen[0].record_id == note.id
    seen.clear()
    u.set_fact("drink", "tea")
    u.set_fact("drink", "coffee")
    assert _types(seen) == [("write", "add"), ("archive", "archive"), ("write", "update")]
    assert seen[1].record is not None and seen[1].record.value == "tea"
    seen.clear()
    u.set_fact("drink", "water", source=Source.INFERRED)  # kept: nothing stored changes
    u.set_fact("drink", "coffee")  # unchanged
    assert seen == []


def test_redaction_is_seen_without_the_value(ephemeral_memory: Memory, seen: list[ChangeEvent]) -> None:
    u = ephemeral_memory.user("hooked")
    u.remember(f"My card is {CARD}", redact=True)
    assert _types(seen) == [("write", "add"), ("redaction", "redact")]
    assert seen[1].redacted, "the masked kinds are named"
    assert seen[1].record is not None and "[REDACTED:" in seen[1].record.text
    dumped = json.dumps([asdict(e) for e in seen], default=str)
    assert "4111" not in dumped


def test_refused_writes_reach_no_hook(ephemeral_memory: Memory, seen: list[ChangeEvent]) -> None:
    u = ephemeral_memory.user("hooked")
    with pytest.raises(SensitiveDataError):
        u.remember(f"My card is {CARD}")
    with pytest.raises(SensitiveDataError):
        u.set_fact("card", CARD)
    with pytest.raises(InvalidInputError):
        u.log("")
    assert seen == []


def test_forgetting_compaction_deletion_and_erasure(ephemeral_memory: Memory, seen: list[ChangeEvent]) -> None:
    u = ephemeral_memory.user("hooked")
    events = [u.log(f"Step {i} of the migration", at=T0 + i) for i in range(4)]
    seen.clear()
    report = u.compact(keep_recent=1)
    assert report.summary is not None
    assert _types(seen) == [("write", "compact")] + [("archive", "archive")] * 3
    seen.clear()
    u.delete(events[3].id)
    assert _types(seen) == [("delete", "delete")] and seen[0].record is None
    seen.clear()
    u.remember("An old note")
    seen.clear()
    u.forget(now=T0 + 10_000 * DAY)
    assert {e.type for e in seen} == {ChangeType.ARCHIVE} and {e.op for e in seen} == {"forget"}
    seen.clear()
    receipt = ephemeral_memory.erase_user("hooked")
    assert _types(seen) == [("erasure", "erase")]
    assert seen[0].counts == receipt.counts and seen[0].user_id == "hooked"


def test_a_failing_hook_does_not_undo_or_fail_the_write(ephemeral_memory: Memory) -> None:
    def broken(event: ChangeEvent) -> None:
        raise RuntimeError("tracer down")

    ephemeral_memory.on_change = broken
    u = ephemeral_memory.user("hooked")
    note = u.remember("Still stored")
    assert u.get(note.id).text == "Still stored"


def test_on_change_must_be_callable(embedding_function) -> None:  # type: ignore[no-untyped-def]
    import chromadb

    with pytest.raises(InvalidInputError):
        Memory(client=chromadb.EphemeralClient(), embedding_function=embedding_function, on_change="print")  # type: ignore[arg-type]


def test_document_writes_redactions_and_deletes_are_seen(ephemeral_memory: Memory, seen: list[ChangeEvent]) -> None:
    docs = ephemeral_memory.documents("hooked")
    docs.put(("notes",), "a", {"text": "Prefers tea"})
    assert _types(seen) == [("write", "document.put")]
    assert seen[0].user_id == "hooked" and seen[0].record is None and seen[0].record_id
    doc_id = seen[0].record_id
    seen.clear()
    with pytest.raises(SensitiveDataError):
        docs.put(("notes",), "b", {"text": f"My card is {CARD}"})
    assert seen == [], "a refused document reaches no hook"
    masked = ephemeral_memory.documents("hooked", redact=True)
    masked.put(("notes",), "c", {"text": f"My card is {CARD}"})
    assert _types(seen) == [("write", "document.put"), ("redaction", "redact")]
    assert seen[1].redacted and "4111" not in json.dumps([asdict(e) for e in seen], default=str)
    seen.clear()
    docs.put(("blobs",), "opaque", b"\x00\x01")  # bytes are not gated, but the write is still seen
    assert _types(seen) == [("write", "document.put")]
    seen.clear()
    assert docs.delete(("notes",), "a")
    assert _types(seen) == [("delete", "document.delete")] and seen[0].record_id == doc_id
    seen.clear()
    assert docs.delete_prefix(("notes",)) == 1
    assert _types(seen) == [("delete", "document.delete")]
    seen.clear()
    ephemeral_memory.user("hooked").session("t1").set("branch", "main")  # working memory is documents too
    assert seen and {e.type for e in seen} == {ChangeType.WRITE}, "session state is written as documents, and seen"
