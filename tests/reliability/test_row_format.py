"""The stored row format: a record's fields packed in one metadata value, and a new record's creation entry kept in
its own row (no history row for a remember, log, log_many or a fact's first value). What history(), export and
erasure show stays what it was; rows written by earlier versions (one metadata key per field, a history row per
write) read the same and are rewritten in the new format."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from memtend import Memory, Source
from memtend.policies import changes
from memtend.records import Kind, Record, new_id
from memtend.storage.chroma import history_vector
from memtend.storage.filters import HISTORY_ID_PREFIX, HISTORY_OWNER
from memtend.testing import HashEmbedder

T0 = 1_700_000_000.0


@pytest.fixture
def mem(tmp_path: Path) -> Any:
    """An embedded folder: one process, so a fact's first value keeps its creation entry in its row too (on a store
    other processes share only records new by construction do)."""
    memory = Memory(path=tmp_path / "store", embedding_function=HashEmbedder())
    yield memory
    memory.close()


def _rows(memory: Memory) -> dict[str, dict[str, Any]]:
    got = memory.storage.memories.get(include=["metadatas"])
    return {i: dict(m or {}) for i, m in zip(got["ids"], got["metadatas"] or [], strict=True)}


def test_a_new_record_is_one_row_holding_its_creation_entry(mem: Memory) -> None:
    u = mem.user("ada")
    note = u.remember("prefers tea in the morning", metadata={"project": "apollo", "priority": 2})
    event = u.log("deployed the billing service", at=T0, session="s1")
    rows = _rows(mem)
    assert set(rows) == {note.id, event.id}, "no history row beside the records"
    for rid in (note.id, event.id):
        assert set(rows[rid]) == {"user_id", "last_used_at", "r"}
    packed = json.loads(rows[event.id]["r"])
    assert packed["kind"] == "event" and packed["session"] == "s1" and packed["h"]["op"] == "add"
    assert u.get(note.id) == note and u.get(event.id) == event  # every field reads back, extras with their types
    assert u.get(note.id).extra == {"project": "apollo", "priority": 2}
    history = u.history()
    assert [(h.op, h.record_id) for h in history] == [("add", note.id), ("add", event.id)]
    assert history[0].before is None and history[0].after is not None
    assert history[0].after["text"] == note.text and history[0].after["extra"] == note.extra
    assert mem.storage.count_user("ada")["history"] == 2


def test_history_stays_the_same_when_a_record_is_rewritten_used_or_deleted(mem: Memory) -> None:
    u = mem.user("bob")
    note = u.remember("likes green tea")
    first = u.history(note.id)
    assert [h.op for h in first] == ["add"]
    u.recall("green tea")  # a usage stamp moves last_used_at of the row; the creation entry keeps the old one
    mem.flush_usage()
    assert u.get(note.id).last_used_at > first[0].after["last_used_at"]  # type: ignore[index]
    assert u.history(note.id) == first

    fact = u.set_fact("contact.method", "email")
    added = u.history(fact.record.id)
    before_update = _rows(mem)
    u.set_fact("contact.method", "phone")  # one new claim row of the key: nothing stored is rewritten
    after_update = u.history(fact.record.id)
    assert after_update[0] == added[0], "the first entry kept its id, time and snapshot"
    assert [h.op for h in after_update] == ["add", "update"]
    rows = _rows(mem)
    assert {i: rows[i] for i in before_update} == before_update, "no stored row rewritten"
    (claim_row,) = set(rows) - set(before_update)
    claim = json.loads(rows[claim_row]["r"])
    assert claim["h"]["id"] == after_update[1].id and claim["value"] == "phone", "the claim is the update's entry"
    assert HISTORY_ID_PREFIX + added[0].id not in rows and fact.record.id not in rows, "no history row, no slot row"

    pending = u.remember("the user's boss is Carol", source=Source.EXTERNAL)
    u.approve(pending.id)
    assert [h.op for h in u.history(pending.id)] == ["add", "approve"]

    assert u.delete(note.id).record.id == note.id  # the row goes; its creation entry stays, scrubbed, in a history row
    gone = u.history(note.id)
    assert [h.op for h in gone] == ["add", "delete"] and gone[0].id == first[0].id
    assert gone[0].after is not None and gone[0].after.get("removed") and "text" not in gone[0].after
    assert "likes green tea" not in json.dumps([h.to_dict() for h in u.history()])

    export_ops = [h["op"] for h in u.export()["history"]]
    assert export_ops == [h.op for h in u.history()]
    assert export_ops.count("add") == 3 and export_ops.count("update") == 1

    # one history row per write, as before: the fact's add and update, the pending note's add and its approval,
    # the deleted note's add and its deletion (every creation entry moved out of its row when the row changed)
    assert mem.storage.count_user("bob")["history"] == 6
    receipt = mem.erase_user("bob")
    assert receipt.counts["history"] == 6
    assert mem.storage.memories.count() == 0


def test_a_creation_entry_quoting_a_deleted_record_is_scrubbed(mem: Memory) -> None:
    """A record whose creation entry (in its own row) quotes a record deleted for good (here: derived from it)
    gets that entry scrubbed, moved to a history row; the record itself stays as it is."""
    u = mem.user("cy")
    source = u.log("the launch code word is pelican", at=T0)
    summary = Record(
        id=new_id(),
        user_id="cy",
        kind=Kind.SUMMARY,
        text="summary: a launch was discussed",
        created_at=T0 + 1,
        updated_at=T0 + 1,
        derived_from=[source.id],
    )
    mem.apply(changes.add("cy", [summary]))
    assert json.loads(_rows(mem)[summary.id]["r"])["h"]["op"] == "add"
    mem.apply(changes.reject("cy", source))  # deleted for good, summaries not rebuilt (as a purge does)
    entries = u.history(summary.id)
    assert [h.op for h in entries] == ["add"] and entries[0].after is not None and entries[0].after.get("removed")
    assert u.get(summary.id).text == summary.text
    assert json.loads(_rows(mem)[summary.id]["r"]).get("h") is None


def test_a_fact_update_is_one_claim_row_and_its_entries_are_derived(mem: Memory) -> None:
    """A fact's update writes one row: a new claim of the key (memtend.consistency.claims), which keeps its creation
    entry (op ``set``); the update's history entry is derived from the key's claims, with the claim's write id. History,
    scrubbing on delete, purge and erasure see it as before."""
    u = mem.user("dee")
    first = u.set_fact("contact.method", "email")
    u.set_fact("contact.method", "phone")
    before = _rows(mem)
    third = u.set_fact("contact.method", "pager")
    rows = _rows(mem)
    new_rows = set(rows) - set(before)
    assert len(new_rows) == 1, "the new value is one new row"
    assert {i: rows[i] for i in before} == before, "and nothing stored is rewritten"
    claim_id = new_rows.pop()
    assert claim_id.startswith("fv:") and rows[claim_id]["fk"] == first.record.id
    kept = json.loads(rows[claim_id]["r"])["h"]
    assert kept["op"] == "set" and claim_id.endswith(":" + kept["id"])
    entries = u.history(first.record.id)
    assert [(h.op, (h.before or {}).get("value"), (h.after or {}).get("value")) for h in entries] == [
        ("add", None, "email"),
        ("update", "email", "phone"),
        ("update", "phone", "pager"),
    ]
    assert entries[2].before == u.history()[-1].before and entries[2].after is not None
    assert entries[2].after["key"] == "contact.method" and entries[2].after["extra"] == {}  # expanded as read
    assert entries[2].id == kept["id"] and third.record.value == "pager"
    assert [h.id for h in u.history()] == [h.id for h in entries]
    assert mem.storage.count_user("dee")["history"] == 3

    # the archived "phone" deleted for good: its value goes from every entry quoting it (the key's entries are
    # folded into its checkpoint first, so they outlive the claims they were derived from)
    (archived_id,) = [r.id for r in u.list(status="archived") if r.value == "phone"]
    assert u.delete(archived_id).record.value == "phone"
    assert "phone" not in json.dumps([h.to_dict() for h in u.history()])
    assert "phone" not in json.dumps(list(_rows(mem).values()))
    assert [h.op for h in u.history(first.record.id)] == ["add", "update", "update"]

    # the fact itself deleted: the entries kept in its archived values lose its value too
    u.set_fact("contact.method", "fax")
    u.delete(first.record.id)
    assert "fax" not in json.dumps(list(_rows(mem).values()))
    assert "fax" not in json.dumps([h.to_dict() for h in u.history()])
    counted = mem.storage.count_user("dee")["history"]
    assert mem.erase_user("dee").counts["history"] == counted
    assert mem.storage.memories.count() == 0


def test_a_slot_keeps_its_creation_entry_through_updates_scrubbing_and_a_reopened_store(tmp_path: Path) -> None:
    """Every update of a fact writes two rows, the first one too: the slot's creation entry rides in each new
    version of the slot row. History reads the same from a store reopened (no slot known in memory); deleting the
    first value for good scrubs it from the entry the slot keeps, and a later update does not bring it back."""
    folder = tmp_path / "store"
    with Memory(path=folder, embedding_function=HashEmbedder()) as memory:
        u = memory.user("gus")
        fid = u.set_fact("contact.method", "email").record.id
        for value in ("phone", "pager"):
            before = set(_rows(memory))
            u.set_fact("contact.method", value)
            assert len(set(_rows(memory)) - before) == 1, f"update to {value}: the slot and one archived row"
        expected = [("add", None, "email"), ("update", "email", "phone"), ("update", "phone", "pager")]
        read = [(h.op, (h.before or {}).get("value"), (h.after or {}).get("value")) for h in u.history(fid)]
        assert read == expected
        assert not any(i.startswith(HISTORY_ID_PREFIX) for i in _rows(memory)), "no history row at all"
    with Memory(path=folder, embedding_function=HashEmbedder()) as memory:
        u = memory.user("gus")
        before = set(_rows(memory))
        u.set_fact("contact.method", "fax")  # the slot read from Chroma: its entry is carried as well
        assert len(set(_rows(memory)) - before) == 1
        read = [(h.op, (h.before or {}).get("value"), (h.after or {}).get("value")) for h in u.history(fid)]
        assert read == [*expected, ("update", "pager", "fax")]
        assert memory.storage.count_user("gus")["history"] == 4
        email = [r for r in u.list(status="archived") if r.value == "email"]
        assert len(email) == 1
        u.delete(email[0].id)  # deleted for good: scrubbed from the creation entry the slot row keeps
        assert "email" not in json.dumps(list(_rows(memory).values()))
        assert "email" not in json.dumps([h.to_dict() for h in u.history()])
        u.set_fact("contact.method", "post")  # an update after the scrub carries nothing stale back
        assert "email" not in json.dumps(list(_rows(memory).values()))
        assert [h.op for h in u.history(fid)] == ["add", "update", "update", "update", "update"]
        assert u.get_fact("contact.method").value == "post"  # type: ignore[union-attr]
        counted = memory.storage.count_user("gus")["history"]
        u.delete(fid)  # the slot deleted for good: the entries it kept move to history rows, scrubbed
        assert "post" not in json.dumps(list(_rows(memory).values()))
        assert memory.erase_user("gus").counts["history"] >= counted
        assert memory.storage.memories.count() == 0


def test_entries_kept_in_archived_rows_survive_restore_and_purge(mem: Memory) -> None:
    """A restore writes a claim that takes the key back (the value it replaces shows archived); a purge deletes the
    archived values: the key is folded into its checkpoint first (its derived entries stored as one history row),
    so the fact's history reads the same."""
    u = mem.user("fay")
    fid = u.set_fact("contact.method", "email").record.id
    u.set_fact("contact.method", "phone")
    u.set_fact("contact.method", "pager")
    old = [r for r in u.list(status="archived") if r.value == "email"]
    assert len(old) == 1
    u.restore(old[0].id)
    assert u.get_fact("contact.method").value == "email"  # type: ignore[union-attr]
    ops = [(h.id, h.op) for h in u.history(fid)]
    assert [op for _, op in ops] == ["add", "update", "update", "restore"]
    counted = mem.storage.count_user("fay")["history"]
    assert u.purge(grace_days=0, now=time.time() + 10 * 86_400) >= 2
    assert not any("h_record" in m for m in _rows(mem).values()), "no archived row left keeps an entry"
    assert [(h.id, h.op) for h in u.history(fid)] == ops
    assert "pager" not in json.dumps(list(_rows(mem).values()))  # purged for good: scrubbed from the history
    # the purge folded the key first: the entries its claims kept (the three set_fact claims; a restore claim names
    # its operation in its id) and the restore's are one history row now
    assert counted == 3 and mem.storage.count_user("fay")["history"] == 1
    assert [r.value for r in u.list(status=None)] == ["email"], "the restored value stands; nothing else is shown"


def test_a_shared_store_resolves_a_key_from_its_rows_in_two_reads(ephemeral_memory: Memory) -> None:
    """On a store processes share, each set_fact is a claim row of the key and reads nothing; a reader (another
    process) resolves the key from its rows in two gets, the slot row by id and the claims by their key field, and
    finds every write, in the order written, with what it did."""
    from memtend.records import fact_id

    u = ephemeral_memory.user("eve")
    written = [
        u.set_fact("contact.method", "email"),
        u.set_fact("contact.method", "phone", source=Source.AGENT),  # kept: a guess never replaces the user
        u.set_fact("contact.method", "pager"),
    ]
    fid = fact_id("eve", "contact.method")
    reads: list[Any] = []
    real = ephemeral_memory.storage.memories.get

    def get(*args: Any, **kwargs: Any) -> Any:
        reads.append(kwargs)
        return real(*args, **kwargs)

    ephemeral_memory.storage.memories.get = get  # type: ignore[method-assign]
    try:
        resolved = ephemeral_memory.storage.resolve_fact("eve", fid)
    finally:
        del ephemeral_memory.storage.memories.get
    assert [r.get("ids") for r in reads] == [[fid], None]
    assert reads[1]["where"] == {"$and": [{"user_id": {"$eq": "eve"}}, {"fk": {"$eq": fid}}]}
    assert resolved.current is not None and resolved.current.value == "pager"
    assert [(e.op, (e.after or {}).get("value")) for e in resolved.entries] == [
        ("add", "email"),
        ("kept", "email"),
        ("update", "pager"),
    ]
    assert [r.outcome.value for r in written] == ["added", "kept", "updated"]  # each read lazily, once
    assert [h.op for h in u.history(fid)] == ["add", "kept", "update"]


# ----------------------------------------------------------------------------- rows written by earlier versions
def _old_metadata(record: Record) -> dict[str, Any]:
    """The metadata an earlier version stored: one key per field, defaults left out, caller metadata as x_*."""
    meta: dict[str, Any] = {
        "user_id": record.user_id,
        "kind": record.kind.value,
        "source": record.source.value,
        "status": record.status.value,
        "created_at": record.created_at,
        "updated_at": record.updated_at,
        "last_used_at": record.last_used_at,
    }
    optional = {"key": record.key, "value": record.value, "session": record.session, "flagged": record.flagged}
    meta.update((k, v) for k, v in optional.items() if v)
    if record.derived_from:
        meta["derived_from"] = json.dumps(record.derived_from)
    meta.update(("x_" + k, v) for k, v in record.extra.items())
    return meta


def _write_old(memory: Memory, records: list[Record], op_source: str = "user") -> list[str]:
    """Store records as an earlier version did: the records and one history row for them, in one upsert."""
    col = memory.storage.memories
    vectors = memory.embed([r.text for r in records])
    entry_ids = [new_id() for _ in records]
    entries = [
        {"id": e, "op": "add", "record_id": r.id, "source": op_source, "after": r.snapshot()}
        for e, r in zip(entry_ids, records, strict=True)
    ]
    row_id = HISTORY_ID_PREFIX + entry_ids[0]
    col.upsert(
        ids=[r.id for r in records] + [row_id],
        documents=[r.text for r in records] + [json.dumps({"entries": entries})],
        metadatas=[_old_metadata(r) for r in records]
        + [{HISTORY_OWNER: records[0].user_id, "at": T0, "record_ids": sorted(r.id for r in records)}],
        embeddings=np.vstack([vectors, history_vector(row_id, vectors.shape[1])[None, :]]),
    )
    return entry_ids


def test_rows_written_by_earlier_versions_read_the_same_and_are_rewritten_in_the_new_format(mem: Memory) -> None:
    from memtend.records import fact_id

    uid = "old-timer"
    note = Record(
        id=new_id(),
        user_id=uid,
        kind=Kind.NOTE,
        text="works on the apollo project",
        created_at=T0,
        updated_at=T0,
        last_used_at=T0,
        session="s9",
        extra={"project": "apollo", "priority": 2, "urgent": True},
    )
    fid = fact_id(uid, "contact.method")
    fact = Record(
        id=fid,
        user_id=uid,
        kind=Kind.FACT,
        text="contact method: email",
        key="contact.method",
        value="email",
        created_at=T0,
        updated_at=T0,
        last_used_at=T0,
    )
    entry_ids = _write_old(mem, [note, fact])
    u = mem.user(uid)
    assert u.get(note.id) == note and u.get(fid) == fact
    assert u.get_fact("contact.method") == fact and u.facts() == {"contact.method": "email"}
    assert [h.id for h in u.history()] == entry_ids
    assert u.recall("apollo project", k=1)[0].record.id == note.id

    # the slot row reads as the key's checkpoint: a new value is a claim beside it, no migration pass rewrites it
    legacy = _rows(mem)[fid]
    assert u.set_fact("contact.method", "phone").outcome.value == "updated"
    assert _rows(mem)[fid] == legacy, "the old slot row stands as it was"
    assert u.get_fact("contact.method").value == "phone"  # type: ignore[union-attr]
    assert u.facts() == {"contact.method": "phone"}
    assert [h.op for h in u.history(fid)] == ["add", "update"]
    assert u.history(fid)[0].id == entry_ids[1], "the old history row still tells the first value"
    assert [r.value for r in u.list(status="archived")] == ["email"]
    assert u.recall("contact method", k=1)[0].record.value == "phone"

    u.delete(note.id)
    assert [h.op for h in u.history(note.id)] == ["add", "delete"]
    counts = mem.storage.count_user(uid)
    assert counts["memories"] == 2 and counts["history"] == 3  # the slot and the claim; three history rows

    # folding the key (here a purge of the archived old value) rewrites the slot row in the new format
    assert u.purge(grace_days=0, now=time.time() + 10 * 86_400) == 1
    stored = _rows(mem)[fid]
    assert set(stored) == {"user_id", "last_used_at", "r"}, "the old per-field keys are cleared"
    assert mem.storage.memories.get(ids=[fid], include=["documents"])["documents"] == [""], "and the document"
    assert json.loads(stored["r"])["value"] == "phone"
    assert u.get_fact("contact.method").value == "phone"  # type: ignore[union-attr]
    assert [h.op for h in u.history(fid)] == ["add", "update"] and u.list(status="archived") == []


def test_rows_holding_their_text_as_a_document_read_the_same_and_lose_it_when_rewritten(mem: Memory) -> None:
    """Rows written before the text moved into ``r`` hold it as Chroma's document: they read the same, and a
    rewrite clears the document (Chroma keeps one an upsert does not name), so no earlier text stays behind."""
    from memtend.records import fact_id

    uid = "doc-era"
    fid = fact_id(uid, "contact.method")
    fact = Record(id=fid, user_id=uid, kind=Kind.FACT, text="contact method: email", key="contact.method",
                  value="email", created_at=T0, updated_at=T0, last_used_at=T0)  # fmt: skip
    note = Record(id=new_id(), user_id=uid, kind=Kind.NOTE, text="works on the apollo project", created_at=T0,
                  updated_at=T0, last_used_at=T0)  # fmt: skip
    metas = []
    for r in (fact, note):
        meta = r.to_metadata()
        packed = json.loads(str(meta["r"]))
        del packed["text"]
        metas.append({**meta, "r": json.dumps(packed)})
    col = mem.storage.memories
    col.upsert(ids=[fid, note.id], documents=[fact.text, note.text], metadatas=metas,
               embeddings=mem.embed([fact.text, note.text]))  # fmt: skip
    u = mem.user(uid)
    assert u.get(fid) == fact and u.get(note.id) == note
    assert u.recall("apollo project", k=1)[0].record.id == note.id
    assert u.set_fact("contact.method", "phone").outcome.value == "updated"
    assert u.get_fact("contact.method").value == "phone"  # type: ignore[union-attr]
    archived = u.list(status="archived")
    assert [r.text for r in archived] == ["contact method: email"], "the checkpoint's value, replaced by a claim"
    claims = col.get(where={"fk": fid}, include=["documents"])
    assert len(claims["ids"]) == 1 and claims["documents"] == [None], "a new row has none"
    assert [h.op for h in u.history(fid)] == ["update"]  # its creation entry was in an old-era history row: none
    # the slot row keeps its document until the key is folded (here by a purge of that archived value)
    assert col.get(ids=[fid], include=["documents"])["documents"] == [fact.text]
    assert u.purge(grace_days=0, now=T0 + 10_000 * 86_400) == 1
    assert col.get(ids=[fid], include=["documents"])["documents"] == [""]
    assert col.get(where_document={"$contains": "email"}, include=[])["ids"] == []
    assert u.get_fact("contact.method").value == "phone"  # type: ignore[union-attr]


def test_on_a_shared_store_a_write_and_its_change_mark_are_one_call(ephemeral_memory: Memory) -> None:
    """An in-process client another Memory may share: a fact's value is a claim row (new by construction, so it keeps
    its creation entry like a note); the first write's mark is a row of the same upsert, the next write's is folded
    into its own row (one row added, flagged), until a later mark lists it and the flag goes."""
    from memtend.storage.marks import FOLD_KEY, MARK_OWNER, ChangeMarks
    from memtend.testing.chroma_calls import counting_writes

    assert not ephemeral_memory.exclusive
    u = ephemeral_memory.user("shared")
    with counting_writes(ephemeral_memory) as calls:
        note = u.remember("a shared note")
        fact = u.set_fact("city", "Lisbon").record
    assert calls == ["memories.upsert", "memories.add"]
    rows = _rows(ephemeral_memory)
    mark = ChangeMarks.mark_id("shared", ephemeral_memory._state.writer_id)
    (claim,) = [i for i in rows if i.startswith("fv:")]
    assert rows[mark][MARK_OWNER] == "shared" and note.id in rows[mark]["recent"] and fact.id not in rows
    assert rows[claim][FOLD_KEY] == "shared" and claim not in rows[mark]["recent"] and FOLD_KEY not in rows[note.id]
    ephemeral_memory._state.settle_folds()  # as on close: the mark moves, listing the folded write; the flag goes
    rows = _rows(ephemeral_memory)
    assert claim in rows[mark]["recent"] and FOLD_KEY not in rows[claim] and rows[claim]["user_id"] == "shared"
    # a claim is new by construction: it keeps its creation entry in its row, as a note does
    assert "h" in json.loads(rows[note.id]["r"]) and json.loads(rows[claim]["r"])["h"]["op"] == "set"
    assert [h.op for h in u.history()] == ["add", "add"]
    assert ephemeral_memory.users() == ["shared"]
    receipt = ephemeral_memory.erase_user("shared")
    assert receipt.counts["history"] == 2 and receipt.counts["changes"] == 1
    assert set(_rows(ephemeral_memory)) == {"erasures"}, "only the store-wide erasure mark is left"


def test_a_damaged_history_entry_is_left_out_with_a_warning_naming_its_row(
    mem: Memory, caplog: pytest.LogCaptureFixture
) -> None:
    """A history row edited outside memtend (an entry without its id, operation or record id, or not an object):
    the user's other history still reads, and a warning names the row (the damage is not hidden)."""
    u = mem.user("dee")
    note = u.remember("likes rooibos")
    u.approve(u.remember("works at the harbour", source=Source.EXTERNAL).id)  # a history row of its own
    u.delete(note.id)  # the creation entry moves to a history row, beside the deletion's
    whole = u.history()
    got = mem.storage.memories.get(where={HISTORY_OWNER: {"$eq": "dee"}}, include=["documents"])
    assert got["ids"], "the writes above leave history rows"
    row_id, document = got["ids"][0], got["documents"][0]
    body = json.loads(document)
    kept = [e["id"] for e in body["entries"]]
    body["entries"] += [{"op": "update", "record_id": note.id}, {"id": "x", "record_id": note.id}, 7]
    mem.storage.memories.update(ids=[row_id], documents=[json.dumps(body)])
    with caplog.at_level("WARNING", logger="memtend"):
        after = u.history()
    assert after == whole, "the entries as written still read; the damaged ones are left out"
    assert all(e in {h.id for h in after} for e in kept)
    warned = [r.getMessage() for r in caplog.records if r.name == "memtend" and r.levelname == "WARNING"]
    assert len(warned) == 1 and row_id in warned[0] and "3 damaged entries" in warned[0]
    assert "likes rooibos" not in warned[0]
    assert mem.erase_user("dee").counts["history"] >= 1
    assert mem.storage.memories.count() == 0, "erasure removes the damaged row too"
