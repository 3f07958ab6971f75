"""What the memory metrics count, as it happens: per-process tallies of one user's counts and call log, written to
the user's reserved documents in batches, and handed to the installed observers (OpenTelemetry) as they come.

Counting must cost the call it counts almost nothing, so nothing here writes on every call: each (store, user) has
one tally in this process holding the counts and call records not yet stored; they are written (a read-add-write
of a few documents) every :data:`FLUSH_EVERY` notes, when a reader asks for the user's metrics or call log through
a handle of this process (read, not written: the reader merges them), and when the store's last handle closes
(and at exit). Counts made in two processes at the same moment may lose a few to each other's read-add-write.

Stored documents (memtend's reserved space, so isolation, export and erasure cover them with no code of their own):

* ``("metrics", "user")`` key ``user``: the user's counts since the first one (no expiry);
* ``("metrics", "session")`` key ``<session id>``: one session's counts, expiring ``retention.session_days`` after
  its last write, as the session's own state does;
* ``("calls", "user")`` key ``user`` and ``("calls", "session")`` key ``<session id>``: the call log, the newest
  :data:`CALL_LOG_SIZE` records each (op, key, outcome, time, milliseconds; never a value or a text), at most
  :data:`MAX_SESSION_LOGS` session logs per user (the least recently written dropped).

A tally whose notes are all reads (a ``get``, a ``recall``) never creates a document: it only adds to documents that
exist, so reading a key of an erased user does not bring the user back.

Calls a person makes while looking after the memory (the inspector, the operator CLI: a handle from
``Memory.user(id, operator=True)``, or any code inside :func:`by_operator`) are the operator's, not the agent's: its
reads are neither logged nor counted nor told to the observers (looking at a user leaves their call log and
metrics as they were), and its changes are logged with ``by="operator"`` and counted as any change is (a proposal a
person accepts is accepted). :func:`note_call` is the one place that decides it.
"""

from __future__ import annotations

import contextlib
import contextvars
import functools
import logging
import sys
import threading
from collections import Counter, OrderedDict
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol
from weakref import WeakKeyDictionary

from memtend.documents.store import DeleteDocument, GetDocument, PutDocument, core_documents
from memtend.errors import MemtendError
from memtend.records import DAY, MAX_KEY_CHARS, now

if TYPE_CHECKING:
    from memtend.handle import MemoryHandle
    from memtend.results import ChangeEvent

__all__ = [
    "CALL_LOG_SIZE",
    "FLUSH_EVERY",
    "MAX_SESSION_LOGS",
    "OPERATOR",
    "CallEntry",
    "Observer",
    "by_operator",
    "drop_user",
    "flush",
    "flush_store",
    "note_call",
    "note_counts",
    "note_events",
    "observers",
    "operating",
    "pending",
    "set_observers",
]

FLUSH_EVERY = 50  # notes of one user held in this process between two writes of them
CALL_LOG_SIZE = 200  # call records kept per log (the user's, and each session's)
MAX_SESSION_LOGS = 50  # session call logs kept per user
MAX_TALLIES = 1_024  # users per store whose unwritten notes this process holds at once
METRICS = ("metrics",)  # the prefix of both
USER_METRICS = ("metrics", "user")
SESSION_METRICS = ("metrics", "session")
CALLS = ("calls",)
USER_CALLS = ("calls", "user")
SESSION_CALLS = ("calls", "session")
USER_KEY = "user"  # the key of the user's own counts and log
WITHHELD = "<withheld>"  # a call's key that reads like a secret is never stored
OPERATOR = "operator"  # who made a call logged as a person's (the inspector's, the CLI's), not the agent's
# operations whose note may create the user's documents (a write or a report: the user is being kept)
CREATING_OPS = frozenset(
    "set approve accept revise reject delete record claim remember log log_many capture add_rule set_fact restore "
    "compact forget purge report_recall report_compaction check_retrieval".split()
)
_log = logging.getLogger("memtend")


@dataclass(frozen=True)
class CallEntry:
    """One memory call as the log keeps it: when, which op, the key (canonical; ``<withheld>`` when it held a
    secret; a record id for calls on one record; empty where there is none), its outcome, in which session ("" for
    calls on long-term memory), how long it took (milliseconds), and the tier it was made on."""

    at: float
    op: str
    key: str
    outcome: str
    session: str = ""
    ms: float = 0.0
    tier: str = "long_term"  # or "working": a call on a session's state or ledger (whose ``get`` is not a record's)
    by: str = ""  # "" the application's (its agent's) call; ``OPERATOR`` a person's through the inspector or CLI

    def to_dict(self) -> dict[str, Any]:
        return {
            "at": self.at,
            "op": self.op,
            "key": self.key,
            "outcome": self.outcome,
            "session": self.session,
            "ms": self.ms,
            "tier": self.tier,
            "by": self.by,
        }


_operating: contextvars.ContextVar[bool] = contextvars.ContextVar("memtend_operator", default=False)


@contextlib.contextmanager
def by_operator() -> Iterator[None]:
    """Make the calls inside (this thread's, and the worker threads an async twin hands them to) an operator's."""
    token = _operating.set(True)
    try:
        yield
    finally:
        _operating.reset(token)


def operating() -> bool:
    """Whether the calls being made now are an operator's (see the module)."""
    return _operating.get()


def counted(op: str, operator: bool = False) -> bool:
    """Whether a call is logged and counted: not an operator's read (``operator``: made through an operator's
    handle, such as a session state or ledger of ``Memory.user(id, operator=True)``; or inside :func:`by_operator`).
    Working memory's own per-session counts ask this too."""
    return op in CREATING_OPS or not (operator or _operating.get())


class Observer(Protocol):
    """What an installed extra (``memtend[otel]``) is told: every memory operation, and every count as it is made.
    Both are called on the caller's thread and must not raise (an exception is logged and dropped)."""

    def operation(self, user_id: str, entry: CallEntry, started_ns: int, ended_ns: int) -> None: ...

    def counts(self, user_id: str, session: str, added: Mapping[str, float], peaks: Mapping[str, float]) -> None: ...


# ------------------------------------------------------------------------------------------------ observers
_observers: list[Observer] | None = None
_observers_lock = threading.Lock()


def observers() -> list[Observer]:
    """The observers told about operations and counts: those :func:`set_observers` gave, else the installed
    extras' (entry-point group ``memtend.observer``), read once."""
    global _observers
    found = _observers
    if found is None:
        with _observers_lock:
            if _observers is None:
                _observers = _installed_observers()
            found = _observers
    return found


def set_observers(found: Iterable[Observer] | None) -> None:
    """Replace the observers (``[]``: none; ``None``: the installed extras' again, read on next use)."""
    global _observers
    with _observers_lock:
        _observers = None if found is None else list(found)


def _installed_observers() -> list[Observer]:
    from importlib.metadata import entry_points

    out: list[Observer] = []
    for ep in sorted(entry_points(group="memtend.observer"), key=lambda e: e.name):
        try:
            out.append(ep.load()())
        except Exception as exc:  # a broken extra must not break memory calls
            _log.warning("memtend: the observer %r could not be loaded (%s)", ep.name, type(exc).__name__)
    return out


def _tell(fn_name: str, *args: Any) -> None:
    for observer in observers():
        try:
            getattr(observer, fn_name)(*args)
        except Exception as exc:
            _log.warning("memtend: an observer failed on %s (%s)", fn_name, type(exc).__name__)


# ------------------------------------------------------------------------------------------------ tallies
@dataclass
class _Scope:
    """Counts of the user (``session`` "") or of one session not yet stored, and the largest values seen."""

    added: Counter[str] = field(default_factory=Counter)
    peaks: dict[str, float] = field(default_factory=dict)


@dataclass
class Tally:
    memory: Any  # the handle the notes go out through (the one used last)
    user_id: str
    lock: threading.RLock = field(default_factory=threading.RLock)  # held for moments, never over I/O
    write_lock: threading.Lock = field(default_factory=threading.Lock)  # one write of the notes at a time
    scopes: dict[str, _Scope] = field(default_factory=dict)
    calls: dict[str, list[CallEntry]] = field(default_factory=dict)
    notes: int = 0
    creating: bool = False  # a note that may create the user's documents was made


_registry_lock = threading.Lock()
_tallies: WeakKeyDictionary[Any, OrderedDict[str, Tally]] = WeakKeyDictionary()


def _tally(memory: MemoryHandle, user_id: str) -> Tally:
    evicted: list[Tally] = []
    with _registry_lock:
        per_store = _tallies.setdefault(memory.storage, OrderedDict())
        tally = per_store.get(user_id)
        if tally is None:
            tally = per_store[user_id] = Tally(memory, user_id)
            while len(per_store) > MAX_TALLIES:
                evicted.append(per_store.popitem(last=False)[1])
        else:
            per_store.move_to_end(user_id)
            tally.memory = memory
    for old in evicted:
        with contextlib.suppress(MemtendError):
            _write(old)
    return tally


def drop_user(storage: Any, user_id: str) -> None:
    """Forget this process's unwritten notes of an erased user (nothing of them may come back)."""
    with _registry_lock:
        per_store = _tallies.get(storage)
        if per_store is not None:
            per_store.pop(user_id, None)


@functools.lru_cache(maxsize=4_096)
def _storable_key(key: str) -> str:
    """A call's key as the log may keep it: cut to ``MAX_KEY_CHARS``, or withheld when it reads like a secret."""
    from memtend.documents.values import gate_identifier

    key = key[:MAX_KEY_CHARS]
    try:
        gate_identifier(key, "a logged key")
    except MemtendError:
        return WITHHELD
    return key


def note_call(
    memory: MemoryHandle,
    user_id: str,
    op: str,
    key: str,
    outcome: str,
    *,
    session: str = "",
    started_ns: int,
    ended_ns: int,
    counts: Mapping[str, float] | None = None,
    given: str = "",
    tier: str = "long_term",
    operator: bool = False,
) -> None:
    """Count and log one memory call (``counts``: what it adds to the metrics; ``given``: the key as the caller gave
    it, when ``key`` is its canonical form; ``operator``: made through an operator's handle), and tell the
    observers. An operator's read is dropped here, whole; an operator's change is logged as theirs (see the
    module)."""
    if not counted(op, operator):
        return
    by = OPERATOR if operator or _operating.get() else ""
    session = _storable_key(session) if session else ""  # a session id names stored rows: never a secret
    logged = _storable_key(key) if key else ""
    if given and given != key and _storable_key(given) == WITHHELD:
        logged = WITHHELD
    entry = CallEntry(now(), op, logged, outcome, session, (ended_ns - started_ns) / 1e6, tier, by)
    tally = _tally(memory, user_id)
    with tally.lock:
        log = tally.calls.setdefault(session, [])
        log.append(entry)
        if len(log) > CALL_LOG_SIZE:
            del log[: len(log) - CALL_LOG_SIZE]
        if counts:
            _add(tally, session, counts, {})
        due = _noted(tally, op in CREATING_OPS)
    _tell("operation", user_id, entry, started_ns, ended_ns)
    if counts:
        _tell("counts", user_id, session, counts, {})
    if due:
        flush(memory, user_id)


def note_counts(
    memory: MemoryHandle,
    user_id: str,
    counts: Mapping[str, float],
    *,
    session: str = "",
    peaks: Mapping[str, float] | None = None,
    creating: bool = True,
) -> None:
    """Add ``counts`` (and the largest values ``peaks``) to the user's metrics and the session's, if any."""
    session = _storable_key(session) if session else ""
    tally = _tally(memory, user_id)
    with tally.lock:
        _add(tally, session, counts, peaks or {})
        due = _noted(tally, creating)
    _tell("counts", user_id, session, counts, peaks or {})
    if due:
        flush(memory, user_id)


def _add(tally: Tally, session: str, counts: Mapping[str, float], peaks: Mapping[str, float]) -> None:
    for scope_name in ("", session) if session else ("",):
        scope = tally.scopes.setdefault(scope_name, _Scope())
        scope.added.update(counts)
        for name, value in peaks.items():
            scope.peaks[name] = max(value, scope.peaks.get(name, value))


def _noted(tally: Tally, creating: bool) -> bool:
    """Count a note; whether the tally is due to be written now (never on an event loop's thread: an adapter's
    async path reports there, and the write waits for the next note made elsewhere, or the close)."""
    tally.notes += 1
    tally.creating = tally.creating or creating
    return tally.notes >= FLUSH_EVERY and not _on_event_loop()


def _on_event_loop() -> bool:
    aio = sys.modules.get("asyncio")
    return aio is not None and aio._get_running_loop() is not None


def note_events(memory: Any, events: Iterable[ChangeEvent]) -> None:
    """Count what applied changes did that the metrics follow: a record held for review (``pending_review``), a
    proposal (status ``proposed``), a pending record accepted (op ``approve``/``accept``). ``memory``: the store's
    handle (the write path calls it with itself)."""
    per_user: dict[str, Counter[str]] = {}
    for event in events:
        record = event.record
        if record is None or event.type.value != "write":
            continue
        status = record.status.value
        name = None
        if event.op in ("approve", "accept"):
            name = "writes.accepted"
        elif status == "pending_review" and event.op not in ("archive", "restore"):
            name = "writes.held"
        elif status == "proposed":
            name = "writes.proposed"
        if name is not None:
            per_user.setdefault(event.user_id, Counter())[name] += 1
    for user_id, counts in per_user.items():
        note_counts(memory, user_id, counts, session="")


def pending(memory: MemoryHandle, user_id: str) -> tuple[dict[str, tuple[Counter[str], dict[str, float]]], dict]:
    """This process's unwritten counts of the user (session -> (counts, peaks); "" the user's) and call log
    (session -> entries), copied: a reader lays them over what is stored."""
    with _registry_lock:
        per_store = _tallies.get(memory.storage)
        tally = per_store.get(user_id) if per_store is not None else None
    if tally is None:
        return {}, {}
    with tally.lock:
        scopes = {name: (Counter(s.added), dict(s.peaks)) for name, s in tally.scopes.items()}
        return scopes, {name: list(log) for name, log in tally.calls.items()}


def noted_users(memory: MemoryHandle) -> list[str]:
    """The users of the store this process holds unwritten notes of."""
    with _registry_lock:
        per_store = _tallies.get(memory.storage)
        return [uid for uid, t in (per_store or {}).items() if t.scopes or t.calls]


# ------------------------------------------------------------------------------------------------ writing
def flush(memory: MemoryHandle, user_id: str) -> None:
    """Write the user's unwritten counts and call records now (a read-add-write of their documents)."""
    with _registry_lock:
        per_store = _tallies.get(memory.storage)
        tally = per_store.get(user_id) if per_store is not None else None
    if tally is not None:
        try:
            _write(tally)
        except MemtendError as exc:  # counting must never fail the call it counts; the notes are kept for later
            _log.warning("memtend: the memory metrics of a user could not be written (%s)", type(exc).__name__)


def flush_store(memory: MemoryHandle) -> None:
    """Write every user's unwritten notes of this store (on close and at exit)."""
    with _registry_lock:
        per_store = _tallies.get(memory.storage)
        users = list(per_store) if per_store is not None else []
    for user_id in users:
        flush(memory, user_id)


def _write(tally: Tally) -> None:
    """Store the tally's notes. Never while this thread holds the store's lock (a caller inside a write): the notes
    wait for the next flush, so no thread waits for a tally while holding the lock a flush needs."""
    memory = tally.memory
    owned = getattr(memory.lock, "_is_owned", None)
    if callable(owned) and owned():
        return
    with tally.write_lock:
        with tally.lock:
            scopes, calls, creating = tally.scopes, tally.calls, tally.creating
            tally.scopes, tally.calls, tally.notes, tally.creating = {}, {}, 0, False
        if not scopes and not calls:
            return
        try:
            _store(memory, tally.user_id, scopes, calls, creating)
        except BaseException:
            with tally.lock:  # kept for the next flush, before what was noted since
                for name, scope in scopes.items():
                    _add(tally, name, scope.added, scope.peaks)
                for name, entries in calls.items():
                    tally.calls[name] = [*entries, *tally.calls.get(name, [])][-CALL_LOG_SIZE:]
                tally.creating = tally.creating or creating
            raise


def _store(
    memory: MemoryHandle,
    user_id: str,
    scopes: dict[str, _Scope],
    calls: dict[str, list[CallEntry]],
    creating: bool,
) -> None:
    """Add counts and call records to the user's documents (one read, one write)."""
    docs = core_documents(memory, user_id)
    ttl = float(memory.retention.session_days) * DAY
    wanted = [(USER_METRICS if not s else SESSION_METRICS, s or USER_KEY) for s in scopes]
    wanted += [(USER_CALLS if not s else SESSION_CALLS, s or USER_KEY) for s in calls]
    got = docs.batch([GetDocument(ns, key) for ns, key in wanted])
    found = {(d.namespace, d.key): d.value for d in got if d is not None}
    puts: list[PutDocument | DeleteDocument] = []
    new_session_logs = False
    for session, scope in scopes.items():
        ns, key = (USER_METRICS, USER_KEY) if not session else (SESSION_METRICS, session)
        old = found.get((ns, key))
        if old is None and not creating:
            continue
        puts.append(PutDocument(ns, key, _merged(old, scope), ttl=ttl if session else None))
    for session, entries in calls.items():
        ns, key = (USER_CALLS, USER_KEY) if not session else (SESSION_CALLS, session)
        old = found.get((ns, key))
        if old is None and not creating:
            continue
        new_session_logs = new_session_logs or (old is None and bool(session))
        stored = old.get("calls", []) if isinstance(old, dict) else []
        rows = [*stored, *(_row(e) for e in entries)]
        rows = rows[-CALL_LOG_SIZE:]
        puts.append(PutDocument(ns, key, {"calls": rows, "updated_at": now()}, ttl=ttl if session else None))
    if new_session_logs:
        puts += _dropped_session_logs(docs, {p.key for p in puts if p.namespace == SESSION_CALLS})
    if puts:
        docs.batch(puts)


def _row(e: CallEntry) -> list[Any]:
    """A call record as stored: six fields, a seventh (who) only for an operator's call."""
    row: list[Any] = [e.at, e.op, e.key, e.outcome, round(e.ms, 3), e.tier]
    return [*row, e.by] if e.by else row


def _merged(old: Any, scope: _Scope) -> dict[str, Any]:
    counts: dict[str, float] = dict(old.get("counts", {})) if isinstance(old, dict) else {}
    peaks: dict[str, float] = dict(old.get("peaks", {})) if isinstance(old, dict) else {}
    for name, value in scope.added.items():
        counts[name] = counts.get(name, 0) + value
    for name, peak in scope.peaks.items():
        peaks[name] = max(peak, peaks.get(name, peak))
    return {"counts": counts, "peaks": peaks, "updated_at": now()}


def _dropped_session_logs(docs: Any, writing: set[str]) -> list[DeleteDocument]:
    """Deletions of the least recently written session logs beyond :data:`MAX_SESSION_LOGS` (counting those being
    written now)."""
    logs = docs.search(SESSION_CALLS, limit=10**9, order="updated")
    others = [d for d in logs if d.key not in writing]
    extra = len(others) + len(writing) - MAX_SESSION_LOGS
    return [DeleteDocument(SESSION_CALLS, d.key) for d in others[: max(0, extra)]]
