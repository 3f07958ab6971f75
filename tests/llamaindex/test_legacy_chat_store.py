"""MemtendLegacyChatStore against LlamaIndex's legacy BaseChatStore contract (as SimpleChatStore behaves)."""

from __future__ import annotations

import pytest
from llama_index.core.base.llms.types import ChatMessage
from llama_index.core.memory import ChatMemoryBuffer
from llama_index.core.storage.chat_store.base import BaseChatStore
from memtend import Memory
from memtend_llamaindex import MemtendChatStore, MemtendLegacyChatStore


@pytest.fixture
def legacy_store(memory: Memory) -> MemtendLegacyChatStore:
    """A BaseChatStore for user "u1" on each backend (in-process, on disk, server)."""
    return MemtendLegacyChatStore(user_id="u1", memory=memory)


def user(text: str) -> ChatMessage:
    return ChatMessage(role="user", content=text)


def test_is_a_base_chat_store(legacy_store: MemtendLegacyChatStore) -> None:
    assert isinstance(legacy_store, BaseChatStore)


def test_add_get_keys_and_insert_at_position(legacy_store: MemtendLegacyChatStore) -> None:
    legacy_store.add_message("k1", user("hello"))
    legacy_store.add_message("k1", user("world"))
    legacy_store.add_message("k2", user("hi"))
    assert legacy_store.get_messages("k1") == [user("hello"), user("world")]
    assert sorted(legacy_store.get_keys()) == ["k1", "k2"]
    legacy_store.add_message("k1", user("first"), idx=0)
    legacy_store.add_message("k1", user("between"), idx=2)
    assert legacy_store.get_messages("k1") == [user("first"), user("hello"), user("between"), user("world")]
    assert legacy_store.get_messages("k2") == [user("hi")]


def test_deletes(legacy_store: MemtendLegacyChatStore) -> None:
    legacy_store.set_messages("k1", [user("a"), user("b"), user("c")])
    assert legacy_store.delete_message("k1", 1) == user("b")
    assert legacy_store.delete_message("k1", -2) is None
    assert legacy_store.delete_message("k1", 5) is None
    assert legacy_store.delete_last_message("k1") == user("c")
    assert legacy_store.get_messages("k1") == [user("a")]
    assert legacy_store.delete_messages("k1") == [user("a")]
    assert legacy_store.delete_messages("k1") is None
    assert legacy_store.delete_last_message("k1") is None
    assert legacy_store.get_messages("k1") == []


def test_non_ascii_round_trips(legacy_store: MemtendLegacyChatStore) -> None:
    legacy_store.add_message("k1", user("ハロー héllo"))
    assert legacy_store.get_messages("k1") == [user("ハロー héllo")]


async def test_native_async_twins(legacy_store: MemtendLegacyChatStore) -> None:
    await legacy_store.aset_messages("k1", [user("a"), user("b")])
    await legacy_store.async_add_message("k1", user("c"))
    await legacy_store.async_add_message("k1", user("zero"), idx=0)
    assert await legacy_store.aget_messages("k1") == [user("zero"), user("a"), user("b"), user("c")]
    assert await legacy_store.aget_keys() == ["k1"]
    assert await legacy_store.adelete_message("k1", 0) == user("zero")
    assert await legacy_store.adelete_last_message("k1") == user("c")
    assert await legacy_store.adelete_messages("k1") == [user("a"), user("b")]
    assert await legacy_store.aget_messages("k1") == []


def test_chat_memory_buffer_on_the_store(ephemeral_memory: Memory) -> None:
    store = MemtendLegacyChatStore(user_id="u1", memory=ephemeral_memory)
    buffer = ChatMemoryBuffer.from_defaults(chat_store=store, chat_store_key="s1", token_limit=1000)
    buffer.put(user("remember this"))
    buffer.put(ChatMessage(role="assistant", content="ok"))
    assert [m.content for m in buffer.get()] == ["remember this", "ok"]
    again = ChatMemoryBuffer.from_defaults(
        chat_store=MemtendLegacyChatStore(user_id="u1", memory=ephemeral_memory), chat_store_key="s1"
    )
    assert [m.content for m in again.get_all()] == ["remember this", "ok"]


async def test_both_stores_see_one_history(ephemeral_memory: Memory) -> None:
    legacy = MemtendLegacyChatStore(user_id="u1", memory=ephemeral_memory)
    current = MemtendChatStore(user_id="u1", memory=ephemeral_memory)
    legacy.add_message("s1", user("from the legacy store"))
    await current.add_message("s1", user("from the current store"))
    assert [m.content for m in legacy.get_messages("s1")] == ["from the legacy store", "from the current store"]
    assert [m.content for m in await current.get_messages("s1")] == [m.content for m in legacy.get_messages("s1")]


def test_erased_with_the_user(ephemeral_memory: Memory) -> None:
    store = MemtendLegacyChatStore(user_id="u1", memory=ephemeral_memory)
    store.add_message("k1", user("something"))
    ephemeral_memory.erase_user("u1")
    assert store.get_keys() == []
    assert store.get_messages("k1") == []


def test_bad_input(legacy_store: MemtendLegacyChatStore) -> None:
    from memtend import InvalidInputError

    legacy_store.add_message("k1", user("kept"))
    with pytest.raises(InvalidInputError):
        legacy_store.set_messages("k1", user("not a list"))  # type: ignore[arg-type]
    with pytest.raises(InvalidInputError):
        legacy_store.add_message("k1", {"role": "user", "content": "a dict"})  # type: ignore[arg-type]
    assert legacy_store.get_messages("k1") == [user("kept")]
