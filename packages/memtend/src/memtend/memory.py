"""Memory: the store's lifecycle, its users, erasure, the per-user index cache, and ``apply``, the one function
that performs every change to stored data.

What a change is, is decided by pure planners (:mod:`memtend.policies.changes`); the per-user facade
(:mod:`memtend.user_memory`) validates a call, plans its change and hands it here.
"""

from __future__ import annotations

import atexit
import contextlib
import logging
import os
import threading
import weakref
from collections import OrderedDict
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import replace
from typing import TYPE_CHECKING, Any, TypeVar

import numpy as np

from memtend import fact_claims, fact_fold, journal, locking, store_files, store_state
from memtend.aio import no_io, run_io
from memtend.arguments import check_memory_options, check_texts, describe
from memtend.embeddings import BATCH_SIZE
from memtend.errors import InvalidInputError, MemoryClosedError, StorageUnavailableError, WriteInterruptedError
from memtend.extras import AUTO, Auto, resolve
from memtend.helpers import Helpers, Parts, embed_in_parts
from memtend.policies import changes, forgetting
from memtend.policies.changes import Change
from memtend.policies.conflicts import ConflictJudge, check_judge
from memtend.policies.retrieval import RetrievalConfig
from memtend.records import Record, Status, check_user_id, new_id, now
from memtend.results import ChangeEvent, CompactionReport, ErasureReceipt, Event, FactResult, ForgetReport, Hit
from memtend.storage import ChangeMarks, DocRow, Storage, persistent_client, record_stamps
from memtend.usage import UsageWriter
from memtend.user_index import UserIndex
from memtend.user_memory import UserMemory

# what callers imported from here before the results moved to memtend.results
if TYPE_CHECKING:
    from memtend.documents import DocumentStore, GateMode, Namespace

__all__ = [
    "DEFAULT_PATH",
    "ChangeHook",
    "CompactionReport",
    "ErasureReceipt",
    "Event",
    "FactResult",
    "ForgetReport",
    "Hit",
    "Memory",
    "UserMemory",
]

DEFAULT_PATH = ".memtend"
_PIPELINE_CHUNK = 256  # a fresh change with more new records than this is embedded and written in a pipeline
_log = logging.getLogger("memtend")
_open_memories: weakref.WeakSet[Memory] = weakref.WeakSet()

ChangeHook = Callable[[ChangeEvent], None]
T = TypeVar("T")


@atexit.register
def _flush_open_memories() -> None:
    for memory in list(_open_memories):
        with contextlib.suppress(Exception):  # the store may already be gone at exit
            memory._settle_journal_ends(on_close=True)
            memory.flush_usage()


class Memory:
    """Memory for many users over one Chroma store.

    ``Memory()`` keeps an embedded Chroma under ``./.memtend`` (``MEMTEND_PATH`` overrides); ``Memory(path=...)``
    picks the folder; ``Memory(client=...)`` takes any Chroma client (``EphemeralClient`` in tests, ``HttpClient``
    for a ``chroma run`` server shared by several processes). Embedded Chroma is single-process: a second process
    opening the same folder gets ``StoreLockedError``.

    ``on_change``: called with a :class:`~memtend.results.ChangeEvent` for every write, archive, redaction,
    deletion and erasure once it is stored (never with a refused value); an exception it raises is logged, not
    raised, since the change already happened.

    ``conflict_judge``: finds changes said in other words among the top of a recall (a
    :class:`~memtend.policies.conflicts.ConflictJudge`); ``AUTO`` uses the installed ``memtend-conflicts``, if any,
    and ``None`` keeps the newest-wins rules only (same fact key, near-duplicates, an update cue).
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
        on_change: ChangeHook | None = None,
        conflict_judge: ConflictJudge | Auto | None = AUTO,
    ) -> None:
        check_memory_options(
            client=client,
            embedding_function=embedding_function,
            retention=retention,
            retrieval=retrieval,
            collection_prefix=collection_prefix,
            max_cached_users=max_cached_users,
            on_change=on_change,
        )
        self.conflict_judge = check_judge(resolve("conflict_judge", conflict_judge))
        if client is not None and path is not None:
            raise InvalidInputError("pass either path or client, not both")
        if embedding_function is None:
            from memtend.embeddings import default_embedding_function

            embedding_function = default_embedding_function()
        self.embedding_function = embedding_function
        self.retention = retention or forgetting.RetentionPolicy()
        self.retrieval = retrieval or RetrievalConfig()
        self.on_change = on_change
        if client is None:
            folder = store_files.prepare_folder(
                path if path is not None else os.environ.get("MEMTEND_PATH") or DEFAULT_PATH
            )
            key = store_state.folder_key(folder, collection_prefix)
        else:
            key = store_state.client_key(client, collection_prefix)

        def build() -> tuple[Storage, UsageWriter, locking.DirectoryLock | None]:
            lock = locking.acquire(folder) if client is None else locking.acquire_for_client(client)
            try:
                storage = Storage(
                    persistent_client(str(folder)) if client is None else client,
                    embedding_function,
                    prefix=collection_prefix,
                )
            except BaseException:
                if lock is not None:
                    lock.release()
                raise
            return storage, UsageWriter(storage.touch), lock

        # every handle on this store in this process shares one state: storage, lock, index cache, usage stamps
        self._state = store_state.attach(key, build, max_cached_users)
        self.storage: Storage = self._state.storage
        # no other process writes an exclusive store: fact slots are known without reading them (Storage.fact_slot)
        self.storage.slots.enabled = self._state.exclusive
        self._lock = self._state.lock
        self._usage = self._state.usage
        self._closed = False
        # load an index while a query is embedded, embed a batch while the gate reads it, gate a single write while
        # it is embedded
        self._helpers = Helpers()
        self._batch = threading.local()  # erase_users in progress on this thread
        # interrupted writes kept for their user's next call: (change, chunk size, journal row id)
        self._unfinished: dict[str, list[tuple[Change, int, str | None]]] = {}
        self._journal_thread: ThreadPoolExecutor | None = None  # deletes finished changes' journal rows
        _open_memories.add(self)
        if self._state.handles == 1:  # the first handle on the store in this process (another may be mid-write)
            self._recover_journals()

    @property
    def _indexes(self) -> OrderedDict[str, _SyncedIndex]:
        """The per-user index cache this store's handles share."""
        return self._state.indexes

    @property
    def _max_cached_users(self) -> int:
        return self._state.max_cached_users

    # ------------------------------------------------------------------ users
    @no_io
    def user(self, user_id: str) -> UserMemory:
        """The handle through which every call is scoped to one user."""
        return UserMemory(self, check_user_id(user_id))

    def erase_user(self, user_id: str) -> ErasureReceipt:
        """Remove the user from every collection (memories, archive, summaries, history, session state, ledger,
        everything adapters keep) and return a receipt with counts.

        On an embedded store no file in the folder keeps a byte of the user afterwards (Chroma's log purged, its
        vector index files and ``chroma.sqlite3`` rewritten: see :mod:`memtend.store_purge`); a server's folder
        needs its operator to run ``memtend scrub`` on it (README, "Data safety")."""
        user_id = check_user_id(user_id)
        events = self.apply(Change(user_id, erase=True))
        return ErasureReceipt(user_id=user_id, counts=dict(events[0].counts or {}), at=events[0].at)

    def erase_users(self, user_ids: Iterable[str]) -> list[ErasureReceipt]:
        """Erase several users (as ``erase_user``, one receipt each), rewriting the store's files once at the end
        instead of after each user: the rewrite costs about as much as the folder is large."""
        checked = list(dict.fromkeys(check_user_id(u) for u in user_ids))
        self._batch.erasing = True
        try:
            receipts = [self.erase_user(uid) for uid in checked]
        finally:
            self._batch.erasing = False
            self._scrub_files()
        return receipts

    def users(self) -> list[str]:
        return self.storage.users()

    @no_io
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

    def close(self) -> None:
        """Flush buffered usage stamps and close this handle: every later call through it (or through a handle
        obtained from it) raises :class:`~memtend.errors.MemoryClosedError`. Other handles on the same store stay
        open; the store's shared state (and an embedded folder's lock) goes with the last of them."""
        with self._lock:
            if self._closed:
                return
            _open_memories.discard(self)
            try:
                self._settle_journal_ends(on_close=True)
                self._usage.flush()
            finally:
                self._closed = True
                self.storage = _ClosedStorage()  # type: ignore[assignment]
                self._helpers.close()
                if self._journal_thread is not None:
                    self._journal_thread.shutdown(wait=True)
                if store_state.detach(self._state):
                    state = self._state
                    state.settle_folds()
                    state.usage.close()
                    state.indexes.clear()
                    if state.folder_lock is not None:
                        state.folder_lock.release()
                        state.folder_lock = None

    def _check_open(self) -> None:
        if self._closed:
            raise MemoryClosedError(_CLOSED_MESSAGE)

    def __enter__(self) -> Memory:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # ------------------------------------------------------------------ async twins
    async def aerase_user(self, user_id: str) -> ErasureReceipt:
        return await run_io(self.erase_user, user_id)

    async def aerase_users(self, user_ids: Iterable[str]) -> list[ErasureReceipt]:
        return await run_io(self.erase_users, user_ids)

    async def ascrub_files(self) -> None:
        await run_io(self.scrub_files)

    async def ausers(self) -> list[str]:
        return await run_io(self.users)

    async def adocument_owners(self, namespace_prefix: Namespace) -> list[str]:
        return await run_io(self.document_owners, namespace_prefix)

    async def asweep_documents(self, now: float | None = None) -> int:
        return await run_io(self.sweep_documents, now)

    async def aclose(self) -> None:
        await run_io(self.close)

    async def aapply(self, change: Change) -> list[ChangeEvent]:
        return await run_io(self.apply, change)

    async def aembed(self, texts: Sequence[str]) -> np.ndarray:
        return await run_io(self.embed, texts)

    async def aflush_usage(self) -> None:
        await run_io(self.flush_usage)

    async def __aenter__(self) -> Memory:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()

    # ------------------------------------------------------------------ the apply step
    def apply(self, change: Change) -> list[ChangeEvent]:
        """Perform a planned change (see :class:`~memtend.policies.changes.Change` for what and in which order),
        keep the cached index in step, buffer usage stamps, tell ``on_change``; returns the events."""
        self._check_open()
        if not isinstance(change, Change):
            raise InvalidInputError(f"apply takes a Change (memtend.policies.changes), got {describe(change)}")
        if change.erase:
            return self._emit(self._erase(change))
        if not change.writes:
            self._usage.note(change.user_id, change.used)
            return []
        self._settle_journal_ends()
        self._finish_interrupted(change.user_id)
        planned = change
        with self._lock:  # a change of a fact key as readers see it names the rows that hold the key
            change = fact_fold.expand(self.storage, change, now(), shared=not self._exclusive)
        missing = [r for r in change.upserts if r.id not in change.vectors]
        chunk = _PIPELINE_CHUNK if change.fresh and len(missing) > _PIPELINE_CHUNK else 0
        rows = len(change.upserts) + len(change.archives) + 1
        jid = journal.JOURNAL_ID_PREFIX + new_id() if chunk or change.deletes or rows > self.storage.max_batch else None
        started = self.storage.write_calls
        marked = False
        try:
            if chunk:
                assert jid is not None
                self._apply_pipelined(change, jid)
            else:
                marked = self._apply_whole(change, jid)
        except StorageUnavailableError as exc:
            self._interrupted(change, chunk, jid, exc, self.storage.write_calls - started)
        if not marked:
            self._mark_changed(change)
        self._usage.note(change.user_id, change.used)
        return self._emit(changes.events(planned, now()))

    # ------------------------------------------------------------------ all or nothing
    # A change that fits in one Chroma call is written in one (one transaction). Any other is journaled (see
    # memtend.journal): its journal row goes in its first call and is deleted after its last; one left behind is
    # rolled forward on open, or on the user's next call in this process.
    def _apply_whole(self, change: Change, jid: str | None) -> bool:
        """Write a change that is not pipelined; True when its change mark went with it (one call, no journal)."""
        vectors = self._vectors(change)
        if jid is None:
            self._write(change, vectors, mark=True)
            return True
        self._write(change, vectors, (jid, journal.encode(change, 0)))
        self.storage.end_journal(change.user_id, jid)
        return False

    def _interrupted(
        self, change: Change, chunk: int, jid: str | None, exc: StorageUnavailableError, attempted: int
    ) -> None:
        """A write failed because Chroma stopped answering: finish it now if Chroma answers again, else keep it
        for the user's next call and raise WriteInterruptedError (or the plain error when nothing was sent)."""
        if attempted == 0 or (attempted == 1 and _never_sent(exc)):
            raise exc  # no write reached Chroma: nothing of the change is stored, and the error says so
        try:
            self._replay(change, chunk, jid)
            return
        except StorageUnavailableError:
            pass
        with self._lock:
            self._unfinished.setdefault(change.user_id, []).append((change, chunk, jid))
        ids = tuple(r.id for r in change.upserts) or tuple(r.id for r in change.archives) or change.deletes
        whole = (
            "journaled: finished when the store is next opened if this process ends first"
            if jid is not None
            else "stored whole or not at all: one Chroma transaction"
        )
        cause = type(exc.__cause__ or exc).__name__
        raise WriteInterruptedError(
            f"Chroma stopped answering during a write for user {change.user_id!r} ({len(ids)} records, e.g. "
            f"{ids[0] if ids else '-'}; {cause}): it may be stored only in part so far ({whole}). memtend keeps the "
            "write and finishes it, with the same ids so nothing is stored twice, on this user's next call once the "
            "Chroma server answers again. Do not make the call again; check that the server is running.",
            ids,
        ) from exc

    def _finish_interrupted(self, user_id: str) -> None:
        """Finish the user's interrupted writes (in order) before anything else is written for them."""
        with self._lock:
            todo = self._unfinished.get(user_id)
            while todo:
                change, chunk, jid = todo[0]
                self._replay(change, chunk, jid)
                todo.pop(0)
                self._emit(changes.events(change, now()))
            self._unfinished.pop(user_id, None)

    def _replay(self, change: Change, chunk: int, journal_id: str | None = None) -> None:
        """Write a change again, whole (idempotent: the same ids and history rows; vectors read back where the
        stored text matches, else embedded again), then drop its journal row."""
        uid = change.user_id
        with self._lock:
            known = self.storage.stored_vectors(uid, [r for r in change.upserts if r.id not in change.vectors])
            full = replace(change, vectors={**known, **change.vectors})
            parts = list(_chunks(full, chunk)) if chunk else [full]
            for part in parts:
                self._write(part, self._vectors(part))
            if journal_id is not None:
                self.storage.end_journal(uid, journal_id)
        self._mark_changed(change)

    def _recover_journals(self) -> None:
        """Roll forward the journaled changes a killed process or a lost server left half written (all of them on
        an exclusive folder; on a shared store, those older than journal.SHARED_REPLAY_AFTER)."""
        for jid, uid, at in self.storage.journals():
            if not self._exclusive and now() - at < journal.SHARED_REPLAY_AFTER:
                continue
            document = self.storage.read_journal(uid, jid)
            if document is None:
                continue
            try:
                change, chunk = journal.decode(document)
            except (ValueError, KeyError, TypeError):
                _log.error("memtend: journal row %s cannot be read; left in place", jid)
                continue
            _log.warning("memtend: finishing an interrupted write for user %r (%d records)", uid, len(change.upserts))
            self._replay(change, chunk, jid)

    def _vectors(self, change: Change) -> np.ndarray | None:
        """One vector per upsert, in order: the change's own, the others embedded in one call."""
        if not change.upserts:
            return None
        missing = [r for r in change.upserts if r.id not in change.vectors]
        embedded = iter(self.embed([r.text for r in missing])) if missing else iter(())
        return np.vstack([change.vectors[r.id] if r.id in change.vectors else next(embedded) for r in change.upserts])

    def _apply_pipelined(self, change: Change, jid: str) -> None:
        """A large batch of new records: embed the next chunk while a writer thread stores the previous one, so
        ingest runs at close to the embedding model's own speed. Journaled: the journal row goes with the first
        chunk and is deleted after the last."""
        entry: tuple[str, str] | None = (jid, journal.encode(change, _PIPELINE_CHUNK))
        with ThreadPoolExecutor(max_workers=1, thread_name_prefix="memtend-writer") as writer:
            pending: Future[None] | None = None
            for part in _chunks(change, _PIPELINE_CHUNK):
                vectors = self._vectors(part)
                if pending is not None:
                    pending.result()
                pending = writer.submit(self._write, part, vectors, entry)
                entry = None
            assert pending is not None
            pending.result()
        self.storage.end_journal(change.user_id, jid)

    # ------------------------------------------------------------------ a single write's gate beside its embedding
    def _gated_beside_embedding(self, text: object, gate: Callable[[], T]) -> tuple[T, dict[str, np.ndarray]]:
        """A single write's gate (``gate()``, which validates and checks the text) run on a helper while this thread
        embeds ``text``; returns the gate's result and {text: vector}, which the write reuses when the gate left
        the text as it is (a masked text is embedded again). The model's run holds no GIL, so the gate runs beside
        it, and this thread never waits for the helper to start (it starts while the model runs): a remember through
        a Chroma server keeping its folder in memory, p50 of 300 rounds, 17.30 -> 16.29 ms and 16.23 -> 15.10 ms.

        Only with a model that runs in this process: the text has not passed the gate yet and must not leave the
        process (another embedding function may send it away). Otherwise, or when no helper is free, the gate runs
        here first and nothing is embedded ahead. The gate's error is raised as it is; an embedding error is left
        to the write, which embeds again (and raises it)."""
        if not isinstance(text, str) or not _runs_here(self.embedding_function):
            return gate(), {}
        future = self._helpers.submit(gate)
        if future is None:
            return gate(), {}
        try:
            vectors = {text: self.embed([text])[0]}
        except Exception:
            vectors = {}
        return future.result(), vectors

    # ------------------------------------------------------------------ a batch stored while it is embedded
    # log_many embeds a batch on a helper in the model's own batches of texts (memtend.helpers.embed_in_parts)
    # and stores each part while the next is embedded, so that only the last, small write is left when the
    # embedding ends. A change written in more than one call is journaled as any other: the journal row goes
    # in the first call; it is deleted in the background once the last call is made (see _end_journal_later).
    def _embed_parts(self, texts: Sequence[str]) -> Parts | None:
        """Start embedding a batch on a helper, part by part (None when no helper is free)."""
        return embed_in_parts(self._helpers, self.embed, list(texts), BATCH_SIZE)

    def _apply_streamed(self, change: Change, parts: Parts) -> list[ChangeEvent]:
        """``apply`` for a change of new records (``fresh``, nothing archived or deleted) whose texts ``parts`` is
        embedding: the records of each part are stored as soon as it is embedded, while the next part is (parts
        that are ready together are stored together), and the rest with the history row in a last call. All or
        nothing: when there is more than one call, the first carries the journal row. A record whose text is in
        no part (the gate changed it) is embedded for the last call; an embedding error takes back what was
        stored and is raised, as when the batch is embedded before any write."""
        self._check_open()
        if not (change.fresh and change.upserts) or change.archives or change.deletes or change.erase:
            raise InvalidInputError("a streamed change stores new records only")
        running = next((n for n, f in enumerate(parts.futures) if not f.done()), None)
        if running is not None and self._state.journal_ends:
            parts.computing[running].wait()  # an earlier batch's journal row is deleted beside this model run
        self._settle_journal_ends()
        self._finish_interrupted(change.user_id)
        jid = journal.JOURNAL_ID_PREFIX + new_id()
        sent: list[str] = []  # ids of the records sent in calls before the last (the first carried the journal)
        started = self.storage.write_calls
        marked = False
        try:
            marked = self._write_streamed(change, parts, jid, sent)
        except StorageUnavailableError as exc:
            self._interrupted(change, 0, jid if sent else None, exc, self.storage.write_calls - started)
        except Exception:  # (not a KeyboardInterrupt: that leaves the journal row to finish the batch on open)
            if sent:
                self._take_back(change.user_id, sent, jid)
            raise
        if sent:
            self._end_journal_later(change.user_id, jid)
        if not marked:
            self._mark_changed(change)
        self._usage.note(change.user_id, change.used)
        return self._emit(changes.events(change, now()))

    def _write_streamed(self, change: Change, parts: Parts, jid: str, sent: list[str]) -> bool:
        """The calls of ``_apply_streamed``; True when there was one, which carried the change mark too."""
        by_text: dict[str, list[Record]] = {}
        for r in change.upserts:
            by_text.setdefault(r.text, []).append(r)
        vectors = dict(change.vectors)
        last = len(parts.futures) - 1
        for n, (texts, future) in enumerate(zip(parts.texts, parts.futures, strict=True)):
            try:
                got = np.asarray(future.result(), dtype=np.float32)
            except Exception:
                break  # the records left are embedded for the last call, which raises if it fails again
            if len(got) != len(texts):
                break
            for text, vector in zip(texts, got, strict=True):
                for r in by_text.get(text, ()):
                    vectors[r.id] = vector
            if n == last:
                continue
            parts.computing[n + 1].wait()  # the next part's model run holds no GIL: a write now does not stall it
            if parts.futures[n + 1].done():
                continue  # the next part is ready too (its run was not announced): stored together
            done = set(sent)
            ready = tuple(r for r in change.upserts if r.id in vectors and r.id not in done)
            if not ready:
                continue
            entry = None if sent else (jid, journal.encode(change, 0))
            sent.extend(r.id for r in ready)  # before the call: a call that fails may still have been applied
            self._write(_part(change, ready, {}), np.vstack([vectors[r.id] for r in ready]), entry)
        if not sent:  # one call: the whole change, with its change mark
            whole = replace(change, vectors=vectors)
            self._write(whole, self._vectors(whole), mark=True)
            return True
        done = set(sent)
        final = _part(change, tuple(r for r in change.upserts if r.id not in done), vectors)
        self._write(final, self._vectors(final))
        return False

    def _take_back(self, user_id: str, ids: list[str], jid: str) -> None:
        """Delete what a streamed change stored before it failed, and its journal row (if this fails too, the
        journal row rolls the change forward on the next open)."""
        with self._lock:
            self.storage.delete_records(user_id, ids)
            synced = self._indexes.get(user_id)
            if synced is not None:
                synced.index.remove(ids)
            self.storage.end_journal(user_id, jid)

    def _end_journal_later(self, user_id: str, jid: str) -> None:
        """Delete the journal row of a change stored whole later: the call returns without waiting. On a store only
        this process writes, it is deleted beside the model run of the next streamed batch (a Chroma call holds the
        GIL, so beside anything else it would stall it), or before any other write, on close, or at exit; on a
        shared store, at once on a background thread. A row a crash leaves meanwhile is replayed on open, which
        writes nothing new (the same ids, added only where missing). Every later write of the store in this
        process first waits for the deletion (:meth:`_settle_journal_ends`), so nothing is written between the
        change and it."""
        with self._lock:
            future: Future[None] | None = None
            if not self._exclusive:
                if self._journal_thread is None:
                    self._journal_thread = ThreadPoolExecutor(max_workers=1, thread_name_prefix="memtend-journal")
                future = self._journal_thread.submit(self.storage.end_journal, user_id, jid)
            self._state.journal_ends.append((user_id, jid, future))

    def _settle_journal_ends(self, on_close: bool = False) -> None:
        """Delete the journal rows left to delete now (waiting for those being deleted in the background); one whose
        deletion failed is deleted again (raising StorageUnavailableError when Chroma still does not answer; logged
        on close)."""
        with self._lock:
            ends = self._state.journal_ends
            while ends:
                user_id, jid, future = ends[0]
                try:
                    if future is None:
                        self.storage.end_journal(user_id, jid)
                    else:
                        future.result()
                except Exception:
                    try:
                        self.storage.end_journal(user_id, jid)
                    except StorageUnavailableError:
                        if not on_close:
                            raise
                        _log.warning("memtend: journal row %s of a finished write is left for the next open", jid)
                ends.pop(0)

    def _write(
        self,
        change: Change,
        vectors: np.ndarray | None,
        journal_row: tuple[str, str] | None = None,
        *,
        mark: bool = False,
    ) -> None:
        """Write a change's records and history (``mark``: and, on a store other processes share, its change mark,
        in the same Chroma call: a reader sees the write and its mark together or neither)."""
        uid = change.user_id
        with self._lock:
            # stamped as they are written, so another process catching up by time cannot miss them
            stamp = now()
            history = [replace(h, at=stamp) if not h.at else h for h in change.history]  # (a fold keeps its own)
            # on a shared store, a write of new rows in one call may carry its mark in its own rows (folded)
            foldable = (
                change.fresh
                and not change.archives
                and not change.deletes
                and journal_row is None
                and len(change.upserts) + len(history) < self.storage.max_batch
            )
            note = self._mark_note(change, foldable) if mark and not self._exclusive else None
            mark_row = None if note is None or note[1] is None else self._state.marks().row(uid, *self._mark_of(note))
            # records, archives and the history row: one Chroma upsert (one transaction) when they fit in a batch
            self.storage.write_records(
                uid,
                change.upserts,
                vectors,
                history,
                archives=change.archives,
                fresh=change.fresh,
                journal=journal_row,
                known=change.stored,
                deleting=change.deletes,
                mark=mark_row,
                shared=not self._exclusive,
                fold=note is not None and mark_row is None,
            )
            if note is not None and mark_row is not None:
                self._state.clear_folds(self._state.marked(uid, note[0]))
            if change.deletes:
                self.storage.delete_records(uid, change.deletes)
            if change.deletes:  # what was deleted for good no longer speaks through the history
                self.storage.scrub_history(uid, change.deletes)
            synced = self._indexes.get(uid)
            if synced is not None:
                rows = [
                    i
                    for i, r in enumerate(change.upserts)
                    if r.status is not Status.ARCHIVED and not fact_claims.is_claim(r.id)
                ]
                if rows:
                    assert vectors is not None
                    synced.index.upsert([change.upserts[i] for i in rows], vectors[rows])
                leaving = change.leaving_index()
                if leaving:
                    synced.index.remove(leaving)
                self._index_claims(synced, change, vectors)

    @staticmethod
    def _index_claims(synced: _SyncedIndex, change: Change, vectors: np.ndarray | None) -> None:
        """The index follows what a change's fact claims made of their keys: known (``change.resolved``: the
        folder-lock holder), the new current value is indexed under the fact id with its claim's vector; else the
        key is re-read when the index is next used (one read, moved from the write to the reader)."""
        for n, record in enumerate(change.upserts):
            fid = fact_claims.key_of(record.id) if fact_claims.is_claim(record.id) else None
            if fid is None:
                continue
            if fid not in change.resolved:
                synced.stale.add(fid)
                continue
            current = change.resolved[fid]
            if current is not None:
                assert vectors is not None
                synced.index.upsert([current], vectors[n : n + 1])

    def _erase(self, change: Change) -> list[ChangeEvent]:
        uid = change.user_id
        self._settle_journal_ends()
        with self._lock:
            self._usage.drop_user(uid)  # a stamp write in flight lands first, so nothing touches the user after
            batch = getattr(self._batch, "erasing", False)  # erase_users rewrites the files once, at its end
            if not self._exclusive:  # before anything goes: a call of another process that overlaps it sees it
                self._state.marks().erasing(uid, new_id())
            counts = self.storage.erase_user(uid, purge_log=False)  # purged by _scrub_files, after the marks
            self._indexes.pop(uid, None)
            if not self._exclusive:  # after the records: a reader that sees the marks move finds them gone
                self._state.marks().erased(uid, new_id())
            self._state.forget_writes(uid)
            from memtend.session import drop_user_tallies

            drop_user_tallies(self.storage, uid)
            if not batch:
                self._scrub_files()
        return changes.events(change, now(), counts)

    def scrub_files(self) -> None:
        """Rewrite the store's files so that nothing deleted survives in them: what ``erase_user`` does after
        removing a user (Chroma's log purged, deleted vectors and unused index memory zeroed, ``chroma.sqlite3``
        rewritten). Call it after deleting records one by one (``delete``, ``purge``, ``reject``, document
        deletes) when their bytes must leave the disk now. Through a server only the log is purged: its files are
        its operator's (``memtend scrub``, README "Data safety")."""
        with self._lock:
            self.storage.purge_log(every_collection=True)
            self._scrub_files()

    def _scrub_files(self) -> None:
        """Chroma's log purged past what erasure deleted, then what the files of an embedded folder keep of it
        (a server's folder is its operator's: see README)."""
        with self._lock:
            self.storage.purge_log()
            folder = self.storage.local_folder()
            if folder is not None:
                from memtend.store_purge import scrub_files

                with self.storage.documents.lock:  # no document write saves a vector index meanwhile
                    scrub_files(folder)

    def _emit_documents_changed(
        self,
        user_id: str,
        written: Sequence[DocRow],
        deleted: Sequence[DocRow],
        masked: Mapping[str, tuple[str, ...]],
    ) -> None:
        """Tell ``on_change`` about a document write that the document store has just applied (its own one
        Chroma write; see :mod:`memtend.documents`)."""
        if self.on_change is not None:
            ids = [r.id for r in written], [r.id for r in deleted]
            self._emit(changes.document_events(user_id, *ids, masked, now()))

    def _emit(self, events: list[ChangeEvent]) -> list[ChangeEvent]:
        hook = self.on_change
        if hook is not None:
            for event in events:
                try:
                    hook(event)
                except Exception:
                    _log.exception("memtend: the on_change hook failed on a %s event", event.type.value)
        return events

    # ------------------------------------------------------------------ shared machinery
    @property
    def _exclusive(self) -> bool:
        """True when no other process can write the store: an embedded folder whose lock this process holds (its
        handles share one index cache). Its indexes need no catching up and its recall results no re-check."""
        return self._state.exclusive

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        texts = check_texts(texts)
        if not texts:
            return np.zeros((0, 0), dtype=np.float32)
        vectors = self.embedding_function(list(texts))
        return np.asarray(vectors, dtype=np.float32)

    def _user_index(self, user_id: str) -> UserIndex:
        """The user's retrieval index, loaded on first use and kept in step with other processes' writes (hold
        the memory's lock while using it).

        On a store other processes write, each call first reads the user's change marks (one small read; see
        :class:`~memtend.storage.ChangeMarks`) and, when another process's mark or the erasure mark moved since the
        index last looked, compares the index with the user's stored records (metadata only) and fetches what
        changed. Marks are compared by value, never by time: a write or erasure that returned in any process is
        seen by every recall that starts after it, whatever the processes' clocks say."""
        with self._lock:
            self._check_open()
            synced = self._indexes.get(user_id)
            if synced is None:
                marks = None if self._exclusive else self._marks_of(user_id)  # read before the records
                synced = _SyncedIndex.load(self.storage, user_id, self.retrieval, self.conflict_judge)
                synced.marks = marks
                self._indexes[user_id] = synced
                while len(self._indexes) > self._max_cached_users:
                    self._indexes.popitem(last=False)
            else:
                self._indexes.move_to_end(user_id)
                if not self._exclusive:
                    marks = self._marks_of(user_id)
                    if marks != synced.marks:
                        ids = store_state.changed_ids(synced.marks or {}, marks)
                        if ids is None:
                            synced.catch_up(self.storage)
                        else:
                            synced.refresh(self.storage, sorted(ids))
                        synced.marks = marks
            if synced.stale:
                stale = sorted(synced.stale)
                synced.stale.clear()
                synced.refresh(self.storage, stale)
            return synced.index

    def _preload_index(self, user_id: str) -> Future[UserIndex] | None:
        """Start loading the user's index in the background when it is not cached, so that a first recall reads
        storage while it embeds its query (wait on the future, then use ``_user_index``); None when cached."""
        # (no wait for the memory's lock here: a stale answer only means the caller loads or catches up itself)
        if user_id in self._indexes or self._lock._is_owned():  # type: ignore[attr-defined]
            return None  # cached; or the caller holds the lock the loader would wait for
        return self._helpers.submit(self._user_index, user_id)

    def _marks_of(self, user_id: str) -> dict[str, tuple[str, str]]:
        """The user's change marks written by other processes (with the ids their recent writes touched), and the
        erasure marks."""
        marks = self._state.others(self._state.marks().read_recent(user_id))
        marks.pop(ChangeMarks.mark_id(user_id, self._state.writer_id), None)
        return marks

    def _mark_changed(self, change: Change) -> None:
        """Tell other processes this one changed the user's records, and which (after the write, so a reader that
        sees the mark move finds the write): on its own, for a write of several calls."""
        if not self._exclusive:
            with self._lock:  # (in write order with the folded writes it lists)
                note = self._mark_note(change, foldable=False)
                self._state.marks().put(*self._state.marks().row(change.user_id, *self._mark_of(note)))
                self._state.clear_folds(self._state.marked(change.user_id, note[0]))

    def _mark_note(self, change: Change, foldable: bool) -> tuple[str, str | None]:
        """This process's change mark of the user moved for ``change``: (token, its recent writes as JSON, or None
        when the write is folded into its record rows; see :class:`~memtend.storage.ChangeMarks`)."""
        ids = [r.id for r in change.upserts] + [r.id for r in change.archives] + list(change.deletes)
        return self._state.note_write(change.user_id, ids, foldable)

    def _mark_of(self, note: tuple[str, str | None]) -> tuple[str, str, str]:
        """(writer, token, recent) of a mark row for ``note``."""
        return self._state.writer_id, note[0], note[1] or ""

    def flush_usage(self) -> None:
        """Write buffered last_used_at stamps now (a partial metadata update: it changes nothing else)."""
        self._check_open()
        self._usage.flush()

    def _settled_storage(self) -> Storage:
        """Storage, with buffered usage stamps written first so every read shows them."""
        self._check_open()
        if not self._usage.settled():
            self._usage.flush()
        return self.storage


_CLOSED_MESSAGE = "this Memory was closed; open a new Memory (or use one that is still open) to go on"


class _ClosedStorage:
    """Stands in for a closed handle's storage: any use raises MemoryClosedError (document stores, keyed
    stores and working memory reach storage through the handle, so they refuse too)."""

    def __getattr__(self, name: str) -> Any:
        raise MemoryClosedError(_CLOSED_MESSAGE)


_LOCAL_MODEL = ("chromadb.utils.embedding_functions.onnx_mini_lm_l6_v2", "ONNXMiniLM_L6_V2")


def _runs_here(embedding_function: object) -> bool:
    """Whether the embedding function is Chroma's in-process model (memtend's default is one), or built on it: a
    text it embeds stays in this process. (Told by its class, without importing Chroma here.)"""
    return any((c.__module__, c.__name__) == _LOCAL_MODEL for c in type(embedding_function).__mro__)


def _never_sent(exc: BaseException) -> bool:
    """Whether the failed call never reached the server (the connection was refused or never made)."""
    import httpx

    return isinstance(exc.__cause__, httpx.ConnectError)


def _part(change: Change, upserts: tuple[Record, ...], vectors: Mapping[str, np.ndarray]) -> Change:
    """The part of a change of new records that stores ``upserts``, with their history entries (a record keeps its
    creation entry in its own row) and those of ``vectors`` that are theirs."""
    ids = {r.id for r in upserts}
    return replace(
        change,
        upserts=upserts,
        vectors={rid: v for rid, v in vectors.items() if rid in ids},
        history=tuple(h for h in change.history if h.record_id in ids),
        used={},
    )


def _chunks(change: Change, size: int) -> Iterator[Change]:
    """A change of new records split into changes of at most ``size`` records, each with its history entries."""
    entries: dict[str, list[Any]] = {}
    for h in change.history:
        entries.setdefault(h.record_id, []).append(h)
    for start in range(0, len(change.upserts), size):
        part = change.upserts[start : start + size]
        ids = {r.id for r in part}
        yield replace(
            change,
            upserts=part,
            vectors={rid: v for rid, v in change.vectors.items() if rid in ids},
            history=tuple(h for r in part for h in entries.get(r.id, ())),
            used={},
        )


class _SyncedIndex:
    """A user's index plus the change marks it last caught up with (None on a store no other process writes)."""

    def __init__(self, user_id: str, index: UserIndex) -> None:
        self.user_id = user_id
        self.index = index
        self.marks: dict[str, tuple[str, str]] | None = None
        self.stale: set[str] = set()  # fact keys this process wrote claims of without knowing what they resolve to

    @classmethod
    def load(
        cls, storage: Storage, user_id: str, config: RetrievalConfig, judge: ConflictJudge | None = None
    ) -> _SyncedIndex:
        records, vectors = storage.get_records(
            user_id, statuses=[Status.ACTIVE, Status.PENDING_REVIEW], with_embeddings=True
        )
        index = UserIndex(config, judge)
        if records:
            assert vectors is not None
            # Neighbours in a session follow time, then the order of writing (Chroma returns rows in that order;
            # a stable sort keeps it for records that share a timestamp).
            order = sorted(range(len(records)), key=lambda i: records[i].created_at)
            index.upsert([records[i] for i in order], vectors[order])
        return cls(user_id, index)

    def catch_up(self, storage: Storage) -> None:
        """Bring the index to what storage holds now: compare the stored records' metadata with the indexed
        ones, fetch (with vectors) what is new or changed, drop what is gone or archived."""
        stored = record_stamps(storage, self.user_id)
        live = {rid: r for rid, r in stored.items() if r.status is not Status.ARCHIVED}
        gone = [rid for rid in self.index.ids() if rid not in live]
        changed = [
            rid for rid, r in live.items() if rid not in self.index or _stamp(self.index.record(rid)) != _stamp(r)
        ]
        if gone:
            self.index.remove(gone)
        self.refresh(storage, changed)

    def refresh(self, storage: Storage, changed: Sequence[str]) -> None:
        """Bring these records to what storage holds now: fetched (with vectors) when live, dropped otherwise."""
        if changed:
            records, vectors = storage.get_records(self.user_id, list(changed), with_embeddings=True)
            fresh = [i for i, r in enumerate(records) if r.status is not Status.ARCHIVED]
            if fresh:
                assert vectors is not None
                order = sorted(fresh, key=lambda i: records[i].created_at)
                self.index.upsert([records[i] for i in order], vectors[order])
            missing = set(changed) - {records[i].id for i in fresh}
            if missing:  # archived or deleted between the two reads
                self.index.remove([rid for rid in missing if rid in self.index])


def _stamp(record: Record) -> tuple[Any, ...]:
    """What tells two versions of a record apart (everything but the text, vector and last-used time: a write that
    changes the text also moves updated_at)."""
    return (
        record.status,
        round(record.updated_at, 3),  # Chroma may round a float's last digit
        record.source,
        record.superseded_by,
        record.value,
        record.flagged,
        record.kind,
        record.session,
        record.expires_at,
        tuple(record.derived_from),
        sorted(record.extra.items()),
    )
