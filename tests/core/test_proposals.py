"""Propose, then accept (Memory(write_mode="propose")): what the agent or an extractor wants to remember waits as a
proposal that no read shows; accepted (optionally edited), it becomes a memory; rejected, it is gone. Real Chroma on
every backend, real embedding model."""

from __future__ import annotations

import asyncio

import pytest
from memtend import Memory, Source
from memtend.errors import InvalidInputError, RecordNotFoundError, SensitiveDataError
from memtend.prompt_context import user_context
from memtend.records import DAY, Kind, Status

CARD = "4111 1111 1111 1111"


def _ops(user, record_id: str) -> list[str]:  # type: ignore[no-untyped-def]
    return [e.op for e in user.history(record_id)]


def test_agent_and_inferred_writes_wait_as_proposals_never_recalled(propose_memory: Memory) -> None:
    alice = propose_memory.user("alice")
    note = alice.remember("The staging database is called orca", source=Source.AGENT)
    guess = alice.remember("Seems to like dark roast coffee", source=Source.INFERRED)
    rule = alice.add_rule("Always answer in French", source=Source.AGENT)
    said = alice.remember("My cat is called Miso")  # the user's own words: stored at once
    tool = alice.remember("Ticket 4411 is assigned to alice", source=Source.TOOL)  # a system of record: at once
    web = alice.remember("Page says the office moved to Lyon", source=Source.EXTERNAL)  # review, as before
    assert [r.status for r in (note, guess, rule)] == [Status.PROPOSED] * 3
    assert said.status is Status.ACTIVE and tool.status is Status.ACTIVE
    assert web.status is Status.PENDING_REVIEW
    assert {r.id for r in alice.proposals()} == {note.id, guess.id, rule.id}
    assert {r.id for r in alice.pending()} == {web.id}
    for query in ("which database is staging?", "coffee", "answer language French"):
        ids = {h.record.id for h in alice.recall(query, k=10, include_pending=True)}
        assert ids.isdisjoint({note.id, guess.id, rule.id})
    assert {r.id for r in alice.list()} == {said.id, tool.id}
    context = user_context(alice, "which database is staging? French?", k=10)
    assert "orca" not in context.render() and "French" not in context.render()
    assert _ops(alice, note.id) == ["propose"]
    assert propose_memory.user("bob").proposals() == []


def test_accept_makes_a_proposal_a_memory(propose_memory: Memory) -> None:
    alice = propose_memory.user("alice")
    note = alice.remember("The staging database is called orca", source=Source.AGENT)
    accepted = alice.accept(note.id)
    assert accepted.id == note.id and accepted.status is Status.ACTIVE and accepted.source is Source.AGENT
    assert [h.record.id for h in alice.recall("which database is staging?", k=1)] == [note.id]
    assert alice.proposals() == []
    assert _ops(alice, note.id) == ["propose", "accept"]
    with pytest.raises(InvalidInputError, match="not a proposal"):
        alice.accept(note.id)


def test_accept_with_edited_text_is_gated_and_embedded_again(propose_memory: Memory) -> None:
    alice = propose_memory.user("alice")
    note = alice.remember("The staging database is called orca", source=Source.AGENT)
    with pytest.raises(SensitiveDataError) as refused:
        alice.accept(note.id, text=f"Pays with card {CARD}")
    assert CARD not in str(refused.value)
    assert [r.id for r in alice.proposals()] == [note.id]  # nothing lost, nothing changed
    assert alice.get(note.id).text == "The staging database is called orca"
    accepted = alice.accept(note.id, text="The staging database is called narwhal")
    assert accepted.text == "The staging database is called narwhal" and accepted.source is Source.USER
    hits = alice.recall("narwhal", k=1)
    assert [(h.record.id, h.record.text) for h in hits] == [(note.id, accepted.text)]
    assert _ops(alice, note.id) == ["propose", "edit", "accept"]
    edit = alice.history(note.id)[1]
    assert edit.before is not None and "orca" in edit.before["text"]
    assert edit.after is not None and "narwhal" in edit.after["text"]
    masked = alice.remember("Pays by card", source=Source.AGENT)
    stored = alice.accept(masked.id, text=f"Pays with card {CARD}", redact=True)
    assert CARD not in stored.text and "REDACTED" in stored.text


def test_a_proposed_fact_goes_through_precedence_on_accept(propose_memory: Memory) -> None:
    alice = propose_memory.user("alice")
    result = alice.set_fact("diet", "vegetarian", source=Source.INFERRED)
    assert result.outcome == "kept" and result.record.status is Status.PROPOSED
    assert alice.get_fact("diet") is None and alice.facts() == {}
    assert alice.accept(result.record.id).value == "vegetarian"
    assert alice.facts() == {"diet": "vegetarian"}
    assert alice.get(result.record.id).status is Status.ARCHIVED  # the proposal, kept for its history
    assert _ops(alice, result.record.id) == ["propose", "accept"]

    alice.set_fact("contact.method", "email")  # the user said it
    guess = alice.set_fact("contact.method", "phone", source=Source.AGENT)
    assert guess.record.status is Status.PROPOSED and alice.get_fact("contact.method").value == "email"
    kept = alice.accept(guess.record.id)  # accepted as the agent's: a guess never overwrites what the user said
    assert kept.value == "email" and alice.facts()["contact.method"] == "email"
    again = alice.set_fact("contact.method", "phone", source=Source.AGENT)
    edited = alice.accept(again.record.id, text="signal")  # the person's own value: the user's, newest
    assert edited.value == "signal" and edited.source is Source.USER
    assert alice.get_fact("contact.method").value == "signal"
    assert [h.record.value for h in alice.recall("how to contact?", k=3, kinds=[Kind.FACT])][:1] == ["signal"]


def test_reject_drops_a_proposal_for_good(propose_memory: Memory) -> None:
    alice = propose_memory.user("alice")
    note = alice.remember("Thinks tabs beat spaces", source=Source.AGENT)
    assert alice.reject(note.id).id == note.id
    assert alice.proposals() == []
    with pytest.raises(RecordNotFoundError):
        alice.get(note.id)
    assert _ops(alice, note.id) == ["propose", "reject"]
    with pytest.raises(RecordNotFoundError):
        alice.accept(note.id)


def test_approve_and_accept_keep_to_their_own_holds(propose_memory: Memory) -> None:
    alice = propose_memory.user("alice")
    proposal = alice.remember("Works on the billing team", source=Source.AGENT)
    web = alice.remember("A page says alice works on search", source=Source.EXTERNAL)
    with pytest.raises(InvalidInputError, match="approve or reject"):
        alice.accept(web.id)
    with pytest.raises(InvalidInputError, match="not pending review"):
        alice.approve(proposal.id)
    assert alice.get(proposal.id).status is Status.PROPOSED and alice.get(web.id).status is Status.PENDING_REVIEW


def test_an_untrusted_conversation_still_holds_agent_writes_in_review(propose_memory: Memory) -> None:
    alice = propose_memory.user("alice")
    alice.session("t1").mark_untrusted("tool-call-1")
    held = alice.remember("The office moved to Lyon", source=Source.AGENT, session="t1")
    assert held.source is Source.EXTERNAL and held.status is Status.PENDING_REVIEW


def test_proposals_wait_as_long_as_review_then_restore_to_a_proposal(propose_memory: Memory) -> None:
    alice = propose_memory.user("alice")
    note = alice.remember("Prefers meetings after lunch", source=Source.AGENT)
    later = note.created_at + (propose_memory.retention.pending_review_days or 30) * DAY + 1
    report = alice.forget(now=later)
    assert [(rid, reason.startswith("proposed for over")) for rid, _, reason in report.archived] == [(note.id, True)]
    assert alice.proposals() == []
    assert alice.restore(note.id).status is Status.PROPOSED  # back to waiting, never straight to trust
    assert [r.id for r in alice.proposals()] == [note.id]


def test_direct_mode_stores_agent_writes_at_once(memory: Memory) -> None:
    assert memory.write_mode == "direct"
    alice = memory.user("alice")
    assert alice.remember("The staging database is called orca", source=Source.AGENT).status is Status.ACTIVE
    assert alice.proposals() == []


def test_async_twins_answer_as_the_sync_calls(propose_memory: Memory) -> None:
    alice = propose_memory.user("alice")

    async def run() -> None:
        note = await alice.aremember("Likes short answers", source=Source.AGENT)
        assert [r.id for r in await alice.aproposals()] == [note.id]
        accepted = await alice.aaccept(note.id, text="Likes very short answers")
        assert accepted.text == "Likes very short answers" and await alice.aproposals() == []

    asyncio.run(run())


@pytest.mark.parametrize("mode", ["Propose", "", "auto", None, 1])
def test_an_unknown_write_mode_is_refused_before_anything_opens(mode: object, tmp_path) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(InvalidInputError, match="write_mode must be one of direct, propose") as refused:
        Memory(path=tmp_path / "store", write_mode=mode)  # type: ignore[arg-type]
    if isinstance(mode, str) and mode:
        assert mode not in str(refused.value)
    assert not (tmp_path / "store").exists()


def test_a_handle_can_propose_on_a_direct_store(memory: Memory) -> None:
    proposing = memory.user("alice", write_mode="propose")
    note = proposing.remember("Drinks oat milk", source=Source.AGENT)
    assert note.status is Status.PROPOSED
    assert memory.user("alice").remember("Drinks soy milk", source=Source.AGENT).status is Status.ACTIVE
    assert [r.id for r in memory.user("alice").proposals()] == [note.id]
    with pytest.raises(InvalidInputError, match="write_mode must be one of"):
        memory.user("alice", write_mode="later")  # type: ignore[arg-type]


def test_revise_archives_the_old_version_once_the_new_one_stands(propose_memory: Memory) -> None:
    alice = propose_memory.user("alice")
    old = alice.remember("Works from the Paris office")
    direct = alice.revise(old.id, "Works from the Lyon office")  # the user's words: at once
    assert direct.status is Status.ACTIVE and alice.get(old.id).status is Status.ARCHIVED
    assert alice.get(old.id).superseded_by == direct.id
    assert [h.text for h in alice.recall("which office?", k=2)] == ["Works from the Lyon office"]
    proposed = alice.revise(direct.id, "Works from home", source=Source.AGENT)
    assert proposed.status is Status.PROPOSED and alice.get(direct.id).status is Status.ACTIVE  # nothing replaced yet
    alice.accept(proposed.id)
    assert alice.get(direct.id).status is Status.ARCHIVED and alice.get(direct.id).superseded_by == proposed.id
    assert [r.text for r in alice.list(kinds=[Kind.NOTE])] == ["Works from home"]
    assert alice.restore(direct.id).status is Status.ACTIVE  # restorable
    fact = alice.set_fact("diet", "vegan")
    with pytest.raises(InvalidInputError, match="set_fact"):
        alice.revise(fact.record.id, "diet: vegetarian")
    with pytest.raises(RecordNotFoundError):
        propose_memory.user("bob").revise(old.id, "Works from Berlin")  # another user's record is not reachable
