"""MemtendChatStore against LlamaIndex's AsyncDBChatStore contract (the store behind its ``Memory``).

Written for this project in the style of upstream's chat store tests, run on every backend: in-process, on-disk
and server Chroma.
"""

from __future__ import annotations

import pytest
from llama_index.core.base.llms.types import ChatMessage, MessageRole, TextBlock, ToolCallBlock
from llama_index.core.memory import Memory as LlamaMemory
from llama_index.core.storage.chat_store.base_db import AsyncDBChatStore, MessageStatus
from memtend import InvalidInputError, Memory, SensitiveDataError
from memtend_llamaindex import MemtendChatStore


@pytest.fixture
def chat_store(memory: Memory) -> MemtendChatStore:
    """An AsyncDBChatStore for user "u1" on each backend (in-process, on disk, server)."""
    return MemtendChatStore(user_id="u1", memory=memory)


def msgs(*texts: str) -> list[ChatMessage]:
    roles = [MessageRole.USER, MessageRole.ASSISTANT]
    return [ChatMessage(role=roles[i % 2], content=t) for i, t in enumerate(texts)]


def texts(messages: list[ChatMessage]) -> list[str | None]:
    return [m.content for m in messages]


def test_is_an_async_db_chat_store(chat_store: MemtendChatStore) -> None:
    assert isinstance(chat_store, AsyncDBChatStore)


async def test_add_and_get_in_order(chat_store: MemtendChatStore) -> None:
    await chat_store.add_message("s1", ChatMessage(role="user", content="hello"))
    await chat_store.add_message("s1", ChatMessage(role="assistant", content="world"))
    got = await chat_store.get_messages("s1")
    assert [(m.role, m.content) for m in got] == [(MessageRole.USER, "hello"), (MessageRole.ASSISTANT, "world")]
    assert await chat_store.get_messages("nobody-here") == []


async def test_batch_add_count_and_pages(chat_store: MemtendChatStore) -> None:
    await chat_store.add_messages("s1", msgs("m1", "m2", "m3", "m4", "m5"))
    assert await chat_store.count_messages("s1") == 5
    assert await chat_store.count_messages("missing") == 0
    assert texts(await chat_store.get_messages("s1", limit=2)) == ["m1", "m2"]
    assert texts(await chat_store.get_messages("s1", offset=2)) == ["m3", "m4", "m5"]
    assert texts(await chat_store.get_messages("s1", limit=2, offset=1)) == ["m2", "m3"]
    assert texts(await chat_store.get_messages("s1", limit=3, offset=4)) == ["m5"]


async def test_set_replaces_every_message_of_the_key_only(chat_store: MemtendChatStore) -> None:
    await chat_store.add_messages("s1", msgs("old1", "old2"))
    await chat_store.archive_oldest_messages("s1", 1)
    await chat_store.add_message("s2", ChatMessage(role="user", content="other session"))
    await chat_store.set_messages("s1", msgs("new1", "new2", "new3"))
    assert texts(await chat_store.get_messages("s1", status=None)) == ["new1", "new2", "new3"]
    assert texts(await chat_store.get_messages("s2")) == ["other session"]


async def test_delete_message_by_position(chat_store: MemtendChatStore) -> None:
    await chat_store.add_messages("s1", msgs("m1", "m2", "m3"))
    deleted = await chat_store.delete_message("s1", 1)
    assert deleted is not None and deleted.content == "m2"
    assert texts(await chat_store.get_messages("s1")) == ["m1", "m3"]
    assert await chat_store.delete_message("s1", 7) is None
    assert await chat_store.delete_message("s1", -1) is None
    assert texts(await chat_store.get_messages("s1")) == ["m1", "m3"]


async def test_delete_messages_by_status(chat_store: MemtendChatStore) -> None:
    await chat_store.add_messages("s1", msgs("m1", "m2", "m3"))
    await chat_store.add_message("s2", ChatMessage(role="user", content="keep me"))
    await chat_store.archive_oldest_messages("s1", 2)
    await chat_store.delete_messages("s1", status=MessageStatus.ARCHIVED)
    assert texts(await chat_store.get_messages("s1", status=None)) == ["m3"]
    await chat_store.delete_messages("s1")
    assert await chat_store.get_messages("s1", status=None) == []
    assert texts(await chat_store.get_messages("s2")) == ["keep me"]


async def test_delete_oldest(chat_store: MemtendChatStore) -> None:
    await chat_store.add_messages("s1", msgs("oldest", "middle", "newest"))
    gone = await chat_store.delete_oldest_messages("s1", 1)
    assert texts(gone) == ["oldest"]
    assert texts(await chat_store.get_messages("s1")) == ["middle", "newest"]
    assert await chat_store.delete_oldest_messages("s1", 0) == []


async def test_archive_oldest_keeps_order_and_status(chat_store: MemtendChatStore) -> None:
    await chat_store.add_messages("s1", msgs("oldest", "middle", "newest"))
    archived = await chat_store.archive_oldest_messages("s1", 2)
    assert texts(archived) == ["oldest", "middle"]
    assert texts(await chat_store.get_messages("s1", status=MessageStatus.ACTIVE)) == ["newest"]
    assert texts(await chat_store.get_messages("s1", status=MessageStatus.ARCHIVED)) == ["oldest", "middle"]
    assert texts(await chat_store.get_messages("s1", status=None)) == ["oldest", "middle", "newest"]
    assert await chat_store.count_messages("s1", status=None) == 3
    assert await chat_store.count_messages("s1", status=MessageStatus.ARCHIVED) == 2


async def test_get_keys(chat_store: MemtendChatStore) -> None:
    for key in ("k1", "k2", "k3"):
        await chat_store.add_message(key, ChatMessage(role="user", content=key))
    assert set(await chat_store.get_keys()) == {"k1", "k2", "k3"}
    await chat_store.delete_messages("k2")
    assert set(await chat_store.get_keys()) == {"k1", "k3"}


async def test_rich_messages_round_trip(chat_store: MemtendChatStore) -> None:
    call = ChatMessage(
        role="assistant",
        blocks=[TextBlock(text="checking"), ToolCallBlock(tool_call_id="c1", tool_name="lookup", tool_kwargs={"q": 1})],
    )
    result = ChatMessage(role="tool", content="found ハロー héllo", additional_kwargs={"tool_call_id": "c1"})
    await chat_store.add_messages("s1", [call, result])
    assert await chat_store.get_messages("s1") == [call, result]


async def test_sessions_are_scoped_by_user_and_erased_with_the_user(memory: Memory) -> None:
    alice = MemtendChatStore(user_id="alice", memory=memory)
    bob = MemtendChatStore(user_id="bob", memory=memory)
    await alice.add_message("shared-key", ChatMessage(role="user", content="alice's"))
    await bob.add_message("shared-key", ChatMessage(role="user", content="bob's"))
    assert texts(await alice.get_messages("shared-key")) == ["alice's"]
    assert texts(await bob.get_messages("shared-key")) == ["bob's"]
    assert "alice's" in str(memory.user("alice").export())
    memory.erase_user("alice")
    assert await alice.get_messages("shared-key") == []
    assert await alice.get_keys() == []
    assert texts(await bob.get_messages("shared-key")) == ["bob's"]


async def test_bad_input_is_refused_and_nothing_is_lost(chat_store: MemtendChatStore) -> None:
    await chat_store.add_messages("s1", msgs("kept"))
    with pytest.raises(InvalidInputError):
        await chat_store.add_messages("s1", [ChatMessage(role="user", content="ok"), "not a message"])  # type: ignore[list-item]
    with pytest.raises(InvalidInputError):
        await chat_store.add_message("", ChatMessage(role="user", content="no key"))
    with pytest.raises(InvalidInputError):
        await chat_store.get_messages("s1", status="pending")  # type: ignore[arg-type]
    refusing = chat_store.model_copy(update={"redact": False})  # the default masks (docs/secrets.md)
    with pytest.raises(SensitiveDataError, match="MemtendChatStore refused"):
        await refusing.set_messages("s1", msgs("my card is 4111 1111 1111 1111"))
    assert texts(await chat_store.get_messages("s1")) == ["kept"]


def test_missing_user_is_a_clear_error(memory: Memory) -> None:
    from memtend import InvalidUserIdError

    with pytest.raises(InvalidUserIdError, match="user_id"):
        MemtendChatStore(user_id=None, memory=memory)  # type: ignore[arg-type]
    with pytest.raises(InvalidUserIdError):
        MemtendChatStore(user_id="", memory=memory)


# ------------------------------------------------------------------------------------ under LlamaIndex's Memory
async def test_llamaindex_memory_runs_on_the_store(chat_store: MemtendChatStore) -> None:
    memory = LlamaMemory.from_defaults(
        session_id="s1", token_limit=1000, chat_history=msgs("seeded"), chat_store=chat_store
    )
    assert memory.sql_store is chat_store
    await memory.aput_messages([*msgs("q1", "a1")[0:1], ChatMessage(role="assistant", content="a1")])
    assert texts(await memory.aget()) == ["seeded", "q1", "a1"]
    assert texts(await chat_store.get_messages("s1")) == ["seeded", "q1", "a1"]


async def test_llamaindex_memory_waterfall_archives_into_the_store(chat_store: MemtendChatStore) -> None:
    memory = LlamaMemory(token_limit=1000, token_flush_size=700, chat_history_token_ratio=0.9, session_id="s1",
                         sql_store=chat_store)  # fmt: skip
    await memory.aput_messages(msgs("x " * 500, "y " * 500, "z " * 500))
    shown = await memory.aget()
    assert len(shown) == 1 and "z " in (shown[0].content or "")
    assert await chat_store.count_messages("s1", status=MessageStatus.ARCHIVED) == 2
    assert len(await memory.aget_all()) == 3
