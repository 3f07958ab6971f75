"""memtend.prompt_context: what adapters show the model about a user, and which turns they capture."""

from __future__ import annotations

import re

from memtend import Memory, Message, Source, ToolCall
from memtend.prompt_context import UserContext, conversation_query, transcript_events, user_context


def test_nothing_known_renders_nothing() -> None:
    assert UserContext().empty and UserContext().render() == ""


def test_user_context_gathers_profile_rules_and_dated_recall(ephemeral_memory: Memory) -> None:
    alice = ephemeral_memory.user("alice")
    alice.set_fact("contact.method", "email")
    alice.add_rule("Never deploy on Fridays")
    alice.remember("The staging database is called orca")
    alice.remember("Lunch is at noon")
    context = user_context(alice, "which database is staging?", k=1, constraints=["keep answers short"])
    text = context.render()
    assert context.profile == {"contact.method": "email"}
    assert context.rules == ["Never deploy on Fridays"]
    assert [hit.text for hit in context.recalled] == ["The staging database is called orca"]
    assert "- contact.method: email" in text and "- Never deploy on Fridays" in text
    assert "- keep answers short" in text
    assert re.search(r"- \[\d{4}-\d{2}-\d{2}\] The staging database is called orca", text)
    assert "Lunch" not in text
    assert user_context(ephemeral_memory.user("bob"), "which database is staging?").empty  # nothing of alice's
    assert user_context(alice, None).recalled == []  # no query, no recall


def test_conversation_query_is_the_latest_user_turn() -> None:
    messages = [Message.user("first question"), Message.assistant("answer"), Message.user("  second  ")]
    assert conversation_query(messages) == "second"
    assert conversation_query(messages, "explicit") == "explicit"
    assert conversation_query([Message.assistant("only me")]) is None


def test_transcript_events_keep_user_and_assistant_text_only() -> None:
    call = ToolCall(id="c1", name="lookup", arguments={})
    messages = [
        Message.system("you are a bot"),
        Message.user("deploy billing"),
        Message.assistant("", tool_calls=[call]),
        Message.tool("raw output", tool_call_id="c1"),
        Message.assistant("Deployed."),
        Message.user("[Conversation summary so far, 3 turns]\nGoal: x"),
    ]
    events = transcript_events([*messages, Message.user("thanks"), Message.assistant("You are welcome.")], session="s1")
    assert [(e.text, e.source, e.session) for e in events] == [
        ("deploy billing", Source.USER, "s1"),
        ("Deployed.", Source.EXTERNAL, "s1"),  # after a tool's output, which it may repeat: held for review
        ("thanks", Source.USER, "s1"),
        ("You are welcome.", Source.AGENT, "s1"),  # a new user turn: the agent's own words again
    ]
