"""One identity for the LangChain middleware, its tools and the LangGraph saver in one ``create_agent`` run: the
runtime context first, then ``configurable.user_id``; a run naming two users is refused before anything happens."""

from __future__ import annotations

from typing import Any

import pytest
from langchain.agents import create_agent
from langchain_core.messages import AIMessage, HumanMessage, ToolMessage
from lc_fakes import ScriptedChatModel, calling, system_text
from memtend import Kind, Memory, UserMismatchError
from memtend_langchain import MemtendMiddleware, memtend_tools
from memtend_langgraph import MemtendSaver


def ask(text: str) -> dict[str, Any]:
    return {"messages": [HumanMessage(text)]}


def test_config_alice_and_context_bob_is_refused_before_any_model_call(ephemeral_memory: Memory) -> None:
    ephemeral_memory.user("bob").remember("Bob's locker code is in the blue notebook")
    model = ScriptedChatModel(responses=[AIMessage("should not be reached")])
    graph = create_agent(
        model, middleware=[MemtendMiddleware(ephemeral_memory)], checkpointer=MemtendSaver(ephemeral_memory)
    )
    with pytest.raises(UserMismatchError):
        graph.invoke(
            ask("what is my locker code?"),
            config={"configurable": {"thread_id": "t", "user_id": "alice"}},
            context={"user_id": "bob"},
        )
    assert model.calls == []  # bob's memories never reached a system message
    assert ephemeral_memory.user("alice").list() == []  # alice's words were not logged as anyone's
    assert [r.text for r in ephemeral_memory.user("bob").list()] == ["Bob's locker code is in the blue notebook"]
    assert ephemeral_memory.document_owners(("langgraph_checkpoints",)) == []  # no thread stored for either


def test_the_middleware_without_a_checkpointer_refuses_a_disagreeing_config(ephemeral_memory: Memory) -> None:
    model = ScriptedChatModel(responses=[AIMessage("should not be reached")])
    graph = create_agent(model, middleware=[MemtendMiddleware(ephemeral_memory)])
    with pytest.raises(UserMismatchError):
        graph.invoke(ask("hi"), config={"configurable": {"user_id": "alice"}}, context={"user_id": "bob"})
    assert model.calls == []


def test_the_user_in_context_serves_the_middleware_tools_and_saver_alike(ephemeral_memory: Memory) -> None:
    ephemeral_memory.user("alice").set_fact("favorite.color", "teal")
    model = ScriptedChatModel(responses=[calling("remember", {"text": "Prefers metric units"}, "c1"), AIMessage("ok")])
    saver = MemtendSaver(ephemeral_memory)
    graph = create_agent(model, middleware=[MemtendMiddleware(ephemeral_memory)], checkpointer=saver)
    state = graph.invoke(
        ask("set things up"), config={"configurable": {"thread_id": "1"}}, context={"user_id": "alice"}
    )
    assert [m.text for m in state["messages"] if isinstance(m, ToolMessage)] == ["remembered"]
    assert "favorite.color: teal" in system_text(model.calls[0])
    assert [r.text for r in ephemeral_memory.user("alice").list(kinds=[Kind.NOTE])] == ["Prefers metric units"]
    assert ephemeral_memory.document_owners(("langgraph_checkpoints", "1")) == ["alice"]  # the saver agreed


def test_a_tool_refuses_a_run_naming_two_users(ephemeral_memory: Memory) -> None:
    model = ScriptedChatModel(responses=[calling("remember", {"text": "Prefers tea"}, "c1"), AIMessage("ok")])
    graph = create_agent(model, tools=memtend_tools(ephemeral_memory))  # tools alone, no middleware
    with pytest.raises(UserMismatchError):
        graph.invoke(ask("note it"), config={"configurable": {"user_id": "alice"}}, context={"user_id": "bob"})
    assert ephemeral_memory.user("alice").list() == [] and ephemeral_memory.user("bob").list() == []
