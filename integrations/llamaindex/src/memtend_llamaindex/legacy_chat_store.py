"""``MemtendLegacyChatStore``: LlamaIndex's legacy ``BaseChatStore`` (for ``ChatMemoryBuffer`` and friends) on memtend.

Same layout as :class:`~memtend_llamaindex.MemtendChatStore`, so both see one user's sessions; this interface has
no archive, so it reads and indexes every message of a key whatever its status. Native async twins (no thread
per call).
"""

from __future__ import annotations

from typing import Any

from llama_index.core.base.llms.types import ChatMessage
from llama_index.core.storage.chat_store.base import BaseChatStore

from memtend_llamaindex import history
from memtend_llamaindex.messages import check_chat_message, check_chat_messages
from memtend_llamaindex.user_sessions import UserSessionFields


class MemtendLegacyChatStore(UserSessionFields, BaseChatStore):
    """A ``BaseChatStore`` keeping one user's chat sessions in memtend."""

    @classmethod
    def class_name(cls) -> str:
        return "MemtendLegacyChatStore"

    # ------------------------------------------------------------------------------------------ sync
    def set_messages(self, key: str, messages: list[ChatMessage]) -> None:
        checked = check_chat_messages(messages)
        history.run(self._docs(), history.replace_all(key, checked))
        self._mark_untrusted(key, checked)

    def get_messages(self, key: str, **kwargs: Any) -> list[ChatMessage]:
        return history.run(self._docs(), history.read(key, None))

    def add_message(self, key: str, message: ChatMessage, idx: int | None = None) -> None:
        check_chat_message(message)
        step = history.add(key, [message]) if idx is None else history.insert_at(key, idx, message)
        history.run(self._docs(), step)
        self._mark_untrusted(key, [message])

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
        checked = check_chat_messages(messages)
        await history.arun(self._docs(), history.replace_all(key, checked))
        await self._amark_untrusted(key, checked)

    async def aget_messages(self, key: str, **kwargs: Any) -> list[ChatMessage]:
        return await history.arun(self._docs(), history.read(key, None))

    async def async_add_message(self, key: str, message: ChatMessage, idx: int | None = None) -> None:
        check_chat_message(message)
        step = history.add(key, [message]) if idx is None else history.insert_at(key, idx, message)
        await history.arun(self._docs(), step)
        await self._amark_untrusted(key, [message])

    async def adelete_messages(self, key: str) -> list[ChatMessage] | None:
        return await history.arun(self._docs(), history.delete_all(key, None)) or None

    async def adelete_message(self, key: str, idx: int) -> ChatMessage | None:
        return await history.arun(self._docs(), history.delete_at(key, idx, None))

    async def adelete_last_message(self, key: str) -> ChatMessage | None:
        return await history.arun(self._docs(), history.delete_last(key))

    async def aget_keys(self) -> list[str]:
        return await history.arun(self._docs(), history.keys())
