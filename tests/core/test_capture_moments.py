"""When capture runs and what the end of a conversation keeps: the instructions the session's constraints held,
in their latest version only (issue 31: a revised constraint is never recalled beside its revision)."""

from __future__ import annotations

import pytest
from memtend import InvalidInputError, Kind, Memory, Message
from memtend.capture.moments import at_end, check_capture, each_turn, left_for_the_end

SAID = [
    "I need help planning the billing release. Keep every reply under 100 words.",
    "Tell me a joke.",
    "Change of plan: keep every reply under 50 words.",
    "I moved to Porto.",
]
FIRST, REVISED = "Keep every reply under 100 words.", "Change of plan: keep every reply under 50 words."


def conversation() -> list[Message]:
    out: list[Message] = []
    for i, text in enumerate(SAID):
        out += [Message("user", text, id=f"u{i}"), Message("assistant", "OK.")]
    return out


def test_turn_by_turn_capture_leaves_instructions_and_the_end_keeps_the_latest(ephemeral_memory: Memory) -> None:
    alice = ephemeral_memory.user("alice")
    whole = conversation()
    for i in range(0, len(whole), 2):
        report = alice.capture(whole[i : i + 2], session="s1", offset=i)
        assert all(c.candidate.text not in (FIRST, REVISED) for c in report.captured)
    assert [n.text for n in alice.list(kinds=[Kind.NOTE]) if "words" in n.text] == []
    assert alice.facts()["home.city"] == "Porto"
    report = alice.capture([], session="s1", conversation=whole)  # the conversation ended
    assert [(c.candidate.text, c.action) for c in report.captured] == [(REVISED, "added")]
    (note,) = [n for n in alice.list(kinds=[Kind.NOTE]) if "words" in n.text]
    assert note.text == REVISED and note.session == "s1"
    assert note.extra["capture_turn"] == 4 and note.extra["capture_turn_id"] == "u2"
    hits = alice.recall("how long should replies be?", k=5)
    assert REVISED in [h.record.text for h in hits] and FIRST not in str([h.record.text for h in hits])
    alice.capture([], session="s1", conversation=whole)  # twice: refreshed, never a second row
    assert len([n for n in alice.list(kinds=[Kind.NOTE]) if "words" in n.text]) == 1
    assert ephemeral_memory.user("bob").list() == []


async def test_the_end_of_a_conversation_async_and_judged_whole(ephemeral_memory: Memory) -> None:
    alice = ephemeral_memory.user("alice")
    whole = conversation()
    pending = left_for_the_end("session", whole)  # session mode: nothing was judged turn by turn
    report = await alice.acapture(pending, session="s2", conversation=whole)
    kept = [c.candidate.text for c in report.captured]
    assert REVISED in kept and FIRST not in kept and "Tell me a joke." not in kept
    assert alice.facts() == {"home.city": "Porto"}


def test_the_moments() -> None:
    assert [check_capture(v) for v in ("turn", True, "session", None, False)] == ["turn", "turn", "session", "", ""]
    assert each_turn("turn") and not each_turn("session") and at_end("session") and not at_end("")
    assert left_for_the_end("turn", conversation()) == [] and left_for_the_end("", conversation()) == []
    for bad in ("always", 1, "Turn"):
        with pytest.raises(InvalidInputError, match="capture must be"):
            check_capture(bad)
