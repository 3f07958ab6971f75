"""Bad session ids given to the LangChain history get a typed memtend error that never repeats the refused value."""

from __future__ import annotations

from typing import Any

import pytest
from memtend import InvalidInputError, Memory
from memtend_langchain import MemtendChatMessageHistory

CANARY = "canary-7f3a9"


@pytest.mark.parametrize("session_id", [{"id": CANARY}, [CANARY], None, "   "], ids=["dict", "list", "none", "blank"])
def test_a_bad_session_id_is_refused_without_repeating_it(ephemeral_memory: Memory, session_id: Any) -> None:
    with pytest.raises(InvalidInputError) as refused:
        MemtendChatMessageHistory("alice", session_id, memory=ephemeral_memory)
    assert CANARY not in str(refused.value) and "session_id" in str(refused.value)
