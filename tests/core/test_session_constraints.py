"""The core's "constraints of this conversation": from a transcript (``conversation_constraints``) and kept per
session for adapters that see one message per turn (``user.constraints(session_id)``)."""

from __future__ import annotations

from memtend import Memory, Message
from memtend.prompt_context import conversation_constraints, user_context

TURNS = [
    "Deploy the billing service to staging. Never deploy on Fridays.",
    "Tell me a joke.",
    "Send the weekly report to Priya every Monday.",
    "Update: send the weekly report to Priya every Tuesday instead.",
]


def test_conversation_constraints_keep_the_latest_version_and_no_requests() -> None:
    found = conversation_constraints([Message.user(t) for t in TURNS])
    assert found == ["Never deploy on Fridays.", "Update: send the weekly report to Priya every Tuesday instead."]


def test_session_constraints_match_the_transcript_and_read_each_message_once(memory: Memory) -> None:
    kept = memory.user("alice").constraints("s1")
    for text in TURNS:
        current = kept.note([text])
    assert current == conversation_constraints([Message.user(t) for t in TURNS])
    assert kept.note(TURNS) == current  # handed over again: nothing changes
    assert memory.user("alice").constraints("s1").current() == current
    assert memory.user("alice").constraints("s2").current() == []
    assert memory.user("bob").constraints("s1").current() == []


def test_session_constraints_mask_secrets_and_go_with_the_user(memory: Memory) -> None:
    alice = memory.user("alice")
    key = "AKIAIOSFODNN7EXAMPLE"
    found = alice.constraints("s").note([f"Hello. Always sign requests with {key} from now on."])
    assert found and key not in str(found) and key not in str(alice.export())
    memory.erase_user("alice")
    assert memory.user("alice").constraints("s").current() == []


async def test_async_twins(memory: Memory) -> None:
    kept = memory.user("alice").constraints("a")
    assert await kept.anote(TURNS[:1]) == ["Never deploy on Fridays."]
    assert await kept.acurrent() == ["Never deploy on Fridays."]
    await kept.aclear()
    assert await kept.acurrent() == []


def test_user_context_shows_only_constraints_in_force(memory: Memory) -> None:
    from memtend.transcripts.summary import extract_constraints

    marked = extract_constraints([Message.user(t) for t in TURNS])
    assert len(marked) == 3  # the replaced one is kept, marked, by the summary code
    text = user_context(memory.user("alice"), None, constraints=marked).render()
    assert "every Tuesday" in text and "every Monday" not in text
