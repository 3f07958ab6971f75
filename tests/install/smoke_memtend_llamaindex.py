"""Smoke check of an installed memtend-llamaindex wheel: its public API end to end on embedded Chroma."""

from __future__ import annotations

import asyncio
import tempfile

from llama_index.core.base.llms.types import ChatMessage
from llama_index.core.memory import Memory as LlamaMemory
from memtend import Memory
from memtend_llamaindex import MemtendChatStore, MemtendLegacyChatStore, MemtendMemory, MemtendMemoryBlock


async def main() -> None:
    with Memory(path=tempfile.mkdtemp(prefix="memtend-li-smoke-")) as mem:
        mem.user("alice").set_fact("reply.style", "short")
        memory = MemtendMemory.from_defaults(user_id="alice", session_id="s1", memory=mem)
        await memory.aput(ChatMessage(role="user", content="hello"))
        shown = await memory.aget()
        assert shown[0].role == "system" and "reply.style: short" in (shown[0].content or ""), shown
        assert [m.content for m in await memory.aget_all()] == ["hello"]

        store = MemtendChatStore(user_id="alice", memory=mem)
        llama = LlamaMemory.from_defaults(
            session_id="s2", chat_store=store, memory_blocks=[MemtendMemoryBlock(user_id="alice", memory=mem)]
        )
        await llama.aput(ChatMessage(role="user", content="hi there"))
        assert [m.content for m in await store.get_messages("s2")] == ["hi there"]
        assert sorted(MemtendLegacyChatStore(user_id="alice", memory=mem).get_keys()) == ["s1", "s2"]

        mem.erase_user("alice")
        assert await memory.aget_all() == [] and await store.get_keys() == []
    print("memtend-llamaindex smoke: ok")


if __name__ == "__main__":
    asyncio.run(main())
