"""``MemtendChatStore``: LlamaIndex's ``AsyncDBChatStore`` (the short-term store of ``Memory``) on memtend.

One store serves one user: its keys are that user's session ids, its messages live in the user's document store
(see :mod:`memtend_llamaindex.history`), so they are isolated per user, exported with the user and erased by
``Memory.erase_user``. Drop it into LlamaIndex's own memory::

    memory = Memory.from_defaults(session_id="s1", chat_store=MemtendChatStore(user_id="alice", memory=mem))

``delete_message(key, idx)`` takes the position among the key's active messages (the SQL store's row ids have
no meaning here).
"""

from __future__ import annotations

from llama_index.core.base.llms.types import ChatMessage
from llama_index.core.storage.chat_store.base_db import AsyncDBChatStore, MessageStatus

from memtend_llamaindex import history
from memtend_llamaindex.messages import check_chat_message, check_chat_messages
from memtend_llamaindex.user_sessions import UserSessionFields


class MemtendChatStore(UserSessionFields, AsyncDBChatStore):
    """An ``AsyncDBChatStore`` keeping one user's chat sessions in memtend."""

    @classmethod
    def class_name(cls) -> str:
        return "MemtendChatStore"

    async def get_messages(
        self,
        key: str,
        status: MessageStatus | None = MessageStatus.ACTIVE,
        limit: int | None = None,
        offset: int | None = None,
    ) -> list[ChatMessage]:
        return await history.arun(self._docs(), history.read(key, history.status_value(status), limit, offset))

    async def count_messages(self, key: str, status: MessageStatus | None = MessageStatus.ACTIVE) -> int:
        return await history.arun(self._docs(), history.count(key, history.status_value(status)))

    async def add_message(self, key: str, message: ChatMessage, status: MessageStatus = MessageStatus.ACTIVE) -> None:
        check_chat_message(message)
        await history.arun(self._docs(), history.add(key, [message], _status(status)))
        await self._amark_untrusted(key, [message])

    async def add_messages(
        self, key: str, messages: list[ChatMessage], status: MessageStatus = MessageStatus.ACTIVE
    ) -> None:
        checked = check_chat_messages(messages)
        await history.arun(self._docs(), history.add(key, checked, _status(status)))
        await self._amark_untrusted(key, checked)

    async def set_messages(
        self, key: str, messages: list[ChatMessage], status: MessageStatus = MessageStatus.ACTIVE
    ) -> None:
        checked = check_chat_messages(messages)
        await history.arun(self._docs(), history.replace_all(key, checked, _status(status)))
        await self._amark_untrusted(key, checked)

    async def delete_message(self, key: str, idx: int) -> ChatMessage | None:
        return await history.arun(self._docs(), history.delete_at(key, idx, history.ACTIVE))

    async def delete_messages(self, key: str, status: MessageStatus | None = None) -> None:
        await history.arun(self._docs(), history.delete_all(key, history.status_value(status)))

    async def delete_oldest_messages(self, key: str, n: int) -> list[ChatMessage]:
        return await history.arun(self._docs(), history.delete_oldest(key, n))

    async def archive_oldest_messages(self, key: str, n: int) -> list[ChatMessage]:
        return await history.arun(self._docs(), history.archive_oldest(key, n))

    async def get_keys(self) -> list[str]:
        return await history.arun(self._docs(), history.keys())


def _status(status: MessageStatus | str) -> str:
    value = history.status_value(status)
    if value is None:
        from memtend import InvalidInputError

        raise InvalidInputError("a message is stored as 'active' or 'archived', not None")
    return value
