"""What the per-user parts of working memory (session state, the ledger, adapters' stores) need from the user
facade, as protocols: they import this low module, never ``memory`` or ``user_memory``, so nothing imports in a
circle (``session_scope`` -> ``memory`` -> ``session`` was one).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    from memtend.keyed_store import KeyedStore
    from memtend.policies.forgetting import RetentionPolicy
    from memtend.storage import Storage


class MemoryScope(Protocol):
    """The store-wide parts: storage and the retention schedule."""

    @property
    def storage(self) -> Storage: ...

    @property
    def retention(self) -> RetentionPolicy: ...


class UserScope(Protocol):
    """One user's scope (``memtend.UserMemory`` is one): its id, the store it lives in, its keyed namespaces."""

    @property
    def user_id(self) -> str: ...

    @property
    def memory(self) -> MemoryScope: ...

    def store(self, namespace: str) -> KeyedStore: ...
