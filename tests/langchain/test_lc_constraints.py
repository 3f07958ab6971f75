"""Constraints the user states are in the system prompt of every later turn, in every LangChain adapter, with
compaction off; a revised one replaces the earlier; a request is not a constraint."""

from __future__ import annotations

import warnings
from typing import Any

from langchain.agents import create_agent
from langchain_core.messages import AIMessage, HumanMessage
from langchain_core.prompts import ChatPromptTemplate, MessagesPlaceholder
from langgraph.checkpoint.memory import InMemorySaver
from lc_fakes import ScriptedChatModel, system_text
from memtend import Memory
from memtend_langchain import MemtendMemory, MemtendMiddleware, with_memtend_history

TURNS = [
    "I need help planning the billing release. Keep every reply under 100 words.",
    "Tell me a joke.",
    "What is the weather like today?",
    "Change of plan: keep every reply under 50 words.",
    "How do we roll back if the release fails?",
]
FIRST, REVISED = "Keep every reply under 100 words.", "Change of plan: keep every reply under 50 words."


def check_turns(systems: list[str]) -> None:
    """``systems``: the system text the model got on each of the five turns: the first constraint on turns 1-3,
    its revision (stated on turn 4) alone from turn 4 on, the requests never."""
    assert len(systems) == 5
    for text in systems[:3]:
        assert FIRST in text and REVISED not in text
    for text in systems[3:]:
        assert REVISED in text and FIRST not in text
    assert not any("Tell me a joke" in text or "weather" in text for text in systems)


def test_middleware_reinjects_constraints_every_turn_with_compaction_off(ephemeral_memory: Memory) -> None:
    model = ScriptedChatModel(responses=[AIMessage("OK.")])
    middleware = MemtendMiddleware(ephemeral_memory, max_turns=None, max_tokens=None, tools=False, capture=False)
    graph = create_agent(
        model, tools=[], system_prompt="Be helpful.", middleware=[middleware], checkpointer=InMemorySaver()
    )
    for text in TURNS:
        graph.invoke(
            {"messages": [HumanMessage(text)]},
            config={"configurable": {"thread_id": "t"}},
            context={"user_id": "alice"},
        )
    systems = [system_text(call) for call in model.calls]
    assert len(systems) == 5 and all(s.startswith("Be helpful.") for s in systems)
    check_turns(systems)


async def test_middleware_constraints_async_and_per_thread(ephemeral_memory: Memory) -> None:
    model = ScriptedChatModel(responses=[AIMessage("OK.")])
    middleware = MemtendMiddleware(ephemeral_memory, max_turns=None, max_tokens=None, tools=False, capture=False)
    graph = create_agent(model, tools=[], middleware=[middleware], checkpointer=InMemorySaver())
    for text in TURNS:
        await graph.ainvoke(
            {"messages": [HumanMessage(text)]},
            config={"configurable": {"thread_id": "a"}},
            context={"user_id": "alice"},
        )
    await graph.ainvoke(
        {"messages": [HumanMessage("Hello")]}, config={"configurable": {"thread_id": "b"}}, context={"user_id": "alice"}
    )
    systems = [system_text(call) for call in model.calls]
    check_turns(systems[:5])
    assert "words" not in systems[5]  # another thread has its own constraints


def test_classic_memory_reinjects_the_sessions_constraints(ephemeral_memory: Memory) -> None:
    memory = MemtendMemory(memory=ephemeral_memory, user_id="alice", session_id="chat-1")
    rules = []
    for text in TURNS:
        rules.append(memory.load_memory_variables({"input": text})["rules"])
        memory.save_context({"input": text}, {"output": "OK."})
    check_turns(rules)
    other = MemtendMemory(memory=ephemeral_memory, user_id="alice", session_id="chat-2")
    assert "words" not in other.load_memory_variables({"input": "hi"})["rules"]
    assert (
        "words"
        not in MemtendMemory(memory=ephemeral_memory, user_id="bob", session_id="chat-1").load_memory_variables(
            {"input": "hi"}
        )["rules"]
    )


async def test_classic_memory_history_mode_async(ephemeral_memory: Memory) -> None:
    memory = MemtendMemory(memory=ephemeral_memory, user_id="alice", session_id="chat-h", memory_key="history")
    histories = []
    for text in TURNS:
        histories.append((await memory.aload_memory_variables({"input": text}))["history"])
    check_turns(histories)


def test_chat_history_runnable_reinjects_constraints(ephemeral_memory: Memory) -> None:
    model = ScriptedChatModel(responses=[AIMessage("OK.")])
    prompt = ChatPromptTemplate.from_messages(
        [("system", "Be helpful."), MessagesPlaceholder("history"), ("human", "{question}")]
    )
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # RunnableWithMessageHistory is deprecated upstream
        chain = with_memtend_history(
            prompt | model, ephemeral_memory, input_messages_key="question", history_messages_key="history"
        )
    config: dict[str, Any] = {"configurable": {"user_id": "alice", "session_id": "s1"}}
    for text in TURNS:
        chain.invoke({"question": text}, config=config)
    check_turns([system_text(call) for call in model.calls])
    stored = [m.type for m in chain.get_session_history("alice", "s1").messages]  # type: ignore[attr-defined]
    assert stored == ["human", "ai"] * 5  # the context is never stored


async def test_chat_history_runnable_without_keys_async(ephemeral_memory: Memory) -> None:
    model = ScriptedChatModel(responses=[AIMessage("OK.")])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        chain = with_memtend_history(model, ephemeral_memory)
    for text in TURNS:
        await chain.ainvoke([HumanMessage(text)], config={"configurable": {"user_id": "alice", "session_id": "s2"}})
    check_turns([system_text(call) for call in model.calls])
