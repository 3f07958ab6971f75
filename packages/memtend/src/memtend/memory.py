"""Memory and the per-user handle: the memory cycle, wiring the pure policies to storage.

Capture (remember, log, add_rule, set_fact) -> judge (gate, precedence) -> write or merge -> retrieve
(recall) -> review and forget (approve, reject, compact, forget, purge, restore) -> erase.
"""

from __future__ import annotations

import asyncio
import atexit
import builtins
import contextlib
import os
import threading
import weakref
from collections import OrderedDict
from collections.abc import Iterable, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field, replace
from datetime import datetime, timezone
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from memtend import locking
from memtend.errors import InvalidInputError, RecordNotFoundError
from memtend.injection_meaning import reads_like_agent_instruction
from memtend.keyed_store import KeyedStore, export_items
from memtend.policies import compaction, forgetting, gate, precedence
from memtend.policies.precedence import FactOutcome
from memtend.policies.retrieval import RetrievalConfig
from memtend.records import (
    Kind,
    Record,
    Source,
    Status,
    check_days,
    check_extra,
    check_name,
    check_text,
    check_time,
    check_user_id,
    now,
)
from memtend.storage import HistoryEntry, Storage, fact_id, new_id
from memtend.twins import with_async_twins
from memtend.user_index import UserIndex

if TYPE_CHECKING:
    from memtend.documents import DocumentStore, GateMode, Namespace
    from memtend.ledger import Ledger
    from memtend.session import SessionState

_clock = now  # methods with a ``now`` parameter read the real clock through this name

DEFAULT_PATH = ".memtend"
MAX_K = 1_000
# How far back an index sync looks beyond its last sync, to catch writes of other processes that were
# stamped before they landed.
_SYNC_MARGIN = 5.0
_PIPELINE_CHUNK = 256
_USAGE_FLUSH_SECONDS = 2.0
_USAGE_FLUSH_SIZE = 512
_open_memories: weakref.WeakSet[Memory] = weakref.WeakSet()


@atexit.register
def _flush_open_memories() -> None:
    for memory in list(_open_memories):
        with contextlib.suppress(Exception):  # the store may already be gone at exit
            memory.flush_usage()


@dataclass(frozen=True)
class Event:
    """One log entry for ``log_many``: text, when it happened, and the session or thread it belongs to."""

    text: str
    at: float | None = None
    session: str = ""
    metadata: dict[str, str | int | float | bool] | None = None
    source: Source = Source.USER


@dataclass(frozen=True)
class Hit:
    """A recalled record, its fused score, and its date, so a prompt can label it."""

    record: Record
    score: float

    @property
    def date(self) -> str:
        return datetime.fromtimestamp(self.record.created_at, tz=timezone.utc).strftime("%Y-%m-%d")

    @property
    def text(self) -> str:
        return self.record.text

    def label(self) -> str:
        return f"[{self.date}] {self.record.text}"


@dataclass(frozen=True)
class FactResult:
    outcome: FactOutcome
    record: Record
    reason: str

    def __eq__(self, other: object) -> bool:
        if isinstance(other, str):
            return self.outcome.value == other
        return super().__eq__(other)

    def __hash__(self) -> int:
        return hash((self.outcome, self.record.id))


@dataclass(frozen=True)
class CompactionReport:
    summary: Record | None
    replaced: int
    kept: int


@dataclass(frozen=True)
class ForgetReport:
    dry_run: bool
    archived: list[tuple[str, str, str]]  # (record id, kind, reason)
    session_items: int = 0

    @property
    def count(self) -> int:
        return len(self.archived)


@dataclass(frozen=True)
class ErasureReceipt:
    user_id: str
    counts: dict[str, int]
    at: float = field(default_factory=now)

    @property
    def total(self) -> int:
        return sum(self.counts.values())


@with_async_twins("erase_user", "users", "close")
class Memory:
    """Memory for many users over one Chroma store.

    ``Memory()`` keeps an embedded Chroma under ``./.memtend`` (``MEMTEND_PATH`` overrides); ``Memory(path=...)``
    picks the folder; ``Memory(client=...)`` takes any Chroma client (``EphemeralClient`` in tests, ``HttpClient``
    for a ``chroma run`` server shared by several processes). Embedded Chroma is single-process: a second process
    opening the same folder gets ``StoreLockedError``.
    """

    def __init__(
        self,
        path: str | os.PathLike[str] | None = None,
        *,
        client: Any = None,
        embedding_function: Any = None,
        retention: forgetting.RetentionPolicy | None = None,
        retrieval: RetrievalConfig | None = None,
        collection_prefix: str = "memtend",
        max_cached_users: int = 64,
    ) -> None:
        import chromadb

        self._lock_handle: locking.DirectoryLock | None = None
        if client is None:
            folder = Path(path or os.environ.get("MEMTEND_PATH") or DEFAULT_PATH)
            folder.mkdir(parents=True, exist_ok=True)
            self._lock_handle = locking.acquire(folder)
            client = chromadb.PersistentClient(path=str(folder))
        elif path is not None:
            raise InvalidInputError("pass either path or client, not both")
        else:
            self._lock_handle = locking.acquire_for_client(client)
        if embedding_function is None:
            from memtend.embeddings import default_embedding_function

            embedding_function = default_embedding_function()
        self.embedding_function = embedding_function
        self.retention = retention or forgetting.RetentionPolicy()
        self.retrieval = retrieval or RetrievalConfig()
        self.storage = Storage(client, embedding_function, prefix=collection_prefix)
        self._lock = threading.RLock()
        self._indexes: OrderedDict[str, _SyncedIndex] = OrderedDict()
        self._max_cached_users = max_cached_users
        # last_used_at stamps from recall, written in batches by a background writer (see _note_use)
        self._usage_lock = threading.Lock()
        self._usage: dict[str, tuple[str, float]] = {}
        self._usage_flushed = now()
        self._usage_writer: ThreadPoolExecutor | None = None
        self._usage_writing: Future[None] | None = None
        _open_memories.add(self)

    # ------------------------------------------------------------------ users
    def user(self, user_id: str) -> UserMemory:
        """The handle through which every call is scoped to one user."""
        return UserMemory(self, check_user_id(user_id))

    def erase_user(self, user_id: str) -> ErasureReceipt:
        """Remove the user from every collection (memories, archive, summaries, history, session state, ledger,
        everything adapters keep) and return a receipt with counts."""
        user_id = check_user_id(user_id)
        with self._lock:
            with self._usage_lock:
                self._usage = {rid: (uid, t) for rid, (uid, t) in self._usage.items() if uid != user_id}
            self._await_usage_write()  # a stamp write in flight lands first, so nothing touches the user after
            counts = self.storage.erase_user(user_id)
            self._indexes.pop(user_id, None)
            from memtend.session import drop_user_tallies

            drop_user_tallies(self.storage, user_id)
        return ErasureReceipt(user_id=user_id, counts=counts)

    def users(self) -> list[str]:
        return self.storage.users()

    def documents(self, user_id: str, *, gate: GateMode = "text", redact: bool = False) -> DocumentStore:
        """One user's document store (see :mod:`memtend.documents`); no I/O on creation."""
        from memtend.documents import DocumentStore

        return DocumentStore(self, check_user_id(user_id), gate=gate, redact=redact)

    def document_owners(self, namespace_prefix: Namespace) -> list[str]:
        """Ids of the users holding a document under the prefix (an admin lookup across users; never values)."""
        from memtend.documents import document_owners

        return document_owners(self, namespace_prefix)

    def sweep_documents(self, now: float | None = None) -> int:
        """Delete every user's expired documents; returns how many (a TTL sweeper calls this)."""
        from memtend.documents import sweep_documents

        return sweep_documents(self, now)

    async def adocument_owners(self, namespace_prefix: Namespace) -> list[str]:
        return await asyncio.to_thread(self.document_owners, namespace_prefix)

    async def asweep_documents(self, now: float | None = None) -> int:
        return await asyncio.to_thread(self.sweep_documents, now)

    def close(self) -> None:
        with self._lock:
            self.flush_usage()
            if self._usage_writer is not None:
                self._usage_writer.shutdown(wait=True)
                self._usage_writer = None
            self._indexes.clear()
            if self._lock_handle is not None:
                self._lock_handle.release()
                self._lock_handle = None

    def __enter__(self) -> Memory:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # ------------------------------------------------------------------ shared machinery
    @property
    def _exclusive(self) -> bool:
        """True when no other writer can touch the store: an embedded folder whose lock only this Memory holds.
        Its indexes need no catching up and its recall results no re-check."""
        return self._lock_handle is not None and self._lock_handle.holders == 1

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        if not texts:
            return np.zeros((0, 0), dtype=np.float32)
        vectors = self.embedding_function(list(texts))
        return np.asarray(vectors, dtype=np.float32)

    def _index(self, user_id: str) -> UserIndex:
        """The user's retrieval index, loaded on first use and kept in step with other processes' writes."""
        with self._lock:
            synced = self._indexes.get(user_id)
            if synced is None:
                synced = _SyncedIndex.load(self.storage, user_id, self.retrieval)
                self._indexes[user_id] = synced
                while len(self._indexes) > self._max_cached_users:
                    self._indexes.popitem(last=False)
            else:
                self._indexes.move_to_end(user_id)
                if not self._exclusive:
                    synced.catch_up(self.storage)
            return synced.index

    def _note_use(self, user_id: str, ids: Sequence[str], at: float) -> None:
        """Remember that records were used. A metadata write per recall would triple its cost, so stamps are
        written in one batch every ``_USAGE_FLUSH_SECONDS`` or ``_USAGE_FLUSH_SIZE`` records by a background
        writer (recall does not wait for it), before any read that shows them, and on close. A crash loses at most
        the unwritten stamps: usage is advisory (it only delays forgetting), never data."""
        with self._usage_lock:
            for rid in ids:
                self._usage[rid] = (user_id, at)
            due = len(self._usage) >= _USAGE_FLUSH_SIZE or at - self._usage_flushed >= _USAGE_FLUSH_SECONDS
            if not due or (self._usage_writing is not None and not self._usage_writing.done()):
                return  # one write at a time; what gathers meanwhile goes with the next
            pending = self._take_usage()
            if self._usage_writer is None:
                self._usage_writer = ThreadPoolExecutor(max_workers=1, thread_name_prefix="memtend-usage")
            try:
                self._usage_writing = self._usage_writer.submit(self._write_usage, pending)
            except RuntimeError:  # interpreter shutting down: the exit flush writes them
                self._return_usage(pending)

    def flush_usage(self) -> None:
        """Write buffered last_used_at stamps now (a partial metadata update: it changes nothing else)."""
        self._await_usage_write()
        with self._usage_lock:
            pending = self._take_usage()
        if pending:
            self._write_usage(pending, raise_errors=True)

    def _await_usage_write(self) -> None:
        with self._usage_lock:
            writing = self._usage_writing
        if writing is not None:
            with contextlib.suppress(Exception):  # a failed background write put its stamps back
                writing.result()

    def _usage_settled(self) -> bool:
        with self._usage_lock:
            return not self._usage and (self._usage_writing is None or self._usage_writing.done())

    def _take_usage(self) -> dict[str, tuple[str, float]]:
        pending, self._usage = self._usage, {}
        self._usage_flushed = now()
        return pending

    def _return_usage(self, pending: dict[str, tuple[str, float]]) -> None:
        """Put unwritten stamps back, under any newer ones."""
        for rid, stamp in pending.items():
            self._usage.setdefault(rid, stamp)

    def _write_usage(self, pending: dict[str, tuple[str, float]], *, raise_errors: bool = False) -> None:
        try:
            self.storage.touch({rid: t for rid, (_, t) in pending.items()})
        except Exception:
            with self._usage_lock:
                self._return_usage(pending)
            if raise_errors:
                raise

    def _commit(
        self,
        user_id: str,
        upserts: Sequence[Record] = (),
        embeddings: np.ndarray | None = None,
        deletes: Sequence[str] = (),
        history: Sequence[HistoryEntry] = (),
        *,
        fresh: bool = False,
    ) -> None:
        """Write a change: records first (one call), then deletions, then history; keep the cached index in step.
        ``fresh``: the records are all new (ids never stored)."""
        if upserts and embeddings is None:
            embeddings = self.embed([r.text for r in upserts])
        with self._lock:
            if upserts:
                self.storage.put_records(upserts, embeddings, fresh=fresh)
            if deletes:
                self.storage.delete_records(user_id, deletes)
            # stamped as they are written, so another process catching up by time cannot miss them
            stamp = now()
            history = [replace(h, at=stamp) for h in history]
            self.storage.append_history(history)
            if deletes:  # what was deleted for good no longer speaks through the history
                self.storage.scrub_history(user_id, deletes)
            synced = self._indexes.get(user_id)
            if synced is not None:
                if upserts:
                    assert embeddings is not None
                    synced.index.upsert(list(upserts), embeddings)
                if deletes:
                    synced.index.remove(deletes)
                synced.seen.update(h.id for h in history)


class _SyncedIndex:
    """A user's index plus what it needs to notice writes made by other processes (through the history)."""

    def __init__(self, user_id: str, index: UserIndex, synced_at: float) -> None:
        self.user_id = user_id
        self.index = index
        self.synced_at = synced_at
        self.seen: set[str] = set()

    @classmethod
    def load(cls, storage: Storage, user_id: str, config: RetrievalConfig) -> _SyncedIndex:
        started = now()
        records, vectors = storage.get_records(
            user_id, statuses=[Status.ACTIVE, Status.PENDING_REVIEW], with_embeddings=True
        )
        index = UserIndex(config)
        if records:
            assert vectors is not None
            # Neighbours in a session follow time, then the order of writing (Chroma returns rows in that order;
            # a stable sort keeps it for records that share a timestamp).
            order = sorted(range(len(records)), key=lambda i: records[i].created_at)
            index.upsert([records[i] for i in order], vectors[order])
        synced = cls(user_id, index, started)
        synced.seen = {h.id for h in storage.get_history(user_id, since=started - _SYNC_MARGIN)}
        return synced

    def catch_up(self, storage: Storage) -> None:
        started = now()
        entries = storage.get_history(self.user_id, since=self.synced_at - _SYNC_MARGIN)
        fresh = [e for e in entries if e.id not in self.seen]
        if fresh:
            ids = list(dict.fromkeys(e.record_id for e in fresh))
            records, vectors = storage.get_records(self.user_id, ids, with_embeddings=True)
            live = [r for r in records if r.status is not Status.ARCHIVED]
            if live:
                assert vectors is not None
                keep = [i for i, r in enumerate(records) if r.status is not Status.ARCHIVED]
                self.index.upsert(live, vectors[keep])
            present = {r.id for r in live}
            self.index.remove([i for i in ids if i not in present])
        self.seen = {e.id for e in entries}
        self.synced_at = started


_ARCHIVED_FROM = "archived_from"


def _archived(record: Record, superseded_by: str, at: float) -> Record:
    """The archived form of a record; it remembers the status it had, so a restore cannot promote it."""
    return replace(
        record,
        status=Status.ARCHIVED,
        superseded_by=superseded_by,
        updated_at=at,
        extra={**record.extra, _ARCHIVED_FROM: record.status.value},
    )


def _status_before_archive(record: Record) -> Status:
    """What an archived record was; records archived before this was kept count as reviewed unless external."""
    value = record.extra.get(_ARCHIVED_FROM)
    if isinstance(value, str) and value in Status._value2member_map_:
        return Status(value)
    return Status.PENDING_REVIEW if record.source is Source.EXTERNAL else Status.ACTIVE


def _history(user_id: str, op: str, record: Record | None, before: Record | None, source: Source) -> HistoryEntry:
    target = record or before
    assert target is not None
    return HistoryEntry(
        id=new_id(),
        user_id=user_id,
        op=op,
        record_id=target.id,
        before=before.snapshot() if before else None,
        after=record.snapshot() if record else None,
        source=source.value,
        at=now(),
    )


@with_async_twins(
    "remember",
    "log",
    "log_many",
    "add_rule",
    "set_fact",
    "get_fact",
    "facts",
    "recall",
    "get",
    "list",
    "delete",
    "pending",
    "approve",
    "reject",
    "compact",
    "forget",
    "purge",
    "restore",
    "export",
    "history",
    "stats",
)
class UserMemory:
    """Everything stored about one user; obtained from ``Memory.user(user_id)``."""

    def __init__(self, memory: Memory, user_id: str) -> None:
        self.memory = memory
        self.user_id = user_id

    def __repr__(self) -> str:
        return f"UserMemory(user_id={self.user_id!r})"

    @property
    def _storage(self) -> Storage:
        """Storage, with buffered usage stamps written first so every read shows them."""
        if not self.memory._usage_settled():
            self.memory.flush_usage()
        return self.memory.storage

    # ------------------------------------------------------------------ capture
    def _new_record(
        self,
        kind: Kind,
        text: object,
        source: Source | str,
        *,
        redact: bool,
        at: float | None = None,
        session: str = "",
        metadata: dict[str, Any] | None = None,
        key: str = "",
        value: str = "",
    ) -> Record:
        source = Source.parse(source)
        text = check_text(text)
        extra = check_extra(metadata)
        session = check_name(session, "session")
        if at is not None:
            at = check_time(at, "at")
        decision = gate.check_write(text, source, redact=redact, meaning=reads_like_agent_instruction)
        t = now()
        created = float(at) if at is not None else t
        return Record(
            id=new_id(),
            user_id=self.user_id,
            kind=kind,
            text=decision.text,
            source=source,
            status=decision.status,
            key=key,
            value=value,
            created_at=created,
            updated_at=created,
            last_used_at=t,
            session=session,
            flagged=decision.flagged,
            extra=extra,
        )

    def _add(self, records: list[Record]) -> list[Record]:
        history = [_history(self.user_id, "add", r, None, r.source) for r in records]
        if len(records) <= _PIPELINE_CHUNK:
            self.memory._commit(self.user_id, records, history=history, fresh=True)
            return records
        # A large batch: embed the next chunk while a writer thread stores the previous one, so ingest runs
        # at close to the embedding model's own speed.
        with ThreadPoolExecutor(max_workers=1, thread_name_prefix="memtend-writer") as writer:
            pending: Future[None] | None = None
            for start in range(0, len(records), _PIPELINE_CHUNK):
                chunk = records[start : start + _PIPELINE_CHUNK]
                vectors = self.memory.embed([r.text for r in chunk])
                if pending is not None:
                    pending.result()
                pending = writer.submit(
                    self.memory._commit,
                    self.user_id,
                    chunk,
                    vectors,
                    (),
                    history[start : start + _PIPELINE_CHUNK],
                    fresh=True,
                )
            assert pending is not None
            pending.result()
        return records

    def remember(
        self,
        text: str,
        *,
        source: Source | str = Source.USER,
        metadata: dict[str, Any] | None = None,
        redact: bool = False,
        session: str = "",
    ) -> Record:
        """Store a free-text note."""
        return self._add(
            [self._new_record(Kind.NOTE, text, source, redact=redact, session=session, metadata=metadata)]
        )[0]

    def log(
        self,
        text: str,
        *,
        at: float | None = None,
        session: str = "",
        source: Source | str = Source.USER,
        metadata: dict[str, Any] | None = None,
        redact: bool = False,
    ) -> Record:
        """Append an event to the user's log (``at``: when it happened, epoch seconds; default now)."""
        return self._add(
            [self._new_record(Kind.EVENT, text, source, redact=redact, at=at, session=session, metadata=metadata)]
        )[0]

    def log_many(self, events: Iterable[Event | str], *, redact: bool = False) -> list[Record]:
        """Append many events in one batch (one embedding call, one write). All are checked before any is stored."""
        records = []
        for event in events:
            if isinstance(event, str):
                event = Event(text=event)
            if not isinstance(event, Event):
                raise InvalidInputError(f"log_many takes Event or str items, got {type(event).__name__}")
            records.append(
                self._new_record(
                    Kind.EVENT,
                    event.text,
                    event.source,
                    redact=redact,
                    at=event.at,
                    session=event.session,
                    metadata=event.metadata,
                )
            )
        return self._add(records) if records else []

    def add_rule(self, text: str, *, source: Source | str = Source.USER, redact: bool = False) -> Record:
        """Store a procedural rule. Rules are pinned: forgetting never archives them. A rule from an external
        source waits in review until approved."""
        return self._add([self._new_record(Kind.RULE, text, source, redact=redact)])[0]

    # ------------------------------------------------------------------ facts and precedence
    def set_fact(self, key: str, value: str, *, source: Source | str = Source.USER, redact: bool = False) -> FactResult:
        """Set the user's current value for ``key``; answers added / updated / unchanged / kept.

        A lower-trust source never replaces a higher-trust one; a replaced value is archived with a pointer to
        its successor and can be restored. An external source is held for review instead.
        """
        canonical = precedence.canonical_key(key)
        value = check_text(value, "value")
        source = Source.parse(source)
        text = precedence.fact_text(canonical, value)
        candidate = self._new_record(Kind.FACT, text, source, redact=redact, key=canonical, value=value)
        if candidate.text != text:  # redacted: keep the value consistent with what is stored
            candidate = replace(candidate, value=gate.redact(value))
        if candidate.status is Status.PENDING_REVIEW:
            self._add([candidate])
            return FactResult(FactOutcome.KEPT, candidate, "external source: held for review")
        with self.memory._lock:
            return self._apply_fact(candidate)

    def _apply_fact(self, candidate: Record) -> FactResult:
        fid = fact_id(self.user_id, candidate.key)
        found, vectors = self._storage.get_records(self.user_id, [fid], with_embeddings=True)
        existing = found[0] if found and found[0].status is Status.ACTIVE else None
        decision = precedence.decide_fact(existing, candidate.value, candidate.source)
        if decision.outcome in (FactOutcome.UNCHANGED, FactOutcome.KEPT):
            assert existing is not None
            if decision.outcome is FactOutcome.KEPT:
                entry = _history(self.user_id, "kept", existing, existing, candidate.source)
                self.memory._commit(self.user_id, history=[entry])
            return FactResult(decision.outcome, existing, decision.reason)
        current = replace(candidate, id=fid)
        if existing is None:
            if found:  # an archived current slot (forgotten fact): keep its creation time
                current = replace(current, created_at=found[0].created_at)
            self.memory._commit(
                self.user_id,
                [current],
                history=[_history(self.user_id, "add", current, None, current.source)],
            )
            return FactResult(decision.outcome, current, decision.reason)
        t = now()
        archived = replace(_archived(existing, fid, t), id=new_id())
        current = replace(current, created_at=existing.created_at, updated_at=t)
        assert vectors is not None
        new_vec = self.memory.embed([current.text])
        self.memory._commit(
            self.user_id,
            [archived, current],
            np.vstack([vectors[:1], new_vec]),
            history=[_history(self.user_id, "update", current, existing, current.source)],
        )
        return FactResult(decision.outcome, current, decision.reason)

    def get_fact(self, key: str) -> Record | None:
        found, _ = self._storage.get_records(self.user_id, [fact_id(self.user_id, precedence.canonical_key(key))])
        return found[0] if found and found[0].status is Status.ACTIVE else None

    def facts(self) -> dict[str, str]:
        """The profile: every current fact, key -> value."""
        records, _ = self._storage.get_records(self.user_id, kinds=[Kind.FACT], statuses=[Status.ACTIVE])
        return {r.key: r.value for r in sorted(records, key=lambda r: r.key) if r.id.startswith("fact:")}

    # ------------------------------------------------------------------ retrieval
    def recall(
        self,
        query: str,
        k: int = 5,
        *,
        kinds: Iterable[Kind | str] | None = None,
        now: float | None = None,
        include_pending: bool = False,
    ) -> list[Hit]:
        """The ``k`` records that best answer ``query``, ranked by meaning, words and recency together.

        Among relevant records that conflict, the newest wins. Pending-review (untrusted) records are left out
        unless ``include_pending``. Returned records get ``last_used_at`` set.
        """
        query = check_text(query, "query")
        if not isinstance(k, int) or isinstance(k, bool) or not 1 <= k <= MAX_K:
            raise InvalidInputError(f"k must be an int from 1 to {MAX_K}, got {k!r}")
        kind_set = {Kind.parse(x) for x in kinds} if kinds is not None else None
        statuses = {Status.ACTIVE, Status.PENDING_REVIEW} if include_pending else {Status.ACTIVE}
        query_vec = self.memory.embed([query])[0]
        t = _now_default(now)
        with self.memory._lock:
            index = self.memory._index(self.user_id)
            ranked = index.search(query, query_vec, k=k, now=t, kinds=kind_set, statuses=statuses)
            used = _clock()
            records = {rid: index.record(rid) for rid, _ in ranked}
            if ranked and not self.memory._exclusive:
                # Another process may have deleted or erased these since the index last caught up (an erasure
                # leaves no history to catch up from): answer only with what storage still holds, as it is now.
                fresh, _ = self.memory.storage.get_records(self.user_id, list(records))
                current = {r.id: r for r in fresh if r.status in statuses}
                index.remove([rid for rid in records if rid not in current])
                records = current
            hits = [Hit(replace(records[rid], last_used_at=used), score) for rid, score in ranked if rid in records]
        self.memory._note_use(self.user_id, [h.record.id for h in hits], used)
        return hits

    # ------------------------------------------------------------------ reading
    def get(self, record_id: str) -> Record:
        if not check_name(record_id, "record_id"):
            raise InvalidInputError("record_id must not be empty")
        found, _ = self._storage.get_records(self.user_id, [record_id])
        if not found:
            raise RecordNotFoundError(f"no record {record_id!r} for this user")
        return found[0]

    def list(
        self, *, kinds: Iterable[Kind | str] | None = None, status: Status | str | None = Status.ACTIVE
    ) -> list[Record]:
        """Records of this user, oldest first (``status=None`` for every status)."""
        kind_list = [Kind.parse(x) for x in kinds] if kinds is not None else None
        statuses = [Status.parse(status)] if status is not None else None
        records, _ = self._storage.get_records(self.user_id, kinds=kind_list, statuses=statuses)
        return sorted(records, key=lambda r: (r.created_at, r.id))

    def history(self, record_id: str | None = None) -> builtins.list[dict[str, Any]]:
        return [e.to_dict() for e in self._storage.get_history(self.user_id, record_id=record_id)]

    def pending(self) -> builtins.list[Record]:  # `list` is a method here
        """Records from untrusted sources waiting for review."""
        return self.list(status=Status.PENDING_REVIEW)

    # ------------------------------------------------------------------ review
    def approve(self, record_id: str, *, source: Source | str = Source.USER) -> Record:
        """Accept a pending record. A pending fact is applied through precedence as vouched for by ``source``."""
        record = self.get(record_id)
        if record.status is not Status.PENDING_REVIEW:
            raise InvalidInputError(f"record {record_id!r} is {record.status.value}, not pending review")
        with self.memory._lock:
            if record.kind is Kind.FACT:
                result = self._apply_fact(replace(record, source=Source.parse(source), status=Status.ACTIVE))
                self._retire(record, "approved", superseded_by=result.record.id)
                return result.record
            approved = replace(record, status=Status.ACTIVE, updated_at=now())
            self.memory._commit(
                self.user_id,
                [approved],
                self.memory.embed([approved.text]),
                history=[_history(self.user_id, "approve", approved, record, Source.parse(source))],
            )
            return approved

    def reject(self, record_id: str) -> None:
        """Drop a pending record for good."""
        record = self.get(record_id)
        if record.status is not Status.PENDING_REVIEW:
            raise InvalidInputError(f"record {record_id!r} is {record.status.value}, not pending review")
        self.memory._commit(
            self.user_id,
            deletes=[record.id],
            history=[_history(self.user_id, "reject", None, record, Source.USER)],
        )

    def _retire(self, record: Record, op: str, *, superseded_by: str = "", at: float | None = None) -> Record:
        """Move a record to the archive (metadata only); ``at`` stamps when (the grace period counts from it)."""
        archived = _archived(record, superseded_by, now() if at is None else at)
        with self.memory._lock:
            self._storage.update_record_metadata([archived])
            self._storage.append_history([_history(self.user_id, op, archived, record, Source.AGENT)])
            synced = self.memory._indexes.get(self.user_id)
            if synced is not None:
                synced.index.remove([record.id])
        return archived

    # ------------------------------------------------------------------ deletion, compaction
    def delete(self, record_id: str) -> int:
        """Delete one record for good; summaries derived from it are rebuilt from their other sources, or
        deleted when none remain. Returns the number of summaries touched."""
        record = self.get(record_id)
        with self.memory._lock:
            # summaries first: an interruption leaves the record (a retry works), never its text in a summary
            touched = self._rebuild_summaries_without(record.id)
            self.memory._commit(
                self.user_id,
                deletes=[record.id],
                history=[_history(self.user_id, "delete", None, record, Source.USER)],
            )
            return touched

    def _rebuild_summaries_without(self, gone: str) -> int:
        summaries, _ = self._storage.get_records(self.user_id, kinds=[Kind.SUMMARY])
        touched = 0
        for summary in summaries:
            if gone not in summary.derived_from:
                continue
            touched += 1
            remaining = [i for i in summary.derived_from if i != gone]
            sources, _ = self._storage.get_records(self.user_id, remaining)
            originals = sorted((r for r in sources if r.kind is not Kind.SUMMARY), key=lambda r: r.created_at)
            if not originals:
                self.memory._commit(
                    self.user_id,
                    deletes=[summary.id],
                    history=[_history(self.user_id, "delete", None, summary, Source.AGENT)],
                )
                continue
            rebuilt = replace(
                summary,
                text=compaction.extractive_summary([replace(r, kind=Kind.EVENT) for r in originals]),
                derived_from=[r.id for r in originals],
                updated_at=now(),
                extra={**summary.extra, "events": len(originals)},
            )
            self.memory._commit(
                self.user_id,
                [rebuilt],
                history=[_history(self.user_id, "rebuild", rebuilt, summary, Source.AGENT)],
            )
        return touched

    def compact(self, keep_recent: int = 20, summarizer: compaction.LogSummarizer | None = None) -> CompactionReport:
        """Keep the newest ``keep_recent`` events verbatim; replace older ones (and any earlier summary) with one
        summary whose ``derived_from`` lists what it replaced. The replaced records move to the archive."""
        if not isinstance(keep_recent, int) or isinstance(keep_recent, bool) or keep_recent < 0:
            raise InvalidInputError(f"keep_recent must be an int >= 0, got {keep_recent!r}")
        with self.memory._lock:
            log, vectors = self._storage.get_records(
                self.user_id, kinds=[Kind.EVENT, Kind.SUMMARY], statuses=[Status.ACTIVE], with_embeddings=True
            )
            plan = compaction.plan_compaction(log, keep_recent)
            if not plan.needed:
                return CompactionReport(summary=None, replaced=0, kept=len(plan.kept))
            text = check_text(compaction.summarise(plan.replaced, summarizer), "summary")
            decision = gate.check_write(text, Source.AGENT, redact=True)
            text = decision.text
            t = now()
            n_events = sum(1 for r in plan.replaced if r.kind is Kind.EVENT) + sum(
                int(r.extra.get("events", 0)) for r in plan.replaced if r.kind is Kind.SUMMARY
            )
            summary = Record(
                id=new_id(),
                user_id=self.user_id,
                kind=Kind.SUMMARY,
                text=text,
                source=Source.AGENT,
                created_at=max(r.created_at for r in plan.replaced),
                updated_at=t,
                last_used_at=t,
                derived_from=compaction.provenance(plan.replaced),
                # a summary quoting text that read like an instruction to the agent stays flagged
                flagged=decision.flagged or any(r.flagged for r in plan.replaced),
                extra={"events": n_events},
            )
            position = {r.id: i for i, r in enumerate(log)}
            archived = [_archived(r, summary.id, t) for r in plan.replaced]
            assert vectors is not None
            stacked = np.vstack([self.memory.embed([text]), vectors[[position[r.id] for r in plan.replaced]]])
            # One write holds the summary and the archiving of what it replaces: no state where the sources
            # are gone and no summary stands for them.
            self.memory._commit(
                self.user_id,
                [summary, *archived],
                stacked,
                history=[
                    _history(self.user_id, "compact", summary, None, Source.AGENT),
                    *(
                        _history(self.user_id, "archive", a, r, Source.AGENT)
                        for a, r in zip(archived, plan.replaced, strict=True)
                    ),
                ],
            )
            synced = self.memory._indexes.get(self.user_id)
            if synced is not None:
                synced.index.remove([r.id for r in archived])
        return CompactionReport(summary=summary, replaced=len(plan.replaced), kept=len(plan.kept))

    # ------------------------------------------------------------------ forgetting
    def forget(self, *, dry_run: bool = False, now: float | None = None) -> ForgetReport:
        """Apply the retention schedule: report (``dry_run=True``) or archive what it says goes.

        Rules are pinned. Expired session state is removed too (it has no archive)."""
        t = _now_default(now)
        policy = self.memory.retention
        records, _ = self._storage.get_records(self.user_id, statuses=[Status.ACTIVE, Status.PENDING_REVIEW])
        decisions = forgetting.plan_forget(records, policy, t)
        from memtend.keyed_store import expired_count, sweep_expired

        expired = expired_count(self.memory, self.user_id, t)
        if not dry_run:
            with self.memory._lock:
                for d in decisions:
                    self._retire(d.record, "forget", at=t)
                expired = sweep_expired(self.memory, self.user_id, t)
        return ForgetReport(
            dry_run=dry_run,
            archived=[(d.record.id, d.record.kind.value, d.reason) for d in decisions],
            session_items=expired,
        )

    def purge(self, *, grace_days: float | None = None, now: float | None = None) -> int:
        """Delete archived records whose grace period is over; returns how many."""
        t = _now_default(now)
        if grace_days is not None:
            grace_days = check_days(grace_days, "grace_days")
        archived, _ = self._storage.get_records(self.user_id, statuses=[Status.ARCHIVED])
        doomed = forgetting.plan_purge(archived, self.memory.retention, t, grace_days)
        if doomed:
            self.memory._commit(
                self.user_id,
                deletes=[r.id for r in doomed],
                history=[_history(self.user_id, "purge", None, r, Source.AGENT) for r in doomed],
            )
        return len(doomed)

    def restore(self, record_id: str) -> Record:
        """Bring an archived record back. A superseded fact value becomes current again (the value it restores
        over is archived in its turn, so the restore can itself be undone)."""
        record = self.get(record_id)
        if record.status is not Status.ARCHIVED:
            raise InvalidInputError(f"record {record_id!r} is {record.status.value}, not archived")
        before = _status_before_archive(record)
        record = replace(record, extra={k: v for k, v in record.extra.items() if k != _ARCHIVED_FROM})
        with self.memory._lock:
            if before is Status.PENDING_REVIEW:  # unreviewed content goes back to review, never straight to trust
                back = replace(record, status=Status.PENDING_REVIEW, superseded_by="", updated_at=now())
                self.memory._commit(
                    self.user_id, [back], history=[_history(self.user_id, "restore", back, record, Source.USER)]
                )
                return back
            if record.kind is Kind.FACT and record.id != fact_id(self.user_id, record.key):
                fid = fact_id(self.user_id, record.key)
                found, vectors = self._storage.get_records(self.user_id, [record.id, fid], with_embeddings=True)
                by_id = {r.id: (r, vectors[i]) for i, r in enumerate(found)} if vectors is not None else {}
                t = now()
                current = replace(record, id=fid, status=Status.ACTIVE, superseded_by="", updated_at=t)
                upserts, vecs = [current], [by_id[record.id][1]]
                if fid in by_id and by_id[fid][0].status is Status.ACTIVE:
                    displaced = by_id[fid][0]
                    upserts.append(replace(_archived(displaced, fid, t), id=record.id))
                    vecs.append(by_id[fid][1])
                    self.memory._commit(
                        self.user_id,
                        upserts,
                        np.vstack(vecs),
                        history=[_history(self.user_id, "restore", current, displaced, Source.USER)],
                    )
                else:
                    self.memory._commit(
                        self.user_id,
                        upserts,
                        np.vstack(vecs),
                        deletes=[record.id],
                        history=[_history(self.user_id, "restore", current, record, Source.USER)],
                    )
                return current
            restored = replace(record, status=Status.ACTIVE, superseded_by="", updated_at=now(), last_used_at=now())
            self.memory._commit(
                self.user_id,
                [restored],
                history=[_history(self.user_id, "restore", restored, record, Source.USER)],
            )
            return restored

    # ------------------------------------------------------------------ working memory, keyed store, export
    def session(self, session_id: str) -> SessionState:
        """Working memory for one session of this user: a key-value state the agent reads and writes."""
        from memtend.session import SessionState

        return SessionState(self, session_id)

    def ledger(self, session_id: str) -> Ledger:
        """The side-effect ledger of one session: which side-effecting calls were already made."""
        from memtend.ledger import Ledger

        return Ledger(self, session_id)

    def store(self, namespace: str) -> KeyedStore:
        """A user-scoped keyed store for data that is not a memory (session state, checkpoints, chat messages).
        Isolation, export and erasure cover it."""
        return KeyedStore(self.memory, self.user_id, namespace)

    def documents(self, *, gate: GateMode = "text", redact: bool = False) -> DocumentStore:
        """This user's document store (see :mod:`memtend.documents`); no I/O on creation."""
        return self.memory.documents(self.user_id, gate=gate, redact=redact)

    def export(self) -> dict[str, Any]:
        """Everything stored about this user, as JSON-able data."""
        records, _ = self._storage.get_records(self.user_id)
        return {
            "user_id": self.user_id,
            "exported_at": now(),
            "records": [r.to_dict() for r in sorted(records, key=lambda r: (r.created_at, r.id))],
            "history": self.history(),
            "store": export_items(self.memory, self.user_id),
            "documents": self.documents().export(),
        }

    def stats(self) -> dict[str, Any]:
        records, _ = self._storage.get_records(self.user_id)
        by: dict[str, int] = {}
        for r in records:
            name = f"{r.kind.value}/{r.status.value}"
            by[name] = by.get(name, 0) + 1
        return {
            "user_id": self.user_id,
            "records": len(records),
            "by_kind_status": dict(sorted(by.items())),
            "stored": self._storage.count_user(self.user_id),
        }


def _now_default(value: float | None) -> float:
    return _clock() if value is None else check_time(value, "now")
