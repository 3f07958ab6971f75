"""capture on every backend: what a turn keeps, write or merge, fact precedence for corrections, provenance."""

from __future__ import annotations

import asyncio
import json

from memtend import Kind, Memory, Message, Source, Status, llm_extractor


def _turn(text: str, reply: str = "Understood.", id: str = "") -> list[Message]:
    return [Message("user", text, id=id or None), Message("assistant", reply)]


def test_chit_chat_is_not_stored_a_statement_becomes_a_fact_with_its_provenance(memory: Memory) -> None:
    alice = memory.user("alice")
    report = alice.capture(
        [
            *_turn("Tell me a joke", "Why did the chicken..."),
            *_turn("Understood."),
            *_turn("I moved to Porto.", id="m7"),
        ],
        session="thread-1",
        offset=20,
    )
    assert [(c.candidate.key, c.action) for c in report.captured] == [("home.city", "added")]
    assert {d.text for d in report.dropped} >= {"Tell me a joke", "Understood."}
    assert all(d.reason for d in report.dropped)
    assert alice.facts() == {"home.city": "Porto"}
    assert alice.list(kinds=[Kind.NOTE, Kind.EVENT]) == []
    stored = alice.get_fact("home.city")
    assert stored is not None and stored.session == "thread-1" and stored.source is Source.USER
    assert stored.extra["capture_turn"] == 24 and stored.extra["capture_turn_id"] == "m7"
    assert stored.extra["capture_kind"] == "fact" and "home city" in str(stored.extra["capture_reason"])


def test_a_correction_archives_the_old_value_restorably(memory: Memory) -> None:
    alice = memory.user("alice")
    alice.capture(_turn("I moved to Porto."), session="s1")
    report = alice.capture(_turn("Actually, I live in Lisbon now."), session="s2")
    assert [c.action for c in report.captured] == ["updated"]
    facts = alice.list(kinds=[Kind.FACT], status=None)
    active = [r.value for r in facts if r.status is Status.ACTIVE]
    archived = [r for r in facts if r.status is Status.ARCHIVED]
    assert active == ["Lisbon"] and [r.value for r in archived] == ["Porto"]
    alice.restore(archived[0].id)
    assert alice.facts() == {"home.city": "Porto"}


def test_exact_and_near_duplicates_refresh_instead_of_adding(memory: Memory) -> None:
    alice = memory.user("alice")
    first = alice.remember("Prefers short answers", session="s1")
    again = alice.remember("prefers  short answers", session="s2", source=Source.AGENT)
    assert again.id == first.id and again.extra["said_times"] == 2
    assert again.extra["said_by"] == "user,agent" and again.extra["said_in"] == "s1,s2"
    assert again.last_used_at >= first.last_used_at and again.source is Source.USER
    alice.capture(_turn("I prefer short answers."), session="s3")
    report = alice.capture(_turn("I prefer short answers."), session="s4")
    assert [c.action for c in report.captured] == ["duplicate"]
    assert report.captured[0].record is not None and "s4" in str(report.captured[0].record.extra["said_in"])
    other = alice.remember("Does not prefer short answers")
    assert other.id != first.id  # a negation is no duplicate
    assert [e.op for e in alice.history(first.id)].count("refresh") == 1


def test_llm_extractor_through_the_memory_option_and_async(memory: Memory) -> None:
    def model(prompt: str) -> str:
        item = {"kind": "fact", "key": "diet", "value": "vegetarian", "text": "Vegetarian", "reason": "diet", "turn": 0}
        return json.dumps({"memories": [item]})

    alice = memory.user("alice")
    report = alice.capture(_turn("no meat for me, ever"), extractor=llm_extractor(model))
    assert report.origin == "llm" and [c.action for c in report.captured] == ["added"]
    fact = alice.get_fact("diet")
    assert fact is not None and fact.source is Source.INFERRED
    report = asyncio.run(alice.acapture(_turn("I work at Acme Corp.")))
    assert report.origin == "offline" and alice.facts()["work.employer"] == "Acme Corp"


def test_one_users_capture_never_reaches_another(memory: Memory) -> None:
    memory.user("alice").capture(_turn("I moved to Porto."))
    memory.user("bob").remember("Prefers short answers")
    memory.user("alice").remember("Prefers short answers")
    assert memory.user("bob").facts() == {}
    assert len(memory.user("bob").list(kinds=[Kind.NOTE])) == 1
    assert len(memory.user("alice").list(kinds=[Kind.NOTE])) == 1


def test_in_propose_mode_what_an_extractor_words_waits_as_a_proposal(embedding_function: object) -> None:
    import uuid

    import chromadb

    def model(prompt: str) -> str:
        item = {"kind": "preference", "text": "Likes green tea", "reason": "a liking", "turn": 0}
        return json.dumps({"memories": [item]})

    mem = Memory(
        client=chromadb.EphemeralClient(),
        embedding_function=embedding_function,
        collection_prefix=f"t{uuid.uuid4().hex[:8]}",
        write_mode="propose",
        extractor=llm_extractor(model),
    )
    try:
        alice = mem.user("alice")
        report = alice.capture(_turn("green tea is the best"))
        assert [c.action for c in report.captured] == ["proposed"]
        assert alice.list() == [] and [p.text for p in alice.proposals()] == ["Likes green tea"]
        again = alice.capture(_turn("I moved to Porto."), extractor=None)  # the Memory's extractor decides
        assert again.origin == "llm"
    finally:
        mem.close()
