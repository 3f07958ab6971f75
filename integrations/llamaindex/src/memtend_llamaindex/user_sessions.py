"""``UserSessionFields``: what both chat stores share, the user, backend and redact fields and the way to the docs."""

from __future__ import annotations

from typing import Any

from llama_index.core.bridge.pydantic import BaseModel, Field, PrivateAttr
from memtend import DocumentStore, Memory

from memtend_llamaindex.backends import DEFAULT_BACKEND
from memtend_llamaindex.handles import bind, checked_user, documents_of


class UserSessionFields(BaseModel):
    """Pydantic mixin (list it before the LlamaIndex base): one user's sessions in that user's document store."""

    user_id: str = Field(description="The memtend user whose sessions this store holds.")
    backend: str = Field(default=DEFAULT_BACKEND, description="Name of the registered memtend Memory to use.")
    redact: bool = Field(default=False, description="Mask secrets in stored messages instead of refusing them.")

    _memory: Memory | None = PrivateAttr(default=None)

    def __init__(self, *, user_id: str, memory: Memory | None = None, backend: str = DEFAULT_BACKEND, **kw: Any):
        user_id = checked_user(user_id, memory, type(self).__name__)
        super().__init__(user_id=user_id, backend=backend, **kw)
        self._memory = bind(memory, backend)

    def _docs(self) -> DocumentStore:
        return documents_of(self._memory, self.backend, self.user_id, redact=self.redact)
