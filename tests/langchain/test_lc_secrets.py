"""One rule for secrets on the LangChain surfaces (docs/secrets.md): chat history, RunnableWithMessageHistory, the
middleware's log and the same agent's checkpoint all mask a secret by default, in one content block or split over
two; with ``redact=False`` a refusal names the surface and the option and nothing of the call is written."""

from __future__ import annotations

import base64
import json

import pytest
from langchain.agents import create_agent
from langchain_core.messages import AIMessage, HumanMessage
from lc_fakes import ScriptedChatModel
from memtend import Memory, SensitiveDataError
from memtend_langchain import MemtendChatMessageHistory, MemtendMiddleware
from memtend_langgraph import MemtendSaver

CARD = "4111 1111 1111 1111"
SPLIT = [{"type": "text", "text": "my card is 4111 1111"}, {"type": "text", "text": "1111 1111, book it"}]


def stored_text(memory: Memory, user: str) -> str:
    export = memory.user(user).export()
    blobs = [base64.b64decode(d["value"]).decode("latin-1") for d in export["documents"] if d["type"] == "bytes"]
    return json.dumps(export) + "".join(blobs)


def verbatim(text: str) -> bool:
    flat = text.replace(" ", "")
    return "4111111111111111" in flat or "41111111" in flat


@pytest.mark.parametrize("content", [f"my card is {CARD}", SPLIT], ids=["one-block", "split-over-two-blocks"])
def test_history_masks_by_default_and_refuses_with_redact_false(ephemeral_memory: Memory, content: object) -> None:
    history = MemtendChatMessageHistory("alice", "s", memory=ephemeral_memory)
    history.add_messages([HumanMessage(content=content), AIMessage("booked")])  # type: ignore[arg-type]
    assert [m.type for m in history.messages] == ["human", "ai"]
    assert "[REDACTED:card]" in json.dumps(history.messages[0].content)
    refusing = MemtendChatMessageHistory("alice", "s2", memory=ephemeral_memory, redact=False)
    with pytest.raises(SensitiveDataError) as refused:
        refusing.add_messages([HumanMessage("fine"), HumanMessage(content=content)])  # type: ignore[arg-type]
    assert "MemtendChatMessageHistory" in str(refused.value) and "redact" in str(refused.value)
    assert refusing.messages == []
    assert not verbatim(stored_text(ephemeral_memory, "alice"))


@pytest.mark.parametrize("content", [f"my card is {CARD}", SPLIT], ids=["one-block", "split-over-two-blocks"])
def test_the_middlewares_agent_keeps_no_card_in_its_log_or_its_checkpoint(
    ephemeral_memory: Memory, content: object
) -> None:
    model = ScriptedChatModel(responses=[AIMessage("booked")])
    agent = create_agent(
        model, middleware=[MemtendMiddleware(ephemeral_memory)], checkpointer=MemtendSaver(ephemeral_memory)
    )
    config = {"configurable": {"thread_id": "t1", "user_id": "alice"}}
    out = agent.invoke({"messages": [HumanMessage(content=content)]}, config, context={"user_id": "alice"})  # type: ignore[arg-type]
    assert out["messages"][-1].text == "booked"
    assert not verbatim(stored_text(ephemeral_memory, "alice"))
    assert "[REDACTED:card]" in stored_text(ephemeral_memory, "alice")  # the checkpoint keeps the turn, masked
    # capture keeps nothing of it: the card fact would be nothing but the mask (policies.capture.secret_only)
    assert ephemeral_memory.user("alice").export()["records"] == []


def test_the_middleware_with_redact_false_names_itself(ephemeral_memory: Memory) -> None:
    model = ScriptedChatModel(responses=[AIMessage("booked")])
    agent = create_agent(model, middleware=[MemtendMiddleware(ephemeral_memory, redact=False)])
    with pytest.raises(SensitiveDataError, match="MemtendMiddleware refused"):
        agent.invoke({"messages": [HumanMessage(f"my card is {CARD}")]}, context={"user_id": "alice"})
    assert not verbatim(stored_text(ephemeral_memory, "alice"))
