"""Isolation between users for every operation, erasure leaving nothing, and bad input refused cleanly."""

from __future__ import annotations

import math

import pytest
from memtend import (
    Event,
    InvalidInputError,
    InvalidUserIdError,
    Kind,
    Memory,
    RecordNotFoundError,
    SensitiveDataError,
    Source,
    UnknownKindError,
)
from memtend.records import MAX_TEXT_CHARS

T0 = 1_700_000_000.0


def _fill(mem: Memory, uid: str, word: str) -> dict[str, str]:
    u = mem.user(uid)
    ids = {
        "fact": u.set_fact("colour", word).record.id,
        "note": u.remember(f"{word} note about gardening").id,
        "event": u.log(f"{word} event: watered the {word} plants", at=T0).id,
        "rule": u.add_rule(f"Always greet {word} politely").id,
    }
    u.log_many(Event(f"{word} log line {i}", at=T0 + i) for i in range(5))
    u.store("session:s1").put("colour", word)
    return ids


def test_users_never_see_each_other(memory: Memory) -> None:
    a_ids = _fill(memory, "alice", "crimson")
    b_ids = _fill(memory, "bob", "teal")
    alice, bob = memory.user("alice"), memory.user("bob")
    for query in ["gardening note", "what colour", "greet politely", "log line", "teal plants"]:
        hits = alice.recall(query, k=20)
        assert hits, f"alice recalls nothing for {query!r}: the checks below would pass on nothing"
        assert all(h.record.user_id == "alice" for h in hits)
        assert all("teal" not in h.text for h in hits)
    bob_records = bob.list(status=None)
    assert len(bob_records) >= 9 and all(r.user_id == "bob" for r in bob_records)
    assert "crimson" not in str(bob.export())
    assert "teal" not in str(alice.export())
    assert bob.facts() == {"colour": "teal"}
    for rid in a_ids.values():
        with pytest.raises(RecordNotFoundError):
            bob.get(rid)
        with pytest.raises(RecordNotFoundError):
            bob.delete(rid)
    assert bob.store("session:s1").get("colour") == "teal"
    bob.compact(keep_recent=1)
    bob.forget(now=T0 + 10_000 * 86_400)
    assert len(alice.list(kinds=[Kind.EVENT])) == 6, "bob's compaction and forgetting left alice alone"
    assert alice.get(a_ids["note"]).text.startswith("crimson")
    assert len(set(b_ids.values())) == len(b_ids)  # bob's ids are distinct
    assert not set(a_ids.values()) & set(b_ids.values())
    for kind, rid in b_ids.items():  # each is bob's own record, and out of alice's reach
        assert bob.get(rid).user_id == "bob" and "teal" in bob.get(rid).text, kind
        with pytest.raises(RecordNotFoundError):
            alice.get(rid)


def test_erasure_leaves_nothing(memory: Memory) -> None:
    _fill(memory, "alice", "crimson")
    _fill(memory, "bob", "teal")
    alice = memory.user("alice")
    alice.set_fact("colour", "amber")
    alice.compact(keep_recent=1)
    alice.forget(now=T0 + 10_000 * 86_400)
    before_bob = memory.storage.count_user("bob")
    receipt = memory.erase_user("alice")
    assert receipt.counts["memories"] >= 11 and receipt.counts["history"] > 0
    assert receipt.counts["documents"] == 2  # the store item and its namespace row
    assert set(memory.storage.count_user("alice").values()) == {0}
    for name, col in memory.storage.collections().items():
        everything = col.get(include=["documents", "metadatas"])
        # history rows (beside the records) name their owner in h_user, change marks in m_user (the store-wide
        # erasure mark: m_store)
        owners = [
            m.get("user_id", m.get("h_user", m.get("m_user", m.get("m_store")))) for m in everything["metadatas"] or []
        ]
        assert None not in owners and "alice" not in owners, name
        texts = [d or "" for d in everything["documents"] or []]  # a record's text is in its metadata ("r")
        texts += [v for m in everything["metadatas"] or [] for v in (m or {}).values() if isinstance(v, str)]
        assert not any("crimson" in t or "amber" in t for t in texts), name
    assert memory.storage.count_user("bob") == before_bob
    assert memory.user("alice").recall("crimson", k=5) == []
    assert "alice" not in memory.users()


@pytest.mark.parametrize("bad", ["", "   ", None, 42, b"alice", "x" * 300, "\ud800bad"])
def test_bad_user_ids(ephemeral_memory: Memory, bad: object) -> None:
    with pytest.raises(InvalidUserIdError):
        ephemeral_memory.user(bad)  # type: ignore[arg-type]
    with pytest.raises(InvalidUserIdError):
        ephemeral_memory.erase_user(bad)  # type: ignore[arg-type]


@pytest.mark.parametrize("uid", ["$or", '{"$ne": ""}', "o'brien\"; --", "ユーザー🙂", "a" * 256, "$and", "user_id"])
def test_hostile_user_ids_stay_isolated(ephemeral_memory: Memory, uid: str) -> None:
    ephemeral_memory.user("victim").remember("victim secret plan about tulips")
    hostile = ephemeral_memory.user(uid)
    hostile.remember("hostile note about tulips")
    assert [h.text for h in hostile.recall("tulips", k=10)] == ["hostile note about tulips"]
    assert ephemeral_memory.erase_user(uid).counts["memories"] == 1
    assert [h.text for h in ephemeral_memory.user("victim").recall("tulips", k=10)] == [
        "victim secret plan about tulips"
    ]


def test_bad_input_is_refused_and_loses_nothing(ephemeral_memory: Memory) -> None:
    alice = ephemeral_memory.user("alice")
    alice.set_fact("editor", "vim")
    kept = alice.remember("keep me")
    before = alice.export()["records"]
    cases = [
        (lambda: alice.remember(""), InvalidInputError),
        (lambda: alice.remember("   \n"), InvalidInputError),
        (lambda: alice.remember(None), InvalidInputError),  # type: ignore[arg-type]
        (lambda: alice.remember("x" * (MAX_TEXT_CHARS + 1)), InvalidInputError),
        (lambda: alice.remember("lone \udc80 surrogate"), InvalidInputError),
        (lambda: alice.remember("ok", metadata={"nested": {"a": 1}}), InvalidInputError),
        (lambda: alice.remember("ok", metadata={"n": math.nan}), InvalidInputError),
        (lambda: alice.remember("ok", metadata={"n": math.inf}), InvalidInputError),
        (lambda: alice.remember("ok", metadata={"l": None}), InvalidInputError),
        (lambda: alice.remember("ok", source="oracle"), InvalidInputError),
        (lambda: alice.list(kinds=["memo"]), UnknownKindError),
        (lambda: alice.recall("q", kinds=["memo"]), UnknownKindError),
        (lambda: alice.recall("q", k=0), InvalidInputError),
        (lambda: alice.recall(""), InvalidInputError),
        (lambda: alice.set_fact("", "x"), InvalidInputError),
        (lambda: alice.set_fact("editor", ""), InvalidInputError),
        (lambda: alice.set_fact("editor", 3), InvalidInputError),  # type: ignore[arg-type]
        (lambda: alice.set_fact("editor", "password: hunter2!x"), SensitiveDataError),
        (lambda: alice.log("x", at=math.nan), InvalidInputError),
        (lambda: alice.log_many([Event("fine"), Event("")]), InvalidInputError),
        (lambda: alice.log_many(["fine", 3]), InvalidInputError),  # type: ignore[list-item]
        (lambda: alice.compact(keep_recent=-1), InvalidInputError),
        (lambda: alice.get(""), InvalidInputError),
        (lambda: alice.store("ns").put("k", {"v": math.nan}), InvalidInputError),
        (lambda: alice.store("ns").put("k", object()), InvalidInputError),
        (lambda: alice.approve(kept.id), InvalidInputError),
    ]
    for call, error in cases:
        with pytest.raises(error):
            call()
    assert alice.export()["records"] == before, "a refused write must leave stored data as it was"
    assert alice.store("ns").items() == []


def test_unknown_kind_error_names_the_choices() -> None:
    with pytest.raises(UnknownKindError, match="fact, event, rule, summary, note"):
        Kind.parse("memo")


def test_external_source_accepted_as_string(ephemeral_memory: Memory) -> None:
    note = ephemeral_memory.user("alice").remember("From a web page: the museum opens at 9", source="external")
    assert note.source is Source.EXTERNAL
