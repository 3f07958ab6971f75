"""Writes to an embedded folder's document collections, acknowledged once they are in the folder's pending log and
moved into Chroma in batches by a background thread.

One Chroma write costs several SQLite commits here however little it carries, and a run of writes moved as one call
costs about one write. Only the process holding the folder's lock reads or writes it (:mod:`memtend.storage.locking`),
so this process can answer every read itself: a read of rows by id that pending writes touch is Chroma's rows with
those writes replayed on them (:func:`memtend.storage.pending_ops.apply_op`, under the lock the mover takes, so the
two are never mixed); every other read, and whoever takes the raw collections (erasure, export, scrubbing), first
moves everything pending (:meth:`WriteBehind.settle`). A log a killed process left is moved into Chroma when the
folder is next opened, before anything reads it.
"""

from __future__ import annotations

import contextlib
import logging
import math
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any, TypeVar

import numpy as np
from chromadb.api.models.Collection import Collection

from memtend.errors import StoreDamagedError
from memtend.storage import pending_ops
from memtend.storage.pending_log import PendingLog
from memtend.storage.pending_ops import Op, Row

__all__ = ["MOVE_DELAY", "DeferredCollection", "WriteBehind"]

_log = logging.getLogger("memtend")
T = TypeVar("T")

MOVE_DELAY = 0.05  # seconds the mover waits after a write for more to join its batch
MAX_PENDING_OPS = 2_000  # past this many ops (or bytes) pending, a writer moves them itself first
MAX_PENDING_BYTES = 64 << 20
_RETRY_AFTER = 1.0  # seconds before the mover tries a failed move again


class WriteBehind:
    """The pending log of one folder, the writes in it not yet in Chroma, and the thread that moves them."""

    def __init__(self, folder: Path, collections: dict[str, Collection], max_batch: int) -> None:
        self._raw = collections
        self.max_batch = max_batch
        self._log = PendingLog(folder)
        self._pending: list[tuple[Op, int]] = []  # (op, its size in the log)
        self._bytes = 0
        self._append_lock = threading.Lock()  # the log and the pending list
        self._apply_lock = threading.Lock()  # Chroma changes made here, and reads that replay pending ops
        self._wake = threading.Event()
        self._group = threading.local()
        self._dims: dict[str, int] = {}
        self._closed = False
        self.failure: BaseException | None = None  # the mover's last failed move (retried; a settle raises it)
        self.replayed = self._replay()
        self._thread = threading.Thread(target=self._run, name="memtend-write-behind", daemon=True)
        self._thread.start()

    def collection(self, name: str) -> DeferredCollection:
        return DeferredCollection(self, name, self._raw[name])

    # ------------------------------------------------------------------ writes
    @contextlib.contextmanager
    def group(self) -> Iterator[None]:
        """Ops appended inside go to the log together, with one ``fsync``, when the block ends without an error
        (and none of them when it raises: the write is all or nothing)."""
        if getattr(self._group, "ops", None) is not None:
            yield
            return
        self._group.ops = []
        try:
            yield
            ops: list[Op] = self._group.ops
        finally:
            self._group.ops = None
        self._append(ops)

    def append(self, op: Op) -> None:
        """Check ``op`` as Chroma would, then make it durable and pending (or hold it for the enclosing group)."""
        self._check(op)
        held = getattr(self._group, "ops", None)
        if held is not None:
            held.append(op)
        else:
            self._append([op])

    def _append(self, ops: list[Op]) -> None:
        if not ops:
            return
        if len(self._pending) >= MAX_PENDING_OPS or self._bytes >= MAX_PENDING_BYTES:
            self.settle()  # the mover has fallen behind (or Chroma fails): the writer waits, or hears why
        payloads = [pending_ops.encode(op) for op in ops]
        with self._append_lock:
            if self._closed:
                raise RuntimeError("the folder's pending writes are closed")
            self._log.append(payloads)
            for op, payload in zip(ops, payloads, strict=True):
                self._pending.append((op, len(payload)))
                self._bytes += len(payload)
        self._wake.set()

    def _flush_group(self) -> None:
        """Ops this thread holds in a group are appended before it reads (a read sees its own writes)."""
        held = getattr(self._group, "ops", None)
        if held:
            self._group.ops = []
            self._append(held)

    def _check(self, op: Op) -> None:
        """Refuse now what Chroma would refuse when the op is moved: an acknowledged write must be one it takes."""
        from chromadb.api.types import validate_documents, validate_ids, validate_metadatas

        validate_ids(list(op.ids))
        if op.metadatas is not None:
            if len(op.metadatas) != len(op.ids):
                raise ValueError(f"{len(op.metadatas)} metadatas for {len(op.ids)} ids")
            validate_metadatas([m for m in op.metadatas if m is not None])
            for meta in op.metadatas:
                for value in (meta or {}).values():
                    if isinstance(value, float) and not math.isfinite(value):
                        raise ValueError(f"a metadata value must be a finite number, got {value}")
        if op.documents is not None:
            if len(op.documents) != len(op.ids):
                raise ValueError(f"{len(op.documents)} documents for {len(op.ids)} ids")
            validate_documents(list(op.documents), nullable=True)  # type: ignore[arg-type]
        if op.embeddings is not None:
            if op.embeddings.ndim != 2 or len(op.embeddings) != len(op.ids):
                raise ValueError(f"{len(op.embeddings)} embeddings for {len(op.ids)} ids")
            if not np.isfinite(op.embeddings).all():
                raise ValueError("an embedding holds a value that is not a finite number")
            dim = self._dimension(op.collection)
            if dim is not None and op.embeddings.shape[1] != dim:
                raise ValueError(
                    f"Collection expecting embedding with dimension of {dim}, got {op.embeddings.shape[1]}"
                )

    def _dimension(self, name: str) -> int | None:
        if name not in self._dims:
            with self._apply_lock:
                got = self._raw[name].get(limit=1, include=["embeddings"]).get("embeddings")
            if got is not None and len(got):
                self._dims[name] = len(got[0])
            else:
                with self._append_lock:
                    ops = [op for op, _ in self._pending] + self._group_ops()
                    dims = [op.embeddings.shape[1] for op in ops if op.collection == name and op.embeddings is not None]
                if not dims:
                    return None
                self._dims[name] = dims[0]
        return self._dims[name]

    def _group_ops(self) -> list[Op]:
        return [op for op in (getattr(self._group, "ops", None) or []) if op.embeddings is not None]

    # ------------------------------------------------------------------ moving
    def settle(self) -> None:
        """Move every pending write into Chroma now and empty the log (raises what Chroma raises; the writes stay
        pending)."""
        self._flush_group()
        with self._apply_lock, self._append_lock:
            if self._pending:
                self._move([op for op, _ in self._pending])
                self._pending.clear()
                self._bytes = 0
            self._log.clear()
            self.failure = None

    def settled(self, fn: Callable[[], T]) -> T:
        """``fn()`` (a Chroma call made directly) after every pending write is moved, with no move beside it."""
        self._flush_group()
        with self._apply_lock:
            with self._append_lock:
                if self._pending:
                    self._move([op for op, _ in self._pending])
                    self._pending.clear()
                    self._bytes = 0
                self._log.clear()
            return fn()

    def _move(self, ops: Sequence[Op]) -> None:
        for call in pending_ops.calls_of(ops, self.max_batch):
            raw = self._raw[call.collection]
            if call.kind == "upsert":
                raw.upsert(
                    ids=list(call.ids),
                    embeddings=call.embeddings,  # type: ignore[arg-type]
                    documents=list(call.documents) if call.documents is not None else None,  # type: ignore[arg-type]
                    metadatas=list(call.metadatas) if call.metadatas is not None else None,  # type: ignore[arg-type]
                )
            else:
                raw.delete(ids=list(call.ids), where=call.where)

    def _run(self) -> None:
        while True:
            self._wake.wait()
            if self._closed:
                return
            time.sleep(MOVE_DELAY)
            self._wake.clear()
            try:
                self._move_some()
            except Exception as exc:  # the writes stay in the log; a read settles and hears the error
                self.failure = exc
                _log.warning("memtend: moving pending writes into Chroma failed; retrying", exc_info=True)
                time.sleep(_RETRY_AFTER)
                self._wake.set()

    def _move_some(self) -> None:
        with self._apply_lock:
            with self._append_lock:
                batch = [op for op, _ in self._pending]
            if not batch:
                return
            self._move(batch)
            with self._append_lock:
                self._bytes -= sum(size for _, size in self._pending[: len(batch)])
                del self._pending[: len(batch)]
                if not self._pending:
                    self._log.clear()
            self.failure = None

    def _replay(self) -> int:
        """Move what a process killed before its writes were moved left in the log; how many ops."""
        ops: list[Op] = []
        for raw in self._log.records():
            try:
                ops.append(pending_ops.decode(raw))
            except (ValueError, KeyError, TypeError) as exc:
                raise StoreDamagedError(
                    f"{self._log.path} holds a write memtend cannot read ({exc}); move the file away to open the "
                    "folder without it (the writes in it are then lost)"
                ) from exc
        if ops:
            _log.warning("memtend: moving %d writes a closed or killed process left pending", len(ops))
            self._move(ops)
        self._log.clear()
        return len(ops)

    def close(self) -> None:
        """Move what is pending, stop the mover, close the log."""
        try:
            self.settle()
        finally:
            with self._append_lock:
                self._closed = True
            self._wake.set()
            self._thread.join()
            self._log.close()

    # ------------------------------------------------------------------ reads
    def pending_ids(self, name: str) -> set[str]:
        with self._append_lock:
            return pending_ops.ids_of((op for op, _ in self._pending), name)

    def get_by_ids(self, name: str, ids: list[str], where: dict[str, Any] | None, include: list[str]) -> Any:
        """Chroma's answer to ``get(ids=..., where=..., include=...)`` with the pending writes applied."""
        self._flush_group()
        raw = self._raw[name]
        if not ids or not (self.pending_ids(name) & set(ids)):
            return raw.get(ids=ids, where=where, include=include)  # type: ignore[arg-type]
        with self._apply_lock:
            with self._append_lock:
                pending = [op for op, _ in self._pending if op.collection == name]
            full = ["documents", "metadatas", *(["embeddings"] if "embeddings" in include else [])]
            got = raw.get(ids=ids, include=full)  # type: ignore[arg-type]
        rows: dict[str, Row | None] = {}
        embeddings = got.get("embeddings")
        for n, i in enumerate(got["ids"]):
            emb = embeddings[n] if embeddings is not None else None
            rows[i] = Row(got["documents"][n], dict(got["metadatas"][n] or {}), emb)  # type: ignore[index]
        wanted = set(ids)
        for op in pending:
            for n, i in enumerate(op.ids):
                if i in wanted:
                    rows[i] = pending_ops.apply_op(rows.get(i), op, n)
        found = [
            (i, row)
            for i in dict.fromkeys(ids)
            if (row := rows.get(i)) is not None and (where is None or pending_ops.where_matches(where, row.metadata))
        ]
        return {
            "ids": [i for i, _ in found],
            "documents": [r.document for _, r in found] if "documents" in include else None,
            "metadatas": [r.metadata or None for _, r in found] if "metadatas" in include else None,
            "embeddings": np.asarray([r.embedding for _, r in found]) if "embeddings" in include else None,
            "uris": None,
            "data": None,
            "included": list(include),
        }


class DeferredCollection:
    """A Chroma collection whose upserts and deletes by id go through the folder's :class:`WriteBehind`; every
    other call is made on the collection itself once nothing is pending."""

    def __init__(self, behind: WriteBehind, name: str, raw: Collection) -> None:
        self._behind = behind
        self._name = name
        self.raw = raw

    def __getattr__(self, attr: str) -> Any:
        return getattr(self.raw, attr)

    def upsert(
        self,
        ids: Any,
        embeddings: Any = None,
        metadatas: Any = None,
        documents: Any = None,
        **other: Any,
    ) -> None:
        if other or embeddings is None:
            self._behind.settled(
                lambda: self.raw.upsert(
                    ids=ids, embeddings=embeddings, metadatas=metadatas, documents=documents, **other
                )
            )
            return
        ids = [ids] if isinstance(ids, str) else list(ids)
        self._behind.append(
            Op(
                self._name,
                "upsert",
                tuple(ids),
                np.asarray(embeddings, dtype=np.float32).reshape(len(ids), -1),
                tuple(documents) if documents is not None else None,
                tuple(dict(m) if m is not None else None for m in metadatas) if metadatas is not None else None,
            )
        )

    def delete(self, ids: Any = None, where: Any = None, where_document: Any = None) -> None:
        if ids is None or where_document is not None or not pending_ops.simple_where(where):
            self._behind.settled(lambda: self.raw.delete(ids=ids, where=where, where_document=where_document))
            return
        ids = [ids] if isinstance(ids, str) else list(ids)
        if ids:
            self._behind.append(Op(self._name, "delete", tuple(ids), where=where))

    def get(
        self,
        ids: Any = None,
        where: Any = None,
        limit: int | None = None,
        offset: int | None = None,
        where_document: Any = None,
        include: Any = ("metadatas", "documents"),
    ) -> Any:
        if ids is None or limit is not None or offset is not None or where_document is not None:
            return self._behind.settled(
                lambda: self.raw.get(
                    ids=ids, where=where, limit=limit, offset=offset, where_document=where_document, include=include
                )
            )
        if not pending_ops.simple_where(where):
            return self._behind.settled(lambda: self.raw.get(ids=ids, where=where, include=include))
        ids = [ids] if isinstance(ids, str) else list(ids)
        return self._behind.get_by_ids(self._name, ids, where, list(include))

    def _settled_call(self, method: str, *args: Any, **kwargs: Any) -> Any:
        return self._behind.settled(lambda: getattr(self.raw, method)(*args, **kwargs))

    def query(self, *args: Any, **kwargs: Any) -> Any:
        return self._settled_call("query", *args, **kwargs)

    def count(self) -> int:
        return int(self._settled_call("count"))

    def update(self, *args: Any, **kwargs: Any) -> Any:
        return self._settled_call("update", *args, **kwargs)

    def add(self, *args: Any, **kwargs: Any) -> Any:
        return self._settled_call("add", *args, **kwargs)

    def peek(self, *args: Any, **kwargs: Any) -> Any:
        return self._settled_call("peek", *args, **kwargs)

    def modify(self, *args: Any, **kwargs: Any) -> Any:
        return self._settled_call("modify", *args, **kwargs)
