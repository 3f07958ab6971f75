"""A user's data an adapter keeps outside memtend's collections, reached by export and erasure all the same.

An adapter may hand bytes to a store the application already runs (a LangGraph checkpointer delegating its
checkpoints to ``SqliteSaver`` or ``PostgresSaver``) while memtend keeps the index of what belongs to whom. It
registers a holder with the Memory (:func:`add_external_data`); ``Memory.erase_user`` asks every holder to
delete the user's data there before memtend's own rows (so the index is still readable if the holder fails, and
an erasure retried finds everything again), and ``UserMemory.export`` shows what each holder reads back. The
holder is given the Memory on each call and keeps no reference to it; a holder writing to the Memory in the
background offers ``flush()``, which ``Memory.close`` calls first.
"""

from __future__ import annotations

import weakref
from typing import TYPE_CHECKING, Any, Protocol

from memtend.arguments import describe
from memtend.errors import InvalidInputError

if TYPE_CHECKING:
    from memtend.handle import MemoryHandle


class ExternalData(Protocol):
    """What an adapter keeps of a user elsewhere: exported and erased on memtend's calls."""

    def export_user(self, memory: Any, user_id: str) -> list[dict[str, Any]]:
        """The user's data there, as JSON-able entries a person can read."""
        ...

    def erase_user(self, memory: Any, user_id: str) -> int:
        """Delete the user's data there; returns how many items (threads, rows) were deleted."""
        ...


_holders: weakref.WeakKeyDictionary[MemoryHandle, dict[str, ExternalData]] = weakref.WeakKeyDictionary()


def add_external_data(memory: MemoryHandle, name: str, holder: ExternalData) -> None:
    """Register ``holder`` under ``name`` with this Memory handle (a later holder of the same name replaces it)."""
    if not isinstance(name, str) or not name:
        raise InvalidInputError(f"external data is registered under a name (a str), got {describe(name)}")
    if not callable(getattr(holder, "export_user", None)) or not callable(getattr(holder, "erase_user", None)):
        raise InvalidInputError("external data needs export_user(memory, user_id) and erase_user(memory, user_id)")
    _holders.setdefault(memory, {})[name] = holder


def remove_external_data(memory: MemoryHandle, name: str) -> None:
    """Forget the holder registered under ``name`` (its store was closed); nothing is deleted."""
    _holders.get(memory, {}).pop(name, None)


def external_data(memory: MemoryHandle) -> dict[str, ExternalData]:
    """The holders registered with this Memory handle, by name (a copy)."""
    return dict(_holders.get(memory, {}))


def export_external(memory: MemoryHandle, user_id: str) -> dict[str, list[dict[str, Any]]]:
    """Each registered holder's export of the user, by name (empty when no adapter keeps data elsewhere)."""
    return {name: holder.export_user(memory, user_id) for name, holder in list(_holders.get(memory, {}).items())}


def flush_external(memory: MemoryHandle) -> None:
    """Let every registered holder with a ``flush()`` write what it still holds back (a Memory closing calls it)."""
    for holder in list(_holders.get(memory, {}).values()):
        flush = getattr(holder, "flush", None)
        if callable(flush):
            flush()


def erase_external(memory: MemoryHandle, user_id: str) -> dict[str, int]:
    """Erase the user from every registered holder; counts by name. A holder that fails stops the erasure (its
    exception is raised before memtend's own rows, the index of what is there, are deleted)."""
    return {name: holder.erase_user(memory, user_id) for name, holder in list(_holders.get(memory, {}).items())}
