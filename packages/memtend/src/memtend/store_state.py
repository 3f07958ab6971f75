"""One state per store per process, shared by every Memory handle opened on it.

A store is a Chroma folder (by its real path), a Chroma server (by host, port, tenant and database) or, for any
other client (an ``EphemeralClient``), the client object itself; plus the collection prefix. Every handle on it
shares one :class:`~memtend.storage.Storage`, one lock, one cache of per-user indexes, one background writer of
usage stamps and (through the shared Storage) one set of session tallies, so a write or an erasure made through
one handle is seen by the others at once, whichever of them closes first. The state goes when its last handle
closes.
"""

from __future__ import annotations

import os
import threading
import uuid
from collections import OrderedDict
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from memtend import locking

if TYPE_CHECKING:
    from memtend.memory import _SyncedIndex
    from memtend.storage import ChangeMarks, Storage
    from memtend.usage import UsageWriter

StoreKey = tuple[Any, ...]
_states: dict[StoreKey, StoreState] = {}
_guard = threading.Lock()


class StoreState:
    """What every handle on one store shares in this process."""

    def __init__(self, key: StoreKey, storage: Storage, usage: UsageWriter, lock: locking.DirectoryLock | None) -> None:
        self.key = key
        self.storage = storage
        self.usage = usage
        self.folder_lock = lock
        self.lock = threading.RLock()  # held through every read-check-write of a user's records, and erasure
        self.indexes: OrderedDict[str, _SyncedIndex] = OrderedDict()
        self.max_cached_users = 0
        self.writer_id = uuid.uuid4().hex  # names this process's change marks on a shared store
        self.handles = 0

    @property
    def exclusive(self) -> bool:
        """True when no other process can write the store: an embedded folder whose lock this process holds.
        The shared index cache then needs no catching up."""
        return self.folder_lock is not None

    def marks(self) -> ChangeMarks:
        """The store's change marks (written and read only when other processes may write the store)."""
        return self.storage.changes


def folder_key(folder: Path, prefix: str) -> StoreKey:
    return ("folder", os.path.realpath(folder), prefix)


def client_key(client: Any, prefix: str) -> StoreKey:
    """The identity of the store a Chroma client reaches: its folder, its server, or (an in-process client)
    the client object itself."""
    try:
        settings = client.get_settings()
    except Exception:
        settings = None
    impl = str(getattr(settings, "chroma_api_impl", "") or "")
    if impl.endswith("FastAPI"):
        host = getattr(settings, "chroma_server_host", None)
        port = getattr(settings, "chroma_server_http_port", None)
        ssl = bool(getattr(settings, "chroma_server_ssl_enabled", False))
        tenant, database = getattr(client, "tenant", None), getattr(client, "database", None)
        return ("server", str(host), str(port), ssl, str(tenant), str(database), prefix)
    if settings is not None and getattr(settings, "is_persistent", False):
        folder = getattr(settings, "persist_directory", None)
        if folder and Path(folder).is_dir():
            return folder_key(Path(folder), prefix)
    return ("client", id(client), prefix)


def attach(
    key: StoreKey,
    build: Callable[[], tuple[Storage, UsageWriter, locking.DirectoryLock | None]],
    max_cached_users: int,
) -> StoreState:
    """The store's shared state, built (by ``build``: storage, usage writer, folder lock) for its first handle."""
    with _guard:
        state = _states.get(key)
        if state is None:
            state = StoreState(key, *build())
            _states[key] = state
        state.handles += 1
        state.max_cached_users = max(state.max_cached_users, max_cached_users)
        return state


def detach(state: StoreState) -> bool:
    """One handle less; True when it was the last (the caller then closes the state's parts)."""
    with _guard:
        state.handles -= 1
        if state.handles > 0:
            return False
        if _states.get(state.key) is state:
            del _states[state.key]
        return True
