"""``MemtendStore``: LangGraph's ``BaseStore`` over memtend's per-user document store."""

from __future__ import annotations

import asyncio
from collections import defaultdict
from collections.abc import Iterable, Sequence
from types import TracebackType
from typing import TYPE_CHECKING, Any

from langgraph.store.base import (
    BaseStore,
    GetOp,
    IndexConfig,
    ListNamespacesOp,
    Op,
    PutOp,
    Result,
    SearchItem,
    SearchOp,
    TTLConfig,
)
from memtend.documents.across import abatch_across_users, batch_across_users
from memtend.errors import InvalidInputError, UserMismatchError, UserNotFoundError
from memtend.identity import SHARED_OWNER, USER_PLACEHOLDER, filled_namespace, user_in_places
from memtend.surfaces import REDACT_DEFAULT, check_redact

from memtend_langgraph.embeddings import embeds_with
from memtend_langgraph.opening import Opening, split_options
from memtend_langgraph.store_ops import Namespace, OpTranslator, check_op, prefix_and_suffix, routing_namespace
from memtend_langgraph.sweeper import Sweeper
from memtend_langgraph.users import WILDCARD, NamespaceUser, UserInNamespace, current_config, run_places

if TYPE_CHECKING:
    from memtend import Memory
    from memtend.documents import DocumentStore

DEFAULT_ROOT = "langgraph_store"


class MemtendStore(BaseStore):
    """LangGraph's long-term memory store, kept in memtend under the user each namespace names.

    A namespace names its user by a template, as LangMem's tools write them: ``namespaces=[("memories",
    "{user_id}")]`` (the default: LangGraph's memory how-to and LangMem both write ``("memories", user_id)``) puts
    ``("memories", "alice", ...)`` among alice's documents, so isolation, export and ``Memory.erase_user`` cover
    it. A ``"{user_id}"`` label in an op's namespace is filled with the run's user. ``shared_namespaces=[("app",)]``
    declares prefixes whose items are no one user's (kept under ``memtend.identity.SHARED_OWNER``; a user's
    ``export()`` and erasure receipt say what shared data there is). A namespace no template matches, not shared,
    is refused with ``UserNotFoundError``. The earlier layouts: ``user_label=0`` reads ``("alice", "memories")``,
    ``user_label=1`` ``("memories", "alice")``, ``user_of=fn`` lets a function decide (None = no user).

    Inside a graph run the namespace's user must be the run's (its ``context`` field ``context_field``, or
    ``configurable.user_id``): a namespace naming another user is refused with ``UserMismatchError``. A search or
    listing whose prefix stops short of the user label is refused unless the store was opened with
    ``cross_user=True`` (administration: it then spans every user holding matching items, and is not checked
    against a run's user). Text values pass memtend's write gate: a secret is stored masked (``redact=True``,
    the default of every adapter: a node's write to the store cannot stop the graph), or with ``redact=False``
    refused with ``SensitiveDataError`` naming the store before anything of the batch is written (see
    docs/secrets.md).

    ``index`` is LangGraph's ``IndexConfig``: ``fields`` (JSON paths, default ``["$"]``) are embedded with the
    Memory's model (memtend's own, or a caller's: ``Memory(embedding_function=embedding_function(embed))`` with the
    same ``embed`` in ``index``) and ``search(query=...)`` ranks through the core's vector search.
    ``ttl`` is LangGraph's ``TTLConfig`` (minutes); with ``sweep_interval_minutes`` a sweeper runs until
    ``close()``. ``MemtendStore.from_conn_string(folder_or_url)`` opens its own Memory under ``with`` or
    ``async with``; the store is a context manager under both too.
    """

    supports_ttl = True

    def __init__(
        self,
        memory: Memory,
        *,
        namespaces: Sequence[Sequence[str]] | None = None,
        shared_namespaces: Sequence[Sequence[str]] = (),
        user_label: int | None = None,
        user_of: NamespaceUser | None = None,
        cross_user: bool = False,
        context_field: str = "user_id",
        index: IndexConfig | None = None,
        ttl: TTLConfig | None = None,
        redact: bool = REDACT_DEFAULT,
        root: str = DEFAULT_ROOT,
    ) -> None:
        if user_label is not None and (
            isinstance(user_label, bool) or not isinstance(user_label, int) or user_label < 0
        ):
            raise InvalidInputError("user_label is a label position (0, 1, ...)")
        embed = None if index is None else index.get("embed")
        if embed is not None and not embeds_with(memory, embed):
            raise InvalidInputError(
                "MemtendStore embeds with its Memory's model; to embed with your own, open the Memory with it: "
                "Memory(..., embedding_function=memtend_langgraph.embedding_function(embed)) and pass the same "
                "embed here (or leave 'embed' out of index to use memtend's model)"
            )
        self.memory = memory
        self.users = UserInNamespace.build(namespaces, shared_namespaces, user_label, user_of)
        self.cross_user = cross_user
        self.context_field = context_field
        self.redact = check_redact(redact, "MemtendStore")
        self.index_config = index
        self.ttl_config = ttl
        fields = None if index is None else list(index.get("fields") or ["$"])
        # a TTL config that does not set refresh_on_read does not refresh on read, as LangGraph's SQLite store
        # reads it (its TTL tests expect this; TTLConfig's docstring says the default is True)
        refresh_on_read = bool((ttl or {}).get("refresh_on_read", False))
        self._ops = OpTranslator(root, fields, refresh_on_read)
        self._sweeper: Sweeper | None = None
        self._owns_memory = False  # from_conn_string opened the Memory, so close() closes it
        if ttl and ttl.get("sweep_interval_minutes"):
            self.start_ttl_sweeper()

    # ------------------------------------------------------------------ lifecycle and TTL
    def start_ttl_sweeper(self, sweep_interval_minutes: float | None = None) -> None:
        """Start deleting expired items in the background (every ``sweep_interval_minutes``, default from ttl)."""
        if self._sweeper is not None and self._sweeper.running:
            return
        minutes = sweep_interval_minutes or (self.ttl_config or {}).get("sweep_interval_minutes") or 5
        self._sweeper = Sweeper(self.sweep_ttl, float(minutes) * 60.0, name="memtend-langgraph-ttl-sweeper")
        self._sweeper.start()

    def stop_ttl_sweeper(self, timeout: float | None = None) -> bool:
        """Stop the background sweeper; True when it has stopped within ``timeout`` seconds."""
        if self._sweeper is None:
            return True
        stopped = self._sweeper.stop(timeout)
        self._sweeper = None
        return stopped

    def sweep_ttl(self) -> int:
        """Delete every expired document now (all users: an expired item is gone for whoever owned it)."""
        return int(self.memory.sweep_documents())

    async def asweep_ttl(self) -> int:
        return int(await self.memory.asweep_documents())

    @classmethod
    def from_conn_string(cls, conn_string: str | None = None, **options: Any) -> Opening[MemtendStore]:
        """A store on its own Memory, for ``with`` and ``async with``: ``conn_string`` is a folder or a server URL
        (None reads ``MEMTEND_URL`` / ``MEMTEND_PATH``, see :func:`memtend.open_memory`); ``options`` go to the
        store (``namespaces``, ``index``, ``ttl``, ...) or else to the Memory. Leaving the block closes both."""
        return Opening(lambda: cls._opened(conn_string, options))

    @classmethod
    def _opened(cls, conn_string: str | None, options: dict[str, Any]) -> MemtendStore:
        from memtend import open_memory

        own, memory_options = split_options(cls, options)
        memory = open_memory(conn_string, **memory_options)
        try:
            store = cls(memory, **own)
        except BaseException:
            memory.close()
            raise
        store._owns_memory = True
        return store

    def close(self) -> None:
        """Stop the TTL sweeper; close the Memory if this store opened it (``from_conn_string``)."""
        self.stop_ttl_sweeper()
        if self._owns_memory:
            self.memory.close()

    async def aclose(self) -> None:
        await asyncio.to_thread(self.stop_ttl_sweeper)
        if self._owns_memory:
            await self.memory.aclose()

    def __enter__(self) -> MemtendStore:
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.close()

    async def __aenter__(self) -> MemtendStore:
        return self

    async def __aexit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        await self.aclose()

    # ------------------------------------------------------------------ batch
    def batch(self, ops: Iterable[Op]) -> list[Result]:
        plan = self._plan(list(ops))
        results: list[Result] = [None] * len(plan.ops)
        for i in plan.spanning:  # reads across users first: they see the state before the batch's writes
            results[i] = self._spanning_read(plan.ops[i])
        outs = batch_across_users(self._parts(plan))  # every user's writes as one: all or nothing
        return self._results(plan, outs, results)

    async def abatch(self, ops: Iterable[Op]) -> list[Result]:
        plan = self._plan(list(ops))
        results: list[Result] = [None] * len(plan.ops)
        for i in plan.spanning:
            results[i] = await self._aspanning_read(plan.ops[i])
        outs = await abatch_across_users(self._parts(plan))
        return self._results(plan, outs, results)

    def _parts(self, plan: _Plan) -> list[tuple[DocumentStore, list[Any]]]:
        return [(self._documents(user), [plan.doc_ops[i] for i in idx]) for user, idx in plan.by_user.items()]

    def _results(self, plan: _Plan, outs: list[list[Any]], results: list[Result]) -> list[Result]:
        for indexes, out in zip(plan.by_user.values(), outs, strict=True):
            for i, result in zip(indexes, out, strict=True):
                results[i] = self._ops.to_result(plan.ops[i], result)
        return results

    # ------------------------------------------------------------------ planning (no I/O)
    def _plan(self, ops: list[Op]) -> _Plan:
        run_user = None if self.cross_user else self._run_user()
        ops = [_filled(op, run_user) for op in ops]
        plan = _Plan(ops)
        last_put: dict[tuple[str, Namespace, str], int] = {}
        for op in ops:  # every op checked before anything is read or written
            check_op(op)
        for i, op in enumerate(ops):
            namespace = routing_namespace(op)
            user = self.users.of_pattern(namespace) if isinstance(op, ListNamespacesOp) else self.users.of(namespace)
            if user is None:
                if isinstance(op, (GetOp, PutOp)) or not self.cross_user:
                    raise self._no_user(op, namespace)
                plan.spanning.append(i)
                continue
            if run_user is not None and user not in (run_user, SHARED_OWNER):
                raise UserMismatchError(
                    f"MemtendStore: a {type(op).__name__}'s namespace and the run (its context or "
                    "configurable.user_id) name different users; a node reaches its own user's items only (open "
                    "the store with cross_user=True for administration across users)",
                    ("the namespace", "the run"),
                )
            plan.doc_ops[i] = self._ops.to_document_op(op)
            plan.user_of[i] = user
            if isinstance(op, PutOp):
                last_put[(user, tuple(op.namespace), str(op.key))] = i
        superseded = {
            i
            for i, op in enumerate(ops)
            if isinstance(op, PutOp) and last_put.get((plan.user_of[i], tuple(op.namespace), str(op.key))) != i
        }
        for i in sorted(plan.user_of):
            if i not in superseded:  # LangGraph: the last put of a key in a batch wins
                plan.by_user[plan.user_of[i]].append(i)
        return plan

    def _run_user(self) -> str | None:
        """The user of the graph run this call is made from (None outside a run, or a run naming no user)."""
        return user_in_places(run_places(current_config(), self.context_field), who="MemtendStore")

    def _no_user(self, op: Op, namespace: Namespace) -> UserNotFoundError:
        kind = type(op).__name__
        if isinstance(op, (GetOp, PutOp)):
            return UserNotFoundError(
                f"{kind} on a namespace of {len(namespace)} label(s) that names no user ({self.users.describe()}): "
                "every item belongs to one user; use a namespace a template matches (('memories', user_id)), add "
                "your layout with namespaces=[(..., '{user_id}')], or declare it shared_namespaces=[...]"
            )
        return UserNotFoundError(
            f"{kind} with a prefix of {len(namespace)} label(s) that names no user ({self.users.describe()}): "
            "name the user in the prefix, or open MemtendStore(..., cross_user=True) to search or list across "
            "users (administration)"
        )

    def _documents(self, user: str) -> DocumentStore:
        return self.memory.documents(user, redact=self.redact, surface="MemtendStore")

    # ------------------------------------------------------------------ reads across users (cross_user=True)
    def _spanning_read(self, op: Op) -> Result:
        owners = self.memory.document_owners(self._owners_prefix(op))
        if isinstance(op, SearchOp):
            found = [doc for user in owners for doc in self._documents(user).search(**self._spanning_search_args(op))]
            return self._merge_search(op, found)
        assert isinstance(op, ListNamespacesOp)
        listed = [ns for user in owners for ns in self._documents(user).list_namespaces(**self._spanning_list_args(op))]
        return self._merge_list(op, listed)

    async def _aspanning_read(self, op: Op) -> Result:
        owners = await self.memory.adocument_owners(self._owners_prefix(op))
        if isinstance(op, SearchOp):
            found = []
            for user in owners:
                found.extend(await self._documents(user).asearch(**self._spanning_search_args(op)))
            return self._merge_search(op, found)
        assert isinstance(op, ListNamespacesOp)
        listed = []
        for user in owners:
            listed.extend(await self._documents(user).alist_namespaces(**self._spanning_list_args(op)))
        return self._merge_list(op, listed)

    def _owners_prefix(self, op: Op) -> Namespace:
        """What every namespace the op may reach starts with (a listing's labels before its first wildcard)."""
        namespace = routing_namespace(op)
        if isinstance(op, ListNamespacesOp) and WILDCARD in namespace:
            namespace = namespace[: namespace.index(WILDCARD)]
        return self._ops.inner(namespace)

    def _spanning_search_args(self, op: SearchOp) -> dict[str, Any]:
        doc_op = self._ops.to_search_op(op._replace(limit=op.offset + op.limit, offset=0))
        return {
            "namespace_prefix": doc_op.namespace_prefix,
            "filter": doc_op.filter,
            "query": doc_op.query,
            "limit": doc_op.limit,
            "offset": 0,
            "refresh_ttl": doc_op.refresh_ttl,
        }

    def _spanning_list_args(self, op: ListNamespacesOp) -> dict[str, Any]:
        doc_op = self._ops.to_list_op(op, limit=op.offset + op.limit, offset=0)
        return {
            "prefix": doc_op.prefix,
            "suffix": doc_op.suffix,
            "max_depth": doc_op.max_depth,
            "limit": doc_op.limit,
            "offset": 0,
        }

    def _merge_search(self, op: SearchOp, docs: list[Any]) -> list[SearchItem]:
        if op.query:
            docs.sort(key=lambda d: (d.score is None, -(d.score or 0.0)))
        else:
            docs.sort(key=lambda d: d.created_at)
        return [self._ops.search_item(d) for d in docs[op.offset : op.offset + op.limit]]

    def _merge_list(self, op: ListNamespacesOp, namespaces: list[Any]) -> list[Namespace]:
        merged = sorted({tuple(ns) for ns in namespaces})
        return [self._ops.outer(ns) for ns in merged[op.offset : op.offset + op.limit]]


def _filled(op: Op, user: str | None) -> Op:
    """The op with ``"{user_id}"`` labels of its namespace (a listing's prefix and suffix too) filled with the run's
    user."""
    if isinstance(op, (GetOp, PutOp)) and USER_PLACEHOLDER in op.namespace:
        return op._replace(namespace=filled_namespace(op.namespace, user, who="MemtendStore"))
    if isinstance(op, SearchOp) and USER_PLACEHOLDER in op.namespace_prefix:
        return op._replace(namespace_prefix=filled_namespace(op.namespace_prefix, user, who="MemtendStore"))
    if isinstance(op, ListNamespacesOp) and any(USER_PLACEHOLDER in c.path for c in op.match_conditions or ()):
        conditions = tuple(
            c._replace(path=filled_namespace(c.path, user, who="MemtendStore")) for c in op.match_conditions or ()
        )
        return op._replace(match_conditions=conditions)
    return op


class _Plan:
    """A batch split by user: per-user document ops in op order, and the reads that span users."""

    def __init__(self, ops: list[Op]) -> None:
        self.ops = ops
        self.doc_ops: dict[int, Any] = {}
        self.user_of: dict[int, str] = {}
        self.by_user: dict[str, list[int]] = defaultdict(list)
        self.spanning: list[int] = []


__all__ = ["MemtendStore", "prefix_and_suffix"]
