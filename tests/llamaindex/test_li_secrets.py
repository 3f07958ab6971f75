"""One rule for secrets on the LlamaIndex surfaces (docs/secrets.md): MemtendMemory, the memory block and both chat
stores mask a secret by default, in one content block or split over two TextBlocks of one message, so a
FunctionAgent run is not stopped by it; with ``redact=False`` each refuses naming itself and the option, and
nothing of the call is written."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

import pytest
from llama_index.core.agent.workflow import FunctionAgent
from llama_index.core.base.llms.types import ChatMessage, TextBlock
from llama_index.core.llms.mock import MockFunctionCallingLLM
from llama_index.core.memory import Memory as LlamaMemory
from memtend import Memory, SensitiveDataError
from memtend_llamaindex import MemtendChatStore, MemtendLegacyChatStore, MemtendMemory, MemtendMemoryBlock

CARD = "4111 1111 1111 1111"


def split_card() -> ChatMessage:
    return ChatMessage(role="user", blocks=[TextBlock(text="my card is 4111 1111"), TextBlock(text="1111 1111, book")])


def one_block() -> ChatMessage:
    return ChatMessage(role="user", content=f"my card is {CARD}, book")


def verbatim(memory: Memory, user: str) -> bool:
    flat = json.dumps(memory.user(user).export()).replace(" ", "")
    return "4111111111111111" in flat or "41111111" in flat


def answer(messages: Sequence[ChatMessage], **kwargs: Any) -> ChatMessage:
    return ChatMessage(role="assistant", content="booked")


async def test_a_function_agent_run_with_a_card_completes_and_stores_it_masked(ephemeral_memory: Memory) -> None:
    agent = FunctionAgent(tools=[], llm=MockFunctionCallingLLM(response_generator=answer))
    memory = MemtendMemory.from_defaults(user_id="alice", session_id="s1", memory=ephemeral_memory)
    result = await agent.run(f"my card is {CARD}, book the flight", memory=memory)
    assert str(result) == "booked"
    stored = await memory.aget_all()
    assert [m.role.value for m in stored] == ["user", "assistant"] and "[REDACTED:card]" in (stored[0].content or "")
    assert not verbatim(ephemeral_memory, "alice")


@pytest.mark.parametrize("message", [one_block, split_card], ids=["one-block", "split-over-two-blocks"])
async def test_every_llamaindex_surface_masks_by_default(ephemeral_memory: Memory, message: Any) -> None:
    memory = MemtendMemory.from_defaults(user_id="alice", session_id="m", memory=ephemeral_memory)
    await memory.aput(message())
    store = MemtendChatStore(user_id="alice", memory=ephemeral_memory)
    await store.add_message("c", message())
    legacy = MemtendLegacyChatStore(user_id="alice", memory=ephemeral_memory)
    legacy.add_message("l", message())
    block = MemtendMemoryBlock(user_id="alice", memory=ephemeral_memory)
    await block.aput([message(), ChatMessage(role="assistant", content="Booked.")], session_id="b")
    assert len(await memory.aget_all()) == 1 and len(await store.get_messages("c")) == 1
    assert len(legacy.get_messages("l")) == 1
    assert not verbatim(ephemeral_memory, "alice")


@pytest.mark.parametrize("message", [one_block, split_card], ids=["one-block", "split-over-two-blocks"])
async def test_with_redact_false_each_surface_refuses_naming_itself(ephemeral_memory: Memory, message: Any) -> None:
    memory = MemtendMemory.from_defaults(user_id="alice", session_id="m", memory=ephemeral_memory, redact=False)
    store = MemtendChatStore(user_id="alice", memory=ephemeral_memory, redact=False)
    legacy = MemtendLegacyChatStore(user_id="alice", memory=ephemeral_memory, redact=False)
    block = MemtendMemoryBlock(user_id="alice", memory=ephemeral_memory, redact=False)
    fine = ChatMessage(role="user", content="fine")
    with pytest.raises(SensitiveDataError, match=r"MemtendMemory refused.*redact"):
        await memory.aput_messages([fine, message()])
    with pytest.raises(SensitiveDataError, match="MemtendChatStore refused"):
        await store.add_messages("c", [fine, message()])
    with pytest.raises(SensitiveDataError, match="MemtendLegacyChatStore refused"):
        legacy.set_messages("l", [fine, message()])
    with pytest.raises(SensitiveDataError, match="MemtendMemoryBlock refused"):
        await block.aput([fine, message()], session_id="b")
    assert await memory.aget_all() == [] and await store.get_messages("c") == [] and legacy.get_messages("l") == []
    assert ephemeral_memory.user("alice").export()["records"] == []


async def test_llamaindex_memory_with_the_block_and_store_flushes_a_split_card_masked(ephemeral_memory: Memory) -> None:
    memory = LlamaMemory.from_defaults(
        session_id="s1",
        token_limit=60,
        chat_history_token_ratio=0.5,
        token_flush_size=20,
        memory_blocks=[MemtendMemoryBlock(user_id="alice", memory=ephemeral_memory)],
        chat_store=MemtendChatStore(user_id="alice", memory=ephemeral_memory),
    )
    for i in range(4):
        await memory.aput_messages([split_card(), ChatMessage(role="assistant", content=f"booked {i} " * 5)])
    # something was flushed into the block (issue 31: a flush captures what is worth keeping, so the masked card
    # and the replies leave no record; the flush itself is what this checks)
    assert await memory.sql_store.count_messages("s1", status="archived")  # type: ignore[arg-type]
    assert not verbatim(ephemeral_memory, "alice")
