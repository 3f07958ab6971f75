"""Document rows: the row layout of the document store and the reads and writes of its rows."""

from __future__ import annotations

import contextlib
import functools
import hashlib
import json
import logging
import threading
import time
import uuid
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
from chromadb.api.models.Collection import Collection

from memtend.documents.values import PARTIAL
from memtend.errors import InvalidInputError, StorageUnavailableError
from memtend.storage import prefix_rows
from memtend.storage.chroma import NO_VECTOR, Where, guarded
from memtend.storage.prefix_rows import PREFIX_KINDS, PrefixAnswers, prefix_meta, prefix_row_id
from memtend.storage.row_cache import RowCache
from memtend.storage.write_behind import WriteBehind

_log = logging.getLogger("memtend")
# A document write of more rows than one Chroma call takes is journaled: a row in the documents collection with
# the whole write as JSON (``change``), sent in its first call and deleted after its last (``DocumentRows.write``);
# one a kill leaves behind is rolled forward when the store is next opened (``DocumentRows.recover``).
DOC_JOURNAL = "doc_journal"
DOC_JOURNAL_PREFIX = "dj:"

# Row layout of the document store (``<prefix>_documents``). Chroma evaluates every clause of a where-filter over
# the whole collection (a clause costs about as much as the rows it matches, whatever the limit), so no read adds
# a clause that matches every row of a user or of the collection. Instead one "scope code" field per namespace
# depth names user, space and namespace at once: ``p<d>`` (``t<d>`` for rows with an expiry) holds
# ``[user_id, space, *namespace[:d]]`` as JSON, so a segment-bounded prefix of depth d is one equality clause.
#
# - document rows: ``user_id``, ``key``, ``depth``, the scope codes, ``created_at``, ``updated_at``, ``type``
#   (json | bytes), ``parts`` (when the text is split), ``exp`` and ``ttl`` (rows with an expiry), ``f:<path>``
#   (filterable scalar fields of a JSON object value; see ``documents.filter_fields``); ``fpart`` on a document whose
#   filter fields could not all be kept (its filters are checked in Python);
# - chunk rows (a text longer than ``INLINE_CHARS`` is kept in pieces of ``CHUNK_CHARS``, the document row's own
#   text left empty): ``user_id``, ``of`` (the document row's id), ``piece`` (the text: Chroma indexes a row's
#   document for full-text search, which costs several times the write of the same text as a metadata value; rows
#   written before held the piece as their document, which is still read);
# - namespace rows, one per (user, space, namespace) holding documents: ``user_id``, ``depth``, ``count``,
#   ``m<d>`` (the scope codes) and ``o<d>`` (the same without the user, for ``Memory.document_owners``);
# - prefix rows (``expiring`` / ``partial``), one per (user, space, prefix) under which a document with an expiry
#   (or without all its filter fields) was written: a search elsewhere needs no expiry clause (and a filter no
#   Python check), which an id read tells; below the space's root they carry ``at`` (when written) and ``scope``
#   (the prefix's scope code), by which upkeep removes those of prefixes left holding no document;
# - tombstones (``dead``, every other field but ``user_id`` cleared): what one atomic upsert leaves of rows it
#   removes; deleted right after (``where dead``), and by erasure.
# - vector rows (``<prefix>_document_vectors``): ``<doc id>~<n>`` (set 0) or ``<doc id>~1.<n>`` (set 1) for the
#   n-th indexed text of a document, with ``user_id``, ``of`` and the ``p<d>`` scope codes; a document row's
#   ``vecs`` says how many are current and ``vslot`` which set (absent: 0). A write's vectors go before its rows
#   (a journaled write rolled forward needs them in place), into the set the stored row does not read: a write
#   killed between the two leaves the stored document ranked by its own vectors, the new ones unread.
# Chroma returns ``get`` results in the order rows were first added (an upsert keeps a row's place; a delete and
# add moves it to the end), which is the documents' insertion order, paged by Chroma's own limit/offset.

CHUNK_CHARS = 1_000_000
INLINE_CHARS = 256_000
PIECE = "piece"
_DOC_FIELDS = ("user_id", "key", "depth", "created_at", "updated_at", "type", "parts", "exp", "ttl")


VSLOT = "vslot"


def vector_id(row_id: str, slot: int, n: int) -> str:
    """The id of a document's n-th vector in one of its two sets (set 0 keeps the ids written before sets)."""
    return f"{row_id}~{n}" if slot == 0 else f"{row_id}~{slot}.{n}"


def vector_slot(row: DocRow | None) -> int:
    """The set of vector ids a stored document row reads."""
    return int((row.fields.get(VSLOT) if row is not None else 0) or 0)


def _put_slot(row: DocRow, old: DocRow | None, vectors: dict[str, Any]) -> int:
    """The set a put's row reads: new vectors go to the set the stored row does not read; a rewrite without new
    vectors keeps the stored row's set."""
    if row.id not in vectors:
        return vector_slot(old) if old is not None else vector_slot(row)
    return 1 - vector_slot(old) if old is not None else 0


def scope_code(user_id: str, space: str, labels: Sequence[str]) -> str:
    return json.dumps([user_id, space, *labels], ensure_ascii=False)


def _owner_code(space: str, labels: Sequence[str]) -> str:
    return json.dumps([space, *labels], ensure_ascii=False)


def doc_id(user_id: str, space: str, namespace: Sequence[str], key: str) -> str:
    return "doc:" + hashlib.sha256(json.dumps([user_id, space, list(namespace), key]).encode()).hexdigest()[:40]


def _marker_id(user_id: str, space: str, namespace: Sequence[str]) -> str:
    return "ns:" + hashlib.sha256(json.dumps([user_id, space, list(namespace)]).encode()).hexdigest()[:40]


@dataclass(frozen=True)
class DocRow:
    """One document as stored: its namespace and text, and ``fields`` (key, times, type, filter fields, expiry)."""

    id: str
    space: str
    namespace: tuple[str, ...]
    text: str | None  # None when only metadata was read
    fields: dict[str, Any]

    @property
    def expires_at(self) -> float | None:
        exp = self.fields.get("exp")
        return float(exp) if exp is not None else None


@dataclass(frozen=True)
class UserRows:
    """One user's part of a write: rows to upsert, stored rows to remove, the current rows of every id written,
    the vectors of the puts by document id, and the namespace rows already read (``read_for_write``)."""

    user_id: str
    puts: Sequence[DocRow]
    deletes: Sequence[DocRow]
    stored: dict[str, DocRow]
    vectors: dict[str, np.ndarray]
    markers: dict[str, dict[str, Any]] | None = None


class DocumentRows:
    """Reads and writes of document rows; every call is scoped to one user (or, for admin calls, says so)."""

    def __init__(self, collection: Collection, vectors: Collection) -> None:
        self.collection = collection
        self.vectors = vectors
        self.lock = threading.RLock()  # a read-modify-write of one process is not interleaved with another's
        # which prefixes ever held an expiring or a partial document (enabled by Memory on an exclusive store)
        self.prefixes = PrefixAnswers()
        self.rows: RowCache[DocRow] = RowCache()  # rows by id, enabled with ``prefixes``
        self.exclusive = False  # set by Memory: no other process writes the store (an embedded folder it locks)
        self.behind: WriteBehind | None = None  # the folder's pending writes, once ``defer_writes`` is called
        try:
            self.max_batch = min(int(collection._client.get_max_batch_size()), 5_000)
        except Exception:  # a client without the call: Chroma's smallest default
            self.max_batch = 1_000

    def defer_writes(self, folder: Path) -> None:
        """Acknowledge writes once they are in the folder's pending log (:mod:`memtend.storage.write_behind`): only
        for a folder this process holds the lock of. What a killed process left pending is moved in first."""
        if self.behind is None:
            self.behind = WriteBehind(
                folder, {"documents": self.collection, "document_vectors": self.vectors}, self.max_batch
            )
            self.collection = self.behind.collection("documents")  # type: ignore[assignment]
            self.vectors = self.behind.collection("document_vectors")  # type: ignore[assignment]

    def stop_deferring(self) -> None:
        """Move what is pending and write straight to Chroma again (the folder is being closed)."""
        behind, self.behind = self.behind, None
        if behind is not None:
            self.collection = self.collection.raw  # type: ignore[attr-defined]
            self.vectors = self.vectors.raw  # type: ignore[attr-defined]
            behind.close()

    def raw_collections(self) -> tuple[Collection, Collection]:
        """(documents, vectors) as Chroma's own collections, with nothing pending (for whole-store work)."""
        if self.behind is None:
            return self.collection, self.vectors
        self.behind.settle()
        return self.collection.raw, self.vectors.raw  # type: ignore[attr-defined]

    # ------------------------------------------------------------------ reads
    @guarded
    def read(self, user_id: str, ids: Sequence[str], *, text: bool = True) -> dict[str, DocRow]:
        """Live or expired document rows by id (an id read is cheap; a where-filter here would scan the user)."""
        if not ids:
            return {}
        known, ids = self.rows.lookup(user_id, ids, text=text)
        if not ids:
            return known
        generation = self.rows.generation()
        include: list[Any] = ["metadatas", "documents"] if text else ["metadatas"]
        out: dict[str, DocRow] = {}
        for start in range(0, len(ids), self.max_batch):
            got = self.collection.get(ids=list(ids[start : start + self.max_batch]), include=include)
            docs = got["documents"] if text else None
            for n, (i, m) in enumerate(zip(got["ids"], got["metadatas"] or [], strict=True)):
                row = _doc_row(i, m, docs[n] if docs is not None else None, user_id)
                if row is not None:
                    out[i] = row
        if text:
            self._join_chunks(out)
        self.rows.read(user_id, ids, out, text=text, generation=generation)
        return {**known, **out}

    @guarded
    def read_for_write(
        self, user_id: str, ids: Sequence[str], namespaces: Iterable[tuple[str, tuple[str, ...]]]
    ) -> tuple[dict[str, DocRow], dict[str, dict[str, Any]]]:
        """The rows a write replaces and the namespace rows it moves, in one read: (rows, namespace metadata)."""
        marker_ids = list(dict.fromkeys(_marker_id(user_id, space, ns) for space, ns in namespaces))
        rows: dict[str, DocRow] = {}
        markers: dict[str, dict[str, Any]] = {i: {} for i in marker_ids}  # absent: an empty namespace
        wanted = [*ids, *marker_ids]
        for start in range(0, len(wanted), self.max_batch):
            got = self.collection.get(ids=wanted[start : start + self.max_batch], include=["metadatas"])
            for i, m in zip(got["ids"], got["metadatas"] or [], strict=True):
                if i in markers:
                    markers[i] = dict(m or {}) if (m or {}).get("user_id") == user_id else {}
                elif (row := _doc_row(i, m, None, user_id)) is not None:
                    rows[i] = row
        return rows, markers

    @guarded
    def find(
        self,
        user_id: str,
        space: str,
        prefix: Sequence[str],
        clauses: Sequence[tuple[str, str, Any]] = (),
        *,
        at: float,
        limit: int | None = None,
        offset: int = 0,
        text: bool = True,
    ) -> list[DocRow]:
        """Live documents under a namespace prefix matching every ``(field, op, value)`` clause, in insertion
        order, paged by Chroma."""
        flt = _live_scope(user_id, space, prefix, clauses, at, self._expiring(user_id, space, prefix))
        include: list[Any] = ["metadatas", "documents"] if text else ["metadatas"]
        got = self.collection.get(where=flt, limit=limit, offset=offset or None, include=include)
        docs = got["documents"] if text else None
        rows: dict[str, DocRow] = {}
        for n, (i, m) in enumerate(zip(got["ids"], got["metadatas"] or [], strict=True)):
            row = _doc_row(i, m, docs[n] if docs is not None else None, user_id)
            if row is not None:
                rows[i] = row
        if text:
            self._join_chunks(rows)
        return list(rows.values())

    @guarded
    def find_ids(
        self,
        user_id: str,
        space: str,
        prefix: Sequence[str],
        clauses: Sequence[tuple[str, str, Any]] = (),
        *,
        at: float,
    ) -> list[str]:
        """The ids ``find`` would return (without limit), read without their metadata: the cheapest full listing."""
        flt = _live_scope(user_id, space, prefix, clauses, at, self._expiring(user_id, space, prefix))
        return list(self.collection.get(where=flt, include=[])["ids"])

    def _expiring(self, user_id: str, space: str, prefix: Sequence[str]) -> bool:
        """Whether a document with an expiry was ever written under the prefix (an id read: cheap)."""
        return self._has_prefix_row("expiring", user_id, space, prefix)

    @guarded
    def any_partial(self, user_id: str, space: str, prefix: Sequence[str]) -> bool:
        """Whether a document lacking some of its filter fields (``PARTIAL``) was ever written under the prefix."""
        return self._has_prefix_row("partial", user_id, space, prefix)

    def _has_prefix_row(self, kind: str, user_id: str, space: str, prefix: Sequence[str]) -> bool:
        row_id = prefix_row_id(kind, user_id, space, prefix)
        known = self.prefixes.get(row_id) if self.prefixes.enabled else None
        if known is not None:
            return known
        generation = self.prefixes.generation()
        got = self.collection.get(ids=[row_id], include=["metadatas"])
        found = any((m or {}).get("user_id") == user_id for m in got["metadatas"] or [])
        self.prefixes.read(user_id, row_id, found, generation)
        return found

    @guarded
    def namespaces(self, user_id: str, space: str, prefix: Sequence[str]) -> list[tuple[str, ...]]:
        """The namespaces under a prefix that hold documents (from their namespace rows)."""
        got = self.collection.get(
            where={f"m{len(prefix)}": {"$eq": scope_code(user_id, space, prefix)}}, include=["metadatas"]
        )
        out = []
        for m in got["metadatas"] or []:
            if m and m.get("user_id") == user_id and int(m.get("count", 0)) > 0:
                out.append(tuple(json.loads(str(m[f"m{m['depth']}"]))[2:]))
        return out

    @guarded
    def owners(self, space: str, prefix: Sequence[str]) -> list[str]:
        """Every user holding a document under the prefix (an admin call across users)."""
        got = self.collection.get(where={f"o{len(prefix)}": {"$eq": _owner_code(space, prefix)}}, include=["metadatas"])
        return sorted({str(m["user_id"]) for m in got["metadatas"] or [] if m and int(m.get("count", 0)) > 0})

    def _join_chunks(self, rows: dict[str, DocRow]) -> None:
        wanted = [f"{i}#{n}" for i, r in rows.items() for n in range(1, int(r.fields.get("parts") or 1))]
        if not wanted:
            return
        got = self.collection.get(ids=wanted, include=["documents", "metadatas"])
        pieces = {
            i: (m or {}).get(PIECE, d)
            for i, d, m in zip(got["ids"], got["documents"] or [], got["metadatas"] or [], strict=True)
        }
        for i, r in list(rows.items()):
            parts = int(r.fields.get("parts") or 1)
            if parts > 1:
                rest = [pieces.get(f"{i}#{n}") for n in range(1, parts)]
                if any(p is None for p in rest):  # a write replaced the row between the two reads
                    raise StorageUnavailableError("a large document changed while it was read; read it again")
                rows[i] = DocRow(r.id, r.space, r.namespace, (r.text or "") + "".join(p or "" for p in rest), r.fields)

    # ------------------------------------------------------------------ writes
    def write(
        self,
        user_id: str,
        puts: Sequence[DocRow],
        deletes: Sequence[DocRow],
        stored: dict[str, DocRow],
        vectors: dict[str, np.ndarray] | None = None,
        markers: dict[str, dict[str, Any]] | None = None,
    ) -> None:
        """Apply one user's puts (rows to upsert) and deletes (stored rows to remove) as one Chroma upsert when
        possible (see :meth:`write_users`)."""
        self.write_users([UserRows(user_id, puts, deletes, stored, vectors or {}, markers)])

    @guarded
    def write_users(self, parts: Sequence[UserRows]) -> None:
        """Apply the writes of one or more users together: one Chroma upsert when they fit in one call, else
        journaled, so a kill between the calls rolls the whole write forward on the next open (all or nothing).

        A journaled write keeps one journal row per user (owned by that user, so erasing the user erases their
        part of a pending write too), all of them in the first call. ``stored`` holds the current rows of every
        id written (from ``read``): their metadata keys are cleared (Chroma merges metadata), their chunks past the
        new end removed, namespace counts moved by the change."""
        if len(parts) >= self.max_batch:  # every journal row must go in the first call
            raise InvalidInputError(
                f"a write across {len(parts)} users is more than one Chroma call can journal; split it into "
                f"writes of fewer than {self.max_batch} users"
            )
        with self.lock, self.behind.group() if self.behind is not None else contextlib.nullcontext():
            stale_vectors: list[str] = []
            ids: list[str] = []
            texts: list[str] = []
            metas: list[dict[str, Any]] = []
            doomed: dict[str, dict[str, Any]] = {}  # id -> metadata keys to clear on a tombstone
            owned: list[tuple[str, int, int, list[str]]] = []  # user, their rows' span in ids, their tombstones
            for part in parts:
                stale_vectors.extend(
                    self._write_vectors(part.user_id, part.puts, part.deletes, part.stored, part.vectors)
                )
                start = len(ids)
                part_doomed = self._rows_of(part, ids, texts, metas)
                doomed.update(part_doomed)
                owned.append((part.user_id, start, len(ids), list(part_doomed)))
            self.rows.changing([*ids, *doomed])
            if not ids and len(doomed) <= self.max_batch:  # deletes only, in one delete call
                self._delete_ids(list(doomed))
                self._drop_vectors(stale_vectors)
                return
            for user_id, _start, _end, tomb_ids in owned:  # tombstones in the same upsert, removed right after
                for i in tomb_ids:
                    ids.append(i)
                    texts.append("")
                    metas.append({**doomed[i], "user_id": user_id, "dead": True})
            journal_ids: list[str] = []
            if len(ids) + len(parts) > self.max_batch:  # more than one call: journaled, so a kill rolls forward
                journal_ids, journal_metas = self._journals(owned, ids, texts, metas)
                ids[:0] = journal_ids
                texts[:0] = [""] * len(journal_ids)
                metas[:0] = journal_metas
            self._upsert_rows(ids, texts, metas)
            self._finish_write(list(doomed), stale_vectors, journal_ids)

    def _rows_of(
        self, part: UserRows, ids: list[str], texts: list[str], metas: list[dict[str, Any]]
    ) -> dict[str, dict[str, Any]]:
        """Append the rows one user's write upserts (documents, chunks, namespace and prefix rows) to ``ids``,
        ``texts`` and ``metas``; return the ids it removes (tombstoned), each with the metadata keys to clear."""
        user_id, stored = part.user_id, part.stored
        doomed: dict[str, dict[str, Any]] = {}
        counts: dict[tuple[str, tuple[str, ...]], int] = {}
        for row in part.puts:
            old = stored.get(row.id)
            meta = _row_metadata(user_id, row)
            meta.pop(VSLOT, None)
            if meta.get("vecs"):
                meta[VSLOT] = _put_slot(row, old, part.vectors)
            pieces = _pieces(row.text or "")
            if len(pieces) > 1:
                meta["parts"] = len(pieces)
            # Chroma merges metadata: what the old row had and the new one lacks is cleared. (A None for a key
            # the row never had costs as much as a stored value, so only those keys are sent.)
            for name in old.fields if old is not None else ():
                meta.setdefault(name, None)
            ids.append(row.id)
            texts.append(pieces[0])
            metas.append(meta)
            for n, piece in enumerate(pieces[1:], 1):
                ids.append(f"{row.id}#{n}")
                texts.append("")
                metas.append({"user_id": user_id, "of": row.id, PIECE: piece})
            old_parts = int(old.fields.get("parts") or 1) if old is not None else 1
            for n in range(len(pieces), old_parts):
                doomed[f"{row.id}#{n}"] = {"of": None, PIECE: None}
            if old is None:
                counts[(row.space, row.namespace)] = counts.get((row.space, row.namespace), 0) + 1
        for row in part.deletes:
            doomed[row.id] = _unfindable(row.fields)
            for n in range(1, int(row.fields.get("parts") or 1)):
                doomed[f"{row.id}#{n}"] = {"of": None, PIECE: None}
            counts[(row.space, row.namespace)] = counts.get((row.space, row.namespace), 0) - 1
        marker_ids, marker_metas, dead_markers = self._markers(user_id, counts, part.markers)
        for i, m in zip(marker_ids, marker_metas, strict=True):
            ids.append(i)
            texts.append("")
            metas.append(m)
        doomed.update(dead_markers)
        stamp = time.time()
        for kind, field in zip(PREFIX_KINDS, ("exp", PARTIAL), strict=True):
            # the prefixes under which a document can expire, or lacks filter fields (upkeep removes the rows of
            # a prefix left holding no document: ``tidy_prefixes``)
            prefix_rows = {
                prefix_row_id(kind, user_id, row.space, row.namespace[:d]): (row.space, row.namespace[:d])
                for row in part.puts
                if row.fields.get(field)
                for d in range(len(row.namespace) + 1)
            }
            if prefix_rows:
                self.prefixes.written(user_id, prefix_rows)
            for i, (space, labels) in sorted(prefix_rows.items()):
                ids.append(i)
                texts.append("")
                metas.append(prefix_meta(kind, user_id, space, labels, stamp))
        return doomed

    @staticmethod
    def _journals(
        owned: list[tuple[str, int, int, list[str]]], ids: list[str], texts: list[str], metas: list[dict[str, Any]]
    ) -> tuple[list[str], list[dict[str, Any]]]:
        """One journal row per user of a write: that user's rows and tombstones, replayable on their own."""
        journal_ids, journal_metas = [], []
        tombs = {i: n for n, i in enumerate(ids)}  # a tombstone's position (each is written once)
        at = time.time()
        for user_id, start, end, tomb_ids in owned:
            span = list(range(start, end)) + [tombs[i] for i in tomb_ids]
            body = json.dumps(
                {
                    "ids": [ids[n] for n in span],
                    "texts": [texts[n] for n in span],
                    "metas": [metas[n] for n in span],
                    "doomed": tomb_ids,
                }
            )
            journal_ids.append(DOC_JOURNAL_PREFIX + uuid.uuid4().hex)
            journal_metas.append({"user_id": user_id, DOC_JOURNAL: True, "at": at, "change": body})
        return journal_ids, journal_metas

    def _upsert_rows(self, ids: list[str], texts: list[str], metas: list[dict[str, Any]]) -> None:
        for start in range(0, len(ids), self.max_batch):
            chunk = slice(start, start + self.max_batch)
            n = len(ids[chunk])
            self.collection.upsert(
                ids=ids[chunk], embeddings=[NO_VECTOR] * n, documents=texts[chunk], metadatas=metas[chunk]
            )

    def _finish_write(self, doomed: list[str], stale_vectors: list[str], journal_ids: list[str]) -> None:
        """After every row of a write is stored: remove its tombstones and stale vectors, then its journal rows."""
        if doomed:
            with contextlib.suppress(Exception):  # a tombstone left behind is invisible; erasure removes it
                self._delete_ids(doomed, where={"dead": {"$eq": True}})
        self._drop_vectors(stale_vectors)
        if journal_ids:
            self.collection.delete(ids=journal_ids)

    @guarded
    def recover(self, *, older_than: float | None = None) -> int:
        """Roll forward the journaled writes a killed process or a lost server left half done (with ``older_than``
        seconds, only journals at least that old: another live process may still be writing a younger one).
        Replay is idempotent: the same rows, the same tombstones. Returns how many writes it finished."""
        found = self.collection.get(where={DOC_JOURNAL: {"$eq": True}}, include=["metadatas"])
        done = 0
        for journal_id, meta in zip(found["ids"], found["metadatas"] or [], strict=True):
            meta = dict(meta or {})
            if older_than is not None and time.time() - float(meta.get("at") or 0.0) < older_than:
                continue
            try:
                body = json.loads(str(meta["change"]))
                ids, texts, metas = list(body["ids"]), list(body["texts"]), [dict(m) for m in body["metas"]]
                doomed = [str(i) for i in body["doomed"]]
            except (KeyError, TypeError, ValueError):
                _log.error("memtend: document journal row %s cannot be read; left in place", journal_id)
                continue
            _log.warning("memtend: finishing an interrupted document write (%d rows)", len(ids))
            self.prefixes.clear()  # the write may hold prefix rows
            self.rows.clear()  # and document rows
            with self.lock:
                self._upsert_rows(ids, texts, metas)
                self._finish_write(doomed, [], [journal_id])
            done += 1
        return done

    def _write_vectors(
        self,
        user_id: str,
        puts: Sequence[DocRow],
        deletes: Sequence[DocRow],
        stored: dict[str, DocRow],
        vectors: dict[str, np.ndarray],
    ) -> list[str]:
        """Upsert the vectors of the puts (before their documents, which count them in ``vecs``, into the set of
        ids the stored row does not read); return the ids of vector rows no document reads any more."""
        ids: list[str] = []
        embeddings: list[Any] = []
        metas: list[dict[str, Any]] = []
        stale: list[str] = []
        for row in puts:
            vecs = vectors.get(row.id)
            old = stored.get(row.id)
            slot, old_slot = _put_slot(row, old, vectors), vector_slot(old)
            # a row written again without new vectors (a metadata rewrite) keeps the ones its ``vecs`` counts
            new = len(vecs) if vecs is not None else int(row.fields.get("vecs") or 0)
            for n in range(len(vecs) if vecs is not None else 0):
                ids.append(vector_id(row.id, slot, n))
                embeddings.append(vecs[n])  # type: ignore[index]
                metas.append(
                    {"user_id": user_id, "of": row.id, **_scope_fields(user_id, row.space, row.namespace, False)}
                )
            old_count = int(old.fields.get("vecs") or 0) if old else 0
            kept = new if slot == old_slot else 0  # the stored row's set is read no more once the slot moves
            stale.extend(vector_id(row.id, old_slot, n) for n in range(kept, old_count))
        for row in deletes:
            stale.extend(vector_id(row.id, vector_slot(row), n) for n in range(int(row.fields.get("vecs") or 0)))
        for start in range(0, len(ids), self.max_batch):
            chunk = slice(start, start + self.max_batch)
            self.vectors.upsert(ids=ids[chunk], embeddings=np.asarray(embeddings[chunk]), metadatas=metas[chunk])
        return stale

    def _drop_vectors(self, ids: list[str]) -> None:
        """Remove vector rows no document counts (a leftover is never read: queries check ``vecs``)."""
        with contextlib.suppress(Exception):
            for start in range(0, len(ids), self.max_batch):
                self.vectors.delete(ids=ids[start : start + self.max_batch])

    @guarded
    def nearest(
        self, user_id: str, space: str, prefix: Sequence[str], query: np.ndarray, n: int
    ) -> list[tuple[str, int, int, float]]:
        """The ``n`` vectors under a prefix nearest to ``query``: (document id, vector set, vector number, cosine
        similarity), best first."""
        code = scope_code(user_id, space, prefix)
        got = self.vectors.query(
            query_embeddings=np.asarray([query]),
            n_results=n,
            where={f"p{len(prefix)}": {"$eq": code}},
            include=["metadatas", "distances"],
        )
        out = []
        for i, m, dist in zip(got["ids"][0], (got["metadatas"] or [[]])[0], (got["distances"] or [[]])[0], strict=True):
            if (m or {}).get("user_id") == user_id:
                doc, _, tail = i.rpartition("~")
                slot, _, num = tail.rpartition(".")
                out.append((doc, int(slot or 0), int(num), 1.0 - float(dist)))
        return out

    def _markers(
        self,
        user_id: str,
        counts: dict[tuple[str, tuple[str, ...]], int],
        known: dict[str, dict[str, Any]] | None,
    ) -> tuple[list[str], list[dict[str, Any]], dict[str, dict[str, Any]]]:
        """Namespace rows with their document counts moved by ``counts``; the ones that reach zero go. ``known``:
        namespace rows already read (from ``read_for_write``), empty for a namespace without one."""
        changed = {k: v for k, v in counts.items() if v}
        if not changed:
            return [], [], {}
        ids = {k: _marker_id(user_id, k[0], k[1]) for k in changed}
        missing = [i for i in ids.values() if known is None or i not in known]
        have = {i: m for i, m in (known or {}).items() if m}
        if missing:
            got = self.collection.get(ids=missing, include=["metadatas"])
            have.update((i, dict(m or {})) for i, m in zip(got["ids"], got["metadatas"] or [], strict=True))
        out_ids, out_metas, dead = [], [], {}
        for (space, namespace), delta in changed.items():
            mid = ids[(space, namespace)]
            count = int(have.get(mid, {}).get("count", 0)) + delta
            if count <= 0:
                if mid in have:
                    dead[mid] = _unfindable(have[mid])
                continue
            meta: dict[str, Any] = {"user_id": user_id, "depth": len(namespace), "count": count}
            for d in range(len(namespace) + 1):
                meta[f"m{d}"] = scope_code(user_id, space, namespace[:d])
                meta[f"o{d}"] = _owner_code(space, namespace[:d])
            out_ids.append(mid)
            out_metas.append(meta)
        return out_ids, out_metas, dead

    def _delete_ids(self, ids: list[str], where: Where | None = None) -> None:
        for start in range(0, len(ids), self.max_batch):
            self.collection.delete(ids=ids[start : start + self.max_batch], where=where)

    @guarded
    def touch(self, expiries: dict[str, float], *, ttl: float | None = None) -> None:
        """Set the expiry (and with ``ttl``, the ttl) of expiring rows read from this user (a metadata merge:
        nothing else changes)."""
        if expiries:
            self.rows.changing(expiries)
            extra = {"ttl": ttl} if ttl is not None else {}
            self.collection.update(ids=list(expiries), metadatas=[{"exp": t, **extra} for t in expiries.values()])

    @guarded
    def expired(self, user_id: str | None, at: float, limit: int | None = None) -> list[DocRow]:
        """Document rows whose expiry is at or before ``at`` (of one user, or of everyone for a global sweep; at
        most ``limit`` of them)."""
        got = self.collection.get(where={"exp": {"$lte": at}}, include=["metadatas"], limit=limit)
        rows = []
        for i, m in zip(got["ids"], got["metadatas"] or [], strict=True):
            if user_id is None or (m or {}).get("user_id") == user_id:
                row = _doc_row(i, m, None, str((m or {}).get("user_id")))
                if row is not None:
                    rows.append(row)
        return rows

    def remove(self, rows: Sequence[DocRow], at: float | None = None, *, tidy: bool = False) -> int:
        """Delete rows (grouped per user) and move their namespace counts; with ``at``, only rows still expired
        then (a row refreshed meanwhile stays). Returns how many went. ``tidy``: the prefix rows of prefixes left
        holding no document go too (:mod:`memtend.storage.prefix_rows` says why that is safe beside other
        processes), so a store whose sessions come and go does not keep a row per session ever written."""
        by_user: dict[str, list[DocRow]] = {}
        for r in rows:
            by_user.setdefault(str(r.fields["user_id"]), []).append(r)
        gone = 0
        with self.lock:
            for user_id, user_rows in by_user.items():
                if at is not None:  # re-read under the lock: only what is still expired goes
                    fresh = self.read(user_id, [r.id for r in user_rows], text=False)
                    user_rows = [r for r in fresh.values() if r.expires_at is not None and r.expires_at <= at]
                self.write(user_id, [], user_rows, {r.id: r for r in user_rows})
                gone += len(user_rows)
                if tidy:
                    namespaces = {(r.space, r.namespace) for r in user_rows}
                    prefix_rows.drop_empty(self, user_id, namespaces, time.time() if at is None else at)
        return gone

    @guarded
    def tidy_prefixes(self, at: float, limit: int) -> int:
        """Remove the prefix rows of up to ``limit`` prefixes left holding no document, of any user (upkeep's
        share; safe beside other processes: :func:`memtend.storage.prefix_rows.tidy`)."""
        return prefix_rows.tidy(self, at, limit)


def _pieces(text: str) -> list[str]:
    """The texts of a document's rows: the text itself, or past ``INLINE_CHARS`` an empty text for the document row
    and the pieces for its chunk rows."""
    if len(text) <= INLINE_CHARS:
        return [text]
    return ["", *(text[i : i + CHUNK_CHARS] for i in range(0, len(text), CHUNK_CHARS))]


def _live_scope(
    user_id: str,
    space: str,
    prefix: Sequence[str],
    clauses: Sequence[tuple[str, str, Any]],
    at: float,
    expiring: bool,
) -> Where:
    """The where-filter of live documents under a prefix, and the clauses of a filter. Under a prefix where no
    document ever had an expiry it is one clause (``p<d>``), as a caller of Chroma would write it; elsewhere rows
    with an expiry are found by their ``t<d>`` code and an expiry after ``at``. (Every clause costs Chroma a pass
    over the rows it matches, whatever the limit, so none is added that is not needed.)"""
    d = len(prefix)
    code = scope_code(user_id, space, prefix)
    scope: Where = {f"p{d}": {"$eq": code}}
    if expiring:
        scope = {"$or": [scope, {"$and": [{f"t{d}": {"$eq": code}}, {"exp": {"$gt": at}}]}]}
    return {"$and": [scope, *({f: {op: v}} for f, op, v in clauses)]} if clauses else scope


def _unfindable(meta: dict[str, Any]) -> dict[str, Any]:
    """What a tombstone clears of a row: the fields any read finds it by (key, scope codes, count). The rest stays
    until the tombstone is deleted (a None costs Chroma as much as a value, so no more is sent than needed)."""
    return {k: None for k in meta if k in ("key", "count") or (k[:1] in "ptxmo" and k[1:].isdigit())}


def _row_metadata(user_id: str, row: DocRow) -> dict[str, Any]:
    meta: dict[str, Any] = {"user_id": user_id, "depth": len(row.namespace)}
    meta.update(_scope_fields(user_id, row.space, row.namespace, row.fields.get("exp") is not None))
    meta.update((k, v) for k, v in row.fields.items() if v is not None)
    return meta


@functools.lru_cache(maxsize=4096)
def _scope_fields(user_id: str, space: str, namespace: tuple[str, ...], expiring: bool) -> dict[str, str]:
    field = "t" if expiring else "p"
    return {f"{field}{d}": scope_code(user_id, space, namespace[:d]) for d in range(len(namespace) + 1)}


def _doc_row(row_id: str, meta: Any, text: str | None, user_id: str) -> DocRow | None:
    """A document row of ``user_id`` from Chroma's answer, or None (another user's row, a chunk, a namespace
    row, a tombstone)."""
    meta = dict(meta or {})
    if meta.get("user_id") != user_id or "key" not in meta:  # a tombstone has no key (its "dead" mark may stay)
        return None
    depth = int(meta["depth"])
    space, namespace = _scope_labels(str(meta.get(f"p{depth}", meta.get(f"t{depth}"))))
    return DocRow(row_id, space, namespace, text, meta)


@functools.lru_cache(maxsize=4096)
def _scope_labels(code: str) -> tuple[str, tuple[str, ...]]:
    """The space and namespace a scope code names (parsed once per code: every row of a page shares it)."""
    labels = json.loads(code)
    return str(labels[1]), tuple(str(label) for label in labels[2:])
