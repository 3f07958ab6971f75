"""Memory: the store's lifecycle, its users, erasure, the per-user index cache, and ``apply``, the one function
that performs every change to stored data.

What a change is, is decided by pure planners (:mod:`memtend.policies.changes`); the per-user facade
(:mod:`memtend.user_memory`) validates a call, plans its change and hands it here.
"""

from __future__ import annotations

import atexit
import contextlib
import json
import logging
import os
import re
import threading
import weakref
from collections.abc import Iterable, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from typing import TYPE_CHECKING, Any, TypeVar

import numpy as np

from memtend.aio import no_io, run_io
from memtend.arguments import check_injection_check, check_retention, check_retrieval, describe
from memtend.capture.extractor import check_extractor
from memtend.documents.values import MAX_VALUE_BYTES, check_value_limit
from memtend.errors import InvalidInputError, MemoryClosedError
from memtend.extras import AUTO, Auto, resolve
from memtend.helpers import Helpers
from memtend.identity import SHARED_OWNER
from memtend.index.synced import SyncedIndex
from memtend.index.user_index import UserIndex
from memtend.metrics import tally as metrics_tally
from memtend.policies import forgetting
from memtend.policies.changes import Change
from memtend.policies.conflicts import ConflictJudge, check_judge
from memtend.policies.gate import InjectionCheck
from memtend.policies.proposals import WriteMode, check_write_mode
from memtend.policies.retrieval import RetrievalConfig
from memtend.records import check_time, check_user_id
from memtend.results import ChangeEvent, CompactionReport, ErasureReceipt, Event, FactResult, ForgetReport, Hit
from memtend.storage import files as store_files
from memtend.storage import locking
from memtend.storage import state as store_state
from memtend.storage.chroma import persistent_client
from memtend.storage.marks import ChangeMarks
from memtend.storage.store import Storage
from memtend.upkeep.schedule import Upkeep, UpkeepReport, UpkeepRunner, from_environment
from memtend.user_memory import UserMemory
from memtend.writing.apply import CLOSED_MESSAGE, Applier, ChangeHook
from memtend.writing.usage import UsageWriter

# what callers imported from here before the results moved to memtend.results
if TYPE_CHECKING:
    from memtend.documents.store import DocumentStore, GateMode, Namespace

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

T = TypeVar("T")


@atexit.register
def _flush_open_memories() -> None:
    for memory in list(_open_memories):
        with contextlib.suppress(Exception):  # the store may already be gone at exit
            memory._settle_journal_ends(on_close=True)
            memory.flush_usage()
            metrics_tally.flush_store(memory)


class Memory(Applier):
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

    ``write_mode``: ``"direct"`` stores what the agent or an extractor remembers at once; ``"propose"`` stores it
    as a proposal that nothing recalls or shows until it is accepted (``UserMemory.proposals``, ``accept``, ``reject``).

    ``extractor``: what ``capture`` asks which parts of a turn are worth keeping (``memtend.llm_extractor(model)``;
    None: the offline rules of :mod:`memtend.policies.capture`).

    ``injection_check``: the second opinion on external text the injection patterns pass (its ``flagged`` bit):
    ``AUTO`` uses the installed ``memtend-injection`` extra (``pip install memtend[injection]``) if there is one,
    ``None`` the patterns alone, a callable (:class:`~memtend.policies.gate.InjectionCheck`) replaces it.

    ``upkeep``: retention, log compaction, purge after grace and document expiry, run store-wide by this handle on a
    schedule and on close, bounded per pass (:class:`~memtend.upkeep.schedule.Upkeep`); ``AUTO`` is ``Upkeep()``
    unless ``MEMTEND_UPKEEP=off``, ``None`` runs nothing by itself (``upkeep()`` still runs a pass by hand).

    ``max_document_bytes``: the largest value the document store takes (checkpoints, store items, chat messages;
    64 MB by default), larger ones raise ``DocumentTooLargeError``.

    ``defer_writes`` (experimental, off by default: a LangGraph test run with it on stalled, not yet diagnosed): on an
    embedded folder, a document store write (checkpoints, store items, chat messages)
    returns once it is in the folder's pending log, ``fsync``'d, and a background thread moves such writes into
    Chroma in batches (:mod:`memtend.storage.write_behind`); False writes each straight to Chroma. The first handle
    on a folder in a process decides.
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
        injection_check: InjectionCheck | Auto | None = AUTO,
        write_mode: WriteMode = "direct",
        extractor: Any = None,
        upkeep: Upkeep | Auto | None = AUTO,
        max_document_bytes: int = MAX_VALUE_BYTES,
        defer_writes: bool = False,
    ) -> None:
        if not isinstance(defer_writes, bool):
            raise InvalidInputError(f"defer_writes must be True or False, got {describe(defer_writes)}")
        _check_options(
            client=client,
            embedding_function=embedding_function,
            retention=retention,
            retrieval=retrieval,
            collection_prefix=collection_prefix,
            max_cached_users=max_cached_users,
            on_change=on_change,
        )
        self.max_document_bytes = check_value_limit(max_document_bytes)  # a document store value's limit
        self.write_mode: WriteMode = check_write_mode(write_mode)
        self.conflict_judge = check_judge(resolve("conflict_judge", conflict_judge))
        self.injection_check: InjectionCheck | None = resolve("injection_check", check_injection_check(injection_check))
        self.extractor = check_extractor(extractor)  # what capture asks (None: the offline rules; memtend.capture)
        if upkeep is not AUTO and upkeep is not None and not isinstance(upkeep, Upkeep):
            raise InvalidInputError(f"upkeep must be an Upkeep, AUTO or None, got {describe(upkeep)}")
        settings = from_environment(Upkeep()) if upkeep is AUTO else upkeep
        self.line_summarizer = settings.line_summarizer if settings is not None else None
        if client is not None and path is not None:
            raise InvalidInputError("pass either path or client, not both")
        if embedding_function is None:
            from memtend.storage.embeddings import default_embedding_function

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
                if lock is not None and defer_writes:  # only this process reads the folder: it answers for the log
                    storage.documents.defer_writes(lock.folder)
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
        self.storage.documents.prefixes.enabled = self._state.exclusive  # and which prefixes hold what
        self.storage.documents.rows.enabled = self._state.exclusive  # and the document rows it wrote or read
        self.storage.documents.exclusive = self._state.exclusive  # and no other process writes under a prefix
        self.lock = self._state.lock
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
        self._upkeep = UpkeepRunner(self, settings or Upkeep(every_seconds=None, on_close=False), self._sweep_some)
        self._upkeep.start()

    @property
    def _max_cached_users(self) -> int:
        return self._state.max_cached_users

    # ------------------------------------------------------------------ users
    @no_io
    def user(self, user_id: str, *, write_mode: WriteMode | None = None, operator: bool = False) -> UserMemory:
        """The handle through which every call is scoped to one user; ``write_mode``: this handle's, instead of the
        store's (an adapter's option: ``"propose"`` where its agent's writes wait for a person). ``operator``: a
        person looking after the memory (the inspector, the CLI): its reads leave the user's call log, metrics and
        usage stamps as they were, its changes are logged as an operator's (see :mod:`memtend.metrics.tally`)."""
        mode = None if write_mode is None else check_write_mode(write_mode)
        if not isinstance(operator, bool):
            raise InvalidInputError(f"operator must be True or False, got {describe(operator)}")
        return UserMemory(self, check_user_id(user_id), write_mode=mode, operator=operator)

    def erase_user(self, user_id: str) -> ErasureReceipt:
        """Remove the user from every collection (memories, archive, summaries, history, session state, ledger,
        everything adapters keep, and first what they keep elsewhere: see :mod:`memtend.documents.external`) and
        return a receipt with counts.

        On an embedded store no file in the folder keeps a byte of the user afterwards (Chroma's log purged, its
        vector index files and ``chroma.sqlite3`` rewritten: see :mod:`memtend.storage.purge`); a server's folder
        needs its operator to run ``memtend scrub`` on it (README, "Data safety")."""
        from memtend.documents.external import erase_external

        user_id = check_user_id(user_id)
        elsewhere = erase_external(self, user_id)  # first: the index of what adapters keep elsewhere is memtend's
        events = self.apply(Change(user_id, erase=True))
        shared = () if user_id == SHARED_OWNER else self.shared_namespaces()
        counts = {**dict(events[0].counts or {}), **{f"external:{name}": n for name, n in elsewhere.items()}}
        return ErasureReceipt(user_id=user_id, counts=counts, at=events[0].at, shared=shared)

    def shared_namespaces(self) -> tuple[tuple[str, ...], ...]:
        """The namespaces (two labels deep) of documents kept for no one user: what adapters were told is shared
        (``MemtendStore(shared_namespaces=...)``). An export and an erasure receipt name them."""
        from memtend.documents.store import shared_namespaces

        return shared_namespaces(self)

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

    def metrics(self) -> dict[str, Any]:
        """The memory metrics store-wide (``store``: every user's counts added up) and per user (``users``), as
        ``memtend stats --json`` prints them (see :mod:`memtend.metrics.report`; per session: ``user(u).metrics()``)."""
        from memtend.metrics.report import store_metrics

        return store_metrics(self, self.users())

    @property
    def store_id(self) -> str:
        """Text naming the store this Memory reaches (its folder, its server and database, or an in-process client
        of this process), the same for every handle on that store: an object restored from a serialised form
        finds the store it was built with again through :meth:`open_on`, never another one."""
        kind, *parts = self._state.key
        if kind == "client":  # an in-process client is this process's only
            parts = [os.getpid(), *parts]
        return json.dumps([kind, *parts])

    @staticmethod
    @no_io
    def open_on(store_id: str) -> Memory | None:
        """An open Memory of this process on the store ``store_id`` names (see :attr:`store_id`), or None."""
        for memory in list(_open_memories):
            if not memory._closed and memory.store_id == store_id:
                return memory
        return None

    @no_io
    def documents(
        self, user_id: str, *, gate: GateMode = "text", redact: bool = False, surface: str | None = None
    ) -> DocumentStore:
        """One user's document store (see :mod:`memtend.documents.store`); no I/O on creation. ``surface``: the
        adapter surface its refusals name (see :mod:`memtend.surfaces`)."""
        from memtend.documents.store import DocumentStore

        if surface is not None:
            from memtend.surfaces import SurfaceDocuments

            return SurfaceDocuments(self, check_user_id(user_id), gate=gate, redact=redact, surface=surface)
        return DocumentStore(self, check_user_id(user_id), gate=gate, redact=redact)

    def document_owners(self, namespace_prefix: Namespace) -> list[str]:
        """Ids of the users holding a document under the prefix (an admin lookup across users; never values)."""
        from memtend.documents.store import document_owners

        return document_owners(self, namespace_prefix)

    def sweep_documents(self, now: float | None = None) -> int:
        """Delete every user's expired documents; returns how many (a TTL sweeper calls this)."""
        from memtend.documents.store import sweep_documents

        return sweep_documents(self, now)

    def upkeep(self, now: float | None = None) -> UpkeepReport:
        """Run one bounded upkeep pass over the store now (at time ``now``, default the upkeep clock): retention and
        the fold of scoped memories, log compaction, purge after grace, history pruning, document expiry. Skipped
        (``ran=False``) while another process's pass holds the store."""
        self._check_open()
        return self._upkeep.run(None if now is None else check_time(now, "now"))

    def _sweep_some(self, t: float, limit: int) -> int:
        """Delete up to ``limit`` expired documents of any user, then the prefix rows of up to ``limit`` prefixes
        left holding no document (an upkeep pass's share); returns how many documents went."""
        rows = self.storage.documents
        gone = rows.remove(rows.expired(None, t, limit), t, tidy=True)
        rows.tidy_prefixes(t, limit)
        return gone

    def close(self) -> None:
        """Flush buffered usage stamps and close this handle: every later call through it (or through a handle
        obtained from it) raises :class:`~memtend.errors.MemoryClosedError`. Other handles on the same store stay
        open; the store's shared state (and an embedded folder's lock) goes with the last of them. With upkeep on,
        a last pass runs first."""
        if not self._closed:
            from memtend.documents.external import flush_external

            try:
                flush_external(self)  # what adapters write to this Memory in the background, while it is open
            except Exception:
                _log.warning("memtend: an adapter's pending writes failed on close", exc_info=True)
            self._upkeep.stop()
            if self._upkeep.settings.on_close:
                try:
                    self._upkeep.run()
                except Exception:  # closing goes on: the next open's passes catch up
                    _log.warning("memtend: the upkeep pass on close failed", exc_info=True)
            metrics_tally.flush_store(
                self
            )  # the metrics' unwritten notes, before the lock (a flush never runs under it)
        with self.lock:
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
                    state.storage.documents.stop_deferring()
                    if state.folder_lock is not None:
                        state.folder_lock.release()
                        state.folder_lock = None

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

    async def ashared_namespaces(self) -> tuple[tuple[str, ...], ...]:
        return await run_io(self.shared_namespaces)

    async def ausers(self) -> list[str]:
        return await run_io(self.users)

    async def ametrics(self) -> dict[str, Any]:
        return await run_io(self.metrics)

    async def adocument_owners(self, namespace_prefix: Namespace) -> list[str]:
        return await run_io(self.document_owners, namespace_prefix)

    async def asweep_documents(self, now: float | None = None) -> int:
        return await run_io(self.sweep_documents, now)

    async def aupkeep(self, now: float | None = None) -> UpkeepReport:
        return await run_io(self.upkeep, now)

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

    def scrub_files(self) -> None:
        """Rewrite the store's files so that nothing deleted survives in them: what ``erase_user`` does after
        removing a user (Chroma's log purged, deleted vectors and unused index memory zeroed, ``chroma.sqlite3``
        rewritten). Call it after deleting records one by one (``delete``, ``purge``, ``reject``, document
        deletes) when their bytes must leave the disk now. Through a server only the log is purged: its files are
        its operator's (``memtend scrub``, README "Data safety")."""
        with self.lock:
            self.storage.purge_log(every_collection=True)
            self._scrub_files()

    # ------------------------------------------------------------------ shared machinery

    def user_index(self, user_id: str) -> UserIndex:
        """The user's retrieval index, loaded on first use and kept in step with other processes' writes (hold
        the memory's lock while using it).

        On a store other processes write, each call first reads the user's change marks (one small read; see
        :class:`~memtend.storage.marks.ChangeMarks`) and, when another process's mark or the erasure mark moved since
        the index last looked, compares the index with the user's stored records (metadata only) and fetches what
        changed. Marks are compared by value, never by time: a write or erasure that returned in any process is
        seen by every recall that starts after it, whatever the processes' clocks say."""
        with self.lock:
            self._check_open()
            synced = self._indexes.get(user_id)
            if synced is None:
                marks = None if self.exclusive else self._marks_of(user_id)  # read before the records
                synced = SyncedIndex.load(self.storage, user_id, self.retrieval, self.conflict_judge)
                synced.marks = marks
                self._indexes[user_id] = synced
                while len(self._indexes) > self._max_cached_users:
                    self._indexes.popitem(last=False)
            else:
                self._indexes.move_to_end(user_id)
                if not self.exclusive:
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

    def forget_index(self, user_id: str) -> None:
        """Drop the user's cached index: it is loaded from storage again on next use."""
        with self.lock:
            self._indexes.pop(user_id, None)

    def mark_stale(self, user_id: str, fact_ids: Sequence[str]) -> None:
        """These fact keys are read again from storage when the user's cached index is next used."""
        with self.lock:
            synced = self._indexes.get(user_id)
            if synced is not None:
                synced.stale.update(fact_ids)

    def preload_index(self, user_id: str) -> Future[UserIndex] | None:
        """Start loading the user's index in the background when it is not cached, so that a first recall reads
        storage while it embeds its query (wait on the future, then use ``user_index``); None when cached."""
        # (no wait for the memory's lock here: a stale answer only means the caller loads or catches up itself)
        if user_id in self._indexes or self.lock._is_owned():  # type: ignore[attr-defined]
            return None  # cached; or the caller holds the lock the loader would wait for
        return self._helpers.submit(self.user_index, user_id)

    def _marks_of(self, user_id: str) -> dict[str, tuple[str, str]]:
        """The user's change marks written by other processes (with the ids their recent writes touched), and the
        erasure marks."""
        marks = self._state.others(self._state.marks().read_recent(user_id))
        marks.pop(ChangeMarks.mark_id(user_id, self._state.writer_id), None)
        return marks

    def flush_usage(self) -> None:
        """Write buffered last_used_at stamps now (a partial metadata update: it changes nothing else)."""
        self._check_open()
        self._usage.flush()

    def usage_stamps(self, user_id: str) -> dict[str, float]:
        """This process's last-used stamps of the user not yet known to be in Chroma (record id -> time): a read
        that shows ``last_used_at`` takes them first, then lays them over what it read, instead of writing them."""
        self._check_open()
        return self._usage.stamps(user_id)

    def settled_storage(self) -> Storage:
        """Storage, with buffered usage stamps written first so every read shows them."""
        self._check_open()
        if not self._usage.settled():
            self._usage.flush()
        return self.storage


class _ClosedStorage:
    """Stands in for a closed handle's storage: any use raises MemoryClosedError (document stores, keyed
    stores and working memory reach storage through the handle, so they refuse too)."""

    def __getattr__(self, name: str) -> Any:
        raise MemoryClosedError(CLOSED_MESSAGE)


_PREFIX = re.compile(r"[A-Za-z0-9](?:[A-Za-z0-9_-]|\.(?!\.)){0,62}")


def _check_options(
    *,
    client: object,
    embedding_function: object,
    retention: object,
    retrieval: object,
    collection_prefix: object,
    max_cached_users: object,
    on_change: object,
) -> None:
    """The arguments of ``Memory(...)`` other than the path, checked before anything is opened."""
    if on_change is not None and not callable(on_change):
        raise InvalidInputError(f"on_change must be a callable taking a ChangeEvent, got {describe(on_change)}")
    if client is not None and not callable(getattr(client, "get_or_create_collection", None)):
        raise InvalidInputError(
            "client must be a Chroma client (chromadb.EphemeralClient(), PersistentClient(path) or "
            f"HttpClient(host, port)), got {describe(client)}"
        )
    if embedding_function is not None and not callable(embedding_function):
        raise InvalidInputError(
            f"embedding_function must be a Chroma embedding function (callable on a list of str), got "
            f"{describe(embedding_function)}"
        )
    if retention is not None:
        if not isinstance(retention, forgetting.RetentionPolicy):
            raise InvalidInputError(f"retention must be a RetentionPolicy, got {describe(retention)}")
        check_retention(retention)
    if retrieval is not None:
        if not isinstance(retrieval, RetrievalConfig):
            raise InvalidInputError(f"retrieval must be a RetrievalConfig, got {describe(retrieval)}")
        check_retrieval(retrieval)
    if not isinstance(collection_prefix, str) or not _PREFIX.fullmatch(collection_prefix):
        raise InvalidInputError(
            "collection_prefix must be 1 to 63 characters of letters, digits, '.', '_' or '-', starting with a "
            f"letter or digit (Chroma's collection names), got {describe(collection_prefix)}"
        )
    if not isinstance(max_cached_users, int) or isinstance(max_cached_users, bool) or max_cached_users < 1:
        raise InvalidInputError(f"max_cached_users must be an int >= 1, got {describe(max_cached_users)}")
