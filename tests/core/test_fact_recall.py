"""Recall over read-time fact precedence (memtend.consistency.claims): the per-user index holds a key's current value
alone, under the fact id; a guess kept out, or a value replaced, is never recalled as current, in this process
and in another one whose index is cached (it catches up from the claims the writer marked)."""

from __future__ import annotations

from memtend import Memory, Source
from memtend.records import fact_id


def _recalled(memory: Memory, uid: str, query: str) -> list[tuple[str, str, str]]:
    hits = memory.user(uid).recall(query, k=10)
    return [(h.record.id, h.record.value, h.record.status.value) for h in hits if h.record.kind.value == "fact"]


def test_recall_shows_the_current_value_alone(memory: Memory) -> None:
    u = memory.user("ana")
    fid = fact_id("ana", "home.city")
    u.set_fact("home.city", "Lisbon")
    u.recall("where does she live", k=3)  # the index is loaded (and then kept in step by the writes below)
    u.set_fact("home.city", "Porto", source=Source.AGENT)  # a guess: kept out
    assert _recalled(memory, "ana", "home city Porto Lisbon") == [(fid, "Lisbon", "active")]
    u.set_fact("home.city", "Faro")  # the user's update
    assert _recalled(memory, "ana", "home city Porto Lisbon Faro") == [(fid, "Faro", "active")]
    memory._indexes.clear()  # a cold load resolves the same
    assert _recalled(memory, "ana", "home city Porto Lisbon Faro") == [(fid, "Faro", "active")]
    assert sorted(r.value for r in u.list(kinds=["fact"], status="archived")) == ["Lisbon"]


def test_another_process_with_a_cached_index_never_recalls_a_losing_guess(
    two_processes: tuple[Memory, Memory],
) -> None:
    a, b = two_processes
    fid = fact_id("u", "drink")
    a.user("u").set_fact("drink", "tea")
    assert _recalled(b, "u", "drink tea coffee") == [(fid, "tea", "active")]  # b's index is now cached
    a.user("u").set_fact("drink", "coffee", source=Source.INFERRED)  # kept
    assert _recalled(b, "u", "drink tea coffee") == [(fid, "tea", "active")]
    a.user("u").set_fact("drink", "water")
    assert _recalled(b, "u", "drink tea coffee water") == [(fid, "water", "active")]
    b.user("u").set_fact("drink", "juice", source=Source.AGENT)  # b's own guess: its index re-reads the key
    assert _recalled(b, "u", "drink tea coffee water juice") == [(fid, "water", "active")]
    assert _recalled(a, "u", "drink tea coffee water juice") == [(fid, "water", "active")]
