"""An instruction kept at one session's end and revised in a later one: the revision replaces it in long-term
memory (issue 31: "revised constraints replace the older version"), by the rule a conversation's constraints use."""

from __future__ import annotations

from memtend import Kind, Memory, Message, Status

FIRST, REVISED = "Keep every reply under 100 words.", "Change of plan: keep every reply under 50 words."
UNRELATED = "Never deploy on Fridays."


def ended(*said: str) -> list[Message]:
    return [m for i, text in enumerate(said) for m in (Message("user", text, id=f"u{i}"), Message("assistant", "OK."))]


def test_a_later_session_revising_an_instruction_archives_the_old_one(ephemeral_memory: Memory) -> None:
    alice = ephemeral_memory.user("alice")
    alice.capture([], session="s1", conversation=ended("I need help with billing.", FIRST))
    (old,) = alice.list(kinds=[Kind.NOTE])
    alice.capture([], session="s2", conversation=ended(UNRELATED))  # unrelated: the first one stays
    assert sorted(n.text for n in alice.list(kinds=[Kind.NOTE])) == sorted([FIRST, UNRELATED])
    report = alice.capture([], session="s3", conversation=ended("Back to billing.", REVISED))
    assert [(c.candidate.text, c.action) for c in report.captured] == [(REVISED, "revised")]
    assert report.tally()["kept"] == 1
    active = [n for n in alice.list(kinds=[Kind.NOTE]) if "words" in n.text]
    assert [n.text for n in active] == [REVISED]
    assert active[0].session == "s3" and active[0].extra["capture_turn_id"] == "u1"
    archived = alice.get(old.id)
    assert archived.status is Status.ARCHIVED and archived.superseded_by == active[0].id
    assert UNRELATED in [n.text for n in alice.list(kinds=[Kind.NOTE])]
    alice.restore(old.id)
    assert alice.get(old.id).status is Status.ACTIVE
    assert ephemeral_memory.user("bob").list() == []


async def test_an_unrelated_instruction_archives_nothing_async(ephemeral_memory: Memory) -> None:
    alice = ephemeral_memory.user("alice")
    await alice.acapture([], session="s1", conversation=ended(FIRST))
    report = await alice.acapture([], session="s2", conversation=ended(UNRELATED))
    assert [c.action for c in report.captured] == ["added"]
    assert sorted(n.text for n in alice.list(kinds=[Kind.NOTE])) == sorted([FIRST, UNRELATED])
    report = await alice.acapture([], session="s3", conversation=ended(REVISED))
    assert [c.action for c in report.captured] == ["revised"]
    assert sorted(n.text for n in alice.list(kinds=[Kind.NOTE])) == sorted([REVISED, UNRELATED])
