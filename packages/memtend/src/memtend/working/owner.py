"""What the per-user parts of working memory (session state, the ledger) need from the user facade, as a protocol:
they import this low module at run time, never ``memory`` or ``user_memory`` (``working.scope`` -> ``memory`` ->
``working.session`` would be an import cycle). The store is seen through :class:`~memtend.handle.MemoryHandle`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    from memtend.handle import MemoryHandle


class UserScope(Protocol):
    """One user's scope (``memtend.UserMemory`` is one): its id, its store, and whether a person holds it."""

    @property
    def user_id(self) -> str: ...

    @property
    def memory(self) -> MemoryHandle: ...

    @property
    def operator(self) -> bool:
        """A person's handle (``Memory.user(id, operator=True)``): its reads are not counted (memtend.metrics)."""
        ...
