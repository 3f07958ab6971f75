"""The document store: one user's JSON and bytes values under (namespace, key), for what adapters keep.

LangGraph's store items and checkpoints, LangChain and LlamaIndex chat messages live here, next to the user's
memories, so isolation, export (``user.export()["documents"]``) and ``Memory.erase_user`` cover them with no code
of their own. Get a store with ``memory.user(uid).documents()`` (no I/O on creation).

- Namespaces are tuples of non-empty str labels (no ``"\\x00"``); a prefix is segment-bounded: ``("a",)`` covers
  ``("a",)`` and ``("a", "b")``, not ``("ab",)``; ``()`` covers everything of the user.
- Values are JSON (returned as stored) or ``bytes`` (returned as bytes), up to ``Memory(max_document_bytes=...)``
  bytes (``MAX_VALUE_BYTES``, 64 MB, by default; the JSON text or the bytes); larger raises
  :class:`DocumentTooLargeError`, before the gate reads it. Big values are split across rows and written in the
  same single Chroma call as the rest of the write.
- TTL: ``ttl`` seconds from the write; an expired document is never returned (a ``get`` that meets one deletes
  it; searches leave it out), ``touch``/``refresh_ttl`` push the expiry to now + the document's ttl, ``sweep``
  deletes what expired (``Memory.sweep_documents`` for every user).
- Ordering (without ``query``): ``insertion`` (default) is the order keys were first put; an update keeps its
  place, a delete and re-put moves it to the end. It is Chroma's own ``get`` order (rows in the order they were
  first added), so a page is read with Chroma's limit/offset. ``key`` and ``updated`` sort the matching rows'
  metadata in Python, then read only the page's values.
- Filters: ``{"field": value}`` or ``{"field": {"$eq|$ne|$gt|$gte|$lt|$lte": value}}``; dotted fields are paths
  into JSON object values. Equality is JSON's (``True`` is not ``1``; ``1 == 1.0``; objects and arrays compare
  whole); ``$ne`` matches a missing field; ordering operators compare numbers with numbers and strings with
  strings and never match anything else or a missing field. Scalar fields of object values are kept as Chroma
  metadata, so scalar filters are evaluated by Chroma; others are checked in Python over the namespace.

The write gate, decided in one place (:func:`memtend.documents.values.gated_value`): with ``gate="text"`` (the
default) every str in a JSON value, every object key in it, the document key and the namespace labels pass the
core's write gate, because text in a chat message or a store item is text a person or a model wrote: a secret in
the value raises :class:`SensitiveDataError` (or is masked with ``redact=True``), one in a key or label raises
:class:`SensitiveIdentifierError` (an identifier cannot be masked), and nothing of the call is written. ``bytes``
values (serialized checkpoints, opaque blobs) are not gated. ``gate="off"`` is for stores of opaque data only: it
leaves values unread, but keys and labels (thread ids, checkpoint ids) are names and are gated in every mode.
"""

from __future__ import annotations

import asyncio
import base64
import logging
import weakref
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any, Literal, Union

import numpy as np

from memtend.arguments import describe
from memtend.documents.staging import PlannedWrite, write_planned
from memtend.documents.staging import live as _live
from memtend.documents.values import (
    MAX_FILTER_FIELDS,
    MAX_VALUE_BYTES,
    PARTIAL,
    Clause,
    GateMode,
    Namespace,
    check_index,
    check_json,
    check_label,
    check_namespace,
    check_page,
    check_ttl,
    decode_value,
    encode_value,
    filter_fields,
    gated_value,
    parse_filter,
    texts_at,
)
from memtend.errors import DocumentTooLargeError, InvalidInputError, ReservedNamespaceError
from memtend.identity import SHARED_OWNER
from memtend.records import MAX_TEXT_CHARS, check_encodable, check_time, now
from memtend.storage.document_rows import VSLOT, DocRow, DocumentRows, doc_id, vector_slot

if TYPE_CHECKING:
    from memtend.handle import MemoryHandle

__all__ = [
    "MAX_FILTER_FIELDS",
    "MAX_VALUE_BYTES",
    "DeleteDocument",
    "Document",
    "DocumentOp",
    "DocumentStore",
    "DocumentTooLargeError",
    "ExportReader",
    "GateMode",
    "GetDocument",
    "ListNamespaces",
    "Namespace",
    "PutDocument",
    "ReservedNamespaceError",
    "SearchDocuments",
    "add_export_reader",
]

Order = Literal["insertion", "key", "updated"]

PUBLIC_SPACE = ""
CORE_SPACE = "core"


@dataclass(frozen=True)
class Document:
    namespace: Namespace
    key: str
    value: Any
    created_at: float
    updated_at: float
    expires_at: float | None = None
    score: float | None = None


@dataclass(frozen=True)
class GetDocument:
    namespace: Namespace
    key: str
    refresh_ttl: bool = False


@dataclass(frozen=True)
class PutDocument:
    namespace: Namespace
    key: str
    value: Any
    ttl: float | None = None
    index: list[str] | bool | None = None
    if_absent: bool = False  # this put only where no live document has the key (as put_many(if_absent=True))


@dataclass(frozen=True)
class DeleteDocument:
    namespace: Namespace
    key: str


@dataclass(frozen=True)
class SearchDocuments:
    namespace_prefix: Namespace
    filter: dict[str, Any] | None = None
    query: str | None = None
    limit: int = 10
    offset: int = 0
    refresh_ttl: bool = False


@dataclass(frozen=True)
class ListNamespaces:
    prefix: Namespace | None = None
    suffix: Namespace | None = None
    max_depth: int | None = None
    limit: int = 100
    offset: int = 0


DocumentOp = Union[GetDocument, PutDocument, DeleteDocument, SearchDocuments, ListNamespaces]  # noqa: UP007


# --------------------------------------------------------------------------------------------- the store
class DocumentStore:
    """One user's documents. Get it with ``memory.user(uid).documents()``; it does no I/O on creation."""

    def __init__(
        self, memory: MemoryHandle, user_id: str, *, gate: GateMode = "text", redact: bool = False, _space: str = ""
    ) -> None:
        if gate not in ("text", "off"):
            raise InvalidInputError(f"gate must be 'text' or 'off', got {describe(gate)}")
        self._memory = memory
        self.user_id = user_id
        self.gate: GateMode = gate
        self.redact = bool(redact)
        self._space = _space

    def __repr__(self) -> str:
        return f"DocumentStore(user_id={self.user_id!r})"

    @property
    def _rows(self) -> DocumentRows:
        """Read through the handle on every call, so a store obtained before ``close()`` refuses after it."""
        return self._memory.storage.documents

    def _id(self, namespace: Namespace, key: str) -> str:
        return doc_id(self.user_id, self._space, namespace, key)

    def _document(self, row: DocRow) -> Document:
        exp = row.expires_at
        return Document(
            namespace=row.namespace,
            key=str(row.fields["key"]),
            value=decode_value(str(row.fields.get("type", "json")), row.text or ""),
            created_at=float(row.fields["created_at"]),
            updated_at=float(row.fields["updated_at"]),
            expires_at=exp,
        )

    # ------------------------------------------------------------------ reads
    def get(self, namespace: Namespace, key: str, *, refresh_ttl: bool = False) -> Document | None:
        namespace = check_namespace(namespace)
        key = check_label(key, "key")
        return self._get_many([(namespace, key)], refresh_ttl=refresh_ttl)[0]

    def get_many(self, namespace: Namespace, keys: Sequence[str]) -> dict[str, Document]:
        namespace = check_namespace(namespace)
        keys = [check_label(k, "key") for k in _as_list(keys, "keys")]
        found = self._get_many([(namespace, k) for k in keys], refresh_ttl=False)
        return {d.key: d for d in found if d is not None}

    def _get_many(self, wanted: Sequence[tuple[Namespace, str]], *, refresh_ttl: bool) -> list[Document | None]:
        ids = [self._id(ns, k) for ns, k in wanted]
        rows = self._rows.read(self.user_id, list(dict.fromkeys(ids)))
        t = now()
        live = {i: r for i, r in rows.items() if _live(r, t)}
        if len(live) < len(rows):
            self._rows.remove([r for i, r in rows.items() if i not in live], t)
        if refresh_ttl:
            live = self._refresh(live, t)
        docs = {i: self._document(r) for i, r in live.items()}
        return [docs.get(i) for i in ids]

    def _refresh(self, rows: dict[str, DocRow], t: float) -> dict[str, DocRow]:
        expiries = {i: t + float(r.fields["ttl"]) for i, r in rows.items() if r.fields.get("ttl") is not None}
        if not expiries:
            return rows
        self._rows.touch(expiries)
        return {
            i: DocRow(r.id, r.space, r.namespace, r.text, {**r.fields, "exp": expiries[i]}) if i in expiries else r
            for i, r in rows.items()
        }

    def search(
        self,
        namespace_prefix: Namespace,
        *,
        filter: dict[str, Any] | None = None,
        query: str | None = None,
        limit: int = 10,
        offset: int = 0,
        refresh_ttl: bool = False,
        order: Order = "insertion",
        descending: bool = False,
    ) -> list[Document]:
        """Documents under a namespace prefix that match ``filter``, in ``order``, paged by ``limit``/``offset``."""
        prefix = check_namespace(namespace_prefix, "namespace_prefix", empty=True)
        clauses = parse_filter(filter)
        limit, offset = check_page(limit, offset)
        if order not in ("insertion", "key", "updated"):
            raise InvalidInputError(f"order must be 'insertion', 'key' or 'updated', got {describe(order)}")
        t = now()
        if query is not None:
            if not isinstance(query, str):
                raise InvalidInputError(f"query must be a str, got {type(query).__name__}")
            if len(query) > MAX_TEXT_CHARS:
                raise InvalidInputError(f"query is {len(query)} characters; the limit is {MAX_TEXT_CHARS}")
            check_encodable(query, "query")
            rows, scores = self._ranked(prefix, clauses, query, t, limit, offset)
            if refresh_ttl:
                rows = list(self._refresh({r.id: r for r in rows}, t).values())
            return [replace(self._document(r), score=scores.get(r.id)) for r in rows]
        pushed = [c.pushable() for c in clauses]
        exact = all(p is not None for p in pushed) and not (
            clauses and self._rows.any_partial(self.user_id, self._space, prefix)
        )
        if exact and order == "insertion" and not descending:
            rows = self._rows.find(
                self.user_id, self._space, prefix, [p for p in pushed if p], at=t, limit=limit, offset=offset
            )
        else:
            rows = self._select(prefix, clauses, pushed if exact else [], t, order, descending, limit, offset)
        live = {r.id: r for r in rows}
        if refresh_ttl:
            live = self._refresh(live, t)
        return [self._document(r) for r in live.values()]

    def _ranked(
        self, prefix: Namespace, clauses: list[Clause], query: str, t: float, limit: int, offset: int
    ) -> tuple[list[DocRow], dict[str, float]]:
        """A page of documents ranked by similarity of their indexed texts to ``query`` (best text per document),
        then the unindexed matches in insertion order (score None)."""
        need = limit + offset
        q = self._memory.embed([query])[0]
        scores: dict[str, float] = {}
        ranked: list[DocRow] = []
        n = max(need * 2, 10)
        while True:
            hits = self._rows.nearest(self.user_id, self._space, prefix, q, n)
            rows = self._rows.read(self.user_id, list(dict.fromkeys(d for d, _, _, _ in hits)))
            best: dict[str, float] = {}
            for doc, slot, num, score in hits:
                # a vector of the other set, or past a document's ``vecs``, is not its value's (a leftover, or a
                # write that never reached its rows)
                row = rows.get(doc)
                if row is None or slot != vector_slot(row) or num >= int(row.fields.get("vecs") or 0):
                    continue
                if score > best.get(doc, -2.0):
                    best[doc] = score
            ranked = [rows[d] for d in best if _live(rows[d], t) and (not clauses or _row_matches(rows[d], clauses))]
            scores = {r.id: best[r.id] for r in ranked}
            if len(ranked) >= need or len(hits) < n:
                break
            n *= 4
        ranked.sort(key=lambda r: -scores[r.id])
        if len(ranked) < need:  # every scored match is in: the unscored ones follow
            pushed = [c.pushable() for c in clauses]
            exact = all(p is not None for p in pushed)
            rest = self._rows.find(self.user_id, self._space, prefix, [p for p in pushed if p] if exact else [], at=t)
            seen = {r.id for r in ranked}
            ranked += [r for r in rest if r.id not in seen and not r.fields.get("vecs") and _row_matches(r, clauses)]
        return ranked[offset : offset + limit], scores

    def _select(
        self,
        prefix: Namespace,
        clauses: list[Clause],
        pushed: Sequence[tuple[str, str, Any] | None],
        t: float,
        order: Order,
        descending: bool,
        limit: int,
        offset: int,
    ) -> list[DocRow]:
        """A page that Chroma cannot cut by itself: match (Chroma, then Python for the rest), sort, slice."""
        exact = bool(pushed) or not clauses
        if exact and order == "insertion":  # newest first: list the ids only, read the page
            ids = self._rows.find_ids(self.user_id, self._space, prefix, [p for p in pushed if p], at=t)
            ids.reverse()
            wanted = ids[offset : offset + limit]
            found = self._rows.read(self.user_id, wanted)
            return [found[i] for i in wanted if i in found]
        rows = self._rows.find(self.user_id, self._space, prefix, [p for p in pushed if p], at=t, text=not exact)
        if not exact:
            rows = [r for r in rows if _row_matches(r, clauses)]
        sort_key: Callable[[DocRow], Any] | None = {
            "key": lambda r: str(r.fields["key"]),
            "updated": lambda r: float(r.fields["updated_at"]),
        }.get(order)
        if sort_key is not None:
            rows.sort(key=sort_key, reverse=descending)
        elif descending:
            rows.reverse()
        page = rows[offset : offset + limit]
        if exact:  # only metadata was read: fetch the page's values
            full = self._rows.read(self.user_id, [r.id for r in page])
            page = [full[r.id] for r in page if r.id in full]
        return page

    def list_namespaces(
        self,
        *,
        prefix: Namespace | None = None,
        suffix: Namespace | None = None,
        max_depth: int | None = None,
        limit: int = 100,
        offset: int = 0,
    ) -> list[Namespace]:
        """Namespaces holding documents, sorted; ``"*"`` in ``prefix``/``suffix`` matches any one label;
        ``max_depth`` truncates (then deduplicates)."""
        limit, offset = check_page(limit, offset)
        pre = check_namespace(prefix, "prefix", empty=True) if prefix is not None else ()
        suf = check_namespace(suffix, "suffix", empty=True) if suffix is not None else ()
        if max_depth is not None and (not isinstance(max_depth, int) or isinstance(max_depth, bool) or max_depth < 1):
            raise InvalidInputError(f"max_depth must be an int >= 1 or None, got {describe(max_depth)}")
        fixed = tuple(_until_wildcard(pre))
        found = self._rows.namespaces(self.user_id, self._space, fixed)
        out = {
            ns[:max_depth] if max_depth is not None else ns
            for ns in found
            if _labels_match(ns[: len(pre)], pre)
            and len(ns) >= len(suf)
            and _labels_match(ns[len(ns) - len(suf) :], suf)
        }
        return sorted(out)[offset : offset + limit]

    # ------------------------------------------------------------------ writes
    def put(
        self,
        namespace: Namespace,
        key: str,
        value: Any,
        *,
        ttl: float | None = None,
        index: list[str] | bool | None = None,
        if_absent: bool = False,
    ) -> bool:
        """Store ``value`` under (namespace, key); with ``if_absent``, only when no live document has that key.
        Returns True if written."""
        return self.put_many([PutDocument(namespace, key, value, ttl, index)], if_absent=if_absent)[0]

    def put_many(self, puts: Sequence[PutDocument], *, if_absent: bool = False) -> list[bool]:
        """Store several documents, across namespaces, all or none. Returns, per put, whether it was written."""
        ops = _as_list(puts, "puts")
        for op in ops:
            if not isinstance(op, PutDocument):
                raise InvalidInputError(f"put_many takes PutDocument items, got {type(op).__name__}")
        return self._write(ops, if_absent=if_absent)

    def delete(self, namespace: Namespace, key: str) -> bool:
        return self.delete_many(namespace, [key]) > 0

    def delete_many(self, namespace: Namespace, keys: Sequence[str]) -> int:
        namespace = check_namespace(namespace)
        dels = [DeleteDocument(namespace, check_label(k, "key")) for k in _as_list(keys, "keys")]
        return sum(self._write(dels))

    def delete_prefix(self, namespace_prefix: Namespace) -> int:
        """Delete every document whose namespace starts with the prefix (segment-bounded); returns how many."""
        prefix = check_namespace(namespace_prefix, "namespace_prefix", empty=True)
        rows = self._rows.find(self.user_id, self._space, prefix, at=now(), text=False)
        if rows:
            self._rows.write(self.user_id, [], rows, {r.id: r for r in rows})
            self._memory.emit_documents_changed(self.user_id, [], rows, {})
        return len(rows)

    def touch(self, namespace: Namespace, keys: Sequence[str], ttl: float) -> int:
        """Set the expiry of live documents to now + ``ttl`` seconds (and keep ``ttl`` for later refreshes)."""
        namespace = check_namespace(namespace)
        ttl_s = check_ttl(ttl)
        if ttl_s is None:
            raise InvalidInputError("touch needs a ttl in seconds")
        ids = [self._id(namespace, check_label(k, "key")) for k in _as_list(keys, "keys")]
        t = now()
        rows = self._rows.read(self.user_id, ids, text=False)
        live = [r for r in rows.values() if _live(r, t)]
        # a document without expiry moves to the expiring scope fields: rewrite its metadata
        untimed = [r for r in live if r.expires_at is None]
        if untimed:
            full = self._rows.read(self.user_id, [r.id for r in untimed])
            rewritten = [
                DocRow(r.id, r.space, r.namespace, r.text, {**_content_fields(r), "exp": t + ttl_s, "ttl": ttl_s})
                for r in full.values()
            ]
            self._rows.write(self.user_id, rewritten, [], full)
        timed = {r.id: t + ttl_s for r in live if r.expires_at is not None}
        if timed:
            self._rows.touch(timed, ttl=ttl_s)
        return len(live)

    def sweep(self, now: float | None = None) -> int:
        """Delete this user's expired documents; returns how many."""
        t = check_time(now, "now") if now is not None else _clock()
        return self._rows.remove(self._expired(t), t, tidy=True)

    def expired_count(self, at: float) -> int:
        """How many of this user's documents have expired at ``at`` (what ``sweep(at)`` would delete)."""
        return len(self._expired(check_time(at, "at")))

    def _expired(self, t: float) -> list[DocRow]:
        return [r for r in self._rows.expired(self.user_id, t) if r.space == self._space]

    def _write(self, ops: Sequence[PutDocument | DeleteDocument], *, if_absent: bool = False) -> list[bool]:
        """Validate, gate and encode every op first (nothing is written on an error), then apply the writes as
        one Chroma write. Later ops on the same (namespace, key) win."""
        return write_planned(self._memory, [self._plan_write(ops, if_absent=if_absent)])[0]

    def _plan_write(self, ops: Sequence[PutDocument | DeleteDocument], *, if_absent: bool = False) -> PlannedWrite:
        """Everything a write does before storage: validate, gate, encode and embed each op (so what is refused
        is refused before any row is read or written); the last op on a (namespace, key) wins."""
        t = now()
        planned: dict[str, tuple[int, bool, DocRow | None]] = {}
        to_embed: dict[str, list[str]] = {}
        masked: dict[str, tuple[str, ...]] = {}
        for n, op in enumerate(ops):
            ns = check_namespace(op.namespace)
            key = check_label(op.key, "key")
            row = None
            i = self._id(ns, key)
            to_embed.pop(i, None)
            masked.pop(i, None)
            if isinstance(op, PutDocument):
                row, texts, kinds = self._planned_row(ns, key, op, t)
                if texts:
                    to_embed[i] = texts
                if kinds:
                    masked[i] = kinds
            planned[i] = (n, if_absent or (isinstance(op, PutDocument) and op.if_absent), row)
        namespaces = frozenset((self._space, check_namespace(op.namespace)) for op in ops)
        return PlannedWrite(self.user_id, self._space, len(ops), t, planned, namespaces, self._embed(to_embed), masked)

    def _embed(self, texts: dict[str, list[str]]) -> dict[str, np.ndarray]:
        """Embed every text of a write in one call of the core's model; vectors per document id."""
        flat = [t for ts in texts.values() for t in ts]
        if not flat:
            return {}
        vectors = self._memory.embed(flat)
        out, start = {}, 0
        for i, ts in texts.items():
            out[i] = vectors[start : start + len(ts)]
            start += len(ts)
        return out

    def _planned_row(
        self, ns: Namespace, key: str, op: PutDocument, t: float
    ) -> tuple[DocRow, list[str], tuple[str, ...]]:
        """The row a put writes, the texts to embed for it, and the kinds of sensitive value the gate masked."""
        ttl = check_ttl(op.ttl)
        paths = check_index(op.index)
        if not isinstance(op.value, bytes | bytearray | memoryview):
            check_json(op.value)  # before the gate reads it
        limit = self._memory.max_document_bytes
        kind, text = encode_value(op.value, limit)  # a value too large is refused before the gate reads it all
        value, masked = gated_value(  # memtend's own space gates its names itself (session ids, store keys)
            op.value, key, self.gate, redact=self.redact, namespace=ns, names=self._space != CORE_SPACE
        )
        if value is not op.value:  # masked: stored as masked
            kind, text = encode_value(value, limit)
        fields: dict[str, Any] = {"key": key, "created_at": t, "updated_at": t}
        if kind != "json":
            fields["type"] = kind
        if ttl is not None:
            fields["exp"] = t + ttl
            fields["ttl"] = ttl
        texts: list[str] = []
        if kind == "json":
            fields.update(filter_fields(value))
            texts = texts_at(value, paths)
        if texts:
            fields["vecs"] = len(texts)
        return DocRow(self._id(ns, key), self._space, ns, text, fields), texts, masked

    # ------------------------------------------------------------------ batch
    def batch(self, ops: Sequence[DocumentOp]) -> list[Any]:
        """Run ops in one go: results in op order (Get -> Document | None, Search -> list[Document],
        ListNamespaces -> list[Namespace], Put and Delete -> None). The writes are planned (and gated) before any
        read, reads see the state before the batch's writes, and the writes are applied together, all or none,
        the last op on a (namespace, key) winning. (:func:`memtend.documents.across.batch_across_users` runs
        several users' batches as one write.)"""
        ops = _as_list(ops, "ops")
        writes = self._batch_writes(ops)
        plan = self._plan_write(writes) if writes else None
        results = self._batch_reads(ops)
        if plan is not None:
            write_planned(self._memory, [plan])
        return results

    def _batch_writes(self, ops: list[DocumentOp]) -> list[PutDocument | DeleteDocument]:
        """The writes of a batch, every op's type checked first."""
        writes: list[PutDocument | DeleteDocument] = []
        for op in ops:
            if isinstance(op, PutDocument | DeleteDocument):
                writes.append(op)
            elif not isinstance(op, GetDocument | SearchDocuments | ListNamespaces):
                raise InvalidInputError(f"batch takes document ops, got {type(op).__name__}")
        return writes

    def _batch_reads(self, ops: list[DocumentOp]) -> list[Any]:
        """The results of a batch's reads in op order (None for its writes)."""
        results: list[Any] = [None] * len(ops)
        gets = [(n, op) for n, op in enumerate(ops) if isinstance(op, GetDocument)]
        for refresh in (False, True):
            group = [(n, op) for n, op in gets if op.refresh_ttl == refresh]
            if group:
                docs = self._get_many(
                    [(check_namespace(op.namespace), check_label(op.key, "key")) for _, op in group],
                    refresh_ttl=refresh,
                )
                for (n, _), doc in zip(group, docs, strict=True):
                    results[n] = doc
        for n, op in enumerate(ops):
            if isinstance(op, SearchDocuments):
                results[n] = self.search(
                    op.namespace_prefix,
                    filter=op.filter,
                    query=op.query,
                    limit=op.limit,
                    offset=op.offset,
                    refresh_ttl=op.refresh_ttl,
                )
            elif isinstance(op, ListNamespaces):
                results[n] = self.list_namespaces(
                    prefix=op.prefix, suffix=op.suffix, max_depth=op.max_depth, limit=op.limit, offset=op.offset
                )
        return results

    # ------------------------------------------------------------------ export
    def export(self) -> list[dict[str, Any]]:
        """Every document of the user as JSON-able data (bytes values as base64 text)."""
        out = []
        for r in self._rows.find(self.user_id, self._space, (), at=now()):
            doc = self._document(r)
            value = doc.value
            entry = {
                "namespace": list(doc.namespace),
                "key": doc.key,
                "value": base64.b64encode(value).decode("ascii") if isinstance(value, bytes) else value,
                "type": str(r.fields.get("type", "json")),
                "created_at": doc.created_at,
                "updated_at": doc.updated_at,
                "expires_at": doc.expires_at,
            }
            if isinstance(value, bytes) and doc.namespace:
                readable = _readable(self._memory, doc.namespace, doc.key, value)
                if readable is not None:
                    entry["readable"] = readable
            out.append(entry)
        return out

    # ------------------------------------------------------------------ async twins
    async def aget(self, namespace: Namespace, key: str, *, refresh_ttl: bool = False) -> Document | None:
        return await asyncio.to_thread(self.get, namespace, key, refresh_ttl=refresh_ttl)

    async def aget_many(self, namespace: Namespace, keys: Sequence[str]) -> dict[str, Document]:
        return await asyncio.to_thread(self.get_many, namespace, keys)

    async def aput(
        self,
        namespace: Namespace,
        key: str,
        value: Any,
        *,
        ttl: float | None = None,
        index: list[str] | bool | None = None,
        if_absent: bool = False,
    ) -> bool:
        return await asyncio.to_thread(self.put, namespace, key, value, ttl=ttl, index=index, if_absent=if_absent)

    async def aput_many(self, puts: Sequence[PutDocument], *, if_absent: bool = False) -> list[bool]:
        return await asyncio.to_thread(self.put_many, puts, if_absent=if_absent)

    async def adelete(self, namespace: Namespace, key: str) -> bool:
        return await asyncio.to_thread(self.delete, namespace, key)

    async def adelete_many(self, namespace: Namespace, keys: Sequence[str]) -> int:
        return await asyncio.to_thread(self.delete_many, namespace, keys)

    async def adelete_prefix(self, namespace_prefix: Namespace) -> int:
        return await asyncio.to_thread(self.delete_prefix, namespace_prefix)

    async def asearch(
        self,
        namespace_prefix: Namespace,
        *,
        filter: dict[str, Any] | None = None,
        query: str | None = None,
        limit: int = 10,
        offset: int = 0,
        refresh_ttl: bool = False,
        order: Order = "insertion",
        descending: bool = False,
    ) -> list[Document]:
        return await asyncio.to_thread(
            self.search,
            namespace_prefix,
            filter=filter,
            query=query,
            limit=limit,
            offset=offset,
            refresh_ttl=refresh_ttl,
            order=order,
            descending=descending,
        )

    async def alist_namespaces(
        self,
        *,
        prefix: Namespace | None = None,
        suffix: Namespace | None = None,
        max_depth: int | None = None,
        limit: int = 100,
        offset: int = 0,
    ) -> list[Namespace]:
        return await asyncio.to_thread(
            self.list_namespaces, prefix=prefix, suffix=suffix, max_depth=max_depth, limit=limit, offset=offset
        )

    async def atouch(self, namespace: Namespace, keys: Sequence[str], ttl: float) -> int:
        return await asyncio.to_thread(self.touch, namespace, keys, ttl)

    async def asweep(self, now: float | None = None) -> int:
        return await asyncio.to_thread(self.sweep, now)

    async def abatch(self, ops: Sequence[DocumentOp]) -> list[Any]:
        return await asyncio.to_thread(self.batch, ops)

    async def aexpired_count(self, at: float) -> int:
        return await asyncio.to_thread(self.expired_count, at)

    async def aexport(self) -> list[dict[str, Any]]:
        return await asyncio.to_thread(self.export)


ExportReader = Callable[[Namespace, str, bytes], Any]
"""Reads one bytes document (namespace, key, value) as JSON-able data a person can read, or None."""

_export_readers: weakref.WeakKeyDictionary[MemoryHandle, dict[str, ExportReader]] = weakref.WeakKeyDictionary()
_log = logging.getLogger("memtend.documents")


def add_export_reader(memory: MemoryHandle, root: str, reader: ExportReader) -> None:
    """Show the bytes documents under namespace root ``root`` in this Memory's exports as ``reader`` reads them
    (a ``"readable"`` entry beside the base64 ``"value"``). The core keeps such values opaque (a checkpoint is its
    framework's serialization); the adapter that wrote them registers the decoder, holding whatever it needs
    (a serializer, a key). A later reader for the same root replaces the earlier one."""
    if not isinstance(root, str) or not root:
        raise InvalidInputError(f"an export reader is registered for a namespace root (a label), got {describe(root)}")
    if not callable(reader):
        raise InvalidInputError(f"an export reader is a callable (namespace, key, value), got {describe(reader)}")
    _export_readers.setdefault(memory, {})[root] = reader


def _readable(memory: MemoryHandle, namespace: Namespace, key: str, value: bytes) -> Any:
    """The registered reader's view of a bytes document; a reader that fails leaves the export without it (the
    bytes are still exported, so nothing is lost) and is logged by exception type only (never the value)."""
    reader = _export_readers.get(memory, {}).get(namespace[0])
    if reader is None:
        return None
    try:
        return reader(namespace, key, value)
    except Exception as exc:
        _log.warning("the export reader for %r could not read a document (%s)", namespace[0], type(exc).__name__)
        return None


def core_documents(memory: MemoryHandle, user_id: str) -> DocumentStore:
    """The user's documents in memtend's reserved space (session state, ledger, keyed stores): no public call
    reaches, lists or collides with them."""
    return DocumentStore(memory, user_id, gate="off", _space=CORE_SPACE)


def reserved_documents(memory: MemoryHandle, user_id: str) -> list[Document]:
    """Every live document of the user in the reserved space, in insertion order (for export)."""
    docs = core_documents(memory, user_id)
    return [docs._document(r) for r in docs._rows.find(user_id, CORE_SPACE, (), at=now())]


def document_owners(memory: MemoryHandle, namespace_prefix: Namespace) -> list[str]:
    prefix = check_namespace(namespace_prefix, "namespace_prefix", empty=True)
    return memory.storage.documents.owners(PUBLIC_SPACE, prefix)


def shared_namespaces(memory: MemoryHandle) -> tuple[Namespace, ...]:
    """The namespaces (two labels deep) of documents kept for no one user (``memtend.identity.SHARED_OWNER``, what
    an adapter was told is shared): an export and an erasure receipt name them."""
    docs = DocumentStore(memory, SHARED_OWNER, gate="off")
    return tuple(docs.list_namespaces(max_depth=2, limit=1000))


def sweep_documents(memory: MemoryHandle, at: float | None = None) -> int:
    t = check_time(at, "now") if at is not None else _clock()
    rows = memory.storage.documents
    return rows.remove(rows.expired(None, t), t, tidy=True)


_clock = now


def _content_fields(row: DocRow) -> dict[str, Any]:
    """A stored row's own fields (no scope codes or row bookkeeping), to write it again."""
    return {
        k: v
        for k, v in row.fields.items()
        if k in ("key", "created_at", "updated_at", "type", "exp", "ttl", "vecs", VSLOT, PARTIAL) or k.startswith("f:")
    }


def _row_matches(row: DocRow, clauses: list[Clause]) -> bool:
    # bytes values have no fields (only $ne matches them, as in Chroma)
    value = None if row.fields.get("type") == "bytes" else decode_value("json", row.text or "null")
    return all(c.matches(value) for c in clauses)


def _until_wildcard(labels: Namespace) -> list[str]:
    out = []
    for label in labels:
        if label == "*":
            break
        out.append(label)
    return out


def _labels_match(labels: Namespace, pattern: Namespace) -> bool:
    return len(labels) == len(pattern) and all(p in ("*", a) for a, p in zip(labels, pattern, strict=True))


def _as_list(items: object, what: str) -> list[Any]:
    if isinstance(items, str | bytes) or not isinstance(items, Sequence | set | frozenset):
        if hasattr(items, "__iter__") and not isinstance(items, str | bytes | Mapping):
            return list(items)
        raise InvalidInputError(f"{what} must be a sequence, got {type(items).__name__}")
    return list(items)
