"""The user's controls as an agent's tools give them (memtend.working.user_controls): list what is remembered about
the user with ids, and forget one memory by id through UserMemory.delete. Real Chroma on every backend."""

from __future__ import annotations

import asyncio

from memtend import Memory, Source
from memtend.records import Kind
from memtend.working.user_controls import aforget_memory, alist_memories, forget_memory, list_memories


def test_list_shows_facts_rules_and_notes_with_ids_and_never_proposals(memory: Memory) -> None:
    alice = memory.user("alice")
    fact = alice.set_fact("contact.method", "email").record
    rule = alice.add_rule("Never deploy on Fridays")
    note = alice.remember("The staging database is called orca")
    alice.log("Deployed v2 to staging")  # an event: the log, not listed
    proposal = memory.user("alice", write_mode="propose").remember("Seems to like jazz", source=Source.AGENT)
    text = list_memories(alice)
    lines = text.splitlines()
    assert lines[0].startswith(f"- [{fact.id}] fact, ") and lines[0].endswith("contact method: email")
    assert lines[1].startswith(f"- [{rule.id}] rule, ") and lines[2].startswith(f"- [{note.id}] note, ")
    assert "Deployed" not in text and "jazz" not in text and proposal.id not in text
    assert lines[-1] == "(1 proposed memories wait for the user's review; they are not used until accepted)"
    assert list_memories(memory.user("bob")) == "nothing is remembered about the user"
    assert asyncio.run(alist_memories(alice)) == text


def test_forget_deletes_one_memory_of_this_user_only(memory: Memory) -> None:
    alice, bob = memory.user("alice"), memory.user("bob")
    note = alice.remember("The staging database is called orca")
    fact = alice.set_fact("diet", "vegetarian").record
    bobs = bob.remember("Bob's staging database is called whale")
    assert forget_memory(alice, bobs.id).startswith("error: no memory of this user has that id")
    assert [r.id for r in bob.list()] == [bobs.id]
    assert forget_memory(alice, note.id) == f"forgotten: note {note.id}"
    assert note.id not in {h.record.id for h in alice.recall("staging database", k=3)}
    assert forget_memory(alice, note.id).startswith("error: no memory")
    assert asyncio.run(aforget_memory(alice, fact.id)) == f"forgotten: fact {fact.id}"
    assert alice.facts() == {} and alice.get_fact("diet") is None
    assert forget_memory(alice, "  ").startswith("error: give the id")
    assert [e.op for e in alice.history(note.id)][-1] == "delete"


def test_forget_is_refused_in_a_conversation_holding_untrusted_content(memory: Memory) -> None:
    alice = memory.user("alice")
    note = alice.remember("Never deploy on Fridays")
    alice.session("t1").mark_untrusted("web_search", ref="call-1")
    assert forget_memory(alice, note.id, session="t1").startswith("refused: this conversation holds untrusted")
    assert asyncio.run(aforget_memory(alice, note.id, session="t1")).startswith("refused:")
    assert [r.id for r in alice.list(kinds=[Kind.NOTE])] == [note.id]
    assert forget_memory(alice, note.id, session="t2") == f"forgotten: note {note.id}"  # another conversation
