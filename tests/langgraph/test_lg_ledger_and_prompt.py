"""LangGraph: a StateGraph agent whose tools run in ``ledger_tool_node`` and whose model gets ``MemtendPrompt``'s
system message. A fake model calls a side-effecting tool twice with the same arguments: the tool runs once and the
second call is answered from the thread's ledger; the constraints of the thread are in every turn's prompt."""

from __future__ import annotations

from typing import Any

import pytest
from langchain_core.language_models.fake_chat_models import FakeMessagesListChatModel
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, SystemMessage, ToolMessage
from langchain_core.outputs import ChatGeneration, ChatResult
from langchain_core.tools import tool
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.graph import START, MessagesState, StateGraph
from langgraph.prebuilt import ToolNode, tools_condition
from memtend import InvalidInputError, Memory, side_effecting
from memtend_langgraph import LedgerToolCalls, MemtendPrompt, ledger_tool_node
from pydantic import Field

ARGS = {"service": "billing", "version": "2.4.1"}


class Scripted(FakeMessagesListChatModel):
    """Answers with ``responses`` in order (the last repeats) and keeps the messages of every call."""

    calls: list[list[BaseMessage]] = Field(default_factory=list)

    def bind_tools(self, tools: Any, **kwargs: Any) -> Scripted:  # type: ignore[override]
        return self

    def _generate(self, messages: list[BaseMessage], *args: Any, **kwargs: Any) -> Any:
        self.calls.append(list(messages))
        response = self.responses[min(self.i, len(self.responses) - 1)].model_copy(deep=True)
        self.i += 1
        return ChatResult(generations=[ChatGeneration(message=response)])


def calling(name: str, args: dict[str, Any], call_id: str) -> AIMessage:
    return AIMessage(content="", tool_calls=[{"name": name, "args": args, "id": call_id}])


def twice() -> Scripted:
    return Scripted(
        responses=[
            calling("deploy", ARGS, "c1"),
            calling("deploy", dict(reversed(ARGS.items())), "c2"),
            AIMessage("Done."),
        ]
    )


def deploy_tool(runs: list[dict[str, Any]]) -> Any:
    @tool
    def deploy(service: str, version: str) -> dict[str, Any]:
        """Deploy a version of a service."""
        runs.append({"service": service, "version": version})
        return {"deployment_id": f"dep-{len(runs)}", "status": "ok"}

    return deploy


def graph(memory: Memory, model: Scripted, tools_node: Any, prompt: MemtendPrompt | None = None) -> Any:
    prompt = prompt or MemtendPrompt(memory, system_prompt="You deploy services.")

    def agent(state: MessagesState) -> dict[str, Any]:
        return {"messages": [model.invoke(prompt(state))]}

    async def aagent(state: MessagesState) -> dict[str, Any]:
        return {"messages": [await model.ainvoke(await prompt.acall(state))]}

    builder = StateGraph(MessagesState)
    from langchain_core.runnables import RunnableLambda

    builder.add_node("agent", RunnableLambda(agent, aagent))
    builder.add_node("tools", tools_node)
    builder.add_edge(START, "agent")
    builder.add_conditional_edges("agent", tools_condition)
    builder.add_edge("tools", "agent")
    return builder.compile(checkpointer=InMemorySaver())


def run(thread: str, user: str = "alice") -> dict[str, Any]:
    return {"config": {"configurable": {"thread_id": thread}}, "context": {"user_id": user}}


def tool_messages(state: dict[str, Any]) -> list[ToolMessage]:
    return [m for m in state["messages"] if isinstance(m, ToolMessage)]


# ---------------------------------------------------------------------- the ledger


def test_a_repeat_is_answered_from_the_ledger_and_the_tool_runs_once(ephemeral_memory: Memory) -> None:
    runs: list[dict[str, Any]] = []
    node = ledger_tool_node([deploy_tool(runs)], ephemeral_memory, side_effect_tools=["deploy"])
    state = graph(ephemeral_memory, twice(), node).invoke({"messages": [HumanMessage("Deploy billing")]}, **run("t1"))
    assert runs == [ARGS]
    first, second = tool_messages(state)
    assert "dep-1" in first.text and "Not run again" in second.text and "dep-1" in second.text
    stats = ephemeral_memory.user("alice").ledger("t1").stats()
    assert (stats["calls"], stats["repeats"]) == (1, 0)
    # another thread, another user: their own ledger
    graph(ephemeral_memory, twice(), node).invoke({"messages": [HumanMessage("Deploy")]}, **run("t1", "bob"))
    assert len(runs) == 2


async def test_async_refuse_and_allow(ephemeral_memory: Memory) -> None:
    runs: list[dict[str, Any]] = []
    refuse = ledger_tool_node([deploy_tool(runs)], ephemeral_memory, side_effect_tools=["deploy"], on_repeat="refuse")
    state = await graph(ephemeral_memory, twice(), refuse).ainvoke({"messages": [HumanMessage("Deploy")]}, **run("r"))
    refused = tool_messages(state)[1]
    assert len(runs) == 1 and refused.status == "error" and "dep-1" in refused.text

    runs.clear()
    calls = LedgerToolCalls(ephemeral_memory, ["deploy"], on_repeat="allow")
    node = ToolNode([deploy_tool(runs)], wrap_tool_call=calls.wrap, awrap_tool_call=calls.awrap)
    await graph(ephemeral_memory, twice(), node).ainvoke({"messages": [HumanMessage("Deploy")]}, **run("a"))
    assert len(runs) == 2
    assert (await ephemeral_memory.user("alice").ledger("a").astats())["repeats"] == 1


def test_a_marked_tool_is_guarded(ephemeral_memory: Memory) -> None:
    runs: list[str] = []

    @tool
    @side_effecting
    def create_ticket(title: str) -> str:
        """Open a ticket."""
        runs.append(title)
        return '{"ticket_id": "T-7"}'

    model = Scripted(
        responses=[
            calling("create_ticket", {"title": "x"}, "a"),
            calling("create_ticket", {"title": "x"}, "b"),
            AIMessage("ok"),
        ]
    )
    state = graph(ephemeral_memory, model, ledger_tool_node([create_ticket], ephemeral_memory)).invoke(
        {"messages": [HumanMessage("File it")]}, **run("m")
    )
    assert runs == ["x"] and "T-7" in tool_messages(state)[1].text


def test_ledger_tool_node_options_are_checked(ephemeral_memory: Memory) -> None:
    with pytest.raises(InvalidInputError, match="on_repeat"):
        ledger_tool_node([], ephemeral_memory, on_repeat="never")  # type: ignore[arg-type]
    with pytest.raises(InvalidInputError, match="LedgerToolCalls"):
        ledger_tool_node([], ephemeral_memory, wrap_tool_call=lambda r, h: h(r))


# ---------------------------------------------------------------------- constraints every turn

TURNS = [
    "I need help planning the billing release. Keep every reply under 100 words.",
    "Tell me a joke.",
    "What is the weather like today?",
    "Change of plan: keep every reply under 50 words.",
    "How do we roll back if the release fails?",
]
FIRST, REVISED = "Keep every reply under 100 words.", "Change of plan: keep every reply under 50 words."


def check_turns(systems: list[str]) -> None:
    assert len(systems) == 5
    for text in systems[:3]:
        assert FIRST in text and REVISED not in text
    for text in systems[3:]:
        assert REVISED in text and FIRST not in text
    assert not any("Tell me a joke" in text or "weather" in text for text in systems)


def system_of(call: list[BaseMessage]) -> str:
    assert isinstance(call[0], SystemMessage) and sum(isinstance(m, SystemMessage) for m in call) == 1
    return call[0].text


def test_the_prompt_carries_the_threads_constraints_every_turn(ephemeral_memory: Memory) -> None:
    ephemeral_memory.user("alice").add_rule("Never deploy on Fridays")
    model = Scripted(responses=[AIMessage("OK.")])
    app = graph(ephemeral_memory, model, ToolNode([deploy_tool([])]))
    for text in TURNS:
        app.invoke({"messages": [HumanMessage(text)]}, **run("c"))
    systems = [system_of(call) for call in model.calls]
    check_turns(systems)
    assert all(s.startswith("You deploy services.") and "Never deploy on Fridays" in s for s in systems)
    app.invoke({"messages": [HumanMessage("Hello")]}, **run("c-bob", "bob"))
    assert "words" not in system_of(model.calls[-1]) and "Fridays" not in system_of(model.calls[-1])


async def test_the_prompt_async_and_as_text(ephemeral_memory: Memory) -> None:
    model = Scripted(responses=[AIMessage("OK.")])
    app = graph(ephemeral_memory, model, ToolNode([deploy_tool([])]))
    for text in TURNS:
        await app.ainvoke({"messages": [HumanMessage(text)]}, **run("d"))
    check_turns([system_of(call) for call in model.calls])
    prompt = MemtendPrompt(ephemeral_memory)
    text = prompt.text([HumanMessage(t) for t in TURNS], base="Base.", user_id="alice")
    assert text.startswith("Base.") and REVISED in text and FIRST not in text
    with pytest.raises(InvalidInputError):  # no user anywhere
        prompt.text([HumanMessage("hi")])


def test_create_agent_with_the_prompt_as_a_dynamic_prompt_and_the_ledger_node_wrappers(
    ephemeral_memory: Memory,
) -> None:
    from langchain.agents import create_agent
    from langchain.agents.middleware import ModelRequest, dynamic_prompt

    prompt = MemtendPrompt(ephemeral_memory)

    @dynamic_prompt
    def with_memory(request: ModelRequest) -> str:
        return prompt.text(request.state["messages"], base=request.system_prompt)

    model = Scripted(responses=[AIMessage("OK.")])
    agent = create_agent(
        model, tools=[], system_prompt="Be brief.", middleware=[with_memory], checkpointer=InMemorySaver()
    )
    for text in TURNS:
        agent.invoke({"messages": [HumanMessage(text)]}, **run("ca"))
    systems = [system_of(call) for call in model.calls]
    check_turns(systems)
    assert all(s.startswith("Be brief.") for s in systems)
