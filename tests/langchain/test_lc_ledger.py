"""The side-effect ledger inside real ``create_agent`` runs: a fake model calls a side-effecting tool twice with
the same arguments; the tool's function runs once and the second call is answered (or refused) from the ledger."""

from __future__ import annotations

from typing import Any

import pytest
from langchain.agents import create_agent
from langchain.tools import tool
from langchain_core.messages import AIMessage, HumanMessage, ToolMessage
from langgraph.checkpoint.memory import InMemorySaver
from lc_fakes import ScriptedChatModel, calling
from memtend import InvalidInputError, Memory, side_effecting
from memtend_langchain import MemtendMiddleware

ARGS = {"service": "billing", "version": "2.4.1"}


def deploy_tool(runs: list[dict[str, Any]]) -> Any:
    @tool
    def deploy(service: str, version: str) -> dict[str, Any]:
        """Deploy a version of a service."""
        runs.append({"service": service, "version": version})
        return {"deployment_id": f"dep-{len(runs)}", "status": "ok"}

    return deploy


def twice(name: str = "deploy", args: dict[str, Any] | None = None) -> ScriptedChatModel:
    """A model that calls ``name`` with the same arguments in two turns, then answers."""
    args = ARGS if args is None else args
    return ScriptedChatModel(
        responses=[
            calling(name, args, "call-1"),
            calling(name, dict(reversed(args.items())), "call-2"),
            AIMessage("Done."),
        ]
    )


def build(memory: Memory, model: ScriptedChatModel, tools: list[Any], **options: Any) -> Any:
    middleware = MemtendMiddleware(memory, tools=False, capture=False, **options)
    return create_agent(model, tools=tools, middleware=[middleware], checkpointer=InMemorySaver())


def run(thread: str, user: str = "alice") -> dict[str, Any]:
    return {"config": {"configurable": {"thread_id": thread}}, "context": {"user_id": user}}


def tool_messages(state: dict[str, Any]) -> list[ToolMessage]:
    return [m for m in state["messages"] if isinstance(m, ToolMessage)]


def test_a_repeated_call_is_answered_from_the_ledger_and_runs_once(ephemeral_memory: Memory) -> None:
    runs: list[dict[str, Any]] = []
    graph = build(ephemeral_memory, twice(), [deploy_tool(runs)], side_effect_tools=["deploy"])
    state = graph.invoke({"messages": [HumanMessage("Deploy billing 2.4.1")]}, **run("t1"))

    assert runs == [ARGS]  # the real function ran once
    first, second = tool_messages(state)
    assert "dep-1" in first.text
    assert second.status == "success" and "Not run again" in second.text and "dep-1" in second.text
    stats = ephemeral_memory.user("alice").ledger("t1").stats()
    assert (stats["calls"], stats["repeats"]) == (1, 0)
    assert ephemeral_memory.user("alice").ledger("t1").entries()[0].ids == ("dep-1",)


def test_refuse_answers_with_an_error_and_allow_runs_again(ephemeral_memory: Memory) -> None:
    runs: list[dict[str, Any]] = []
    graph = build(ephemeral_memory, twice(), [deploy_tool(runs)], side_effect_tools=["deploy"], on_repeat="refuse")
    refused = tool_messages(graph.invoke({"messages": [HumanMessage("Deploy")]}, **run("t-refuse")))[1]
    assert len(runs) == 1
    assert refused.status == "error" and "Refused" in refused.text and "dep-1" in refused.text

    runs.clear()
    graph = build(ephemeral_memory, twice(), [deploy_tool(runs)], side_effect_tools=["deploy"], on_repeat="allow")
    allowed = tool_messages(graph.invoke({"messages": [HumanMessage("Deploy")]}, **run("t-allow")))[1]
    assert len(runs) == 2 and "dep-2" in allowed.text
    assert ephemeral_memory.user("alice").ledger("t-allow").stats()["repeats"] == 1


def test_a_marked_tool_is_guarded_and_other_tools_are_not(ephemeral_memory: Memory) -> None:
    runs: list[dict[str, Any]] = []
    looked: list[str] = []

    @tool
    @side_effecting
    def create_ticket(title: str) -> str:
        """Open a ticket."""
        runs.append(title)
        return '{"ticket_id": "T-77"}'

    @tool
    def lookup(title: str) -> str:
        """Look a ticket up."""
        looked.append(title)
        return "found"

    model = ScriptedChatModel(
        responses=[
            calling("create_ticket", {"title": "outage"}, "c1"),
            calling("lookup", {"title": "outage"}, "c2"),
            calling("lookup", {"title": "outage"}, "c3"),
            calling("create_ticket", {"title": "outage"}, "c4"),
            AIMessage("Done."),
        ]
    )
    state = build(ephemeral_memory, model, [create_ticket, lookup]).invoke(
        {"messages": [HumanMessage("File it")]}, **run("t2")
    )
    assert runs == ["outage"] and looked == ["outage", "outage"]
    assert "T-77" in tool_messages(state)[-1].text


def test_the_ledger_is_per_user_and_per_thread(ephemeral_memory: Memory) -> None:
    runs: list[dict[str, Any]] = []
    tools = [deploy_tool(runs)]
    one_call = [calling("deploy", ARGS, "c1"), AIMessage("Done.")]
    for thread, user in (("t1", "alice"), ("t2", "alice"), ("t1", "bob")):
        graph = build(
            ephemeral_memory, ScriptedChatModel(responses=list(one_call)), tools, side_effect_tools=["deploy"]
        )
        graph.invoke({"messages": [HumanMessage("Deploy")]}, **run(thread, user))
    assert len(runs) == 3  # another thread, another user: not a repeat
    assert ephemeral_memory.user("bob").ledger("t2").entries() == []


def test_a_call_that_fails_is_not_recorded_so_a_retry_runs(ephemeral_memory: Memory) -> None:
    attempts: list[int] = []

    @tool
    def deploy(service: str, version: str) -> str:
        """Deploy."""
        attempts.append(1)
        if len(attempts) == 1:
            raise RuntimeError("registry unavailable")
        return '{"deployment_id": "dep-9"}'

    graph = create_agent(
        twice(),
        tools=[deploy],
        middleware=[MemtendMiddleware(ephemeral_memory, tools=False, capture=False, side_effect_tools=["deploy"])],
        checkpointer=InMemorySaver(),
    )
    with pytest.raises(RuntimeError):
        graph.invoke({"messages": [HumanMessage("Deploy")]}, **run("t3"))
    assert ephemeral_memory.user("alice").ledger("t3").entries() == []
    runs: list[dict[str, Any]] = []
    build(ephemeral_memory, twice(), [deploy_tool(runs)], side_effect_tools=["deploy"]).invoke(
        {"messages": [HumanMessage("Deploy")]}, **run("t3")
    )
    assert len(runs) == 1


def test_side_effect_options_are_checked(ephemeral_memory: Memory) -> None:
    with pytest.raises(InvalidInputError, match="on_repeat"):
        MemtendMiddleware(ephemeral_memory, side_effect_tools=["deploy"], on_repeat="skip")  # type: ignore[arg-type]
    with pytest.raises(InvalidInputError, match="list of tool names"):
        MemtendMiddleware(ephemeral_memory, side_effect_tools="deploy")


def test_without_a_thread_a_side_effecting_call_is_refused_clearly(ephemeral_memory: Memory) -> None:
    runs: list[dict[str, Any]] = []
    graph = create_agent(
        twice(),
        tools=[deploy_tool(runs)],
        middleware=[MemtendMiddleware(ephemeral_memory, tools=False, capture=False, side_effect_tools=["deploy"])],
    )
    with pytest.raises(InvalidInputError, match="thread_id"):
        graph.invoke({"messages": [HumanMessage("Deploy")]}, context={"user_id": "alice"})
    assert runs == []


async def test_async_agent_runs_the_tool_once(ephemeral_memory: Memory) -> None:
    runs: list[dict[str, Any]] = []
    graph = build(ephemeral_memory, twice(), [deploy_tool(runs)], side_effect_tools=["deploy"])
    state = await graph.ainvoke({"messages": [HumanMessage("Deploy")]}, **run("t-async"))
    assert runs == [ARGS]
    assert "dep-1" in tool_messages(state)[1].text
    assert (await ephemeral_memory.user("alice").ledger("t-async").astats())["repeats"] == 0


def test_two_identical_calls_in_one_model_turn_run_once(ephemeral_memory: Memory) -> None:
    runs: list[dict[str, Any]] = []
    both = AIMessage(
        content="",
        tool_calls=[{"name": "deploy", "args": ARGS, "id": "p1"}, {"name": "deploy", "args": ARGS, "id": "p2"}],
    )
    model = ScriptedChatModel(responses=[both, AIMessage("Done.")])
    state = build(ephemeral_memory, model, [deploy_tool(runs)], side_effect_tools=["deploy"]).invoke(
        {"messages": [HumanMessage("Deploy")]}, **run("t-par")
    )
    assert len(runs) == 1
    assert sum("Not run again" in m.text for m in tool_messages(state)) == 1
