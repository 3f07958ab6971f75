"""Compaction of fact keys in the review/forget cycle (memtend.consistency.fold): a key's claims older than the grace
window fold into its checkpoint (the slot row) in one write, and the key reads exactly the same before and after:
value, history, archive, recall; claims written since stay claims and still replay after the checkpoint."""

from __future__ import annotations

import json
from typing import Any

import memtend.user_memory as user_memory
import pytest
from memtend import Memory, Source
from memtend.records import fact_id
from memtend.testing.chroma_calls import counting_writes


def _view(memory: Memory, uid: str, key: str) -> Any:
    u = memory.user(uid)
    fid = fact_id(uid, key)
    current = u.get_fact(key)
    return (
        None if current is None else (current.value, current.source, current.created_at, current.updated_at),
        [(h.id, h.op, (h.before or {}).get("value"), (h.after or {}).get("value")) for h in u.history(fid)],
        sorted((r.value, r.source.value) for r in u.list(kinds=["fact"], status="archived")),
        u.facts(),
    )


def test_old_claims_fold_into_the_checkpoint_and_the_key_reads_the_same(
    memory: Memory, monkeypatch: pytest.MonkeyPatch
) -> None:
    uid, key = "folder", "home.city"
    u = memory.user(uid)
    real_now = user_memory.now
    monkeypatch.setattr(user_memory, "now", lambda: real_now() - 3_600.0)  # written an hour ago
    u.set_fact(key, "Lisbon")
    u.set_fact(key, "Porto", source=Source.AGENT)  # kept
    u.set_fact(key, "Faro")  # updated
    monkeypatch.setattr(user_memory, "now", real_now)
    u.set_fact(key, "Braga", source=Source.INFERRED)  # written now: kept, and not folded
    before = _view(memory, uid, key)
    fid = fact_id(uid, key)
    assert memory.storage.memories.get(ids=[fid])["ids"] == []
    with counting_writes(memory) as calls:
        u.forget()
    assert calls.count("memories.upsert") == 1, calls  # the fold is one write (and nothing else was forgotten)
    assert _view(memory, uid, key) == before, "the key reads the same"
    slot = memory.storage.memories.get(ids=[fid], include=["metadatas"])["metadatas"]
    assert slot and json.loads(slot[0]["r"])["value"] == "Faro", "the checkpoint holds the folded value"
    rows = memory.storage.memories.get(where={"fk": fid}, include=["metadatas"])["metadatas"] or []
    statuses = sorted(json.loads(m["r"]).get("status", "active") for m in rows)
    assert statuses == ["active", "archived", "archived", "archived"], "only the claim written since stays active"
    # a value written after the fold replays after the checkpoint, as any claim
    assert u.set_fact(key, "Evora").outcome.value == "updated"
    assert u.get_fact(key).value == "Evora"  # type: ignore[union-attr]
    assert [h.op for h in u.history(fid)][-1] == "update"
    assert u.recall("which city", k=1)[0].record.value == "Evora"
    u.forget()  # nothing old enough to fold now: nothing written
    assert memory.user(uid).get_fact(key).value == "Evora"  # type: ignore[union-attr]
    # past the grace period, a purge deletes the archived values (Lisbon; Faro, which the checkpoint held when
    # Evora replaced it: the key is folded again first, so the slot row holds Evora) and then the folded claims no
    # reader shows (Porto and Braga kept, Faro's and Evora's claims whose value a checkpoint took): no claim row is
    # left, and the key reads the same but for its archive (and the purged values scrubbed from its history)
    settled = _view(memory, uid, key)
    assert u.purge(grace_days=0, now=real_now() + 10) == 2
    assert memory.storage.memories.get(where={"fk": fid})["ids"] == []
    slot = memory.storage.memories.get(ids=[fid], include=["metadatas"])["metadatas"]
    assert slot and json.loads(slot[0]["r"])["value"] == "Evora"
    after = _view(memory, uid, key)
    assert after[0] == settled[0] and after[3] == settled[3] and after[2] == []
    assert [h[:2] for h in after[1]] == [h[:2] for h in settled[1]], "every entry stays (ids, operations)"
    assert "Lisbon" not in json.dumps([h.to_dict() for h in u.history()]), "a purged value is scrubbed"
    receipt = memory.erase_user(uid)
    assert receipt.counts["memories"] == 1  # the slot row alone: every claim was folded and purged
    assert memory.storage.memories.get(where={"user_id": uid})["ids"] == []
