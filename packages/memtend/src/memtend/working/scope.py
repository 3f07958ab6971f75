"""What session state and the side-effect ledger share: a session id, a namespace in the user's keyed store,
expiry after ``retention.session_days``, and a per-process tally of calls.

Call statistics. Every call is counted and logged in this process, in a tally shared by every object of the same
(store, user, namespace), so ``user.session(id).get(...)`` used one call at a time still adds up. The counts are
persisted in the namespace under the reserved key ``@stats`` (never a canonical key): a write carries them in the
same ``put`` as the value, so writes cost no extra round trip; reads are counted in memory only and reach storage
with the next write, every ``FLUSH_EVERY`` reads, or on ``flush()``. Automatic flushes only update an existing
stats row: reads never create rows (nothing about a user reappears after erasure because someone read a key).
Counting across processes is a read-add-write per flush, so simultaneous writers of one session may lose a few
counts.
"""

from __future__ import annotations

import threading
from collections import Counter, OrderedDict, deque
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any
from weakref import WeakKeyDictionary

from memtend.documents.keyed import KeyedStore, KVItem
from memtend.documents.values import gate_identifier
from memtend.records import DAY, check_name, now

if TYPE_CHECKING:
    from memtend.working.owner import UserScope

STATS_KEY = "@stats"  # canonical keys hold only word characters and dots, so this never collides
FLUSH_EVERY = 100  # reads counted in memory between two attempts to persist the counts
LOG_SIZE = 200  # call records kept per session in this process
MAX_TALLIES = 1_024  # sessions per store whose counts this process holds at once
OPS = ("get", "set", "list", "delete")


def check_session_id(session_id: object) -> str:
    return check_name(session_id, "session_id", blank=False)


def is_expired(item: KVItem, t: float) -> bool:
    return item.expires_at is not None and item.expires_at <= t


def stored_counts(item: KVItem | None) -> Counter[str]:
    """The counts a stats row holds (non-count entries are ignored)."""
    if item is None or not isinstance(item.value, dict):
        return Counter()
    return Counter({k: v for k, v in item.value.items() if isinstance(v, int) and not isinstance(v, bool)})


@dataclass(frozen=True)
class CallRecord:
    """One logged call: when, which op, the canonical key (or the raw one if it was refused), the outcome."""

    at: float
    op: str
    key: str
    outcome: str


class Tally:
    """Counts not yet persisted and the call log of one session namespace, shared within this process."""

    def __init__(self, store: KeyedStore) -> None:
        self.store = store  # where the counts go when the tally is evicted
        self.lock = threading.RLock()
        self.pending: Counter[str] = Counter()
        self.reads_since_flush = 0
        self.log: deque[CallRecord] = deque(maxlen=LOG_SIZE)


_registry_lock = threading.Lock()
_tallies: WeakKeyDictionary[Any, OrderedDict[tuple[str, str], Tally]] = WeakKeyDictionary()


def drop_user_tallies(storage: Any, user_id: str) -> None:
    """Forget this process's unflushed counts and call log of an erased user (nothing of them may come back)."""
    with _registry_lock:
        per_store = _tallies.get(storage)
        if per_store is not None:
            for name in [n for n in per_store if n[0] == user_id]:
                del per_store[name]


def tally_for(store: KeyedStore, storage: Any) -> Tally:
    """The shared tally of a namespace; the least recently used beyond ``MAX_TALLIES`` are flushed and dropped."""
    evicted: list[tuple[tuple[str, str], Tally]] = []
    with _registry_lock:
        per_store = _tallies.setdefault(storage, OrderedDict())
        name = (store.user_id, store.namespace)
        tally = per_store.get(name)
        if tally is None:
            tally = per_store[name] = Tally(store)
            while len(per_store) > MAX_TALLIES:
                evicted.append(per_store.popitem(last=False))
        else:
            per_store.move_to_end(name)
            tally.store = store  # counts go out through the handle used last (an earlier one may have closed)
    for _, old in evicted:
        persist_counts(old.store, old, create=False, expires_at=None)
    return tally


def persist_counts(store: KeyedStore, tally: Tally, *, create: bool, expires_at: float | None) -> int:
    """Add the pending counts to the stored ones (read-add-write); returns how many calls it persisted."""
    with tally.lock:
        tally.reads_since_flush = 0
        if not tally.pending:
            return 0
        item = store.item(STATS_KEY)
        if item is None and not create:
            return 0
        store.put(
            STATS_KEY,
            dict(stored_counts(item) + tally.pending),
            expires_at=item.expires_at if item is not None else expires_at,
        )
        done = sum(tally.pending[op] for op in OPS)
        tally.pending.clear()
        return done


class SessionScoped:
    """Base of the per-session parts of working memory: one (user, session) and its namespace, ``(label, id)`` in
    memtend's reserved document space (named ``prefix + id`` in exports and logs). Creating one does no I/O."""

    prefix = ""
    label = ""

    def __init__(self, user: UserScope, session_id: str) -> None:
        self.user = user
        self.session_id = check_session_id(session_id)
        self._store = KeyedStore(
            user.memory,
            user.user_id,
            self.prefix + self.session_id,
            _labels=(self.label, self.session_id),
            _gated=False,  # each write is gated by the session state or the ledger itself
        )
        self._storage = user.memory.storage
        self._days = float(user.memory.retention.session_days)

    def __repr__(self) -> str:
        return f"{type(self).__name__}(user_id={self.user.user_id!r}, session_id={self.session_id!r})"

    def _gate_session_id(self) -> None:
        """Before a write: the session id names stored rows, so it must hold no sensitive data (refused, never
        masked or echoed: :class:`~memtend.errors.SensitiveIdentifierError`). Reads of such a session still work."""
        gate_identifier(self.session_id, "the session id")

    def _tally(self) -> Tally:
        return tally_for(self._store, self._storage)

    def _expiry(self) -> float:
        """When what is written now expires."""
        return now() + self._days * DAY
