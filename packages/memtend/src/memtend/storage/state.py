"""One state per store per process, shared by every Memory handle opened on it.

A store is a Chroma folder (by its real path), a Chroma server (by host, port, tenant and database) or, for any
other client (an ``EphemeralClient``), the client object itself; plus the collection prefix. Every handle on it
shares one :class:`~memtend.storage.store.Storage`, one lock, one cache of per-user indexes, one background writer of
usage stamps and (through the shared Storage) one set of session tallies, so a write or an erasure made through
one handle is seen by the others at once, whichever of them closes first. The state goes when its last handle
closes.

The invariants this keeps between processes: docs/consistency.md."""

from __future__ import annotations

import json
import logging
import os
import threading
import uuid
from collections import OrderedDict, deque
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path
from typing import TYPE_CHECKING, Any

from memtend.storage import locking
from memtend.storage.marks import FOLDED_TOKEN

if TYPE_CHECKING:
    from memtend.index.synced import SyncedIndex
    from memtend.storage.marks import ChangeMarks
    from memtend.storage.store import Storage
    from memtend.writing.usage import UsageWriter

StoreKey = tuple[Any, ...]
RECENT_WRITES = 32  # writes a process lists in its mark of a user (a reader further behind compares everything)
FOLD_WINDOW = 8  # a process's mark of a user moves at least every this many writes (the others may be folded)
MAX_LISTED_IDS = 256  # ids a listed write may name
MAX_WRITERS_USERS = 4_096  # users whose recent writes this process keeps
_states: dict[StoreKey, StoreState] = {}
_log = logging.getLogger("memtend")
_guard = threading.Lock()


class StoreState:
    """What every handle on one store shares in this process."""

    def __init__(self, key: StoreKey, storage: Storage, usage: UsageWriter, lock: locking.DirectoryLock | None) -> None:
        self.key = key
        self.storage = storage
        self.usage = usage
        self.folder_lock = lock
        self.lock = threading.RLock()  # held through every read-check-write of a user's records, and erasure
        self.indexes: OrderedDict[str, SyncedIndex] = OrderedDict()
        self.max_cached_users = 0
        self.writer_id = uuid.uuid4().hex  # names this process's change marks on a shared store
        self.handles = 0
        self._written: OrderedDict[str, _Writes] = OrderedDict()  # this process's recent writes, per user
        # journal rows of finished changes left to delete: (user id, row id, the deletion; None: not begun)
        self.journal_ends: list[tuple[str, str, Future[None] | None]] = []
        self._clearer: ThreadPoolExecutor | None = None  # removes fold flags (see clear_folds)
        self._own_flags: set[str] = set()  # rows this process flagged (folded writes) whose flags are not yet gone
        self._flags_lock = threading.Lock()  # guards _own_flags alone (taken inside `lock` or without it, never around)

    def note_write(self, user_id: str, ids: list[str], foldable: bool = False) -> tuple[str, str | None]:
        """Count a write of the user's records: the mark token (``epoch:seq``) and the recent writes to publish
        (JSON ``[[seq, [ids]], ...]``; ``["*"]`` for a write too large to list); None instead of the recent writes
        when the write is folded into its record rows (see :class:`~memtend.storage.marks.ChangeMarks`): ``foldable`` (a
        write of new rows in one call), after a mark of this epoch was stored, and fewer than ``FOLD_WINDOW - 1``
        folded writes since."""
        with self.lock:
            writes = self._written.pop(user_id, None) or _Writes()
            self._written[user_id] = writes
            while len(self._written) > MAX_WRITERS_USERS:
                _, gone = self._written.popitem(last=False)  # its next write starts a new epoch: readers look again
                with self._flags_lock:
                    for _, folded in gone.folded:
                        self._own_flags.difference_update(folded)  # (left flagged: read once more here)
            writes.seq += 1
            writes.recent.append((writes.seq, ids if len(ids) <= MAX_LISTED_IDS else ["*"]))
            token = f"{writes.epoch}:{writes.seq}"
            if foldable and writes.marked and len(writes.folded) < FOLD_WINDOW - 1:
                writes.folded.append((writes.seq, ids))
                with self._flags_lock:
                    self._own_flags.update(ids)
                return token, None
            return token, json.dumps(list(writes.recent))

    def marked(self, user_id: str, token: str) -> list[str]:
        """Note that the user's mark row at ``token`` is stored: the ids of the folded writes before it (it lists
        them, or a reader finds a gap in its recent writes and compares everything), whose flags may now go."""
        epoch, _, seq = token.partition(":")
        with self.lock:
            writes = self._written.get(user_id)
            if writes is None or writes.epoch != epoch:
                return []
            writes.marked = True
            done = [ids for s, ids in writes.folded if s < int(seq)]
            writes.folded = [(s, ids) for s, ids in writes.folded if s >= int(seq)]
            return [i for ids in done for i in ids]

    def folded_users(self) -> list[str]:
        """Users with folded writes no stored mark row lists yet."""
        with self.lock:
            return [uid for uid, writes in self._written.items() if writes.folded]

    def clear_folds(self, ids: list[str]) -> None:
        """Remove these rows' fold flags in the background (upkeep: a failure leaves them flagged, which readers
        only read again)."""
        if not ids:
            return
        with self.lock:
            if self._clearer is None:
                self._clearer = ThreadPoolExecutor(max_workers=1, thread_name_prefix="memtend-folds")
            self._clearer.submit(self._clear, ids)

    def wait_folds(self) -> None:
        """Wait for the fold flags being removed (for tests and benchmarks)."""
        with self.lock:
            clearer = self._clearer
        if clearer is not None:
            clearer.submit(lambda: None).result()

    def _clear(self, ids: list[str]) -> None:
        try:
            self.storage.clear_folds(ids)
        except Exception:
            _log.debug("memtend: fold flags of %d rows left in place", len(ids), exc_info=True)
            return
        with self._flags_lock:  # (not `lock`: close holds it while it waits for this thread)
            self._own_flags.difference_update(ids)

    def others(self, marks: dict[str, tuple[str, str]]) -> dict[str, tuple[str, str]]:
        """``marks`` without the rows this process flagged (its own folded writes, which it knows)."""
        with self._flags_lock:
            own = self._own_flags
            return {k: v for k, v in marks.items() if k not in own} if own else marks

    def settle_folds(self) -> None:
        """On close: wait for the flags being removed, move the marks of users with folded writes not yet listed
        (one upsert per batch), then remove their flags (one update per batch)."""
        with self.lock:
            clearer, self._clearer = self._clearer, None
        if clearer is not None:
            clearer.shutdown(wait=True)
        users = self.folded_users()
        try:
            if users:
                notes = [(uid, self.note_write(uid, [])) for uid in users]
                marks = self.marks()
                rows = [marks.row(uid, self.writer_id, token, recent or "") for uid, (token, recent) in notes]
                marks.put_many(rows, self.storage.max_batch)
                self._clear([i for uid, (token, _) in notes for i in self.marked(uid, token)])
        except Exception:
            _log.warning("memtend: change marks of %d users not moved on close", len(users), exc_info=True)

    def forget_writes(self, user_id: str) -> None:
        with self.lock:
            self._written.pop(user_id, None)

    @property
    def exclusive(self) -> bool:
        """True when no other process can write the store: an embedded folder whose lock this process holds.
        The shared index cache then needs no catching up."""
        return self.folder_lock is not None

    def marks(self) -> ChangeMarks:
        """The store's change marks (written and read only when other processes may write the store)."""
        return self.storage.changes


class _Writes:
    def __init__(self) -> None:
        self.epoch = uuid.uuid4().hex[:16]
        self.seq = 0
        self.recent: deque[tuple[int, list[str]]] = deque(maxlen=RECENT_WRITES)
        self.marked = False  # a mark row of this epoch is stored
        self.folded: list[tuple[int, list[str]]] = []  # (seq, ids) of folded writes no stored mark lists yet


def changed_ids(old: dict[str, tuple[str, str]], new: dict[str, tuple[str, str]]) -> set[str] | None:
    """The record ids other processes' writes touched between two readings of a user's marks, or None when a
    full comparison is needed (an erasure, a mark gone, a gap in a writer's recent writes, a large write). A
    folded write's row (token ``FOLDED_TOKEN``) is new when the earlier reading did not have it; one whose flag
    went is listed by its writer's mark."""
    ids = {k for k, (token, _) in new.items() if token == FOLDED_TOKEN and k not in old}
    old = {k: v for k, v in old.items() if v[0] != FOLDED_TOKEN}
    new = {k: v for k, v in new.items() if v[0] != FOLDED_TOKEN}
    if any(k not in new for k in old) or any(not k.startswith("mark:") and new[k] != old.get(k) for k in new):
        return None  # a mark gone, or the erasure rows moved
    for row, (token, recent) in new.items():
        if old.get(row, ("", ""))[0] == token or not row.startswith("mark:"):
            continue
        epoch, _, _ = token.partition(":")
        before = old.get(row, ("", ""))[0]
        seen = int(before.partition(":")[2]) if before.partition(":")[0] == epoch else 0
        try:
            entries = [(int(seq), list(touched)) for seq, touched in json.loads(recent)]
        except (ValueError, TypeError):
            return None
        newer = [(seq, touched) for seq, touched in entries if seq > seen]
        if not newer or newer[0][0] != seen + 1 or any("*" in touched for _, touched in newer):
            return None
        for _, touched in newer:
            ids.update(str(i) for i in touched)
    return ids


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
