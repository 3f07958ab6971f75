"""``MemtendSaver``: LangGraph's checkpointer, keeping each thread's checkpoints among its user's memtend documents."""

from __future__ import annotations

import asyncio
import builtins
import random
import sys
import threading
import zlib
from collections.abc import AsyncIterator, Iterator, Mapping, Sequence
from types import TracebackType
from typing import TYPE_CHECKING, Any

from langchain_core.runnables import RunnableConfig
from langgraph.checkpoint.base import (
    WRITES_IDX_MAP,
    BaseCheckpointSaver,
    ChannelVersions,
    Checkpoint,
    CheckpointMetadata,
    CheckpointTuple,
    SerializerProtocol,
    get_checkpoint_id,
    get_checkpoint_metadata,
)
from memtend.documents import add_export_reader
from memtend.errors import InvalidInputError, UserMismatchError, UserNotFoundError
from memtend.identity import Place, user_in_places
from memtend.records import check_user_id
from memtend.surfaces import REDACT_DEFAULT, check_redact

from memtend_langgraph.ids import thread_label
from memtend_langgraph.opening import Opening, split_options
from memtend_langgraph.saver_codec import (
    CHECKPOINTS,
    LATEST,
    RUNS,
    WRITES,
    Latest,
    StoredCheckpoint,
    StoredWrite,
    checkpoint_ns_of,
    checkpoints_ns,
    latest_ns,
    ns_label,
    runs_ns,
    write_key,
    writes_ns,
)
from memtend_langgraph.saver_readable import ROOTS as READABLE_ROOTS
from memtend_langgraph.saver_readable import ReadableCheckpoints
from memtend_langgraph.saver_text import SURFACE, masked
from memtend_langgraph.state_reads import state_read_user
from memtend_langgraph.users import ConfigUser, current_config, run_places, runtime_of

if TYPE_CHECKING:
    from memtend import Memory
    from memtend.documents import Document, DocumentStore

PAGE = 200  # checkpoints read per round trip while listing
WRITES_PAGE = 1000  # pending writes read per round trip
LOCK_STRIPES = 64  # puts to one thread compare-and-set its latest pointer under one of these locks
PREFETCH_WRITES = 32  # a listing of at least this many checkpoints reads all their writes in one pass
SETUP_PROBE_USER = "memtend-setup-probe"  # setup() reads (never writes) one document of this user
WHO = "MemtendSaver"
CONFIG_FIX = (
    "invoke the graph with context={'user_id': ...} or config={'configurable': {'thread_id': ..., 'user_id': ...}}, "
    "or give MemtendSaver(user_resolver=...) or MemtendSaver(default_user=...)"
)
STATE_FIX = (  # graph.get_state and the like run outside a graph run: there is no context= to pass
    "outside a graph run (graph.get_state, get_state_history, update_state take no context=) name the user in the "
    "config: {'configurable': {'thread_id': ..., 'user_id': ...}}, or give MemtendSaver(user_resolver=...) or "
    "MemtendSaver(default_user=...)"
)
THREAD_FIX = (
    "call it on saver.for_user(user_id), give MemtendSaver(user_resolver=...) or default_user=..., or open a "
    "saver with admin=True for a sweep across users"
)
LIST_FIX = (
    "pass config={'configurable': {'user_id': ...}} (with a thread_id for one thread), call it on "
    "saver.for_user(user_id), or open MemtendSaver(..., admin=True) to list every user's checkpoints"
)


class MemtendSaver(BaseCheckpointSaver[str]):
    """Checkpoints of LangGraph threads, stored in memtend under the thread's user.

    The user of a call is read by memtend's one identity rule (:mod:`memtend.identity`) from the run first: the
    ``context=`` the graph was invoked with (field ``context_field``, an attribute or a key), then
    ``configurable.user_id``, then ``user_resolver(config)`` and the user of a ``for_user`` view; places that name
    different users refuse the call (``UserMismatchError``); with none, ``default_user``, else
    ``UserNotFoundError``. So ``Memory.erase_user`` removes a user's threads and ``export()`` lists them. Outside a
    run (``graph.get_state``), name the user in ``configurable.user_id``; a subgraph's state read by
    ``get_state(config, subgraphs=True)`` is that call's user's (LangGraph's config for it names no one: see
    :mod:`memtend_langgraph.state_reads`).

    Thread-level calls (``delete_thread``, ``copy_thread``, ``prune``, ``delete_for_runs``, and ``list`` with no
    thread) reach one user's threads only: the user of the run they are called from, ``user_resolver`` for the
    thread, a ``for_user(user_id)`` view or ``default_user``; naming none is refused. A saver-wide view
    (``list(None)`` over every user, an operator's sweep) exists only on a saver opened with ``admin=True``.
    Checkpoints are the serializer's bytes; before serializing, the text in their channel values and pending
    writes passes memtend's rule for secrets (see docs/secrets.md): masked by default (``redact=True``: a
    checkpoint is written after every step, where a run cannot stop), refused with ``redact=False`` before
    anything of the call is written. The saver registers a reader with its Memory, so ``user.export()`` also
    shows each checkpoint's messages decoded (see :mod:`memtend_langgraph.saver_readable`). Thread-safe: it keeps
    no state of its own, and the async methods run the same code off the event loop.

    ``MemtendSaver(memory, checkpoints=SqliteSaver(conn))`` (any LangGraph saver: ``AsyncSqliteSaver``,
    ``PostgresSaver``, ``InMemorySaver``) keeps the checkpoints in that saver and only the thread-to-user registry
    in memtend, so a step costs what it costs there (see :mod:`memtend_langgraph.saver_delegated`).

    ``MemtendSaver.from_conn_string(folder_or_url)`` opens its own Memory under ``with`` or ``async with`` (as
    ``SqliteSaver.from_conn_string`` does); ``setup()`` checks the store answers; ``close()`` closes a Memory the
    saver opened, and the saver is a context manager itself.
    """

    def __new__(cls, *args: Any, checkpoints: BaseCheckpointSaver[Any] | None = None, **kwargs: Any) -> MemtendSaver:
        """``checkpoints=`` (a LangGraph saver) makes a delegated saver
        (:class:`~memtend_langgraph.saver_delegated.DelegatedSaver`): the bytes in that saver, the registry here."""
        target: type[MemtendSaver] = cls
        if checkpoints is not None and cls is MemtendSaver:
            from memtend_langgraph.saver_delegated import DelegatedSaver

            target = DelegatedSaver
        return super().__new__(target)

    def __init__(
        self,
        memory: Memory,
        *,
        checkpoints: BaseCheckpointSaver[Any] | None = None,
        user_resolver: ConfigUser | None = None,
        default_user: str | None = None,
        context_field: str = "user_id",
        admin: bool = False,
        serde: SerializerProtocol | None = None,
        redact: bool = REDACT_DEFAULT,
    ) -> None:
        super().__init__(serde=serde)
        if checkpoints is not None:  # MemtendSaver(...) itself made a DelegatedSaver; a subclass keeps Chroma's
            raise InvalidInputError("checkpoints= is taken by MemtendSaver itself, not by a subclass of it")
        if not isinstance(context_field, str) or not context_field:
            raise InvalidInputError("context_field names the field of the run's context holding the user id")
        self.memory = memory
        self.redact = check_redact(redact, SURFACE)
        self.user_resolver = user_resolver
        self.default_user = None if default_user is None else check_user_id(default_user)
        self.context_field = context_field
        self.admin = bool(admin)
        self._bound: str | None = None
        self._locks = [threading.Lock() for _ in range(LOCK_STRIPES)]
        self._owns_memory = False  # from_conn_string opened the Memory, so close() closes it
        reader = ReadableCheckpoints(self.serde)
        for root in READABLE_ROOTS:  # export() shows each checkpoint's messages beside its bytes
            add_export_reader(memory, root, reader)

    # ------------------------------------------------------------------ lifecycle
    @classmethod
    def from_conn_string(cls, conn_string: str | None = None, **options: Any) -> Opening[MemtendSaver]:
        """A saver on its own Memory, for ``with`` and ``async with``: ``conn_string`` is a folder (embedded
        Chroma, one process) or a server URL (``http://127.0.0.1:8000``, many processes); None reads
        ``MEMTEND_URL`` / ``MEMTEND_PATH`` (:func:`memtend.open_memory`). ``options`` go to the saver
        (``user_resolver``, ``default_user``, ``admin``, ``serde``) or else to the Memory (``embedding_function``,
        ``collection_prefix``, ...). Leaving the block closes the Memory (and releases a folder's lock)."""
        return Opening(lambda: cls._opened(conn_string, options))

    @classmethod
    def _opened(cls, conn_string: str | None, options: dict[str, Any]) -> MemtendSaver:
        from memtend import open_memory

        own, memory_options = split_options(cls, options)
        memory = open_memory(conn_string, **memory_options)
        try:
            saver = cls(memory, **own)
        except BaseException:
            memory.close()
            raise
        saver._owns_memory = True
        return saver

    def setup(self) -> None:
        """Nothing to create (memtend makes its collections when the Memory opens): reads one document to check
        the store answers, so a closed Memory or a server that is down fails here, not in the first run."""
        self._documents(SETUP_PROBE_USER).get(latest_ns(SETUP_PROBE_USER), "probe")

    async def asetup(self) -> None:
        await asyncio.to_thread(self.setup)

    def close(self) -> None:
        """Close the Memory if this saver opened it (``from_conn_string``); a Memory passed in stays the caller's."""
        if self._owns_memory:
            self.memory.close()

    async def aclose(self) -> None:
        if self._owns_memory:
            await self.memory.aclose()

    def __enter__(self) -> MemtendSaver:
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.close()

    async def __aenter__(self) -> MemtendSaver:
        return self

    async def __aexit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        await self.aclose()

    def for_user(self, user_id: str) -> MemtendSaver:
        """A view of this saver for one user: every call is that user's (a config naming another is refused), so
        ``saver.for_user("alice").delete_thread("1")`` deletes alice's thread "1" and no one else's."""
        view = MemtendSaver(
            self.memory, user_resolver=self.user_resolver, context_field=self.context_field, serde=self.serde
        )
        view._bound = check_user_id(user_id)
        view._locks = self._locks  # puts to one thread through either object are ordered by the same locks
        return view

    # ------------------------------------------------------------------ helpers
    def _places(self, config: RunnableConfig | Mapping[str, Any] | None) -> builtins.list[Place]:
        places = run_places(config, self.context_field)
        if self.user_resolver is not None and config is not None:
            places.append(("the saver's user_resolver", self.user_resolver(config)))
        if self._bound is not None:
            places.append(("the saver's for_user view", self._bound))
        return places

    def _user_or_none(self, config: RunnableConfig | Mapping[str, Any] | None) -> str | None:
        return user_in_places(self._places(config), who=WHO) or self.default_user

    def _user(self, config: RunnableConfig) -> str:
        user = self._user_or_none(config)
        if user is not None:
            return user
        owners = self._subgraph_owners(config)
        if len(owners) == 1:
            return owners[0]
        raise no_user_error(config)

    def _subgraph_owners(self, config: RunnableConfig) -> builtins.list[str]:
        """Who holds a subgraph's checkpoints read by ``get_state(..., subgraphs=True)``: LangGraph builds that
        config from the thread and the subgraph's namespace only. The namespace holds the ids of the tasks that
        ran the subgraph, which no other thread has, so the one user holding checkpoints there is its owner."""
        configurable = config.get("configurable") or {}
        checkpoint_ns = configurable.get("checkpoint_ns") or ""
        thread_id = configurable.get("thread_id")
        if thread_id is None or not _has_task_ids(checkpoint_ns):
            return []
        return self.memory.document_owners(checkpoints_ns(str(thread_id), checkpoint_ns))

    def _documents(self, user: str) -> DocumentStore:
        return self.memory.documents(user, gate="off", surface=SURFACE)

    def _scope_user(self) -> str | None:
        """The user a call naming no config is for: the run it is called from, the view's user, the default."""
        places = run_places(current_config(), self.context_field)
        if self._bound is not None:
            places.append(("the saver's for_user view", self._bound))
        return user_in_places(places, who=WHO) or self.default_user

    def _thread_user(self, thread_id: str) -> str | None:
        """The user a thread-only call (delete, copy, prune) is for, or None when nothing names one."""
        config: dict[str, Any] = {"configurable": {"thread_id": thread_id}}
        places = run_places(current_config(), self.context_field)
        if self.user_resolver is not None:
            places.append(("the saver's user_resolver", self.user_resolver(config)))
        if self._bound is not None:
            places.append(("the saver's for_user view", self._bound))
        return user_in_places(places, who=WHO) or self.default_user

    def _thread_owners(self, thread_id: str, what: str) -> builtins.list[str]:
        """Whose thread a thread-only call reaches: its one user, or (an admin saver only) every user holding a
        thread of that id."""
        user = self._thread_user(thread_id)
        if user is not None:
            return [user]
        if not self.admin:
            raise UserNotFoundError(f"{WHO}.{what} names only a thread, and no user; {THREAD_FIX}")
        owners = set(self.memory.document_owners(checkpoints_ns(thread_id)))
        owners.update(self.memory.document_owners(writes_ns(thread_id)))
        return sorted(owners)

    def _pending_writes(self, docs: DocumentStore, namespace: tuple[str, ...]) -> list[tuple[str, str, Any]]:
        stored: list[StoredWrite] = []
        offset = 0
        while True:
            page = docs.search(namespace, limit=WRITES_PAGE, offset=offset)
            stored.extend(StoredWrite.decode(doc.value) for doc in page)
            if len(page) < WRITES_PAGE:
                break
            offset += WRITES_PAGE
        stored.sort(key=StoredWrite.sort_key)
        return [(w.task_id, w.channel, self.serde.loads_typed(w.value)) for w in stored]

    def _tuple(self, doc: Document, writes: list[tuple[str, str, Any]], user_id: Any = None) -> CheckpointTuple:
        _, thread_id, label = doc.namespace
        checkpoint_ns = checkpoint_ns_of(label)
        stored = StoredCheckpoint.decode(doc.value)
        parent = stored.parent_id
        return CheckpointTuple(
            config=_config(thread_id, checkpoint_ns, doc.key, user_id),
            checkpoint=self.serde.loads_typed(stored.checkpoint),
            metadata=self.serde.loads_typed(stored.metadata),
            parent_config=_config(thread_id, checkpoint_ns, parent, user_id) if parent else None,
            pending_writes=writes,
        )

    # ------------------------------------------------------------------ the base five
    def _read_user(self, config: RunnableConfig) -> str | None:
        """The user of a checkpoint read from the identity rule, or (a subgraph's state LangGraph reads right after
        its parent's, its config naming no one) the user of that parent read: see :mod:`.state_reads`."""
        caller = sys._getframe(2)  # who called get_tuple / aget_tuple (LangGraph's get_state, or a subgraph's)
        return state_read_user(self.memory, config, self._user_or_none(config), caller)

    def get_tuple(self, config: RunnableConfig) -> CheckpointTuple | None:
        return self._get_tuple_as(config, self._read_user(config))

    def _get_tuple_as(self, config: RunnableConfig, user: str | None) -> CheckpointTuple | None:
        configurable = config["configurable"]
        thread_id = thread_label(configurable.get("thread_id"))
        checkpoint_ns = configurable.get("checkpoint_ns", "")
        if user is None:
            owners = self._subgraph_owners(config)
            if not owners and _has_task_ids(checkpoint_ns):
                return None  # a subgraph's state asked for before the subgraph ran: no one holds checkpoints there
            if len(owners) != 1:
                raise no_user_error(config)
            user = owners[0]
        docs = self._documents(user)
        if checkpoint_id := get_checkpoint_id(config):
            doc = docs.get(checkpoints_ns(thread_id, checkpoint_ns), checkpoint_id)
        else:
            doc = self._latest(docs, thread_id, checkpoint_ns)
        if doc is None:
            return None
        writes = self._pending_writes(docs, writes_ns(thread_id, checkpoint_ns, doc.key))
        return self._tuple(doc, writes, configurable.get("user_id"))

    def _latest(self, docs: DocumentStore, thread_id: str, checkpoint_ns: str) -> Document | None:
        pointer = self._pointer(docs, thread_id, checkpoint_ns)
        if pointer is not None:
            doc = docs.get(checkpoints_ns(thread_id, checkpoint_ns), pointer.checkpoint_id)
            if doc is not None:
                return doc
        newest = docs.search(checkpoints_ns(thread_id, checkpoint_ns), order="key", descending=True, limit=1)
        return newest[0] if newest else None

    def _pointer(self, docs: DocumentStore, thread_id: str, checkpoint_ns: str) -> Latest | None:
        found = docs.get(latest_ns(thread_id), ns_label(checkpoint_ns))
        return None if found is None else Latest.decode(found.value)

    def list(
        self,
        config: RunnableConfig | None,
        *,
        filter: dict[str, Any] | None = None,
        before: RunnableConfig | None = None,
        limit: int | None = None,
    ) -> Iterator[CheckpointTuple]:
        before_id = get_checkpoint_id(before) if before else None
        remaining = limit
        user_id = ((config or {}).get("configurable") or {}).get("user_id")
        # a short listing reads a short first page; a long one reads all the scope's writes in one pass
        first_page = PAGE if limit is None or filter or before_id else max(1, min(limit, PAGE))
        for user, prefix, only_id in self._list_scopes(config):
            docs = self._documents(user)
            writes_of = self._writes_under(docs, (WRITES, *prefix[1:])) if first_page >= PREFETCH_WRITES else None
            order = self._order(docs, prefix)
            for doc in self._checkpoint_docs(docs, prefix, only_id, first_page, order):
                if before_id is not None and doc.key >= before_id:
                    continue
                if filter:
                    metadata = self.serde.loads_typed(StoredCheckpoint.decode(doc.value).metadata)
                    if not all(metadata.get(k) == v for k, v in filter.items()):
                        continue
                _, thread_id, label = doc.namespace
                if writes_of is not None:
                    writes = writes_of.get((thread_id, label, doc.key), [])
                else:
                    writes = self._pending_writes(docs, writes_ns(thread_id, checkpoint_ns_of(label), doc.key))
                yield self._tuple(doc, writes, user_id)
                if remaining is not None:
                    remaining -= 1
                    if remaining <= 0:
                        return  # before the next page is read

    def _writes_under(self, docs: DocumentStore, prefix: tuple[str, ...]) -> dict[tuple[str, ...], builtins.list[Any]]:
        """Every pending write under a prefix, grouped by (thread, checkpoint_ns label, checkpoint id), in order."""
        grouped: dict[tuple[str, ...], list[StoredWrite]] = {}
        for doc in _all(docs, prefix):
            grouped.setdefault(tuple(doc.namespace[1:]), []).append(StoredWrite.decode(doc.value))
        loads = self.serde.loads_typed
        return {
            place: [(w.task_id, w.channel, loads(w.value)) for w in sorted(ws, key=StoredWrite.sort_key)]
            for place, ws in grouped.items()
        }

    def _list_scopes(self, config: RunnableConfig | None) -> builtins.list[tuple[str, tuple[str, ...], str | None]]:
        configurable = (config or {}).get("configurable") or {}
        if "thread_id" in configurable:
            thread_id = thread_label(configurable.get("thread_id"))
            prefix = checkpoints_ns(thread_id, configurable.get("checkpoint_ns"))
            only_id = configurable.get("checkpoint_id")
            user = self._user_or_none(config)
            if user is None and self.admin:  # an operator's view of every user's thread of that id
                return [(owner, prefix, only_id) for owner in self._thread_owners(thread_id, "list")]
            return [(self._user(config or {}) if user is None else user, prefix, only_id)]  # type: ignore[arg-type]
        user = self._user_or_none(config)
        if user is not None:  # one user's checkpoints, every thread
            return [(user, (CHECKPOINTS,), None)]
        if not self.admin:
            raise UserNotFoundError(f"{WHO}.list names no thread and no user; {LIST_FIX}")
        return [(owner, (CHECKPOINTS,), None) for owner in self.memory.document_owners((CHECKPOINTS,))]

    def _order(self, docs: DocumentStore, prefix: tuple[str, ...]) -> str:
        """Newest first is the insertion order backwards when one (thread, namespace) got its checkpoints in id
        order (cheap pages); otherwise the checkpoints are sorted by id."""
        if len(prefix) == 2:  # a whole thread: one namespace (the usual case) is that namespace's scope
            namespaces = docs.list_namespaces(prefix=prefix, limit=2)
            if len(namespaces) != 1:
                return "key"
            prefix = namespaces[0]
        if len(prefix) != 3:
            return "key"
        pointer = self._pointer(docs, prefix[1], checkpoint_ns_of(prefix[2]))
        return "insertion" if pointer is not None and pointer.in_order else "key"

    def _checkpoint_docs(
        self,
        docs: DocumentStore,
        prefix: tuple[str, ...],
        only_id: str | None,
        first_page: int = PAGE,
        order: str = "key",
    ) -> Iterator[Any]:
        """Checkpoint documents under ``prefix``, newest first, read a page at a time."""
        if only_id is not None:
            if len(prefix) == 3:
                doc = docs.get(prefix, only_id)
                if doc is not None:
                    yield doc
                return
            for doc in self._checkpoint_docs(docs, prefix, None):
                if doc.key == only_id:
                    yield doc
            return
        offset, size = 0, first_page
        while True:
            page = docs.search(prefix, order=order, descending=True, limit=size, offset=offset)  # type: ignore[arg-type]
            yield from page
            if len(page) < size:
                return
            offset += size
            size = PAGE

    def put(
        self,
        config: RunnableConfig,
        checkpoint: Checkpoint,
        metadata: CheckpointMetadata,
        new_versions: ChannelVersions,
    ) -> RunnableConfig:
        from memtend.documents import PutDocument

        configurable = config["configurable"]
        thread_id = thread_label(configurable.get("thread_id"))
        checkpoint_ns = configurable.get("checkpoint_ns", "")
        stored_metadata = masked(get_checkpoint_metadata(config, metadata), self.redact)
        values = checkpoint.get("channel_values")
        gated = masked(values, self.redact)
        if gated is not values:
            checkpoint = {**checkpoint, "channel_values": gated}  # type: ignore[typeddict-item]
        stored = StoredCheckpoint(
            parent_id=configurable.get("checkpoint_id"),
            checkpoint=self.serde.dumps_typed(checkpoint),
            metadata=self.serde.dumps_typed(stored_metadata),
        )
        puts = [PutDocument(checkpoints_ns(thread_id, checkpoint_ns), checkpoint["id"], stored.encode())]
        run_id = stored_metadata.get("run_id")
        if isinstance(run_id, str) and run_id:
            puts.append(PutDocument(runs_ns(run_id, thread_id, checkpoint_ns), checkpoint["id"], b""))
        user = self._user(config)
        docs = self._documents(user)
        with self._locks[zlib.crc32(f"{user}\x00{thread_id}".encode()) % LOCK_STRIPES]:
            pointer = self._pointer(docs, thread_id, checkpoint_ns)
            moved = Latest(checkpoint["id"]) if pointer is None else pointer.after_put(checkpoint["id"])
            if moved != pointer:
                puts.append(PutDocument(latest_ns(thread_id), ns_label(checkpoint_ns), moved.encode()))
            docs.put_many(puts)
        return _config(thread_id, checkpoint_ns, checkpoint["id"], configurable.get("user_id"))

    def put_writes(
        self,
        config: RunnableConfig,
        writes: Sequence[tuple[str, Any]],
        task_id: str,
        task_path: str = "",
    ) -> None:
        from memtend.documents import PutDocument

        configurable = config["configurable"]
        thread_id = thread_label(configurable.get("thread_id"))
        namespace = writes_ns(thread_id, configurable.get("checkpoint_ns", ""), configurable["checkpoint_id"])
        puts: list[Any] = []
        for position, (channel, value) in enumerate(writes):
            idx = WRITES_IDX_MAP.get(channel, position)
            value = masked(value, self.redact)
            record = StoredWrite(task_id, channel, self.serde.dumps_typed(value), task_path, idx)
            # a regular write is kept as first saved (a retried task does not overwrite it); a special one (error,
            # interrupt, resume) is replaced by the latest: both in one Chroma write
            puts.append(PutDocument(namespace, write_key(task_id, idx), record.encode(), if_absent=idx >= 0))
        if puts:
            self._documents(self._user(config)).put_many(puts)

    def delete_thread(self, thread_id: str) -> None:
        thread_id = thread_label(thread_id)
        for user in self._thread_owners(thread_id, "delete_thread"):
            docs = self._documents(user)
            for namespace in docs.list_namespaces(prefix=(RUNS, "*", thread_id), limit=1_000_000):
                docs.delete_prefix(namespace)
            docs.delete_prefix(writes_ns(thread_id))
            docs.delete_prefix(checkpoints_ns(thread_id))
            docs.delete_prefix(latest_ns(thread_id))

    # ------------------------------------------------------------------ the extended three
    def delete_for_runs(self, run_ids: Sequence[str]) -> None:
        from memtend.documents import DeleteDocument

        user = self._scope_user()
        if user is None and not self.admin:
            raise UserNotFoundError(f"{WHO}.delete_for_runs names runs, and no user; {THREAD_FIX}")
        for run_id in dict.fromkeys(str(r) for r in run_ids):
            for owner in [user] if user is not None else self.memory.document_owners(runs_ns(run_id)):
                docs = self._documents(owner)
                deletes: list[Any] = []
                write_prefixes: list[tuple[str, ...]] = []
                for entry in _all(docs, runs_ns(run_id)):
                    _, _, thread_id, label = entry.namespace
                    checkpoint_ns = checkpoint_ns_of(label)
                    deletes.append(DeleteDocument(checkpoints_ns(thread_id, checkpoint_ns), entry.key))
                    deletes.append(DeleteDocument(entry.namespace, entry.key))
                    write_prefixes.append(writes_ns(thread_id, checkpoint_ns, entry.key))
                for prefix in write_prefixes:
                    docs.delete_prefix(prefix)
                if deletes:
                    docs.batch(deletes)

    def copy_thread(self, source_thread_id: str, target_thread_id: str) -> None:
        source = thread_label(source_thread_id, "source_thread_id")
        target = thread_label(target_thread_id, "target_thread_id")
        for owner in self._thread_owners(source, "copy_thread"):
            target_user = self._target_user(target) or owner
            if target_user != owner and not self.admin:
                raise UserMismatchError(
                    f"{WHO}.copy_thread: the source thread's user and the user_resolver's user of the target thread "
                    "differ; a thread is copied within its user (open the saver with admin=True to copy across users)",
                    ("the source thread's user", "the saver's user_resolver"),
                )
            self._copy(owner, source, target_user, target)

    def _copy(self, owner: str, source: str, target_user: str, target: str) -> None:
        from memtend.documents import PutDocument

        docs = self._documents(owner)
        copies: list[Any] = []
        for prefix in (checkpoints_ns(source), writes_ns(source), latest_ns(source)):
            for doc in _all(docs, prefix):
                moved = (doc.namespace[0], target, *doc.namespace[2:])
                copies.append(PutDocument(moved, doc.key, doc.value))
        for namespace in docs.list_namespaces(prefix=(RUNS, "*", source), limit=1_000_000):
            for doc in _all(docs, namespace):
                copies.append(PutDocument((RUNS, namespace[1], target, namespace[3]), doc.key, doc.value))
        if copies:
            self._documents(target_user).put_many(copies)

    def _target_user(self, target_thread_id: str) -> str | None:
        """Whom the user_resolver names for the target thread of a copy (None: the source's user)."""
        if self.user_resolver is None:
            return None
        config = {"configurable": {"thread_id": target_thread_id}}
        return user_in_places([("the saver's user_resolver", self.user_resolver(config))], who=WHO)

    def prune(self, thread_ids: Sequence[str], *, strategy: str = "keep_latest") -> None:
        if strategy == "delete":
            for thread_id in thread_ids:
                self.delete_thread(thread_id)
            return
        if strategy != "keep_latest":
            raise ValueError(f"unknown prune strategy {strategy!r}: use 'keep_latest' or 'delete'")
        for thread_id in [thread_label(t, "a thread id") for t in thread_ids]:
            for user in self._thread_owners(thread_id, "prune"):
                self._keep_latest(self._documents(user), thread_id)

    def _keep_latest(self, docs: DocumentStore, thread_id: str) -> None:
        from memtend.documents import DeleteDocument

        latest: dict[str, str] = {}  # checkpoint_ns label -> newest checkpoint id
        deletes: list[Any] = []
        for namespace in docs.list_namespaces(prefix=checkpoints_ns(thread_id), limit=1_000_000):
            ids = [doc.key for doc in _all(docs, namespace, order="key", descending=True)]
            if ids:
                latest[namespace[2]] = ids[0]
                deletes.extend(DeleteDocument(namespace, old) for old in ids[1:])
        for namespace in docs.list_namespaces(prefix=writes_ns(thread_id), limit=1_000_000):
            if latest.get(namespace[2]) != namespace[3]:
                docs.delete_prefix(namespace)
        for namespace in docs.list_namespaces(prefix=(RUNS, "*", thread_id), limit=1_000_000):
            for entry in _all(docs, namespace):
                if latest.get(namespace[3]) != entry.key:
                    deletes.append(DeleteDocument(namespace, entry.key))
        if deletes:
            docs.batch(deletes)

    # ------------------------------------------------------------------ versions
    def get_next_version(self, current: str | None, channel: None) -> str:
        """Monotonic string versions ("<counter>.<random>"), like LangGraph's own savers."""
        if current is None:
            number = 0
        elif isinstance(current, int):
            number = current
        else:
            number = int(str(current).split(".")[0])
        return f"{number + 1:032}.{random.random():016}"

    # ------------------------------------------------------------------ async: the same code off the event loop
    async def aget_tuple(self, config: RunnableConfig) -> CheckpointTuple | None:
        user = self._read_user(config)  # here, not in the worker thread: the caller's context carries a state read
        return await asyncio.to_thread(self._get_tuple_as, config, user)

    async def alist(
        self,
        config: RunnableConfig | None,
        *,
        filter: dict[str, Any] | None = None,
        before: RunnableConfig | None = None,
        limit: int | None = None,
    ) -> AsyncIterator[CheckpointTuple]:
        found = await asyncio.to_thread(lambda: list(self.list(config, filter=filter, before=before, limit=limit)))
        for item in found:
            yield item

    async def aput(
        self,
        config: RunnableConfig,
        checkpoint: Checkpoint,
        metadata: CheckpointMetadata,
        new_versions: ChannelVersions,
    ) -> RunnableConfig:
        return await asyncio.to_thread(self.put, config, checkpoint, metadata, new_versions)

    async def aput_writes(
        self,
        config: RunnableConfig,
        writes: Sequence[tuple[str, Any]],
        task_id: str,
        task_path: str = "",
    ) -> None:
        await asyncio.to_thread(self.put_writes, config, writes, task_id, task_path)

    async def adelete_thread(self, thread_id: str) -> None:
        await asyncio.to_thread(self.delete_thread, thread_id)

    async def adelete_for_runs(self, run_ids: Sequence[str]) -> None:
        await asyncio.to_thread(self.delete_for_runs, run_ids)

    async def acopy_thread(self, source_thread_id: str, target_thread_id: str) -> None:
        await asyncio.to_thread(self.copy_thread, source_thread_id, target_thread_id)

    async def aprune(self, thread_ids: Sequence[str], *, strategy: str = "keep_latest") -> None:
        await asyncio.to_thread(self.prune, thread_ids, strategy=strategy)


def _config(thread_id: str, checkpoint_ns: str, checkpoint_id: str, user_id: Any = None) -> RunnableConfig:
    """A checkpoint's config; the caller's ``user_id`` is carried along so the config can be used again as is."""
    configurable = {"thread_id": thread_id, "checkpoint_ns": checkpoint_ns, "checkpoint_id": checkpoint_id}
    if user_id is not None:
        configurable["user_id"] = user_id
    return {"configurable": configurable}


def no_user_error(config: Mapping[str, Any]) -> UserNotFoundError:
    """The refusal of a checkpoint call naming no user, with the fix for where it was made: a run, or a state
    method (``get_state``, ``get_state_history``, ``update_state``) called outside one."""
    fix = CONFIG_FIX if runtime_of(config) is not None else STATE_FIX
    return UserNotFoundError(f"{WHO}: the checkpoint's config names no user; {fix}")


def _has_task_ids(checkpoint_ns: str) -> bool:
    """Whether a checkpoint namespace is a subgraph's as LangGraph names it, each level ``node:task_id``."""
    return bool(checkpoint_ns) and all(":" in part for part in checkpoint_ns.split("|"))


def _all(docs: DocumentStore, prefix: tuple[str, ...], **order: Any) -> Iterator[Any]:
    offset = 0
    while True:
        page = docs.search(prefix, limit=PAGE, offset=offset, **order)
        yield from page
        if len(page) < PAGE:
            return
        offset += PAGE


__all__ = ["CHECKPOINTS", "LATEST", "WRITES", "MemtendSaver"]
