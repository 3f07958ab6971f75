"""Working memory: per-session key-value state and a ledger of side effects, both in the user's keyed store.

``SessionState`` keeps what an agent notes for itself during one session (namespace ``session:<id>``): keys go
through :func:`~memtend.policies.precedence.canonical_key`, values through the write gate, every write sets
``expires_at`` from ``retention.session_days``, so ``UserMemory.forget`` removes stale state and
``Memory.erase_user`` removes all of it.

``Ledger`` remembers side-effecting tool calls (namespace ``ledger:<id>``) under a stable hash of the tool name
and its canonical JSON arguments, so an agent can ask whether a call was already made, when, and which ids it
produced, before making it again.

Call statistics. Every ``SessionState`` call is counted and logged in this process, in a tally shared by every
``SessionState`` of the same (store, user, session), so ``user.session(id).get(...)`` used one call at a time
still adds up. The counts are persisted in the session's namespace under the reserved key ``@stats`` (never a
canonical key): a write (``set``) carries them in the same ``put`` as the value, so writes cost no extra
round trip; reads (``get``, ``list``) are counted in memory only and reach storage with the next write, every
``FLUSH_EVERY`` reads, or on ``flush()``. Automatic flushes only update an existing stats row: reads never create
rows (nothing about a user reappears after erasure because someone read a key). Counting across processes is a
read-add-write per flush, so simultaneous writers of one session may lose a few counts.
"""

from __future__ import annotations

import json
import threading
from collections import Counter, OrderedDict, deque
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any
from weakref import WeakKeyDictionary

from memtend.errors import InvalidInputError, MemtendError, SensitiveDataError
from memtend.keyed_store import KeyedStore, check_value
from memtend.policies import gate
from memtend.policies.forgetting import DAY
from memtend.policies.precedence import FactOutcome, canonical_key, fact_text
from memtend.records import MAX_KEY_CHARS, MAX_TEXT_CHARS, Source, check_name, now
from memtend.storage import KVItem
from memtend.twins import with_async_twins

if TYPE_CHECKING:
    from memtend.memory import UserMemory

__all__ = [
    "CallRecord",
    "SessionState",
    "SetResult",
]

SESSION_PREFIX = "session:"
LEDGER_PREFIX = "ledger:"
STATS_KEY = "@stats"  # canonical keys hold only word characters and dots, so this never collides
MAX_VALUE_CHARS = MAX_TEXT_CHARS  # a session value, as JSON; working memory is small by design
FLUSH_EVERY = 100  # reads counted in memory between two attempts to persist the counts
LOG_SIZE = 200  # call records kept per session in this process
MAX_TALLIES = 1_024  # sessions per store whose counts this process holds at once
RESULT_CHARS = 500  # a ledger keeps this much of a result (redacted), for the agent to read
MAX_IDS = 20

OPS = ("get", "set", "list", "forget")
_OUTCOME_COUNTERS = {"hit": "hits", "miss": "misses", "refused": "refused", "error": "errors"}


# --------------------------------------------------------------------------------------------- validation
def check_session_id(session_id: object) -> str:
    return check_name(session_id, "session_id", blank=False)


def text_form(value: Any) -> str:
    """The text the gate reads for a JSON value: strings as they are, objects as ``name: value`` lines."""
    if isinstance(value, str):
        return value
    if isinstance(value, dict):
        return "\n".join(f"{name}: {text_form(v)}" for name, v in value.items())
    if isinstance(value, list | tuple):
        return "\n".join(text_form(v) for v in value)
    return json.dumps(value)


def _counts(item: KVItem | None) -> Counter[str]:
    """The counts a stats row holds (non-count entries are ignored)."""
    if item is None or not isinstance(item.value, dict):
        return Counter()
    return Counter({k: v for k, v in item.value.items() if isinstance(v, int) and not isinstance(v, bool)})


def _expired(item: KVItem, t: float) -> bool:
    return item.expires_at is not None and item.expires_at <= t


# --------------------------------------------------------------------------------------------- call tally
@dataclass(frozen=True)
class CallRecord:
    """One logged call: when, which op, the canonical key (or the raw one if it was refused), the outcome."""

    at: float
    op: str
    key: str
    outcome: str


@dataclass
class _Call:
    op: str
    key: str
    outcome: str = "ok"
    persisted: bool = False  # already counted in a write that carried the stats


class _Tally:
    """Counts not yet persisted and the call log of one session namespace, shared within this process."""

    def __init__(self) -> None:
        self.lock = threading.RLock()
        self.pending: Counter[str] = Counter()
        self.reads_since_flush = 0
        self.log: deque[CallRecord] = deque(maxlen=LOG_SIZE)


_registry_lock = threading.Lock()
_tallies: WeakKeyDictionary[Any, OrderedDict[tuple[str, str], _Tally]] = WeakKeyDictionary()


def drop_user_tallies(storage: Any, user_id: str) -> None:
    """Forget this process's unflushed counts and call log of an erased user (nothing of them may come back)."""
    with _registry_lock:
        per_store = _tallies.get(storage)
        if per_store is not None:
            for name in [n for n in per_store if n[0] == user_id]:
                del per_store[name]


def _tally_for(store: KeyedStore, storage: Any) -> _Tally:
    """The shared tally of a namespace; the least recently used beyond ``MAX_TALLIES`` are flushed and dropped."""
    evicted: list[tuple[tuple[str, str], _Tally]] = []
    with _registry_lock:
        per_store = _tallies.setdefault(storage, OrderedDict())
        name = (store.user_id, store.namespace)
        tally = per_store.get(name)
        if tally is None:
            tally = per_store[name] = _Tally()
            while len(per_store) > MAX_TALLIES:
                evicted.append(per_store.popitem(last=False))
        else:
            per_store.move_to_end(name)
    for (user_id, namespace), old in evicted:
        _persist_counts(KeyedStore(storage, user_id, namespace), old, create=False, expires_at=None)
    return tally


def _persist_counts(store: KeyedStore, tally: _Tally, *, create: bool, expires_at: float | None) -> int:
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
            dict(_counts(item) + tally.pending),
            expires_at=item.expires_at if item is not None else expires_at,
        )
        done = sum(tally.pending[op] for op in OPS)
        tally.pending.clear()
        return done


# --------------------------------------------------------------------------------------------- session state
@dataclass(frozen=True)
class SetResult:
    """What ``SessionState.set`` did: the canonical key, ``added | updated | unchanged``, and whether the value
    reads like an instruction to the agent (it is stored; treat it as data)."""

    key: str
    outcome: FactOutcome
    flagged: bool = False


@with_async_twins("get", "set", "list", "forget", "flush", "stats", "log")
class SessionState:
    """Key-value working memory of one (user, session): ``get``, ``set``, ``list`` (insertion order), ``forget``.

    Obtained from ``user.session(session_id)``; ``SessionState(user, session_id)`` builds the same thing.
    """

    def __init__(self, user: UserMemory, session_id: str) -> None:
        self.user = user
        self.session_id = check_session_id(session_id)
        self._store = user.store(SESSION_PREFIX + self.session_id)
        self._storage = user.memory.storage
        self._days = float(user.memory.retention.session_days)

    def __repr__(self) -> str:
        return f"SessionState(user_id={self.user.user_id!r}, session_id={self.session_id!r})"

    @property
    def namespace(self) -> str:
        return self._store.namespace

    # ------------------------------------------------------------------ the four operations
    def get(self, key: str, default: Any = None) -> Any:
        """The value under ``key`` (canonicalised), or ``default``. Expired state is not returned."""
        with self._call("get", key) as call:
            call.key = canonical_key(key)
            item = self._store.item(call.key)
            found = item is not None and not _expired(item, now())
            call.outcome = "hit" if found else "miss"
        self._after_read()
        return item.value if found and item is not None else default

    def set(self, key: str, value: Any, *, source: Source | str = Source.AGENT) -> SetResult:
        """Store a JSON ``value`` under ``key`` (canonicalised); it expires ``retention.session_days`` after this write.

        The gate reads the key and value as text and refuses secrets (:class:`SensitiveDataError`, naming the
        kinds, never the value). An existing key keeps its place in ``list``.
        """
        with self._call("set", key) as call:
            call.key = name = canonical_key(key)
            source = Source.parse(source)
            check_value(value)
            size = len(json.dumps(value, ensure_ascii=False))
            if size > MAX_VALUE_CHARS:
                raise InvalidInputError(
                    f"value is {size} characters as JSON; the limit for session state is {MAX_VALUE_CHARS}. "
                    "Store a summary or a reference instead"
                )
            decision = gate.check_write(fact_text(name, text_form(value)), source)
            tally = self._tally()
            with tally.lock:
                found = self._store.get_many([name, STATS_KEY])
                old = found.get(name)
                if old is None or _expired(old, now()):
                    outcome = FactOutcome.ADDED
                else:
                    same = old.value == json.loads(json.dumps(value))
                    outcome = FactOutcome.UNCHANGED if same else FactOutcome.UPDATED
                counts = _counts(found.get(STATS_KEY)) + tally.pending + Counter({"set": 1})
                self._store.put_many([(name, value), (STATS_KEY, dict(counts))], expires_at=self._expiry())
                tally.pending.clear()
                tally.reads_since_flush = 0
                call.persisted = True
            call.outcome = outcome.value + (" flagged" if decision.flagged else "")
        return SetResult(key=name, outcome=outcome, flagged=decision.flagged)

    def list(self) -> dict[str, Any]:
        """Every live key and value of the session, in the order keys were first set."""
        with self._call("list", "") as call:
            t = now()
            items = [i for i in self._store.items() if i.key != STATS_KEY and not _expired(i, t)]
            call.outcome = f"{len(items)} keys"
        self._after_read()
        return {i.key: i.value for i in items}

    def forget(self, key: str) -> bool:
        """Remove ``key`` (canonicalised); True if it was set."""
        with self._call("forget", key) as call:
            call.key = name = canonical_key(key)
            tally = self._tally()
            with tally.lock:
                found = self._store.get_many([name, STATS_KEY])
                old = found.get(name)
                if old is not None:
                    self._store.delete(name)
                present = old is not None and not _expired(old, now())
                call.outcome = "removed" if present else "absent"
                stats = found.get(STATS_KEY)
                if stats is not None:  # a write carries the counts, but never creates the stats row
                    counts = _counts(stats) + tally.pending + Counter({"forget": 1})
                    self._store.put(STATS_KEY, dict(counts), expires_at=stats.expires_at)
                    tally.pending.clear()
                    call.persisted = True
        return present

    # ------------------------------------------------------------------ statistics and the call log
    def flush(self) -> int:
        """Persist the counts of calls not yet stored (creating the stats row if needed); returns how many."""
        return _persist_counts(self._store, self._tally(), create=True, expires_at=self._expiry())

    def stats(self) -> dict[str, Any]:
        """Calls per op, ``get`` hits and misses, ``hit_rate`` (hits / gets; None before any get), refused
        writes, errors, and ``unflushed`` (calls counted in this process only). Stored and pending counts add up."""
        tally = self._tally()
        stored = _counts(self._store.item(STATS_KEY))
        with tally.lock:
            counts = stored + tally.pending
            unflushed = sum(tally.pending[op] for op in OPS)
        gets = counts["hits"] + counts["misses"]
        return {
            "session_id": self.session_id,
            "calls": {op: counts[op] for op in OPS},
            "hits": counts["hits"],
            "misses": counts["misses"],
            "hit_rate": counts["hits"] / gets if gets else None,
            "refused": counts["refused"],
            "errors": counts["errors"],
            "unflushed": unflushed,
        }

    def log(self) -> list[CallRecord]:
        """The calls made on this session in this process, oldest first (the newest ``LOG_SIZE``)."""
        tally = self._tally()
        with tally.lock:
            return list(tally.log)

    # ------------------------------------------------------------------ machinery
    def _tally(self) -> _Tally:
        return _tally_for(self._store, self._storage)

    def _expiry(self) -> float:
        return now() + self._days * DAY

    @contextmanager
    def _call(self, op: str, key: object) -> Iterator[_Call]:
        """Count and log one call, whatever its outcome."""
        call = _Call(op, key[:MAX_KEY_CHARS] if isinstance(key, str) else f"<{type(key).__name__}>")
        try:
            yield call
        except SensitiveDataError:
            call.outcome = "refused"
            raise
        except MemtendError as exc:
            call.outcome = f"error: {type(exc).__name__}"
            raise
        finally:
            self._note(call)

    def _note(self, call: _Call) -> None:
        tally = self._tally()
        with tally.lock:
            tally.log.append(CallRecord(now(), call.op, call.key, call.outcome))
            if call.persisted:
                return
            tally.pending[call.op] += 1
            counter = _OUTCOME_COUNTERS.get(call.outcome.split(":")[0])
            if counter:
                tally.pending[counter] += 1

    def _after_read(self) -> None:
        tally = self._tally()
        with tally.lock:
            tally.reads_since_flush += 1
            due = tally.reads_since_flush >= FLUSH_EVERY
        if due:
            _persist_counts(self._store, tally, create=False, expires_at=None)
