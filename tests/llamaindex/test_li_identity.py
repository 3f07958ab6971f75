"""A LlamaIndex memory, block or chat store reads and writes the store it was built with, also once restored from
any serialised form, and no constructor re-points a global default."""

from __future__ import annotations

import json
import pickle
from collections.abc import Iterator
from typing import Any

import chromadb
import pytest
from llama_index.core.base.llms.types import ChatMessage
from memtend import InvalidInputError, Memory
from memtend_llamaindex import (
    MemtendChatStore,
    MemtendLegacyChatStore,
    MemtendMemory,
    MemtendMemoryBlock,
    resolve_memory,
    unregister_memory,
)


@pytest.fixture
def other_memory(embedding_function: Any) -> Iterator[Memory]:
    """A second store in the same process (its own collections), opened after the first."""
    import uuid

    mem = Memory(
        client=chromadb.EphemeralClient(),
        embedding_function=embedding_function,
        collection_prefix="li" + uuid.uuid4().hex[:12],
    )
    yield mem
    mem.close()


def said(text: str) -> ChatMessage:
    return ChatMessage(role="user", content=text)


def restorations(handle: Any) -> list[Any]:
    """The handle restored from each serialised form it offers: to_dict/from_dict and JSON (LlamaIndex
    components), a pydantic dump through JSON (how a workflow Context keeps models), pickle."""
    kind = type(handle)
    restored = [kind.model_validate(json.loads(json.dumps(handle.model_dump()))), pickle.loads(pickle.dumps(handle))]
    if hasattr(handle, "to_dict"):
        restored += [kind.from_dict(handle.to_dict()), kind.from_json(handle.to_json())]
    return restored


def test_a_second_memory_does_not_re_point_a_restored_one(memory: Memory, other_memory: Memory) -> None:
    unregister_memory()
    first = MemtendMemory.from_defaults(user_id="alice", session_id="s", memory=memory)
    first.put(said("kept in the first store"))
    MemtendMemory.from_defaults(user_id="alice", session_id="s", memory=other_memory)  # the second Memory
    with pytest.raises(InvalidInputError):
        resolve_memory("default")  # constructors register nothing
    for restored in restorations(first):
        assert [m.content for m in restored.get_all()] == ["kept in the first store"]
    restored = pickle.loads(pickle.dumps(first))
    restored.put(said("written after the restore"))
    assert [m.content for m in first.get_all()] == ["kept in the first store", "written after the restore"]
    assert other_memory.user("alice").export()["documents"] == []  # nothing reached the other store
    memory.erase_user("alice")  # the user's erasure reaches what the restored handle wrote
    assert restored.get_all() == []


async def test_blocks_and_chat_stores_keep_their_store_when_restored(memory: Memory, other_memory: Memory) -> None:
    store = MemtendChatStore(user_id="alice", memory=memory)
    await store.add_message("s", said("short-term, first store"))
    legacy = MemtendLegacyChatStore(user_id="alice", memory=memory)
    block = MemtendMemoryBlock(user_id="alice", memory=memory)
    await block.aput([said("I prefer green tea to coffee")])
    later = [  # built on the other store after the first ones
        MemtendChatStore(user_id="alice", memory=other_memory),
        MemtendLegacyChatStore(user_id="alice", memory=other_memory),
        MemtendMemoryBlock(user_id="alice", memory=other_memory),
    ]
    assert {h.store_id for h in later} == {other_memory.store_id} != {store.store_id}
    for restored in restorations(store):
        assert [m.content for m in await restored.get_messages("s")] == ["short-term, first store"]
    for restored_legacy in restorations(legacy):
        assert [m.content for m in restored_legacy.get_messages("s")] == ["short-term, first store"]
    for restored_block in restorations(block):
        text = await restored_block.aget([said("what do I like to drink?")])
        assert "green tea" in text
    assert other_memory.user("alice").list() == [] and other_memory.user("alice").export()["documents"] == []


def test_a_restored_handle_whose_store_is_closed_is_refused(embedding_function: Any) -> None:
    mem = Memory(client=chromadb.EphemeralClient(), embedding_function=embedding_function, collection_prefix="liclosed")
    handle = MemtendMemory.from_defaults(user_id="alice", session_id="s", memory=mem)
    handle.put(said("hello"))
    data = handle.to_dict()
    mem.close()
    with pytest.raises(InvalidInputError, match="never pointed at another store"):
        MemtendMemory.from_dict(data).get_all()
    another = Memory(client=chromadb.EphemeralClient(), embedding_function=embedding_function, collection_prefix="li2")
    with another, pytest.raises(InvalidInputError, match="different stores"):
        MemtendMemory(user_id="alice", session_id="s", memory=another, store_id=data["store_id"])
