"""The gate's channels through the LlamaIndex chat store: its chat key names a namespace label, an identifier the
gate refuses when it holds a secret (nothing is written, the error does not echo it)."""

from __future__ import annotations

import pytest
from llama_index.core.base.llms.types import ChatMessage
from memtend import Memory, SensitiveIdentifierError
from memtend_llamaindex import MemtendLegacyChatStore

GH_TOKEN = "ghp_MFLZDe1f8rESQedUStPKR0CsTy4Qwb8DwkNh"  # fake, from the gate corpus


def test_a_chat_key_holding_a_secret_is_refused(ephemeral_memory: Memory) -> None:
    store = MemtendLegacyChatStore(user_id="u1", memory=ephemeral_memory, redact=True)
    store.add_message("k1", ChatMessage(role="user", content="hello"))
    with pytest.raises(SensitiveIdentifierError) as caught:
        store.add_message(f"chat {GH_TOKEN}", ChatMessage(role="user", content="hi"))
    assert GH_TOKEN not in str(caught.value)
    assert store.get_keys() == ["k1"]
    assert store.get_messages("k1") == [ChatMessage(role="user", content="hello")]
