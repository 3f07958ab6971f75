"""A real FunctionAgent with a scripted function-calling LLM, on MemtendMemory: the calls it makes, what the model
sees, context serialisation, and concurrency beside LlamaIndex's own Memory."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Sequence
from typing import Any

import pytest
from llama_index.core.agent.workflow import AgentWorkflow, FunctionAgent, ReActAgent
from llama_index.core.base.llms.types import ChatMessage, MessageRole, ToolCallBlock
from llama_index.core.llms.mock import MockFunctionCallingLLM
from llama_index.core.memory import Memory as LlamaMemory
from llama_index.core.tools import FunctionTool
from llama_index.core.workflow import Context, JsonSerializer
from memtend import Memory
from memtend_llamaindex import MemtendMemory, unregister_memory


class RecordingMemory(MemtendMemory):
    """MemtendMemory noting which of its methods the agent calls."""

    def model_post_init(self, context: Any) -> None:
        super().model_post_init(context)
        object.__setattr__(self, "_calls", [])

    async def aget(self, input: str | None = None, **kwargs: Any) -> list[ChatMessage]:
        self._calls.append("aget" if input is None else "aget(input)")  # type: ignore[attr-defined]
        return await super().aget(input, **kwargs)

    async def aput(self, message: ChatMessage) -> None:
        self._calls.append("aput")  # type: ignore[attr-defined]
        await MemtendMemory.aput_messages(self, [message])

    async def aput_messages(self, messages: list[ChatMessage]) -> None:
        self._calls.append(f"aput_messages({len(messages)})")  # type: ignore[attr-defined]
        await super().aput_messages(messages)

    async def aset(self, messages: list[ChatMessage]) -> None:
        self._calls.append("aset")  # type: ignore[attr-defined]
        await super().aset(messages)


class ScriptedLLM:
    """Calls ``save_preference`` when asked to remember; otherwise answers with what its system message says."""

    def __init__(self) -> None:
        self.seen: list[list[ChatMessage]] = []

    def __call__(self, messages: Sequence[ChatMessage], **kwargs: Any) -> ChatMessage:
        self.seen.append(list(messages))
        last = messages[-1]
        if last.role == MessageRole.TOOL:
            return ChatMessage(role="assistant", content="Saved.")
        if last.role == MessageRole.USER and (last.content or "").startswith("remember:"):
            text = (last.content or "").removeprefix("remember:").strip()
            block = ToolCallBlock(
                tool_call_id=f"call-{len(self.seen)}", tool_name="save_preference", tool_kwargs={"text": text}
            )
            return ChatMessage(role="assistant", blocks=[block])
        system = messages[0].content if messages[0].role == MessageRole.SYSTEM else ""
        return ChatMessage(role="assistant", content=f"[knows] {system}")


def make_agent(memory: Memory, user_id: str) -> tuple[FunctionAgent, ScriptedLLM]:
    def save_preference(text: str) -> str:
        """Save a preference the user stated."""
        memory.user(user_id).remember(text)
        return "saved"

    script = ScriptedLLM()
    agent = FunctionAgent(
        tools=[FunctionTool.from_defaults(save_preference)], llm=MockFunctionCallingLLM(response_generator=script)
    )
    return agent, script


async def test_function_agent_call_sequence_and_history(ephemeral_memory: Memory) -> None:
    agent, _ = make_agent(ephemeral_memory, "alice")
    memory = RecordingMemory.from_defaults(user_id="alice", session_id="s1", memory=ephemeral_memory)
    answer = await agent.run("remember: I prefer tea over coffee", memory=memory)
    assert str(answer) == "Saved."
    assert memory._calls == ["aput", "aget", "aget(input)", "aput_messages(3)", "aget"]  # type: ignore[attr-defined]
    stored = await memory.aget_all()
    assert [m.role for m in stored] == [
        MessageRole.USER,
        MessageRole.ASSISTANT,
        MessageRole.TOOL,
        MessageRole.ASSISTANT,
    ]
    call = next(b for b in stored[1].blocks if isinstance(b, ToolCallBlock))
    assert stored[2].additional_kwargs["tool_call_id"] == call.tool_call_id
    assert [h.text for h in ephemeral_memory.user("alice").recall("tea", k=1)] == ["I prefer tea over coffee"]


async def test_preference_learned_in_one_session_is_used_in_the_next(ephemeral_memory: Memory) -> None:
    agent, script = make_agent(ephemeral_memory, "alice")
    first = MemtendMemory.from_defaults(user_id="alice", session_id="monday", memory=ephemeral_memory)
    await agent.run("remember: I prefer tea over coffee", memory=first)
    second = MemtendMemory.from_defaults(user_id="alice", session_id="tuesday", memory=ephemeral_memory)
    answer = str(await agent.run("What should I drink?", memory=second))
    assert "I prefer tea over coffee" in answer
    assert next(m.content for m in await second.aget_all()) == "What should I drink?"  # a new session's history
    model_input = script.seen[-1]
    assert model_input[0].role == MessageRole.SYSTEM and "tea" in (model_input[0].content or "")
    other_agent, _ = make_agent(ephemeral_memory, "bob")
    bob = MemtendMemory.from_defaults(user_id="bob", session_id="tuesday", memory=ephemeral_memory)
    assert "tea" not in str(await other_agent.run("What should I drink?", memory=bob))


async def test_ids_survive_context_serialisation(ephemeral_memory: Memory) -> None:
    agent, _ = make_agent(ephemeral_memory, "alice")
    memory = MemtendMemory.from_defaults(user_id="alice", session_id="s1", memory=ephemeral_memory)
    ctx = Context(agent)
    await agent.run("hello", memory=memory, ctx=ctx)
    payload = json.dumps(ctx.to_dict(serializer=JsonSerializer()))
    restored = Context.from_dict(agent, json.loads(payload), serializer=JsonSerializer())
    await agent.run("hello again", ctx=restored)  # the restored context's own memory handle is used
    assert [m.content for m in await memory.aget_all() if m.role == MessageRole.USER] == ["hello", "hello again"]


async def test_a_restored_context_uses_its_own_store_and_refuses_once_that_is_closed(ephemeral_memory: Memory) -> None:
    agent, _ = make_agent(ephemeral_memory, "alice")
    memory = MemtendMemory.from_defaults(user_id="alice", session_id="s1", memory=ephemeral_memory)
    ctx = Context(agent)
    await agent.run("hello", memory=memory, ctx=ctx)
    payload = json.dumps(ctx.to_dict(serializer=JsonSerializer()))
    unregister_memory()  # no registry is involved: the restored handle knows its store
    await agent.run("again", ctx=Context.from_dict(agent, json.loads(payload), serializer=JsonSerializer()))
    assert [m.content for m in await memory.aget_all() if m.role == MessageRole.USER] == ["hello", "again"]
    ephemeral_memory.close()
    restored = Context.from_dict(agent, json.loads(payload), serializer=JsonSerializer())
    with pytest.raises(Exception, match="no open Memory"):
        await agent.run("lost?", ctx=restored)


def _numbered(n: int) -> list[ChatMessage]:
    return [ChatMessage(role="user", content=f"msg{i} " + "word " * 10) for i in range(n)]


async def test_concurrent_aput_upstream_memory_loses_messages_memtend_keeps_them(ephemeral_memory: Memory) -> None:
    """20 concurrent ``aput`` on one session. LlamaIndex's own Memory (default SQLite chat store, its queue
    management unlocked) ends with fewer messages stored than were put; MemtendMemory keeps every one."""
    lost_by_upstream: list[int] = []
    for attempt in range(3):  # upstream's loss depends on scheduling; it shows on the first try in practice
        upstream = LlamaMemory.from_defaults(
            session_id=f"race{attempt}", token_limit=200, chat_history_token_ratio=1.0, token_flush_size=50
        )
        await upstream.sql_store.count_messages("warm-up")  # its store creates its table lazily, racily too
        await asyncio.gather(*(upstream.aput(m) for m in _numbered(20)))
        kept = len(await upstream.aget_all())
        lost_by_upstream.append(20 - kept)
        if kept < 20:
            break
    assert max(lost_by_upstream) > 0, f"upstream lost nothing in {len(lost_by_upstream)} tries"

    ours = MemtendMemory.from_defaults(user_id="alice", session_id="race", memory=ephemeral_memory, token_limit=200)
    await asyncio.gather(*(ours.aput(m) for m in _numbered(20)))
    stored = [m.content for m in await ours.aget_all()]
    assert sorted(stored) == sorted(m.content for m in _numbered(20))
    shown = await ours.aget()
    assert shown[-1].content in stored  # the view is compacted, the store keeps all


def react_model(messages: Sequence[ChatMessage], **kwargs: Any) -> ChatMessage:
    """A ReAct-format answer: French when anything the model was shown asks for it."""
    shown = " ".join(m.content or "" for m in messages)
    answer = "bonjour" if "Always answer in French" in shown else "hello"
    return ChatMessage(role="assistant", content=f"Thought: I can answer without a tool.\nAnswer: {answer}")


async def test_react_agent_and_agent_workflow_see_the_context_in_the_user_turn(ephemeral_memory: Memory) -> None:
    """ReActAgent replaces the memory's system message with its own prompt; insert_method="user" carries the
    user's context in the latest user turn instead (what LlamaIndex's Memory offers as InsertMethod.USER)."""
    ephemeral_memory.user("alice").add_rule("Always answer in French")
    llm = MockFunctionCallingLLM(response_generator=react_model)
    dropped = MemtendMemory.from_defaults(user_id="alice", session_id="r0", memory=ephemeral_memory)
    assert str(await ReActAgent(tools=[], llm=llm).run("hi", memory=dropped)) == "hello"
    for session, agent in (
        ("r1", ReActAgent(tools=[], llm=llm)),
        ("r2", AgentWorkflow(agents=[ReActAgent(name="a", description="answers", tools=[], llm=llm)])),
    ):
        memory = MemtendMemory.from_defaults(
            user_id="alice", session_id=session, memory=ephemeral_memory, insert_method="user"
        )
        assert str(await agent.run("hi", memory=memory)) == "bonjour"
        stored = await memory.aget_all()
        assert next(m.content for m in stored) == "hi"  # the context is added on read, never stored


async def test_a_write_once_turn_is_one_chroma_write_and_stores_the_same(ephemeral_memory: Memory) -> None:
    rows = ephemeral_memory.storage.documents
    real, calls = rows.collection.upsert, []

    def upsert(**kwargs):  # type: ignore[no-untyped-def]
        calls.append(len(kwargs["ids"]))
        return real(**kwargs)

    rows.collection.upsert = upsert  # type: ignore[method-assign]
    stored = {}
    for write_once in (False, True):
        agent, _ = make_agent(ephemeral_memory, "alice")
        memory = MemtendMemory.from_defaults(
            user_id="alice", session_id=f"s-{write_once}", memory=ephemeral_memory, write_once=write_once
        )
        calls.clear()
        assert str(await agent.run("What do you know?", memory=memory)).startswith("[knows]")
        assert len(calls) == (1 if write_once else 2)
        fresh = MemtendMemory.from_defaults(user_id="alice", session_id=f"s-{write_once}", memory=ephemeral_memory)
        stored[write_once] = [m.role for m in await fresh.aget_all()]
    assert stored[True] == stored[False] == [MessageRole.USER, MessageRole.ASSISTANT]
