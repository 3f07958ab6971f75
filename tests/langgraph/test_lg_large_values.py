"""Large values through the LangGraph adapters: a 20 MB message (what SqliteSaver and SqliteStore take without a
second thought) round-trips through a MemtendSaver checkpoint and a MemtendStore item; over the store's limit it is
refused with DocumentTooLargeError naming the limit and how to raise it, and nothing of the call is stored."""

from __future__ import annotations

import pytest
from langchain_core.messages import HumanMessage
from langgraph.checkpoint.base import empty_checkpoint
from memtend import Memory
from memtend.errors import DocumentTooLargeError
from memtend_langgraph import MemtendSaver, MemtendStore

pytestmark = pytest.mark.slow  # the write gate reads 20 MB of text twice (a few seconds)

WORDS = "deploy the billing service to staging after the refund ticket is closed ".split()
SIZE = 20 * 1_000_000


def message_text() -> str:
    text = " ".join(WORDS[i % len(WORDS)] + str(i % 7) for i in range(SIZE // 7))
    return text[:SIZE]


def checkpoint(text: str) -> dict[str, object]:
    cp = empty_checkpoint()
    cp["channel_values"] = {"messages": [HumanMessage(text)]}
    cp["channel_versions"] = {"messages": "1"}
    return cp  # type: ignore[return-value]


def test_a_20_mb_message_round_trips_through_the_saver_and_the_store(ephemeral_memory: Memory) -> None:
    text = message_text()
    saver = MemtendSaver(ephemeral_memory)
    config = {"configurable": {"thread_id": "t", "checkpoint_ns": "", "user_id": "alice"}}
    stored = saver.put(config, checkpoint(text), {"source": "input", "step": -1}, {})  # type: ignore[arg-type]
    got = saver.get_tuple({"configurable": {**stored["configurable"], "user_id": "alice"}})
    assert got is not None and got.checkpoint["channel_values"]["messages"][0].content == text
    store = MemtendStore(ephemeral_memory)
    store.put(("memories", "alice"), "big", {"text": text})
    item = store.get(("memories", "alice"), "big")
    assert item is not None and item.value["text"] == text


def test_over_the_limit_a_message_is_refused_by_name_and_nothing_is_stored(ephemeral_memory: Memory) -> None:
    ephemeral_memory.max_document_bytes = 8 * 2**20  # as Memory(max_document_bytes=8 * 2**20) opens it
    text = message_text()
    saver = MemtendSaver(ephemeral_memory)
    config = {"configurable": {"thread_id": "t", "checkpoint_ns": "", "user_id": "alice"}}
    with pytest.raises(DocumentTooLargeError, match="max_document_bytes="):
        saver.put(config, checkpoint(text), {"source": "input", "step": -1}, {})  # type: ignore[arg-type]
    assert saver.get_tuple(config) is None
    store = MemtendStore(ephemeral_memory)
    with pytest.raises(DocumentTooLargeError, match=r"at most 8388608 bytes \(8 MB"):
        store.put(("memories", "alice"), "big", {"text": text})
    assert store.get(("memories", "alice"), "big") is None
