"""``MemtendSaver(memory, checkpoints=<a LangGraph saver>)``: memtend keeps whose each thread is, the application's
own saver (``SqliteSaver``, ``AsyncSqliteSaver``, ``PostgresSaver``, ``InMemorySaver``) keeps the checkpoints.

A step costs what the backend's step costs, plus memtend's rule for secrets on its text: the checkpoint and its
pending writes go to the backend alone, under a thread id naming the user (:mod:`memtend_langgraph.saver_registry`);
memtend writes one registry document per thread (on its first put in a process, by a background writer off the
step's path), not per step. So LangGraph's durability modes mean exactly what they mean with the backend alone
(``"sync"``: a step is acknowledged once the backend has committed it). The user of a call is read by the same
identity rule as the Chroma saver; a user sees only their own threads, ``Memory.erase_user`` deletes the user's
threads from the backend and ``user.export()`` shows them readable. Text passes memtend's rule for secrets before
the backend serializes it, as with the Chroma saver; a put reads only the channels new since the thread's previous
checkpoint, when this process put or read that one (:mod:`memtend_langgraph.saver_gated`), and every pending write.

Of LangGraph's extended calls, ``copy_thread`` is done here through the backend's own reads and puts;
``delete_for_runs`` and ``prune`` are not offered (LangGraph's SQLite and in-memory savers do not offer them
either), so LangGraph's conformance suite reports exactly the calls that work.
"""

from __future__ import annotations

import asyncio
import builtins
from collections.abc import AsyncIterator, Iterator, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from langchain_core.runnables import RunnableConfig
from langgraph.checkpoint.base import (
    BaseCheckpointSaver,
    ChannelVersions,
    Checkpoint,
    CheckpointMetadata,
    CheckpointTuple,
    SerializerProtocol,
    get_checkpoint_id,
    get_checkpoint_metadata,
)
from memtend.documents.external import add_external_data
from memtend.errors import InvalidInputError, UserMismatchError, UserNotFoundError
from memtend.surfaces import REDACT_DEFAULT

from memtend_langgraph.ids import thread_label
from memtend_langgraph.saver import LIST_FIX, WHO, MemtendSaver, _config, _has_task_ids, no_user_error
from memtend_langgraph.saver_gated import GatedChannels
from memtend_langgraph.saver_registry import (
    EXPORT_NAME,
    STAMP,
    ThreadRegistry,
    backend_thread_id,
    split_backend_thread_id,
    strip_stamp,
)
from memtend_langgraph.saver_text import masked

if TYPE_CHECKING:
    from memtend import Memory

    from memtend_langgraph.users import ConfigUser


class DelegatedSaver(MemtendSaver):
    """A ``MemtendSaver`` whose checkpoints live in another LangGraph saver (see the module's text)."""

    # not offered: the backend's saver has no call for them that could be kept to one user's threads
    delete_for_runs = BaseCheckpointSaver.delete_for_runs  # type: ignore[assignment]
    adelete_for_runs = BaseCheckpointSaver.adelete_for_runs  # type: ignore[assignment]
    prune = BaseCheckpointSaver.prune  # type: ignore[assignment]
    aprune = BaseCheckpointSaver.aprune  # type: ignore[assignment]

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
        if not isinstance(checkpoints, BaseCheckpointSaver) or isinstance(checkpoints, MemtendSaver):
            raise InvalidInputError(
                "checkpoints= takes the LangGraph saver that keeps the bytes (SqliteSaver, AsyncSqliteSaver, "
                f"PostgresSaver, InMemorySaver), got {type(checkpoints).__name__}"
            )
        if serde is not None:
            raise InvalidInputError("with checkpoints=, the backend saver serializes: give serde= to that saver")
        super().__init__(
            memory,
            user_resolver=user_resolver,
            default_user=default_user,
            context_field=context_field,
            admin=admin,
            serde=checkpoints.serde,
            redact=redact,
        )
        self.checkpoints = checkpoints
        self.registry = _registry_for(memory, checkpoints)  # one per Memory and backend: one cache, one writer
        self._sync_backend = False  # the backend's async calls are not implemented (SqliteSaver): run its sync ones
        self._gated = GatedChannels()  # what the rule for secrets has read of each thread's newest checkpoints

    def for_user(self, user_id: str) -> DelegatedSaver:
        view = DelegatedSaver(
            self.memory,
            checkpoints=self.checkpoints,
            user_resolver=self.user_resolver,
            context_field=self.context_field,
            redact=self.redact,
        )
        from memtend.records import check_user_id

        view._bound = check_user_id(user_id)
        return view

    def close(self) -> None:
        """Write the registry's pending threads, then close the Memory if this saver opened it."""
        self.registry.flush()
        super().close()

    async def aclose(self) -> None:
        await asyncio.to_thread(self.registry.flush)
        await super().aclose()

    def setup(self) -> None:
        """Checks the Memory answers and runs the backend's ``setup()`` when it has one (its tables)."""
        super().setup()
        backend_setup = getattr(self.checkpoints, "setup", None)
        if callable(backend_setup) and not asyncio.iscoroutinefunction(backend_setup):
            backend_setup()

    async def asetup(self) -> None:
        await asyncio.to_thread(super().setup)
        backend_setup = getattr(self.checkpoints, "setup", None)
        if callable(backend_setup):
            if asyncio.iscoroutinefunction(backend_setup):
                await backend_setup()
            else:
                await asyncio.to_thread(backend_setup)

    # ------------------------------------------------------------------ who, and where in the backend
    def _subgraph_owners(self, config: RunnableConfig) -> builtins.list[str]:
        """The one user whose thread holds checkpoints in this subgraph namespace (see the Chroma saver's)."""
        configurable = config.get("configurable") or {}
        checkpoint_ns = configurable.get("checkpoint_ns") or ""
        thread_id = configurable.get("thread_id")
        if thread_id is None or not _has_task_ids(checkpoint_ns):
            return []
        thread = thread_label(thread_id)
        owners = []
        for owner in self.registry.owners(self.memory, thread):
            probe: Any = {
                "configurable": {"thread_id": backend_thread_id(owner, thread), "checkpoint_ns": checkpoint_ns}
            }
            if self.checkpoints.get_tuple(probe) is not None:
                owners.append(owner)
        return owners

    def _thread_owners(self, thread_id: str, what: str) -> builtins.list[str]:
        user = self._thread_user(thread_id)
        if user is not None:
            return [user]
        if not self.admin:
            from memtend_langgraph.saver import THREAD_FIX

            raise UserNotFoundError(f"{WHO}.{what} names only a thread, and no user; {THREAD_FIX}")
        return sorted(self.registry.owners(self.memory, thread_id))

    def _backend_config(self, config: Mapping[str, Any], user: str, thread_id: str) -> RunnableConfig:
        configurable = dict(config.get("configurable") or {})
        configurable["thread_id"] = backend_thread_id(user, thread_id)
        configurable.setdefault("checkpoint_ns", "")
        return {**config, "configurable": configurable}  # type: ignore[typeddict-item]

    def _out(self, found: CheckpointTuple, user_id: Any, thread_id: str | None = None) -> CheckpointTuple:
        """A backend tuple as the caller sees it: its own thread id, its user carried along, no stamp."""
        configurable = found.config["configurable"]
        if thread_id is None:
            split = split_backend_thread_id(configurable.get("thread_id"))
            assert split is not None  # only memtend's threads reach here
            thread_id = split[1]
        checkpoint_ns = configurable.get("checkpoint_ns", "")
        parent = (found.parent_config or {}).get("configurable", {}).get("checkpoint_id")
        return CheckpointTuple(
            config=_config(thread_id, checkpoint_ns, configurable["checkpoint_id"], user_id),
            checkpoint=found.checkpoint,
            metadata=strip_stamp(found.metadata),
            parent_config=_config(thread_id, checkpoint_ns, parent, user_id) if parent else None,
            pending_writes=found.pending_writes,
        )

    # ------------------------------------------------------------------ reads
    def _get_scope(self, config: RunnableConfig, user: str | None) -> tuple[RunnableConfig, str] | None:
        """(the backend's config, the caller's thread id) for a get_tuple, or None: nothing can be there."""
        configurable = config["configurable"]
        thread_id = thread_label(configurable.get("thread_id"))
        if user is None:
            owners = self._subgraph_owners(config)
            if not owners and _has_task_ids(configurable.get("checkpoint_ns", "")):
                return None  # a subgraph's state asked for before the subgraph ran
            if len(owners) != 1:
                raise no_user_error(config)
            user = owners[0]
        return self._backend_config(config, user, thread_id), thread_id

    def get_tuple(self, config: RunnableConfig) -> CheckpointTuple | None:
        scope = self._get_scope(config, self._read_user(config))
        if scope is None:
            return None
        found = self.checkpoints.get_tuple(scope[0])
        return None if found is None else self._loaded(found, config["configurable"].get("user_id"), scope[1])

    async def aget_tuple(self, config: RunnableConfig) -> CheckpointTuple | None:
        user = self._read_user(config)  # here, not in the worker thread: the caller's context carries a state read
        if user is not None:
            scope = self._get_scope(config, user)
        else:  # the registry is read to find the subgraph's owner
            scope = await asyncio.to_thread(self._get_scope, config, None)
        if scope is None:
            return None
        found = await self._backend("get_tuple", scope[0])
        return None if found is None else self._loaded(found, config["configurable"].get("user_id"), scope[1])

    def _loaded(self, found: CheckpointTuple, user_id: Any, thread_id: str) -> CheckpointTuple:
        """A checkpoint read back for a graph to go on from: its channels passed the rule when it was put."""
        configurable = found.config["configurable"]
        self._gated.loaded((configurable["thread_id"], configurable.get("checkpoint_ns", "")), found.checkpoint)
        return self._out(found, user_id, thread_id)

    def _list_scopes_of(
        self, config: RunnableConfig | None, filter: dict[str, Any] | None
    ) -> builtins.list[tuple[RunnableConfig | None, dict[str, Any] | None, str | None]]:
        """Per backend listing: (its config, its filter, the caller's thread id or None for derived ids)."""
        configurable = (config or {}).get("configurable") or {}
        if "thread_id" in configurable:
            thread_id = thread_label(configurable.get("thread_id"))
            user = self._user_or_none(config)
            owners = [user] if user is not None else None
            if owners is None:
                owners = self._thread_owners(thread_id, "list") if self.admin else [self._user(config or {})]  # type: ignore[arg-type]
            scopes: builtins.list[tuple[RunnableConfig | None, dict[str, Any] | None, str | None]] = []
            for owner in owners:
                backend_config = self._backend_config(config or {}, owner, thread_id)
                if "checkpoint_ns" not in configurable:
                    del backend_config["configurable"]["checkpoint_ns"]  # every namespace of the thread
                scopes.append((backend_config, filter, thread_id))
            return scopes
        user = self._user_or_none(config)
        if user is not None:  # one user's checkpoints, every thread: the backend's filter on the stamp
            return [(None, {**(filter or {}), STAMP: user}, None)]
        if not self.admin:
            raise UserNotFoundError(f"{WHO}.list names no thread and no user; {LIST_FIX}")
        return [(None, filter, None)]

    def list(
        self,
        config: RunnableConfig | None,
        *,
        filter: dict[str, Any] | None = None,
        before: RunnableConfig | None = None,
        limit: int | None = None,
    ) -> Iterator[CheckpointTuple]:
        user_id = ((config or {}).get("configurable") or {}).get("user_id")
        before_config = _before(before)
        remaining = limit
        for backend_config, backend_filter, thread_id in self._list_scopes_of(config, filter):
            for found in self.checkpoints.list(
                backend_config,
                filter=backend_filter,
                before=before_config,
                limit=_backend_limit(remaining, thread_id, backend_filter),
            ):
                if thread_id is None and split_backend_thread_id(found.config["configurable"].get("thread_id")) is None:
                    continue  # a thread the application wrote to the backend itself
                yield self._out(found, user_id, thread_id)
                if remaining is not None:
                    remaining -= 1
                    if remaining <= 0:
                        return

    async def alist(
        self,
        config: RunnableConfig | None,
        *,
        filter: dict[str, Any] | None = None,
        before: RunnableConfig | None = None,
        limit: int | None = None,
    ) -> AsyncIterator[CheckpointTuple]:
        user_id = ((config or {}).get("configurable") or {}).get("user_id")
        before_config = _before(before)
        remaining = limit
        scopes = await asyncio.to_thread(self._list_scopes_of, config, filter)
        for backend_config, backend_filter, thread_id in scopes:
            async for found in self._backend_list(
                backend_config,
                filter=backend_filter,
                before=before_config,
                limit=_backend_limit(remaining, thread_id, backend_filter),
            ):
                if thread_id is None and split_backend_thread_id(found.config["configurable"].get("thread_id")) is None:
                    continue
                yield self._out(found, user_id, thread_id)
                if remaining is not None:
                    remaining -= 1
                    if remaining <= 0:
                        return

    # ------------------------------------------------------------------ writes
    def _put_args(
        self,
        config: RunnableConfig,
        checkpoint: Checkpoint,
        metadata: CheckpointMetadata,
        new_versions: ChannelVersions,
    ) -> tuple[str, str, RunnableConfig, Checkpoint, CheckpointMetadata, bool]:
        """(user, thread, backend config, gated checkpoint, stamped metadata, whether to register the thread)."""
        configurable = config["configurable"]
        thread_id = thread_label(configurable.get("thread_id"))
        user = self._user(config)
        stored_metadata = _gated_metadata(get_checkpoint_metadata(config, metadata), self.redact)
        stored_metadata[STAMP] = user
        backend_config = self._backend_config(config, user, thread_id)
        backend_configurable = backend_config["configurable"]
        key = (backend_configurable["thread_id"], backend_configurable.get("checkpoint_ns", ""))
        # the rule reads the channels new since the parent checkpoint (all of them when the parent is not known)
        checkpoint = self._gated.gated(key, configurable.get("checkpoint_id"), checkpoint, new_versions, self.redact)
        # a thread starting (no parent) registers again, so a thread erased by another process is found again
        register = not configurable.get("checkpoint_id") or not self.registry.is_known(user, thread_id)
        return user, thread_id, backend_config, checkpoint, stored_metadata, register  # type: ignore[return-value]

    def put(
        self,
        config: RunnableConfig,
        checkpoint: Checkpoint,
        metadata: CheckpointMetadata,
        new_versions: ChannelVersions,
    ) -> RunnableConfig:
        user, thread_id, backend_config, checkpoint, stored, register = self._put_args(
            config, checkpoint, metadata, new_versions
        )
        if register:
            self.registry.register_soon(self.memory, user, thread_id)
        saved = self.checkpoints.put(backend_config, checkpoint, stored, new_versions)
        return self._saved(saved, config, thread_id)

    async def aput(
        self,
        config: RunnableConfig,
        checkpoint: Checkpoint,
        metadata: CheckpointMetadata,
        new_versions: ChannelVersions,
    ) -> RunnableConfig:
        user, thread_id, backend_config, checkpoint, stored, register = self._put_args(
            config, checkpoint, metadata, new_versions
        )
        if register:
            self.registry.register_soon(self.memory, user, thread_id)
        saved = await self._backend("put", backend_config, checkpoint, stored, new_versions)
        return self._saved(saved, config, thread_id)

    @staticmethod
    def _saved(saved: RunnableConfig, config: RunnableConfig, thread_id: str) -> RunnableConfig:
        configurable = saved["configurable"]
        return _config(
            thread_id,
            configurable.get("checkpoint_ns", ""),
            configurable["checkpoint_id"],
            config["configurable"].get("user_id"),
        )

    def _writes_args(
        self, config: RunnableConfig, writes: Sequence[tuple[str, Any]]
    ) -> tuple[RunnableConfig, builtins.list[tuple[str, Any]]]:
        thread_id = thread_label(config["configurable"].get("thread_id"))
        gated = [(channel, masked(value, self.redact)) for channel, value in writes]
        return self._backend_config(config, self._user(config), thread_id), gated

    def put_writes(
        self,
        config: RunnableConfig,
        writes: Sequence[tuple[str, Any]],
        task_id: str,
        task_path: str = "",
    ) -> None:
        backend_config, gated = self._writes_args(config, writes)
        self.checkpoints.put_writes(backend_config, gated, task_id, task_path)

    async def aput_writes(
        self,
        config: RunnableConfig,
        writes: Sequence[tuple[str, Any]],
        task_id: str,
        task_path: str = "",
    ) -> None:
        backend_config, gated = self._writes_args(config, writes)
        await self._backend("put_writes", backend_config, gated, task_id, task_path)

    # ------------------------------------------------------------------ threads
    def delete_thread(self, thread_id: str) -> None:
        thread_id = thread_label(thread_id)
        for user in self._thread_owners(thread_id, "delete_thread"):
            self.checkpoints.delete_thread(backend_thread_id(user, thread_id))
            self._gated.forget(backend_thread_id(user, thread_id))
            self.registry.unregister(self.memory, user, thread_id)  # after: a crash between leaves it findable

    async def adelete_thread(self, thread_id: str) -> None:
        thread_id = thread_label(thread_id)
        for user in await asyncio.to_thread(self._thread_owners, thread_id, "delete_thread"):
            await self._backend("delete_thread", backend_thread_id(user, thread_id))
            self._gated.forget(backend_thread_id(user, thread_id))
            await asyncio.to_thread(self.registry.unregister, self.memory, user, thread_id)

    def copy_thread(self, source_thread_id: str, target_thread_id: str) -> None:
        """Every checkpoint of the source thread (every namespace, oldest first) and its pending writes, put again
        under the target thread through the backend's own calls."""
        for owner, source, target_user, target in self._copies(source_thread_id, target_thread_id):
            listing: Any = {"configurable": {"thread_id": backend_thread_id(owner, source)}}
            found = builtins.list(self.checkpoints.list(listing))
            if found:
                self.registry.register(self.memory, target_user, target)
            for put_config, checkpoint, metadata, versions, by_task in _copy_plan(found, target_user, target):
                saved = self.checkpoints.put(put_config, checkpoint, metadata, versions)
                for task_id, task_writes in by_task.items():
                    self.checkpoints.put_writes(saved, task_writes, task_id)

    async def acopy_thread(self, source_thread_id: str, target_thread_id: str) -> None:
        copies = await asyncio.to_thread(self._copies, source_thread_id, target_thread_id)
        for owner, source, target_user, target in copies:
            listing: Any = {"configurable": {"thread_id": backend_thread_id(owner, source)}}
            found = [item async for item in self._backend_list(listing)]
            if found:
                await asyncio.to_thread(self.registry.register, self.memory, target_user, target)
            for put_config, checkpoint, metadata, versions, by_task in _copy_plan(found, target_user, target):
                saved = await self._backend("put", put_config, checkpoint, metadata, versions)
                for task_id, task_writes in by_task.items():
                    await self._backend("put_writes", saved, task_writes, task_id)

    def _copies(self, source_thread_id: str, target_thread_id: str) -> builtins.list[tuple[str, str, str, str]]:
        """(source user, source thread, target user, target thread) per copy, checked as the Chroma saver does."""
        source = thread_label(source_thread_id, "source_thread_id")
        target = thread_label(target_thread_id, "target_thread_id")
        copies = []
        for owner in self._thread_owners(source, "copy_thread"):
            target_user = self._target_user(target) or owner
            if target_user != owner and not self.admin:
                raise UserMismatchError(
                    f"{WHO}.copy_thread: the source thread's user and the user_resolver's user of the target thread "
                    "differ; a thread is copied within its user (open the saver with admin=True to copy across users)",
                    ("the source thread's user", "the saver's user_resolver"),
                )
            copies.append((owner, source, target_user, target))
        return copies

    # ------------------------------------------------------------------ versions, and the backend's async calls
    def get_next_version(self, current: str | None, channel: None) -> str:
        return self.checkpoints.get_next_version(current, channel)  # type: ignore[no-any-return]

    async def _backend(self, name: str, *args: Any) -> Any:
        """The backend's async call ``a<name>``; when it has none (``SqliteSaver`` raises NotImplementedError for
        every async call), its sync call in a worker thread, from then on."""
        if not self._sync_backend and _has_async(self.checkpoints):
            try:
                return await getattr(self.checkpoints, f"a{name}")(*args)
            except NotImplementedError:
                self._sync_backend = True
        return await asyncio.to_thread(getattr(self.checkpoints, name), *args)

    async def _backend_list(self, config: RunnableConfig | None, **options: Any) -> AsyncIterator[CheckpointTuple]:
        """The backend's ``alist``, or its ``list`` in a worker thread (as :meth:`_backend`)."""
        if not self._sync_backend and _has_async(self.checkpoints):
            try:
                async for item in self.checkpoints.alist(config, **options):
                    yield item
                return
            except NotImplementedError:  # raised before any item
                self._sync_backend = True
        for item in await asyncio.to_thread(lambda: builtins.list(self.checkpoints.list(config, **options))):
            yield item


def _copy_plan(
    found: Sequence[CheckpointTuple], user: str, thread_id: str
) -> Iterator[tuple[Any, Checkpoint, CheckpointMetadata, ChannelVersions, dict[str, builtins.list[tuple[str, Any]]]]]:
    """The backend puts that copy listed checkpoints to another thread, oldest first: (config, checkpoint, stamped
    metadata, every channel's version, as new versions: a saver keeping blobs by version stores them all, and the
    pending writes by task)."""
    for item in sorted(found, key=lambda t: t.checkpoint["id"]):
        configurable = item.config["configurable"]
        parent = (item.parent_config or {}).get("configurable", {}).get("checkpoint_id")
        put_config: dict[str, Any] = {
            "thread_id": backend_thread_id(user, thread_id),
            "checkpoint_ns": configurable.get("checkpoint_ns", ""),
        }
        if parent:
            put_config["checkpoint_id"] = parent
        metadata: Any = {**(item.metadata or {}), STAMP: user}
        by_task: dict[str, builtins.list[tuple[str, Any]]] = {}
        for task_id, channel, value in item.pending_writes or []:
            by_task.setdefault(task_id, []).append((channel, value))
        yield (
            {"configurable": put_config},
            item.checkpoint,
            metadata,
            dict(item.checkpoint.get("channel_versions") or {}),
            by_task,
        )


_SOURCES = frozenset({"input", "loop", "update", "fork"})


def _gated_metadata(metadata: Mapping[str, Any], redact: bool) -> dict[str, Any]:
    """Checkpoint metadata past the rule for secrets: LangGraph's own ``source`` (one of its words), ``step`` (an
    int) and an empty ``parents`` hold no text anyone wrote and are not read; the rest (the run's config and
    metadata, the same at every step, so its clean reading is remembered) is."""
    own = {
        k
        for k, v in metadata.items()
        if (k == "source" and isinstance(v, str) and v in _SOURCES)
        or (k == "step" and type(v) is int)
        or (k == "parents" and isinstance(v, dict) and not v)
    }
    rest = {k: v for k, v in metadata.items() if k not in own}
    gated = masked(rest, redact) if rest else rest
    return {k: metadata[k] if k in own else gated[k] for k in metadata}


def _has_async(backend: BaseCheckpointSaver[Any]) -> bool:
    """Whether the backend implements LangGraph's async calls (its own ``aput``), not the base class's."""
    return type(backend).aput is not BaseCheckpointSaver.aput


def _backend_limit(remaining: int | None, thread_id: str | None, backend_filter: dict[str, Any] | None) -> int | None:
    """The limit to pass on: none for an admin's listing of every thread, where the application's own threads in the
    backend are skipped here (a limit there could stop short of memtend's)."""
    if thread_id is not None or STAMP in (backend_filter or {}):
        return remaining
    return None


def _before(before: RunnableConfig | None) -> RunnableConfig | None:
    """The backends read only the checkpoint id of ``before``."""
    checkpoint_id = get_checkpoint_id(before) if before else None
    return {"configurable": {"checkpoint_id": checkpoint_id}} if checkpoint_id else None


def _registry_for(memory: Any, backend: BaseCheckpointSaver[Any]) -> ThreadRegistry:
    """The registry of this Memory's threads in this backend, registered with the Memory as external data: every
    saver on the two shares it (so one saver's pending registrations are written before another reads them)."""
    from memtend.documents.external import external_data

    name = _holder_name(memory, backend)
    held = external_data(memory).get(name)
    if isinstance(held, ThreadRegistry) and held.backend is backend:
        return held
    registry = ThreadRegistry(backend)
    add_external_data(memory, name, registry)
    return registry


def _holder_name(memory: Any, backend: BaseCheckpointSaver[Any]) -> str:
    """The name the backend's threads are exported under: one per backend a Memory's savers delegate to."""
    from memtend.documents.external import external_data

    held = external_data(memory)
    existing = held.get(EXPORT_NAME)
    if existing is None or getattr(existing, "backend", None) is backend:
        return EXPORT_NAME
    for name, holder in held.items():
        if getattr(holder, "backend", None) is backend:
            return name
    return f"{EXPORT_NAME}:{len(held)}"
