"""``UserSessionFields``: what both chat stores share, the user, backend and redact fields and the way to the docs."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from llama_index.core.base.llms.types import ChatMessage
from llama_index.core.bridge.pydantic import BaseModel, Field, PrivateAttr
from memtend import DocumentStore, Memory
from memtend.surfaces import REDACT_DEFAULT

from memtend_llamaindex.backends import DEFAULT_BACKEND
from memtend_llamaindex.handles import (
    STORE_ID_DESCRIPTION,
    bind,
    checked_user,
    documents_of,
    user_of,
    without_live_objects,
)
from memtend_llamaindex.messages import untrusted_calls


class UserSessionFields(BaseModel):
    """Pydantic mixin (list it before the LlamaIndex base): one user's sessions in that user's document store."""

    user_id: str = Field(description="The memtend user whose sessions this store holds.")
    backend: str = Field(
        default=DEFAULT_BACKEND, description="Name of the registered memtend Memory, for a store built without one."
    )
    store_id: str | None = Field(default=None, description=STORE_ID_DESCRIPTION)
    redact: bool = Field(
        default=REDACT_DEFAULT, description="Mask secrets in stored messages (True) or refuse them (False)."
    )
    untrusted_tools: list[str] = Field(
        default_factory=list,
        description="Tools whose output is untrusted content: once a call of one is stored under a key, what the "
        "agent remembers or sets in that session (memtend_tools with session_id=key) is held for review.",
    )

    _memory: Memory | None = PrivateAttr(default=None)

    def __init__(
        self,
        *,
        user_id: str,
        memory: Memory | None = None,
        backend: str = DEFAULT_BACKEND,
        store_id: str | None = None,
        **kw: Any,
    ):
        user_id = checked_user(user_id, memory, type(self).__name__)
        bound, store_id = bind(memory, store_id, type(self).__name__)
        super().__init__(user_id=user_id, backend=backend, store_id=store_id, **kw)
        self._memory = bound

    def __getstate__(self) -> dict[Any, Any]:  # pickling keeps the ids (the store's too), not the live Memory
        return without_live_objects(super().__getstate__(), "_memory")

    def _docs(self) -> DocumentStore:
        return documents_of(
            self._memory,
            self.backend,
            self.user_id,
            redact=self.redact,
            surface=type(self).__name__,
            store_id=self.store_id,
        )

    def _mark_untrusted(self, key: str, messages: Sequence[ChatMessage]) -> None:
        """Tell the core that untrusted tool output entered the session ``key`` (see ``untrusted_tools``)."""
        if calls := untrusted_calls(messages, self.untrusted_tools):
            session = user_of(self._memory, self.backend, self.user_id, self.store_id).session(key)
            for name, ref in calls:
                session.mark_untrusted(name, ref=ref)

    async def _amark_untrusted(self, key: str, messages: Sequence[ChatMessage]) -> None:
        if calls := untrusted_calls(messages, self.untrusted_tools):
            session = user_of(self._memory, self.backend, self.user_id, self.store_id).session(key)
            for name, ref in calls:
                await session.amark_untrusted(name, ref=ref)
