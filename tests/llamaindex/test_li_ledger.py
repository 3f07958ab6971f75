"""The side-effect ledger in a real FunctionAgent: a scripted function-calling LLM calls a side-effecting tool twice
with the same arguments; the tool's function runs once and the second call is answered from the ledger."""

# No ``from __future__ import annotations``: LlamaIndex finds a tool's Context parameter by its annotation object.
from collections.abc import Sequence
from typing import Any

import pytest
from llama_index.core.agent.workflow import FunctionAgent
from llama_index.core.base.llms.types import ChatMessage, MessageRole, ToolCallBlock
from llama_index.core.llms.mock import MockFunctionCallingLLM
from llama_index.core.tools import FunctionTool
from llama_index.core.workflow import Context
from memtend import InvalidInputError, Memory, side_effecting
from memtend_llamaindex import MemtendMemory, ledger_tools

ARGS = {"service": "billing", "version": "2.4.1"}


class CallsTwice:
    """Calls ``tool`` with the same arguments on its first two turns (keys in another order the second time),
    then answers with the tool messages it got."""

    def __init__(self, tool: str = "deploy", args: dict[str, Any] | None = None) -> None:
        self.tool = tool
        self.args = ARGS if args is None else args
        self.turns = 0
        self.tool_results: list[ChatMessage] = []

    def __call__(self, messages: Sequence[ChatMessage], **kwargs: Any) -> ChatMessage:
        self.turns += 1
        if messages[-1].role == MessageRole.TOOL:
            self.tool_results.append(messages[-1])
        if self.turns <= 2:
            args = self.args if self.turns == 1 else dict(reversed(self.args.items()))
            block = ToolCallBlock(tool_call_id=f"call-{self.turns}", tool_name=self.tool, tool_kwargs=args)
            return ChatMessage(role="assistant", blocks=[block])
        return ChatMessage(role="assistant", content="Done.")


def deploy_tool(runs: list[dict[str, Any]]) -> FunctionTool:
    def deploy(service: str, version: str) -> dict[str, Any]:
        """Deploy a version of a service."""
        runs.append({"service": service, "version": version})
        return {"deployment_id": f"dep-{len(runs)}", "status": "ok"}

    return FunctionTool.from_defaults(deploy)


async def run_agent(
    memory: Memory, tools: list[Any], script: CallsTwice, user: str = "alice", session: str = "s1"
) -> None:
    agent = FunctionAgent(tools=tools, llm=MockFunctionCallingLLM(response_generator=script))
    chat = MemtendMemory.from_defaults(user_id=user, session_id=session, memory=memory)
    await agent.run("Deploy billing 2.4.1", memory=chat)


async def test_the_tool_runs_once_and_the_repeat_carries_the_first_ids(ephemeral_memory: Memory) -> None:
    runs: list[dict[str, Any]] = []
    tools = ledger_tools(
        [deploy_tool(runs)], ephemeral_memory, user_id="alice", session_id="s1", side_effect_tools=["deploy"]
    )
    script = CallsTwice()
    await run_agent(ephemeral_memory, tools, script)
    assert runs == [ARGS]
    first, second = (m.content or "" for m in script.tool_results)
    assert "dep-1" in first and "Not run again" in second and "dep-1" in second
    stats = ephemeral_memory.user("alice").ledger("s1").stats()
    assert (stats["calls"], stats["repeats"]) == (1, 0)
    assert ephemeral_memory.user("alice").ledger("s1").entries()[0].ids == ("dep-1",)
    # another session, another user: a ledger of their own
    for user, session in (("alice", "s2"), ("bob", "s1")):
        own = ledger_tools(
            [deploy_tool(runs)], ephemeral_memory, user_id=user, session_id=session, side_effect_tools=["deploy"]
        )
        await run_agent(ephemeral_memory, own, CallsTwice(), user, session)
    assert len(runs) == 3


async def test_refuse_and_allow(ephemeral_memory: Memory) -> None:
    runs: list[dict[str, Any]] = []
    refuse = ledger_tools(
        [deploy_tool(runs)],
        ephemeral_memory,
        user_id="alice",
        session_id="r",
        side_effect_tools=["deploy"],
        on_repeat="refuse",
    )
    script = CallsTwice()
    await run_agent(ephemeral_memory, refuse, script, session="r")
    assert len(runs) == 1 and "Refused" in (script.tool_results[1].content or "")

    runs.clear()
    allow = ledger_tools(
        [deploy_tool(runs)],
        ephemeral_memory,
        user_id="alice",
        session_id="a",
        side_effect_tools=["deploy"],
        on_repeat="allow",
    )
    await run_agent(ephemeral_memory, allow, CallsTwice(), session="a")
    assert len(runs) == 2
    assert ephemeral_memory.user("alice").ledger("a").stats()["repeats"] == 1


async def test_a_marked_function_and_a_tool_taking_the_context(ephemeral_memory: Memory) -> None:
    runs: list[str] = []

    @side_effecting
    async def create_ticket(ctx: Context, title: str) -> str:
        """Open a ticket."""
        assert isinstance(ctx, Context)  # the agent still hands the wrapped tool its Context
        runs.append(title)
        return '{"ticket_id": "T-7"}'

    def lookup(title: str) -> str:
        """Look a ticket up."""
        runs.append("lookup")
        return "found"

    tools = ledger_tools(
        [FunctionTool.from_defaults(async_fn=create_ticket), FunctionTool.from_defaults(lookup)],
        ephemeral_memory,
        user_id="alice",
        session_id="m",
    )
    assert type(tools[1]) is FunctionTool  # not side-effecting: returned as it was
    script = CallsTwice("create_ticket", {"title": "outage"})
    await run_agent(ephemeral_memory, tools, script, session="m")
    assert runs == ["outage"], [m.content for m in script.tool_results]
    assert "T-7" in (script.tool_results[1].content or "")


def test_sync_calls_and_bad_input(ephemeral_memory: Memory) -> None:
    runs: list[dict[str, Any]] = []
    (tool,) = ledger_tools(
        [deploy_tool(runs)], ephemeral_memory, user_id="alice", session_id="sync", side_effect_tools=["deploy"]
    )
    tool.call(**ARGS)
    again = tool(**dict(reversed(ARGS.items())))
    assert len(runs) == 1 and "dep-1" in again.content and not again.is_error
    with pytest.raises(InvalidInputError, match="LlamaIndex tools"):
        ledger_tools([lambda: None], ephemeral_memory, user_id="alice", session_id="x")  # type: ignore[list-item]
    with pytest.raises(InvalidInputError, match="on_repeat"):
        ledger_tools([], ephemeral_memory, user_id="alice", session_id="x", on_repeat="twice")  # type: ignore[arg-type]
