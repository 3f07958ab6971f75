"""Bad ids given to the LlamaIndex adapters get a typed memtend error that never repeats the refused value."""

from __future__ import annotations

from typing import Any

import pytest
from memtend import InvalidInputError, InvalidUserIdError, Memory
from memtend_llamaindex import MemtendChatStore, MemtendMemory

CANARY = "canary-7f3a9"


@pytest.mark.parametrize("session_id", [{"id": CANARY}, [CANARY], 5, ""], ids=["dict", "list", "int", "empty"])
def test_a_bad_session_id_is_refused_without_repeating_it(ephemeral_memory: Memory, session_id: Any) -> None:
    with pytest.raises(InvalidInputError) as refused:
        MemtendMemory.from_defaults(user_id="alice", session_id=session_id, memory=ephemeral_memory)
    assert CANARY not in str(refused.value) and "session_id" in str(refused.value)


@pytest.mark.parametrize("user_id", [{"id": CANARY}, [CANARY], ""], ids=["dict", "list", "empty"])
def test_a_bad_user_id_is_refused_without_repeating_it(user_id: Any) -> None:
    for make in (MemtendMemory, MemtendChatStore):
        with pytest.raises(InvalidUserIdError) as refused:
            make(user_id=user_id, session_id="s")  # no memory: the adapter's own check
        assert CANARY not in str(refused.value)


async def test_a_bad_chat_store_key_is_refused_without_repeating_it(ephemeral_memory: Memory) -> None:
    store = MemtendChatStore(user_id="alice", memory=ephemeral_memory)
    with pytest.raises(InvalidInputError) as refused:
        await store.get_messages(f"{CANARY}\ud800")
    assert CANARY not in str(refused.value)
