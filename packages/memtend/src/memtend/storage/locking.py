"""One process per embedded Chroma folder.

Embedded Chroma keeps its vector index in the process that opened it; a second process writing the same folder
works from a stale index and can lose or corrupt data. memtend takes an exclusive lock on the folder and refuses a
second process with a clear error. Several processes share memory through a ``chroma run`` server instead.

The lock is an ``flock`` on the folder itself (deleting a file cannot undo it) and on ``memtend.lock`` inside it
(which earlier versions lock, so they and this one exclude each other).
"""

from __future__ import annotations

import os
import threading
from pathlib import Path
from typing import Any

from memtend.errors import StoreLockedError

LOCK_NAME = "memtend.lock"
_held: dict[str, DirectoryLock] = {}
_guard = threading.Lock()


class DirectoryLock:
    """An exclusive advisory lock on a folder, shared by every Memory of this process that opens it."""

    def __init__(self, folder: Path, fds: list[int]) -> None:
        self.folder = folder
        self._fds = fds
        self._users = 0

    def release(self) -> None:
        with _guard:
            self._users -= 1
            if self._users > 0:
                return
            _held.pop(str(self.folder), None)
            for fd in self._fds:
                _unlock(fd)
                os.close(fd)


def acquire(folder: Path) -> DirectoryLock:
    key = str(folder.resolve())
    with _guard:
        lock = _held.get(key)
        if lock is None:
            fds = [_open_folder(key), os.open(os.path.join(key, LOCK_NAME), os.O_RDWR | os.O_CREAT, 0o600)]
            locked = [fd for fd in fds if fd >= 0 and _try_lock(fd)]
            if len(locked) < sum(fd >= 0 for fd in fds):
                for fd in fds:
                    if fd in locked:
                        _unlock(fd)
                    if fd >= 0:
                        os.close(fd)
                raise StoreLockedError(
                    f"another process is using the memtend store in {key}. Embedded Chroma is single-process: "
                    "stop the other process, or run `chroma run --path DIR` and pass "
                    "Memory(client=chromadb.HttpClient(...)) in every process"
                )
            lock = DirectoryLock(Path(key), [fd for fd in fds if fd >= 0])
            _held[key] = lock
        lock._users += 1
        return lock


def acquire_for_client(client: Any) -> DirectoryLock | None:
    """Lock the folder of a PersistentClient the caller built; other clients need no lock."""
    try:
        settings = client.get_settings()
    except Exception:
        return None
    if not getattr(settings, "is_persistent", False) or getattr(settings, "chroma_api_impl", "").endswith("FastAPI"):
        return None
    folder = Path(settings.persist_directory)
    return acquire(folder) if folder.is_dir() else None


def _open_folder(folder: str) -> int:
    """A descriptor of the folder itself to lock, or -1 where folders cannot be opened (Windows)."""
    try:
        return os.open(folder, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0))
    except OSError:  # pragma: no cover - platforms without directory descriptors: the lock file alone
        return -1


def _try_lock(fd: int) -> bool:
    try:
        import fcntl
    except ImportError:  # pragma: no cover - Windows: fall back to no lock
        return True
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        return True
    except OSError:
        return False


def _unlock(fd: int) -> None:
    try:
        import fcntl

        fcntl.flock(fd, fcntl.LOCK_UN)
    except (ImportError, OSError):  # pragma: no cover
        pass
