"""memtend.testing's isolation machine over the LlamaIndex adapters: random writes, recalls and erasures for several
users (hostile ids included) through MemtendMemory, MemtendChatStore, MemtendLegacyChatStore and
MemtendMemoryBlock, with no cross-user read, loss or leftover after erasure.

A ``write`` puts the text as a user turn into the user's session through MemtendMemory, as an assistant turn into a
second session through the AsyncDBChatStore, and hands it to the memory block as flushed history (captured into
the user's log). ``recall`` is what the block recalls plus the memory lines of MemtendMemory's system message;
``list`` is every message of both sessions, read through the memory and through the legacy store.
"""

from __future__ import annotations

import asyncio
import uuid
from typing import Any

import chromadb
import pytest
from hypothesis import HealthCheck, settings
from llama_index.core.base.llms.types import ChatMessage
from memtend import Memory
from memtend.records import Source
from memtend.testing import VOLATILE, Driver, Seen, make_isolation_machine, strip_keys
from memtend_llamaindex import MemtendChatStore, MemtendLegacyChatStore, MemtendMemory, MemtendMemoryBlock

MEMORY_SESSION, STORE_SESSION = "s1", "s2"
DATED = "- ["


def memory_lines(text: str) -> list[str]:
    """The recalled-memory lines of a rendered block or system message, without their date labels."""
    return [line.split("] ", 1)[1] for line in text.splitlines() if line.startswith(DATED) and "] " in line]


class LlamaIndexDriver(Driver):
    name = "llamaindex"
    embedding_function: Any = None

    def __init__(self) -> None:
        self.memory = Memory(
            client=chromadb.EphemeralClient(),
            embedding_function=type(self).embedding_function,
            collection_prefix="liiso" + uuid.uuid4().hex[:10],
        )

    def _memory(self, user_id: str) -> MemtendMemory:
        return MemtendMemory.from_defaults(user_id=user_id, session_id=MEMORY_SESSION, memory=self.memory)

    def write(self, user_id: str, text: str, *, kind: str, source: Source = Source.USER) -> None:
        self._memory(user_id).put(ChatMessage(role="user", content=text))
        store = MemtendChatStore(user_id=user_id, memory=self.memory)
        asyncio.run(store.add_message(STORE_SESSION, ChatMessage(role="assistant", content=text)))
        block = MemtendMemoryBlock(user_id=user_id, memory=self.memory)
        flushed = [ChatMessage(role="user", content=text)]
        asyncio.run(block.aput(flushed, from_short_term_memory=True, session_id=MEMORY_SESSION))

    def recall(self, user_id: str, query: str) -> list[Seen]:
        block = MemtendMemoryBlock(user_id=user_id, memory=self.memory, k=10)
        texts = memory_lines(asyncio.run(block.aget([ChatMessage(role="user", content=query)])))
        shown = self._memory(user_id).get(input=query)
        if shown and shown[0].role == "system":
            texts += memory_lines(shown[0].content or "")
        return [Seen(None, text) for text in texts]

    def list(self, user_id: str) -> list[Seen]:
        seen = [Seen(None, m.content or "") for m in self._memory(user_id).get_all()]
        legacy = MemtendLegacyChatStore(user_id=user_id, memory=self.memory)
        for key in legacy.get_keys():
            if key != MEMORY_SESSION:
                seen.extend(Seen(None, m.content or "") for m in legacy.get_messages(key))
        return seen

    def export(self, user_id: str) -> Any:
        return strip_keys(self.memory.user(user_id).export(), VOLATILE)

    def erase(self, user_id: str) -> None:
        self.memory.erase_user(user_id)

    def validate_user(self, user_id: object) -> None:
        MemtendMemory.from_defaults(user_id=user_id, session_id=MEMORY_SESSION, memory=self.memory)  # type: ignore[arg-type]

    def close(self) -> None:
        self.memory.close()


@pytest.mark.slow
def test_no_cross_user_read_under_random_operations(embedding_function) -> None:  # type: ignore[no-untyped-def]
    LlamaIndexDriver.embedding_function = embedding_function
    case = make_isolation_machine(LlamaIndexDriver).TestCase
    case.settings = settings(
        max_examples=8,
        stateful_step_count=10,
        deadline=None,
        database=None,
        suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much],
    )
    case().runTest()
