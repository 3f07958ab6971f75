"""``MemtendLegacyChatStore``: LlamaIndex's legacy ``BaseChatStore`` (for ``ChatMemoryBuffer`` and friends) on memtend.

Same layout as :class:`~memtend_llamaindex.MemtendChatStore`, so both see one user's sessions; this interface has
no archive, so it reads and indexes every message of a key whatever its status. Native async twins (no thread
per call).
"""

from __future__ import annotations

from typing import Any

from llama_index.core.base.llms.types import ChatMessage
from llama_index.core.bridge.pydantic import Field, PrivateAttr
from llama_index.core.storage.chat_store.base import BaseChatStore
from memtend import DocumentStore, Memory

from memtend_llamaindex import history
from memtend_llamaindex.backends import DEFAULT_BACKEND
from memtend_llamaindex.handles import bind, checked_user, documents_of
from memtend_llamaindex.messages import check_chat_message, check_chat_messages


class MemtendLegacyChatStore(BaseChatStore):
    """A ``BaseChatStore`` keeping one user's chat sessions in memtend."""

    user_id: str = Field(description="The memtend user whose sessions this store holds.")
    backend: str = Field(default=DEFAULT_BACKEND, description="Name of the registered memtend Memory to use.")
    redact: bool = Field(default=False, description="Mask secrets in stored messages instead of refusing them.")

    _memory: Memory | None = PrivateAttr(default=None)

    def __init__(self, *, user_id: str, memory: Memory | None = None, backend: str = DEFAULT_BACKEND, **kw: Any):
        user_id = checked_user(user_id, memory, type(self).__name__)
        super().__init__(user_id=user_id, backend=backend, **kw)
        self._memory = bind(memory, backend)

    @classmethod
    def class_name(cls) -> str:
        return "MemtendLegacyChatStore"

    def _docs(self) -> DocumentStore:
        return documents_of(self._memory, self.backend, self.user_id, redact=self.redact)

    # ------------------------------------------------------------------------------------------ sync
    def set_messages(self, key: str, messages: list[ChatMessage]) -> None:
        history.run(self._docs(), history.replace_all(key, check_chat_messages(messages)))

    def get_messages(self, key: str, **kwargs: Any) -> list[ChatMessage]:
        return history.run(self._docs(), history.read(key, None))

    def add_message(self, key: str, message: ChatMessage, idx: int | None = None) -> None:
        check_chat_message(message)
        step = history.add(key, [message]) if idx is None else history.insert_at(key, idx, message)
        history.run(self._docs(), step)

    def delete_messages(self, key: str) -> list[ChatMessage] | None:
        return history.run(self._docs(), history.delete_all(key, None)) or None

    def delete_message(self, key: str, idx: int) -> ChatMessage | None:
        return history.run(self._docs(), history.delete_at(key, idx, None))

    def delete_last_message(self, key: str) -> ChatMessage | None:
        return history.run(self._docs(), history.delete_last(key))

    def get_keys(self) -> list[str]:
        return history.run(self._docs(), history.keys())

    # ------------------------------------------------------------------------------------------ async
    async def aset_messages(self, key: str, messages: list[ChatMessage]) -> None:
        await history.arun(self._docs(), history.replace_all(key, check_chat_messages(messages)))

    async def aget_messages(self, key: str, **kwargs: Any) -> list[ChatMessage]:
        return await history.arun(self._docs(), history.read(key, None))

    async def async_add_message(self, key: str, message: ChatMessage, idx: int | None = None) -> None:
        check_chat_message(message)
        step = history.add(key, [message]) if idx is None else history.insert_at(key, idx, message)
        await history.arun(self._docs(), step)

    async def adelete_messages(self, key: str) -> list[ChatMessage] | None:
        return await history.arun(self._docs(), history.delete_all(key, None)) or None

    async def adelete_message(self, key: str, idx: int) -> ChatMessage | None:
        return await history.arun(self._docs(), history.delete_at(key, idx, None))

    async def adelete_last_message(self, key: str) -> ChatMessage | None:
        return await history.arun(self._docs(), history.delete_last(key))

    async def aget_keys(self) -> list[str]:
        return await history.arun(self._docs(), history.keys())
