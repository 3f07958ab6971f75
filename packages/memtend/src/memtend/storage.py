"""The only module that talks to Chroma and the only place a where-filter is built.

Three collections hold everything memtend keeps about users:

- ``<prefix>_memories``: every memory record (facts, events, rules, notes, summaries), active, archived
  or pending review, with its embedding (metadata: ``user_id``, ``last_used_at`` and ``r``, the other fields as
  one JSON value; see ``Record.to_metadata``); and the history: one row per write, listing its changes (operation,
  record id, before, after, source), stamped with the time it was written, except that a new record keeps its
  creation entry in its own row until the row is first replaced or deleted (see ``write_records``; a fact's slot
  row keeps it through updates, whole, and a fact update's entry rides in the archived old value's row). History is
  written in the same Chroma call as the records it describes (one call is one transaction), so a single
  ``remember`` is one write and a write never lands without its history. History rows are told apart by their
  owner field: ``h_user`` instead of ``user_id`` (record reads filter on ``user_id``, so they never see a history
  row and cost no more), ids ``h:<first entry id>``, and a vector no search is meant to find (see
  ``history_vector``); change marks for processes sharing the store are rows of this collection too
  (:class:`ChangeMarks`, owner field ``m_user``), so a write's mark goes in the write's own call, or is the
  write's own record rows (a folded write: they carry ``m_user`` too, see :class:`ChangeMarks`);
- ``<prefix>_history``: where history rows were kept before they moved beside the records; read (and erased)
  when an older store holds any, never written;
- ``<prefix>_kv``: where keyed stores and working memory were kept before the document store; nothing writes it
  any more, erasure still clears it (stores written by earlier versions);
- ``<prefix>_documents``: the document store (:mod:`memtend.documents`), rows written by :class:`DocumentRows`;
- ``<prefix>_document_vectors``: embeddings of the indexed fields of documents, for ``search(query=...)``;
- ``<prefix>_changes``: where change marks were kept before they moved into the memories collection; nothing
  writes it any more, erasure still clears it.

Every read, write and delete takes a ``user_id`` and carries a ``user_id`` clause, so no caller can reach
another user's rows by accident.
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import json
import logging
import threading
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, NamedTuple, TypeVar

import numpy as np
from chromadb.api import ClientAPI
from chromadb.api.models.Collection import Collection

from memtend import fact_claims
from memtend.document_values import PARTIAL
from memtend.errors import StorageUnavailableError, StoreDamagedError
from memtend.fact_slots import FactSlots
from memtend.policies import history_scrub
from memtend.records import Kind, Record, Status, chroma_float, expand_snapshot
from memtend.results import HistoryEntry

T = TypeVar("T")
_log = logging.getLogger("memtend")
Where = dict[str, Any]

# Collections without meaning (history, keyed store) carry a constant one-dimensional vector: Chroma needs one
# per row, and nothing ever searches them by similarity.
_NO_VECTOR = [0.0]
_WRITE_BATCH = 2_000
_MAX_BATCH = 5_000  # rows per Chroma write call at most (Chroma's own limit may be lower)
_UNUSED_GRAPH = {"ef_construction": 16, "max_neighbors": 4}
_SMALL_SYNC_THRESHOLD = 10  # history rows with 35 KB documents: 19 ms per add at 100, 12 ms at 10
_SCRUB_BATCH = 100  # record ids per history lookup when scrubbing
_CHROMA_SYNC_THRESHOLD = 1_000  # Chroma's default, for a collection whose configuration does not say
_SAVE_ID = "memtend-save-index-"  # ids that never exist: updates of them only make Chroma count log records
_SAVE_KEY = "memtend_save_index"
HISTORY_OWNER = "h_user"  # the owner field of history rows in the memories collection
HISTORY_ID_PREFIX = "h:"
KEPT_FOR = "h_record"  # on an archived record row keeping another record's history entry: that record's id
JOURNAL_OWNER = "j_user"  # the owner field of journal rows (see memtend.journal)


def _connection_errors() -> tuple[type[BaseException], ...]:
    import httpx

    return (httpx.TransportError, ConnectionError)


def guarded(fn: Callable[..., T]) -> Callable[..., T]:
    """Turn a lost connection to a Chroma server into StorageUnavailableError (nothing is silently dropped)."""

    @functools.wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> T:
        try:
            return fn(*args, **kwargs)
        except _connection_errors() as exc:
            raise StorageUnavailableError(
                f"Chroma did not answer during {fn.__name__} ({type(exc).__name__}: {exc}); the operation was "
                "not completed. Check that the Chroma server is running and retry."
            ) from exc
        except ValueError as exc:
            if "Could not connect" in str(exc):
                raise StorageUnavailableError(
                    f"Chroma is unreachable during {fn.__name__}: {exc}. Start the server or fix host/port, then retry."
                ) from exc
            raise
        except _chroma_errors() as exc:
            raise chroma_failure(fn.__name__, exc) from exc

    return wrapper


def _chroma_errors() -> type[BaseException]:
    from chromadb.errors import ChromaError

    return ChromaError


# Words in Chroma's errors that mean its files are missing or damaged (SQLite's and the vector index's own).
_DAMAGE_WORDS = (
    "malformed",
    "not a database",
    "no such table",
    "unable to open database",
    "readonly database",
    "hnsw",
    "pickle",
    "segment reader",
    "error finding id",
)


def chroma_failure(operation: str, exc: BaseException) -> StorageUnavailableError | StoreDamagedError:
    """A typed error for an error Chroma raised. Its own message is quoted only when it tells of damaged files
    (other Chroma messages may quote stored values; the cause stays chained for debugging)."""
    message = str(exc)
    if any(word in message.lower() for word in _DAMAGE_WORDS):
        return StoreDamagedError(
            f"Chroma reports missing or damaged store files during {operation} ({message[:300]}). Restore the store "
            "from a backup (for a `chroma run` server: its --path folder); move a damaged folder away to start over"
        )
    return StorageUnavailableError(
        f"Chroma failed during {operation} ({type(exc).__name__}); whether the operation took effect is unknown. "
        "Check what is stored, then retry; if it keeps failing, check the Chroma store or server"
    )


def persistent_client(folder: str) -> ClientAPI:
    """An embedded Chroma client keeping its data in ``folder``: its files checked first (a missing or damaged
    file raises StoreDamagedError), memtend's manifest written once it opens."""
    import chromadb
    from chromadb.errors import ChromaError

    from memtend import store_files

    path = Path(folder)
    store_files.check_files(path)
    try:
        client = chromadb.PersistentClient(path=folder)
    except (ChromaError, OSError) as exc:
        raise StoreDamagedError(
            f"Chroma cannot open the store in {folder} ({type(exc).__name__}: {exc}). Its files may be damaged: "
            "restore the folder from a backup, or move it away to start over with an empty store"
        ) from None
    store_files.write_manifest(path)
    return client


def where(user_id: str, **clauses: Any) -> Where:
    """Build a where-filter that always starts with the user clause.

    A clause value that is a dict is passed as an operator expression (``{"$in": [...]}``); anything else is
    an equality. User ids and values are never interpreted as operators.
    """
    return _owned("user_id", user_id, clauses)


def history_where(user_id: str, **clauses: Any) -> Where:
    """The where-filter of a user's history rows (owner field ``h_user``), built as :func:`where` builds it."""
    return _owned(HISTORY_OWNER, user_id, clauses)


def _owned(owner: str, user_id: str, clauses: dict[str, Any]) -> Where:
    parts: list[Where] = [{owner: {"$eq": user_id}}]
    for name, value in clauses.items():
        if value is None:
            continue
        parts.append({name: value if isinstance(value, dict) else {"$eq": value}})
    return parts[0] if len(parts) == 1 else {"$and": parts}


class Storage:
    """User-scoped access to memtend's Chroma collections."""

    def __init__(
        self,
        client: ClientAPI,
        embedding_function: Any,
        *,
        prefix: str = "memtend",
        sync_threshold: int = 100,
    ) -> None:
        self.client = client
        self.prefix = prefix
        self._log_to_purge: dict[str, Collection] = {}  # collections erasure deleted rows from, by name
        # Each local write compacts, re-reading the rows written since the vector index was last saved. History
        # and keyed-store rows carry large documents and one-dimensional vectors (a save costs nothing), so they
        # save often; the memories' 384-d index is saved every ``sync_threshold`` rows.
        hnsw = {"hnsw": {"sync_threshold": _SMALL_SYNC_THRESHOLD, **_UNUSED_GRAPH}}
        # Recall ranks from memtend's own per-user index, never from Chroma's HNSW graph; Chroma cannot store
        # vectors without one, so it is built cheaply (a batch of 100 at 60k records: 130 ms with Chroma's
        # defaults, 75 ms with these). A direct Chroma query on the collection still works, with coarser neighbours.
        self.memories: Collection = self._collection(
            f"{prefix}_memories",
            embedding_function,
            {"hnsw": {"space": "cosine", "sync_threshold": sync_threshold, **_UNUSED_GRAPH}},
        )
        self.history: Collection = self._collection(f"{prefix}_history", None, hnsw)
        # history rows written before they moved into the memories collection: read only when there are any
        self._legacy_history = bool(self._count(self.history))
        self._embedding_function = embedding_function
        self._dimension_seen: int | None = None
        self.write_calls = 0  # Chroma write calls sent on the memories collection (tells a failed write's stage)
        self._upkeep: Collection | None = None  # the memories collection, for clear_folds
        try:
            self.max_batch = min(int(client.get_max_batch_size()), _MAX_BATCH)
        except Exception:  # a client without the call: Chroma's smallest default
            self.max_batch = 1_000
        self.kv: Collection = self._collection(f"{prefix}_kv", None, hnsw)
        # Document vectors (for ``search(query=...)``) are searched through Chroma's graph: it is built well.
        self.documents = DocumentRows(
            self._collection(f"{prefix}_documents", None, hnsw),
            self._collection(
                f"{prefix}_document_vectors", None, {"hnsw": {"space": "cosine", "sync_threshold": sync_threshold}}
            ),
        )
        # where change marks were kept before they moved into the memories collection (erasure still clears it)
        self.changes_collection: Collection = self._collection(f"{prefix}_changes", None, hnsw)
        self.changes = ChangeMarks(self.memories, self._store_dimension)
        # fact slots as stored, so set_fact need not read its slot first (enabled by Memory when no other process
        # can write the store: every write of it then passes here)
        self.slots = FactSlots()

    @guarded
    def _count(self, collection: Collection) -> int:
        return int(collection.count())

    @guarded
    def _collection(self, name: str, embedding_function: Any, configuration: dict[str, Any]) -> Collection:
        return _schema_read_once(
            self.client.get_or_create_collection(
                name, embedding_function=embedding_function, configuration=configuration
            )
        )

    def collections(self) -> dict[str, Collection]:
        return {
            "memories": self.memories,
            "history": self.history,
            "kv": self.kv,
            "documents": self.documents.collection,
            "document_vectors": self.documents.vectors,
            "changes": self.changes_collection,
        }

    # ---------------------------------------------------------------- memory records
    @guarded
    def write_records(
        self,
        user_id: str,
        records: Sequence[Record],
        vectors: np.ndarray | None,
        history: Sequence[HistoryEntry] = (),
        *,
        archives: Sequence[Record] = (),
        fresh: bool = False,
        journal: tuple[str, str] | None = None,
        known: Mapping[str, Record | None] | None = None,
        deleting: Sequence[str] = (),
        mark: tuple[str, dict[str, Any]] | None = None,
        shared: bool = False,
        fold: bool = False,
    ) -> int:
        """Upsert ``records`` (with ``vectors``, one per record), move ``archives`` to the archive in place (their
        stored text and vector stand) and store ``history`` as one history row: all in one Chroma upsert when they
        fit in one batch, which Chroma applies as one transaction. More rows than a batch take several calls, the
        history row in the last. Returns the number of Chroma write calls made.

        ``fresh``: every id in ``records`` is new (nothing stored to replace), which saves a read. Archives are
        read first (their stored metadata keys and vector); one no longer stored is skipped, never revived.
        ``journal``: (row id, document) of the change's journal row (see :mod:`memtend.journal`), written in the
        first call. ``known``: records as already read by id (None: not stored); their metadata keys are not read
        again. ``deleting``: ids of records the change deletes after this call (their creation entries move to
        history rows here, see ``_creation_entries``). ``mark``: (id, metadata) of the change mark telling other
        processes of this write (see :class:`ChangeMarks`), written in the last call. ``shared``: other processes
        may write the store, so a record not stored when it was read may be by now (a fact's slot): only records
        new by construction (``fresh``) keep their creation entry then. ``fold``: the write's change mark is folded
        into its record rows (``FOLD_KEY``, see :class:`ChangeMarks`; a write of new rows in one call, no ``mark``).

        A write whose every history entry creates one of its new records (a ``remember``, ``log``, ``log_many``,
        a fact's claim, see :mod:`memtend.fact_claims`) writes no history row: each record keeps its creation entry
        in its own row (``h`` in its packed metadata; the row is that version of the record, so the entry's
        ``after`` is the row itself). A later write that replaces or deletes such a row moves the entry to a
        history row first, except an update that archives the old version under a new id in the same write (the
        slot design's fact update, which stores written before this one hold): its entry is kept in the archived
        row (``h`` whole, ``h_record`` naming the record) and the row's own entry stays in its new version, whole
        (``_carried_entries``). Rows written before either way read the same."""
        ids: list[str] = [r.id for r in records]
        embeddings: list[Any] = list(vectors) if vectors is not None and len(records) else []
        if records and len(embeddings) != len(records):
            embeddings = list(np.asarray(self._embedding_function([r.text for r in records]), dtype=np.float32))
        known = known or {}
        replaced = [] if fresh else [r.id for r in records if r.id not in known]
        stored = self._stored(
            user_id, [*replaced, *(r.id for r in archives), *deleting], with_embeddings=bool(archives)
        )
        for rid, record in known.items():
            if record is not None and rid not in stored:
                stored[rid] = _Stored(record.stored_keys or frozenset(record.to_metadata()), None, record)
        origins = _creation_entries(records, history, stored) if fresh or not shared else {}
        # the entries left that replace a record whose old version is archived under a new id in this write (a
        # fact's update in the slot design): each is kept in that archived row, so the write needs no history row
        kept = _kept_entries(records, [h for h in history if h.record_id not in origins], stored)
        # the replaced row's own entry (a fact slot's creation entry) stays in the new version of the row, whole
        # (so a fact's first update writes two rows like the later ones, not a third for that entry)
        carried = _carried_entries(records, kept, stored)
        origins = {**origins, **carried}
        metas: list[dict[str, Any]] = [
            dict(r.to_metadata(origins.get(r.id)))
            if r.id not in kept
            else {**r.to_metadata(kept[r.id].stored() | {"at": kept[r.id].at}), KEPT_FOR: kept[r.id].record_id}
            for r in records
        ]
        for meta, rid in zip(metas, ids, strict=True):
            for name in stored[rid].keys if rid in stored else ():
                meta.setdefault(name, None)  # Chroma merges metadata: a key the new version lacks is removed
            if fold:
                meta[FOLD_KEY] = user_id
        # a record's text is in its metadata (see Record.to_metadata): no document, except "" to clear the one a
        # row written before holds (Chroma keeps a stored document that an upsert does not name)
        docs: list[str | None] = ["" if _holds_document(stored.get(r.id)) else None for r in records]
        slots = [(r, origins.get(r.id), metas[n], embeddings[n]) for n, r in enumerate(records)]
        for r in archives:
            if r.id not in stored:
                continue
            keys, vector, _ = stored[r.id]
            meta = dict(r.to_metadata())
            for name in keys:
                meta.setdefault(name, None)
            ids.append(r.id)
            docs.append("" if _holds_document(stored[r.id]) else None)
            metas.append(meta)
            embeddings.append(vector)
            slots.append((r, None, meta, vector))
        rest = [] if kept else [h for h in history if h.record_id not in origins]
        rows = [_history_row(rest)] if rest else []
        # a stored row that held its own creation entry (or a kept entry) is replaced or deleted: the entry moves
        # to a history row of its own (named by the entry, so a replay writes the same row), in this same call
        written = {h.id for h in rest} | {h.id for h in kept.values()} | {str(o["id"]) for o in carried.values()}
        for item in stored.values():
            entry = _origin_entry(item.record) if item.record is not None else None
            if entry is not None and entry.id not in written and entry.record_id not in origins:
                rows.append(_entry_row(entry, entry.stored()))
        for row_id, doc, meta in rows:
            dim = len(embeddings[0]) if embeddings else self._dimension(user_id)
            ids.append(row_id)
            docs.append(doc)
            metas.append(meta)
            embeddings.append(history_vector(row_id, dim))
        if mark is not None:  # last: in the call that completes the write
            dim = len(embeddings[0]) if embeddings else self._dimension(user_id)
            ids.append(mark[0])
            docs.append(None)
            metas.append(mark[1])
            embeddings.append(history_vector(mark[0], dim))
        if journal is not None:
            # the change goes in metadata, not the document: Chroma indexes documents for full-text search (a
            # 1.2 MB journal of 2,000 events: 200-250 ms as a document, 70-130 ms as a metadata value)
            meta = {JOURNAL_OWNER: user_id, "journal": True, "at": time.time(), "change": journal[1]}
            dim = len(embeddings[0]) if embeddings else self._dimension(user_id)
            ids.insert(0, journal[0])
            docs.insert(0, None)
            metas.insert(0, meta)
            embeddings.insert(0, history_vector(journal[0], dim))
        calls = 0
        # rows that are all new are added: Chroma's add skips the look-up of stored rows that an upsert makes (a
        # batch of 100 records and its history row: 169 ms added, 204 ms upserted, on a loaded 2-core machine)
        # (a mark row is rewritten with each write: upserted)
        new_rows = fresh and not archives and journal is None and mark is None
        write = self.memories.add if new_rows else self.memories.upsert
        try:
            for start in range(0, len(ids), self.max_batch):
                part = slice(start, start + self.max_batch)
                self.write_calls += 1
                documents = docs[part]
                write(
                    ids=ids[part],
                    documents=documents if any(d is not None for d in documents) else None,  # type: ignore[arg-type]
                    metadatas=metas[part],
                    embeddings=np.asarray(embeddings[part]),
                )
                calls += 1
        except BaseException:
            self.slots.drop(r.id for r, _, _, _ in slots)  # stored or not: read again
            raise
        self.slots.written(user_id, slots)
        if embeddings:
            self._dimension_seen = len(embeddings[0])
        return calls

    @guarded
    def clear_folds(self, ids: Sequence[str]) -> None:
        """Remove the fold flag of these rows (their writes are listed by a mark row now; see :class:`ChangeMarks`):
        a metadata-only update, which changes nothing else and skips a row no longer stored. Upkeep, sent through
        a handle of its own on the collection (not a call of the write that made it due)."""
        if self._upkeep is None:
            name = self.memories.name
            self._upkeep = _schema_read_once(self.client.get_collection(name, self._embedding_function))
        for start in range(0, len(ids), self.max_batch):
            part = list(ids[start : start + self.max_batch])
            self._upkeep.update(ids=part, metadatas=[{FOLD_KEY: None} for _ in part])

    def _stored(self, user_id: str, ids: Sequence[str], *, with_embeddings: bool) -> dict[str, _Stored]:
        """The metadata keys, vectors (with ``with_embeddings``) and records of the user's stored records among
        ``ids``."""
        if not ids:
            return {}
        include: list[Any] = ["documents", "metadatas", "embeddings"] if with_embeddings else ["documents", "metadatas"]
        out: dict[str, _Stored] = {}
        for start in range(0, len(ids), self.max_batch):
            part = list(ids[start : start + self.max_batch])
            got = self.memories.get(ids=part, where=where(user_id), include=include)
            raw = got.get("embeddings") if with_embeddings else None
            rows = zip(got["ids"], got["documents"] or [], got["metadatas"] or [], strict=True)
            for n, (i, d, m) in enumerate(rows):
                vector = np.asarray(raw[n], dtype=np.float32) if raw is not None else None
                out[i] = _Stored(frozenset(m or {}), vector, Record.from_chroma(i, d, dict(m or {})))
        return out

    def _dimension(self, user_id: str) -> int:
        """The length of the memories collection's vectors (for a history row written with no record)."""
        if self._dimension_seen is None:
            for flt in (where(user_id), history_where(user_id)):
                got = self.memories.get(where=flt, limit=1, include=["embeddings"])
                raw = got.get("embeddings")
                if raw is not None and len(raw):
                    self._dimension_seen = len(raw[0])
                    break
            else:
                self._dimension_seen = len(self._embedding_function(["dimension"])[0])
        return self._dimension_seen

    def _store_dimension(self) -> int:
        """The length of the memories collection's vectors, from any row (for a store-wide row)."""
        if self._dimension_seen is None:
            raw = self.memories.get(limit=1, include=["embeddings"]).get("embeddings")
            if raw is not None and len(raw):
                self._dimension_seen = len(raw[0])
            else:
                self._dimension_seen = len(self._embedding_function(["dimension"])[0])
        return self._dimension_seen

    @guarded
    def end_journal(self, user_id: str, journal_id: str) -> None:
        """Delete a journal row: its change is written whole."""
        self.write_calls += 1
        self.memories.delete(ids=[journal_id], where=_owned(JOURNAL_OWNER, user_id, {}))

    @guarded
    def journals(self) -> list[tuple[str, str, float]]:
        """(row id, user id, time written) of every journal row left in the store (an admin lookup at open: one
        metadata clause that only journal rows match; their ids, then their owner and time)."""
        found = self.memories.get(where={"journal": {"$eq": True}}, include=[])["ids"]
        if not found:
            return []
        got = self.memories.get(ids=found, include=["metadatas"])
        return [
            (i, str(m[JOURNAL_OWNER]), float(m.get("at", 0.0)))
            for i, m in zip(got["ids"], got["metadatas"] or [], strict=True)
            if m and JOURNAL_OWNER in m
        ]

    @guarded
    def read_journal(self, user_id: str, journal_id: str) -> str | None:
        got = self.memories.get(ids=[journal_id], where=_owned(JOURNAL_OWNER, user_id, {}), include=["metadatas"])
        change = (got["metadatas"] or [{}])[0].get("change") if got["ids"] else None
        return str(change) if change is not None else None

    @guarded
    def stored_vectors(self, user_id: str, records: Sequence[Record]) -> dict[str, np.ndarray]:
        """The stored vectors of those records whose stored text is the record's text (by id)."""
        texts = {r.id: r.text for r in records}
        out: dict[str, np.ndarray] = {}
        ids = list(texts)
        for start in range(0, len(ids), self.max_batch):
            part = ids[start : start + self.max_batch]
            got = self.memories.get(ids=part, where=where(user_id), include=["documents", "metadatas", "embeddings"])
            raw = got.get("embeddings")
            rows = zip(got["ids"], got["documents"] or [], got["metadatas"] or [], strict=True)
            for n, (i, d, m) in enumerate(rows):
                if raw is not None and Record.from_chroma(i, d, dict(m or {})).text == texts.get(i):
                    out[i] = np.asarray(raw[n], dtype=np.float32)
        return out

    @guarded
    def touch(self, last_used: dict[str, float]) -> None:
        """Set last_used_at on records by id. Chroma merges metadata on update and skips unknown ids, so this
        changes nothing else and cannot revive a deleted record."""
        if last_used:
            try:
                self.memories.update(
                    ids=list(last_used), metadatas=[{"last_used_at": chroma_float(t)} for t in last_used.values()]
                )
            except BaseException:
                self.slots.drop(last_used)
                raise
            self.slots.stamped(last_used)

    @guarded
    def get_records(
        self,
        user_id: str,
        ids: Sequence[str] | None = None,
        *,
        kinds: Iterable[Kind] | None = None,
        statuses: Iterable[Status] | None = None,
        with_embeddings: bool = False,
    ) -> tuple[list[Record], np.ndarray | None]:
        """The user's records as readers see them (all, or those of ``ids``; of ``kinds`` and ``statuses``): a fact
        key's stored claims resolved into its current value (id ``fact_id``) and its archive (see
        :mod:`memtend.fact_claims`). Asked by id, a fact id or claim id reads the whole key (its claims: one more
        where-read)."""
        if ids is not None and not ids:
            return [], (np.zeros((0, 0), dtype=np.float32) if with_embeddings else None)
        include: list[Any] = ["documents", "metadatas"]
        if with_embeddings:
            include.append("embeddings")
        # Only the user clause goes to Chroma: it evaluates each part of an $and on its own, so kind and status
        # are cheaper to test here (a cold index load took 149 ms with them in the filter, 63 ms without).
        if ids is None:
            rows, raw = _read_rows(self.memories.get(where=where(user_id), include=include), with_embeddings)
        else:
            fids = sorted({f for f in (fact_claims.key_of(i) for i in ids) if f is not None})
            others = [i for i in dict.fromkeys(ids) if fact_claims.key_of(i) is None]
            rows, raw = [], []
            if others:
                got = self.memories.get(ids=others, where=where(user_id), include=include)
                rows, raw = _read_rows(got, with_embeddings)
            if fids:  # a fact id or claim id reads its whole key
                more, more_raw = self.key_rows(user_id, fids, with_embeddings=with_embeddings)
                rows += more
                raw += more_raw
        presented = fact_claims.present(rows)
        if ids is not None:
            presented = fact_claims.select(presented, ids)
        kind_set = set(kinds) if kinds is not None else None
        status_set = set(statuses) if statuses is not None else None
        records, picked = [], []
        for record, n in presented:
            if (kind_set is None or record.kind in kind_set) and (status_set is None or record.status in status_set):
                records.append(record)
                picked.append(n)
        vectors = None
        if with_embeddings:
            vectors = (
                np.asarray([raw[n] for n in picked], dtype=np.float32)
                if records and raw
                else np.zeros((0, 0), dtype=np.float32)
            )
        return records, vectors

    @guarded
    def delete_records(self, user_id: str, ids: Sequence[str]) -> int:
        self.write_calls += 1
        try:
            return _delete_existing(self.memories, list(ids), where(user_id))
        finally:
            self.slots.drop(ids)

    @guarded
    def fact_slot(self, user_id: str, slot_id: str) -> tuple[Record | None, np.ndarray | None]:
        """A fact key as readers see it (its current value, or its archived checkpoint when forgotten; any status)
        and its vector; (None, None) when the key holds nothing. Cached while no other process writes the store."""
        known = self.slots.get(slot_id) if self.slots.enabled else None
        if known is not None:
            return known
        found, vectors = self.get_records(user_id, [slot_id], with_embeddings=True)
        slot = next((r for r in found if r.id == slot_id), None)
        vector = vectors[found.index(slot)] if slot is not None and vectors is not None and len(vectors) else None
        self.slots.put(user_id, slot_id, slot, vector)
        return slot, vector

    @guarded
    def key_rows(
        self, user_id: str, fids: Sequence[str], *, with_embeddings: bool = False
    ) -> tuple[list[Record], list[Any]]:
        """The stored rows of fact keys as they are (not resolved): each key's slot/checkpoint row and its claims
        (two reads: the slots by id, the claims by their key field); vectors with ``with_embeddings``."""
        if not fids:
            return [], []
        include: list[Any] = ["documents", "metadatas", *(["embeddings"] if with_embeddings else [])]
        rows, raw = _read_rows(
            self.memories.get(ids=list(fids), where=where(user_id), include=include), with_embeddings
        )
        key: Any = fids[0] if len(fids) == 1 else {"$in": list(fids)}
        flt = where(user_id, **{fact_claims.FACT_KEY_FIELD: key})
        more, more_raw = _read_rows(self.memories.get(where=flt, include=include), with_embeddings)
        have = {r.id for r in rows}
        keep = [n for n, r in enumerate(more) if r.id not in have]
        return rows + [more[n] for n in keep], raw + ([more_raw[n] for n in keep] if with_embeddings else [])

    @guarded
    def stored_rows(
        self, user_id: str, ids: Sequence[str], *, with_embeddings: bool = False
    ) -> tuple[list[Record], list[Any]]:
        """The user's rows of ``ids`` as they are stored (a fact's claim as itself, not resolved), and their
        vectors with ``with_embeddings``."""
        if not ids:
            return [], []
        include: list[Any] = ["documents", "metadatas", *(["embeddings"] if with_embeddings else [])]
        return _read_rows(self.memories.get(ids=list(ids), where=where(user_id), include=include), with_embeddings)

    @guarded
    def claim_stamps(self, user_id: str) -> list[Record]:
        """Every fact claim row of the user as stored, without its text or vector (metadata only)."""
        got = self.memories.get(where=where(user_id), include=["metadatas"])
        return [
            Record.from_chroma(i, "", dict(m or {}))
            for i, m in zip(got["ids"], got["metadatas"] or [], strict=True)
            if fact_claims.is_claim(i)
        ]

    def resolve_fact(self, user_id: str, fid: str) -> fact_claims.Resolved:
        """A fact key's stored claims resolved (what each write did, the current value)."""
        rows, _ = self.key_rows(user_id, [fid])
        checkpoint = next((r for r in rows if r.id == fid), None)
        claims = [fact_claims.claim_of(r) for r in rows if r.id != fid and r.status is Status.ACTIVE]
        key = claims[0].record.key if claims else (checkpoint.key if checkpoint is not None else "")
        return fact_claims.resolve(user_id, key, claims, checkpoint=checkpoint)

    # ---------------------------------------------------------------- history
    @guarded
    def append_history(self, entries: Sequence[HistoryEntry]) -> None:
        """Store the entries of one write as one history row, on its own (a write of records stores its history
        row in the same call: :meth:`write_records`)."""
        if entries:
            self.write_records(entries[0].user_id, [], None, entries)

    def _history_rows(
        self, user_id: str, *, record_ids: Sequence[str] = (), since: float | None = None
    ) -> list[tuple[Collection, str, str | None, dict[str, Any]]]:
        """The user's history rows (naming any of ``record_ids``, or written at or after ``since``) as
        (collection, row id, document, metadata): the memories collection's, and an older store's history
        collection's when it holds any."""
        places = [(self.memories, HISTORY_OWNER)] + ([(self.history, "user_id")] if self._legacy_history else [])
        out = []
        for collection, owner in places:
            mine = _owned(owner, user_id, {})
            if record_ids:  # rows naming any of the records (one $contains per id: Chroma has no "any of" on arrays)
                touching: list[Where] = [{"record_ids": {"$contains": rid}} for rid in record_ids]
                clause = touching[0] if len(touching) == 1 else {"$or": touching}
                flt: Where = {"$and": [mine, clause]}
            else:
                flt = _owned(owner, user_id, {"at": {"$gte": since} if since is not None else None})
            got = collection.get(where=flt, include=["documents", "metadatas"])
            for i, d, m in zip(got["ids"], got["documents"] or [], got["metadatas"] or [], strict=True):
                out.append((collection, i, d, dict(m or {})))
        return out

    @guarded
    def scrub_history(self, user_id: str, record_ids: Sequence[str]) -> int:
        """Remove the text and value of deleted records from the history: from their own entries, and from the
        entries filed under another id that quote them (a fact's earlier value under the fact's id, summaries that
        folded them in; see :mod:`memtend.policies.history_scrub`). The entries stay, so the history still says
        what happened and when, but no longer what the record said. Returns the number of entries scrubbed."""
        try:
            return self._scrub_history(user_id, record_ids)
        finally:
            self.slots.drop_user(user_id)  # a slot's row may have been rewritten without its creation entry

    def _scrub_history(self, user_id: str, record_ids: Sequence[str]) -> int:
        gone = set(record_ids)
        rows: dict[str, list[dict[str, Any]]] = {}  # row id -> its entries (a row may name several records)
        places: dict[str, Collection] = {}  # row id -> the collection holding it
        self._read_history_rows(user_id, list(record_ids), rows, places)
        facts = history_scrub.gone_facts((e for es in rows.values() for e in es), gone)
        quoting = history_scrub.quoting_ids(user_id, (e for es in rows.values() for e in es), gone, facts)
        self._read_history_rows(user_id, sorted(quoting), rows, places)
        scrubbed, changed = 0, {}
        for hid, entries in rows.items():
            n = history_scrub.scrub(entries, user_id, gone, facts)
            if n:
                scrubbed += n
                changed[hid] = json.dumps({"entries": entries})
        for collection in (self.memories, self.history):
            ids = [i for i in changed if places[i] is collection]
            if not ids:
                continue
            dim = self._dimension(user_id) if collection is self.memories else 1
            for start in range(0, len(ids), _WRITE_BATCH):
                chunk = ids[start : start + _WRITE_BATCH]
                vectors = [history_vector(i, dim) if dim > 1 else _NO_VECTOR for i in chunk]
                collection.update(ids=chunk, documents=[changed[i] for i in chunk], embeddings=vectors)
        return scrubbed + self._scrub_creation_entries(user_id, gone, facts)

    def _scrub_creation_entries(self, user_id: str, gone: set[str], facts: set[tuple[str, str]]) -> int:
        """Scrub the creation entries records keep in their own rows (a summary over a purged event, a fact slot
        first set to a deleted value): each one that quotes what went moves, scrubbed, to a history row of its own,
        written in one call with its record's row rewritten without it."""
        moving: dict[str, tuple[HistoryEntry, dict[str, Any]]] = {}  # row id -> (entry, scrubbed body)
        for row_id, entry in self._creation_history(user_id, expand=False):
            body = entry.stored()
            if row_id not in gone and history_scrub.scrub([body], user_id, gone, facts):
                moving[row_id] = (entry, body)
        if not moving:
            return 0
        stored = self._stored(user_id, list(moving), with_embeddings=True)
        ids: list[str] = []
        docs: list[str | None] = []
        metas: list[dict[str, Any]] = []
        vectors: list[Any] = []
        for rid, (keys, vector, record) in stored.items():
            if record is None or vector is None:
                continue
            entry, body = moving[rid]
            row_id, doc, history_meta = _entry_row(entry, body)
            meta: dict[str, Any] = dict(record.to_metadata())
            for name in keys:
                meta.setdefault(name, None)
            ids += [row_id, rid]
            docs += [doc, "" if record.stored_document else None]
            metas += [history_meta, meta]
            vectors += [history_vector(row_id, len(vector)), vector]
        if ids:
            self.memories.upsert(
                ids=ids,
                documents=docs,  # type: ignore[arg-type]
                metadatas=metas,
                embeddings=np.asarray(vectors),
            )
        return len(ids) // 2

    def _read_history_rows(
        self,
        user_id: str,
        record_ids: list[str],
        rows: dict[str, list[dict[str, Any]]],
        places: dict[str, Collection],
    ) -> None:
        """Add to ``rows`` the history rows naming any of the records that it does not hold yet (and to ``places``
        the collection of each)."""
        for start in range(0, len(record_ids), _SCRUB_BATCH):
            for collection, hid, doc, _meta in self._history_rows(
                user_id, record_ids=record_ids[start : start + _SCRUB_BATCH]
            ):
                if hid not in rows:
                    rows[hid] = _row_entries(doc)
                    places[hid] = collection

    @guarded
    def get_history(
        self, user_id: str, *, record_id: str | None = None, since: float | None = None, rows_only: bool = False
    ) -> list[HistoryEntry]:
        """The user's history entries in order (of one record, or written at or after ``since``). ``rows_only``:
        the entries of history rows alone, without the creation entries records keep in their own rows (a read
        fewer; enough to find another process's change, which is always a history row on a shared store)."""
        rows = self._history_rows(user_id, record_ids=[record_id] if record_id is not None else (), since=since)
        entries: list[HistoryEntry] = []
        seen: set[str] = set()
        for _collection, hid, doc, meta in rows:
            for found in _row_history(hid, doc, meta):
                if (record_id is not None and found.record_id != record_id) or found.id in seen:
                    continue
                if fact_claims.is_claim(found.record_id) and found.record_id != record_id:
                    continue  # a fact claim's own creation entry, moved when it was folded: internal
                seen.add(found.id)
                entries.append(found)
        # creation entries records keep in their own rows (see write_records); a fact claim's is internal (what it
        # did is derived from the key's claims, below)
        for _row, entry in () if rows_only else self._creation_history(user_id, record_id):
            if entry.id not in seen and (since is None or entry.at >= since):
                if fact_claims.is_claim(entry.record_id) and entry.record_id != record_id:
                    continue
                seen.add(entry.id)
                entries.append(entry)
        if not rows_only:
            for entry in self._derived_history(user_id, record_id):
                if entry.id not in seen and (since is None or entry.at >= since):
                    seen.add(entry.id)
                    entries.append(entry)
        entries.sort(key=lambda e: e.at)  # stable: the entries of one row keep their order
        return entries

    def _derived_history(self, user_id: str, record_id: str | None) -> list[HistoryEntry]:
        """The history entries fact keys' claims derive (see :mod:`memtend.fact_claims`): every key's, or the
        key's of ``record_id`` when it is a fact id."""
        if record_id is None:
            got = self.memories.get(where=where(user_id), include=["documents", "metadatas"])
            rows, _ = _read_rows(got, False)
        elif record_id.startswith(fact_claims.SLOT_PREFIX):
            rows, _ = self.key_rows(user_id, [record_id])
        else:
            return []
        return [
            replace(e, before=_expanded(e.before), after=_expanded(e.after))  # as history reads show every entry
            for e in fact_claims.history(rows)
            if record_id is None or e.record_id == record_id
        ]

    def _creation_history(
        self, user_id: str, record_id: str | None = None, *, expand: bool = True
    ) -> list[tuple[str, HistoryEntry]]:
        """(row id, entry) of the entries the user's record rows keep in themselves (their creation entries, and
        the entries archived rows keep for the record they were replaced in), or of one record's, in stored
        order; expanded as history reads show them, or (``expand=False``) as stored."""
        include: Any = ["documents", "metadatas"]
        if record_id is None:
            found = [self.memories.get(where=where(user_id), include=include)]
        else:
            found = [
                self.memories.get(ids=[record_id], where=where(user_id), include=include),
                self.memories.get(where=where(user_id, **{KEPT_FOR: record_id}), include=include),
            ]
        out = []
        for got in found:
            for i, d, m in zip(got["ids"], got["documents"] or [], got["metadatas"] or [], strict=True):
                entry = _kept_entry(i, d, dict(m or {}), expand=expand)
                if entry is not None and (record_id is None or entry.record_id == record_id):
                    out.append((i, entry))
        return out

    def _count_creation_entries(self, user_id: str) -> int:
        """How many of the user's record rows keep their creation entry (each counts as a history row)."""
        got = self.memories.get(where=where(user_id), include=["metadatas"])
        return sum(1 for m in got["metadatas"] or [] if m and _keeps_origin(m))

    # ---------------------------------------------------------------- whole users
    @guarded
    def erase_user(self, user_id: str, *, purge_log: bool = True) -> dict[str, int]:
        """Delete every row of the user from every collection; counts per collection (history rows, kept beside
        the records, are counted as ``history``).

        What Chroma keeps of deleted rows is cleared where its API reaches: the vectors of the user's rows are
        overwritten before they are deleted (the vector index keeps the vectors of deleted items), and every
        collection that held rows is made to save its vector index, which lets Chroma drop its write-ahead log
        (``embeddings_queue``) up to that point (``purge_log=False`` leaves that to a later :meth:`purge_log`, for
        erasing many users at once). What SQLite keeps in the database file is cleared by
        :mod:`memtend.store_purge` (run by ``Memory.erase_user`` on a local folder)."""
        self.slots.drop_user(user_id)
        try:
            return self._erase_user(user_id, purge_log)
        finally:
            self.slots.drop_user(user_id)

    def _erase_user(self, user_id: str, purge_log: bool) -> dict[str, int]:
        counts: dict[str, int] = {"history": self._count_creation_entries(user_id)}
        on_disk = self._keeps_files()
        for name, col, flt in self._user_rows(user_id):
            ids = col.get(where=flt, include=[])["ids"]
            if on_disk and (col is self.memories or name == "document_vectors"):  # others: one constant vector
                _blank_vectors(col, ids)
            for start in range(0, len(ids), _WRITE_BATCH):
                col.delete(ids=ids[start : start + _WRITE_BATCH], where=flt)
            counts[name] = counts.get(name, 0) + len(ids)
            if on_disk and (ids or col.count() or self._ever_written(col)):  # rows deleted earlier: in the log
                self._log_to_purge[col.name] = col
        if purge_log:
            self.purge_log()
        return counts

    @guarded
    def purge_log(self, *, every_collection: bool = False) -> None:
        """Make each collection an erasure deleted rows from (``every_collection``: each holding rows) save its
        vector index now, so Chroma purges its write-ahead log past the deleted rows (see ``_save_vector_index``)."""
        if every_collection and self._keeps_files():
            for col in self.collections().values():
                if col.count() or self._ever_written(col):
                    self._log_to_purge[col.name] = col
        while self._log_to_purge:
            _, col = self._log_to_purge.popitem()
            _save_vector_index(col)

    def _ever_written(self, collection: Collection) -> bool:
        """Whether an empty collection was ever written (Chroma then knows its dimension): only then does a save
        of its index purge its log (a collection never written keeps the updates that ask for a save)."""
        try:
            return self.client.get_collection(collection.name)._model.dimension is not None
        except Exception:
            return False

    def _keeps_files(self) -> bool:
        """False for an in-memory client (``EphemeralClient``): nothing it holds reaches a file."""
        try:
            settings = self.client.get_settings()
        except Exception:
            return True
        return bool(getattr(settings, "is_persistent", True)) or _is_server(settings)

    def local_folder(self) -> str | None:
        """The folder of an embedded (``PersistentClient``) store; None for an in-memory or a server client."""
        try:
            settings = self.client.get_settings()
        except Exception:
            return None
        if not getattr(settings, "is_persistent", False) or _is_server(settings):
            return None
        return str(settings.persist_directory) if settings.persist_directory else None

    @guarded
    def count_user(self, user_id: str) -> dict[str, int]:
        """Rows per collection; ``history`` counts history rows and the records keeping their creation entry."""
        counts: dict[str, int] = {"history": self._count_creation_entries(user_id)}
        for name, col, flt in self._user_rows(user_id):
            ids = col.get(where=flt, include=[])["ids"]
            if name == "changes" and col is self.memories:  # records flagged by a folded write are counted as such
                ids = [i for i in ids if i.startswith("mark:")]
            counts[name] = counts.get(name, 0) + len(ids)
        return counts

    def _user_rows(self, user_id: str) -> list[tuple[str, Collection, Where]]:
        """(name, collection, filter) of every place a user's rows are kept."""
        places = [(name, col, where(user_id)) for name, col in self.collections().items()]
        journal = _owned(JOURNAL_OWNER, user_id, {})
        marks = _owned(MARK_OWNER, user_id, {})
        return [
            *places,
            ("history", self.memories, history_where(user_id)),
            ("memories", self.memories, journal),
            ("changes", self.memories, marks),
        ]

    @guarded
    def users(self) -> list[str]:
        """Every user id with at least one row (a full scan: for the CLI and for tests, not for hot paths)."""
        seen: set[str] = set()
        for name, col in self.collections().items():
            if name == "changes":  # marks of users with records elsewhere, and the store-wide erasure row
                continue
            got = col.get(include=["metadatas"])
            for m in got["metadatas"] or []:
                m = m or {}
                owner = m.get("user_id", m.get(HISTORY_OWNER, m.get(JOURNAL_OWNER)))
                if owner is not None:
                    seen.add(str(owner))
        return sorted(seen)


# ---------------------------------------------------------------------------------------------------- change marks
_ERASURES = "erasures"  # the id (and ``m_store`` value) of the store-wide row whose token changes with every erasure
_ERASING = "erasing_user"  # the field naming the user of an erasure in progress
_STORE_MARK = "m_store"  # the field of the store-wide erasure row (string-valued: Chroma indexes those lookups)
MARK_OWNER = "m_user"  # the owner field of change marks in the memories collection
# on the record rows of a folded write, until a mark row lists it: the user's id, in the marks' own owner field (the
# marks' read finds them with no clause of its own; a record row also names its owner in ``user_id``, a mark no)
FOLD_KEY = MARK_OWNER
FOLDED_TOKEN = ""  # the token ChangeMarks.read_recent gives a folded write's row (a mark's token is never empty)


def record_stamps(storage: Storage, user_id: str) -> dict[str, Record]:
    """Every record of the user without its text or vector (metadata only): what a catch-up compares."""
    got = storage.memories.get(where=where(user_id), include=["metadatas"])
    rows = [Record.from_chroma(i, "", dict(m or {})) for i, m in zip(got["ids"], got["metadatas"] or [], strict=True)]
    return {r.id: r for r, _ in fact_claims.present(rows)}


@guarded
def drop_history_row(storage: Storage, user_id: str, first_entry_id: str) -> None:
    """Delete the history row of one write (named by its first entry): a write taken back leaves no history."""
    storage.memories.delete(ids=[HISTORY_ID_PREFIX + first_entry_id], where=history_where(user_id))


class ChangeMarks:
    """Change marks for processes sharing a store, so each sees the others' writes and erasures by comparing tokens,
    never clocks. They are rows of the memories collection, so a write's mark goes in the same Chroma call as the
    write (one transaction: a reader sees both or neither); each has its own owner field, which no record,
    history or journal read filters on, and a vector no search is meant to find (as history rows have).

    One row per (user, writing process) holds a fresh random token (``m_user``, ``token``, and ``recent``: the ids
    its last writes touched, as JSON), rewritten with each write that process makes to the user's records; one
    store-wide row (``m_store: "erasures"``) holds a token rewritten after every erasure (an erasure deletes the
    user's rows, which alone could bring a reader's marks back to what it last saw), and an erasure in progress
    has a row of its own (``e_user``). All are read in one call. (Stores written by earlier versions kept marks in
    ``<prefix>_changes``; erasure still clears it.)

    A single write of new rows only (a ``remember``, ``log``, a fact's claim) after a process's first write of the
    user need not move the mark row: it is **folded** into its own record rows, which carry the marks' owner field
    (``FOLD_KEY``), so the call adds those rows alone, as a raw ``add`` would. The same read returns them (readers
    see each flagged row once, by id; a process skips its own). A process's mark row moves at least every
    ``store_state.FOLD_WINDOW`` writes, listing the folded writes among its recent ones; only then are their flags
    removed (a metadata update in the background, :meth:`Storage.clear_folds`), so a reader sees each folded write
    by its flag or by a mark, never by neither. A flag names the user, not the writer, so an erasure made by
    another process (which deletes the writer's mark row) does not hide the writer's later folded writes. A
    process that closes moves its marks and removes its flags; one killed leaves at most ``FOLD_WINDOW - 1``
    flagged rows per user, read with the marks until those rows are rewritten or deleted. (A process of an earlier
    version, reading marks only, sees a folded write when the writer's mark next moves.)
    """

    def __init__(self, collection: Collection, dimension: Callable[[], int]) -> None:
        self.collection = collection
        self._dimension = dimension

    @staticmethod
    def mark_id(user_id: str, writer: str) -> str:
        return "mark:" + hashlib.sha256(json.dumps([user_id, writer]).encode()).hexdigest()[:40]

    erasures_id = _ERASURES

    @staticmethod
    def erasing_id(user_id: str) -> str:
        return "erasing:" + hashlib.sha256(json.dumps([user_id]).encode()).hexdigest()[:40]

    def read(self, user_id: str) -> dict[str, str]:
        """Row id -> token of the user's marks, of an erasure of the user in progress, and of the erasure row."""
        return {i: token for i, (token, _) in self.read_recent(user_id).items()}

    @guarded
    def read_recent(self, user_id: str) -> dict[str, tuple[str, str]]:
        """Row id -> (token, the ids its writer's recent writes touched, as JSON) of the rows :meth:`read` reads;
        a folded write's record row -> (``FOLDED_TOKEN``, "")."""
        got = self.collection.get(
            where={
                "$or": [
                    {MARK_OWNER: {"$eq": user_id}},
                    {_ERASING: {"$eq": user_id}},
                    {_STORE_MARK: {"$eq": _ERASURES}},
                ]
            },
            include=["metadatas"],
        )
        out: dict[str, tuple[str, str]] = {}
        for i, m in zip(got["ids"], got["metadatas"] or [], strict=True):
            m = m or {}
            folded = "user_id" in m  # a record row, flagged (FOLD_KEY)
            out[i] = (FOLDED_TOKEN, "") if folded else (str(m.get("token")), str(m.get("recent", "")))
        return out

    def row(self, user_id: str, writer: str, token: str, recent: str = "") -> tuple[str, dict[str, Any]]:
        """(id, metadata) of the writer's mark of the user at ``token`` (``recent``: the ids its last writes
        touched, JSON), to write with the write it marks."""
        return self.mark_id(user_id, writer), {MARK_OWNER: user_id, "token": token, "recent": recent}

    def _put(self, row_id: str, meta: dict[str, Any]) -> None:
        vector = history_vector(row_id, self._dimension())
        self.collection.upsert(ids=[row_id], embeddings=[vector], documents=[""], metadatas=[meta])

    @guarded
    def erasing(self, user_id: str, token: str) -> None:
        """Say an erasure of the user has begun (before anything is deleted; kept apart from the user's rows, so the
        erasure's own deletes leave it until :meth:`erased`)."""
        self._put(self.erasing_id(user_id), {_ERASING: user_id, "token": token})

    @guarded
    def mark(self, user_id: str, writer: str, token: str, recent: str = "") -> None:
        """Move the writer's mark of the user to ``token`` on its own (a write of several calls marks after its
        last); ``recent``: the ids its last writes touched (JSON)."""
        self.put(*self.row(user_id, writer, token, recent))

    @guarded
    def put(self, row_id: str, meta: dict[str, Any]) -> None:
        """Write a mark row made by :meth:`row` on its own."""
        self._put(row_id, meta)

    @guarded
    def put_many(self, rows: Sequence[tuple[str, dict[str, Any]]], max_batch: int) -> None:
        """Write mark rows made by :meth:`row` (of several users), ``max_batch`` to a call."""
        dim = self._dimension()
        for start in range(0, len(rows), max_batch):
            part = rows[start : start + max_batch]
            self.collection.upsert(
                ids=[i for i, _ in part],
                embeddings=np.stack([history_vector(i, dim) for i, _ in part]),
                documents=["" for _ in part],
                metadatas=[m for _, m in part],
            )

    @guarded
    def erased(self, user_id: str, token: str) -> None:
        """Remove the user's marks (after their records are gone), move the erasure token, then drop the
        erasure-in-progress row."""
        self.collection.delete(where={MARK_OWNER: {"$eq": user_id}})
        self._put(_ERASURES, {_STORE_MARK: _ERASURES, "token": token})
        self.collection.delete(ids=[self.erasing_id(user_id)])


def _schema_read_once(collection: Collection) -> Collection:
    """``collection``, reading its schema once instead of on every write.

    Chroma's client rebuilds a collection's schema from its JSON on every add, upsert and update (with the embedding
    function it names, twice) to find metadata keys to fill with sparse embeddings: 0.3 ms a call (a third of what
    a single write costs beyond Chroma's own work and the embedding). The answer is kept per schema: read again when
    this object's schema is replaced (``modify`` assigns a new one). A Chroma without the hook is left as it is."""
    read = getattr(collection, "_get_sparse_embedding_targets", None)
    if read is None or not hasattr(getattr(collection, "_model", None), "serialized_schema"):
        return collection
    seen: list[Any] = []

    def targets() -> Any:
        schema = collection._model.serialized_schema
        if not seen or seen[0] is not schema:
            seen[:] = [schema, read()]
        return seen[1]

    collection._get_sparse_embedding_targets = targets  # type: ignore[method-assign]
    return collection


def _in(values: list[str]) -> dict[str, Any]:
    return {"$in": values}


def _delete_existing(collection: Collection, ids: list[str], flt: Where) -> int:
    """Delete the given ids that exist under the filter; how many were deleted. (Chroma's own delete result
    counts ids that never existed.)"""
    if not ids:
        return 0
    existing = collection.get(ids=ids, where=flt, include=[])["ids"]
    if existing:
        collection.delete(ids=existing, where=flt)
    return len(existing)


def _is_server(settings: Any) -> bool:
    return str(getattr(settings, "chroma_api_impl", "")).endswith("FastAPI")


def _blank_vectors(collection: Collection, ids: Sequence[str]) -> None:
    """Overwrite the vectors of rows about to be deleted: Chroma's vector index marks a deleted item and keeps its
    vector in its file, which then holds this one (seeded by the row id alone, as history rows' vectors are, so
    the deleted items do not pile up on one point of the graph that searches still walk through)."""
    if not ids:
        return
    got = collection.get(ids=list(ids[:1]), include=["embeddings"])
    vectors = got.get("embeddings")
    if vectors is None or not len(vectors):
        return
    dim = len(vectors[0])
    for start in range(0, len(ids), _WRITE_BATCH):
        chunk = list(ids[start : start + _WRITE_BATCH])
        collection.update(ids=chunk, embeddings=np.stack([history_vector(i, dim) for i in chunk]))


def _save_vector_index(collection: Collection) -> None:
    """Make Chroma save the collection's vector index now, so that its write-ahead log is purged up to here.

    A local Chroma (embedded, or a ``chroma run`` server) saves the index after every ``sync_threshold`` log
    records, and then deletes the log records the saved index and the metadata tables both hold. Updates of ids
    that do not exist are such records and change nothing, so ``sync_threshold`` of them make it save."""
    hnsw = (getattr(collection, "configuration_json", None) or {}).get("hnsw") or {}
    threshold = int(hnsw.get("sync_threshold") or _CHROMA_SYNC_THRESHOLD)
    ids = [f"{_SAVE_ID}{n}" for n in range(threshold)]
    for start in range(0, len(ids), _WRITE_BATCH):
        chunk = ids[start : start + _WRITE_BATCH]
        collection.update(ids=chunk, metadatas=[{_SAVE_KEY: None} for _ in chunk])


class _Stored(NamedTuple):
    """What a write reads of a stored record it replaces: its metadata keys, its vector (when asked) and itself."""

    keys: frozenset[str]
    vector: np.ndarray | None
    record: Record | None


def _read_rows(got: Any, with_embeddings: bool) -> tuple[list[Record], list[Any]]:
    """The records of a Chroma get, and their vectors (with ``with_embeddings``; else an empty list)."""
    records = [
        Record.from_chroma(i, d, dict(m or {}))
        for i, d, m in zip(got["ids"], got["documents"] or [], got["metadatas"] or [], strict=True)
    ]
    raw = got.get("embeddings") if with_embeddings else None
    vectors = [np.asarray(v, dtype=np.float32) for v in raw] if raw is not None and len(raw) else []
    return records, vectors


def _creation_entries(
    records: Sequence[Record], history: Sequence[HistoryEntry], stored: Mapping[str, _Stored]
) -> dict[str, dict[str, Any]]:
    """Record id -> the creation entry it keeps in its own row (``h``: entry id, operation, source, time, and the
    last-used time it was written with, which usage stamps move later), when every entry of the write creates one
    of its new records as written (nothing before, the record's snapshot after); else none (the write keeps one
    history row, so the order of its entries stays as planned)."""
    if not history or len(history) > len(records):
        return {}
    by_id = {r.id: r for r in records}
    out: dict[str, dict[str, Any]] = {}
    for h in history:
        record = by_id.get(h.record_id)
        if record is None or record.id in stored or record.id in out or h.before is not None or h.after is None:
            return {}
        if h.after != record.snapshot():
            return {}
        out[record.id] = {"id": h.id, "op": h.op, "source": h.source, "at": h.at, "last_used_at": record.last_used_at}
    return out


def _kept_entries(
    records: Sequence[Record], entries: Sequence[HistoryEntry], stored: Mapping[str, _Stored]
) -> dict[str, HistoryEntry]:
    """Row id -> the history entry a new archived row of the write keeps: when every entry of ``entries`` replaces
    a record of the write (``before`` and ``after`` set) whose old version the write archives under a new id
    (``superseded_by`` naming the record), one entry per such row; else none (the entries go in a history row)."""
    if not entries:
        return {}
    written = {r.id for r in records}
    homes: dict[str, Record] = {}
    for r in records:
        if r.status is Status.ARCHIVED and r.superseded_by and r.id not in stored and r.origin is None:
            homes.setdefault(r.superseded_by, r)
    out: dict[str, HistoryEntry] = {}
    for h in entries:
        home = homes.pop(h.record_id, None)
        if home is None or h.before is None or h.after is None or h.record_id not in written:
            return {}
        out[home.id] = h
    return out


def _holds_document(item: _Stored | None) -> bool:
    """Whether a stored row may hold a Chroma document (a row read from Chroma knows; one not read may)."""
    if item is None:
        return False
    record = item.record
    return record is None or record.stored_document or not record.stored_keys


def _carried_entries(
    records: Sequence[Record], kept: Mapping[str, HistoryEntry], stored: Mapping[str, _Stored]
) -> dict[str, dict[str, Any]]:
    """Record id -> the entry its replaced row kept, whole (``record_id``, ``before``, ``after`` and time), for each
    record of the write whose update entry an archived row of the same write keeps (``kept``): the new version of
    the row keeps it in turn (read back by ``_origin_entry`` as it was), instead of a history row of its own. A
    later write that deletes or rewrites the row otherwise moves it to a history row, as any kept entry."""
    if not kept:
        return {}
    updated = {h.record_id for h in kept.values()}
    out: dict[str, dict[str, Any]] = {}
    for r in records:
        item = stored.get(r.id)
        entry = _origin_entry(item.record) if r.id in updated and item is not None and item.record else None
        if entry is not None and entry.record_id == r.id:
            out[r.id] = entry.stored() | {"at": entry.at}
    return out


def _keeps_origin(meta: Mapping[str, Any]) -> bool:
    """Whether a stored record row keeps its creation entry (``h`` in its packed fields)."""
    packed = meta.get("r")
    if not isinstance(packed, str) or '"h"' not in packed:
        return False
    try:
        return isinstance(json.loads(packed).get("h"), dict)
    except ValueError:
        return False


def _kept_entry(
    row_id: str, document: str | None, meta: Mapping[str, Any], *, expand: bool = True
) -> HistoryEntry | None:
    """The history entry a stored record row keeps in itself (its creation entry, or the entry an archived row keeps
    for the record it was replaced in), expanded as history reads show it (``expand=False``: as stored); None for a
    row keeping none (or a malformed one, left unread)."""
    if not _keeps_origin(meta):
        return None
    entry = _origin_entry(Record.from_chroma(row_id, document, dict(meta)))
    if entry is None or not expand:
        return entry
    return replace(entry, before=_expanded(entry.before), after=_expanded(entry.after))


def _origin_entry(record: Record) -> HistoryEntry | None:
    """The creation entry a stored record keeps in its own row, or None (a malformed one is left unread)."""
    origin = record.origin
    if origin is None:
        return None
    if "record_id" in origin:  # a whole entry an archived row keeps for the record it replaced (see _kept_entries)
        try:
            return HistoryEntry(
                id=str(origin["id"]),
                user_id=record.user_id,
                op=str(origin["op"]),
                record_id=str(origin["record_id"]),
                before=origin.get("before"),
                after=origin.get("after"),
                source=str(origin.get("source", "")),
                at=float(origin["at"]),
            )
        except (KeyError, TypeError, ValueError):
            return None
    try:
        first = replace(record, last_used_at=float(origin["last_used_at"]))
        return HistoryEntry(
            id=str(origin["id"]),
            user_id=record.user_id,
            op=str(origin["op"]),
            record_id=record.id,
            before=None,
            after=first.snapshot(),
            source=str(origin.get("source", "")),
            at=float(origin["at"]),
        )
    except (KeyError, TypeError, ValueError):
        return None


def _history_row(entries: Sequence[HistoryEntry]) -> tuple[str, str, dict[str, Any]]:
    """(id, document, metadata) of the history row holding the entries of one write: the document lists the
    entries, the metadata names the owner, the time and every record touched."""
    first = entries[0]
    meta: dict[str, Any] = {
        HISTORY_OWNER: first.user_id,
        "at": first.at,
        "record_ids": sorted({e.record_id for e in entries}),
    }
    return HISTORY_ID_PREFIX + first.id, json.dumps({"entries": [e.stored() for e in entries]}), meta


def _entry_row(entry: HistoryEntry, body: dict[str, Any]) -> tuple[str, str, dict[str, Any]]:
    """(id, document, metadata) of the history row a creation entry moves to when its record's row changes: named
    by the entry (a replay writes the same row), its time kept exact in the entry (Chroma may round the last digit
    of a metadata float)."""
    meta: dict[str, Any] = {HISTORY_OWNER: entry.user_id, "at": entry.at, "record_ids": [entry.record_id]}
    return HISTORY_ID_PREFIX + entry.id, json.dumps({"entries": [{**body, "at": entry.at}]}), meta


def history_vector(row_id: str, dim: int) -> np.ndarray:
    """The vector stored with a history row. Chroma needs one for every row of the memories collection and nothing
    searches history by meaning: a pseudo-random unit vector seeded by the row id (the same each time the row is
    rewritten), so history rows neither pile up on one point of Chroma's vector index nor sit near a record."""
    seed = int.from_bytes(hashlib.sha256(row_id.encode()).digest()[:8], "big")
    vector = np.random.default_rng(seed).standard_normal(dim).astype(np.float32)
    return vector / np.float32(np.linalg.norm(vector))


def _expanded(snapshot: Any) -> dict[str, Any] | None:
    return expand_snapshot(snapshot) if isinstance(snapshot, dict) else None


def _row_history(row_id: str, document: str | None, meta: Mapping[str, Any]) -> list[HistoryEntry]:
    """The entries of one history row, as written. An entry lacking its id, operation or record id (a row damaged,
    or edited outside memtend) is left out with a warning naming the row, so the user's other history still reads
    and the damage is not hidden (memtend never writes such an entry)."""
    row_at = float(meta["at"])
    entries: list[HistoryEntry] = []
    damaged = 0
    for body in _row_entries(document, keep_damaged=True):
        if not isinstance(body, dict) or not all(name in body for name in _ENTRY_NAMES):
            damaged += 1
            continue
        entries.append(
            HistoryEntry(
                id=str(body["id"]),
                user_id=str(meta.get(HISTORY_OWNER, meta.get("user_id"))),
                op=str(body["op"]),
                record_id=str(body["record_id"]),
                before=_expanded(body.get("before")),
                after=_expanded(body.get("after")),
                source=str(body.get("source", "")),
                at=float(body.get("at", row_at)),  # a creation entry moved out of its record's row keeps its own
            )
        )
    if damaged:
        _log.warning(
            "memtend: history row %s holds %d damaged entr%s (no id, operation or record id); left out of history "
            "reads. Restore the store from a backup to recover them (the records themselves are not affected)",
            row_id,
            damaged,
            "y" if damaged == 1 else "ies",
        )
    return entries


_ENTRY_NAMES = ("id", "op", "record_id")  # what every stored history entry names


def _row_entries(document: str | None, *, keep_damaged: bool = False) -> list[Any]:
    """The entry bodies of a history row's document (``keep_damaged``: with those that are not objects, for the
    reader to count)."""
    body = json.loads(document or "{}")
    entries = body.get("entries")
    if not isinstance(entries, list):
        return []
    return list(entries) if keep_damaged else [e for e in entries if isinstance(e, dict)]


# ---------------------------------------------------------------------------------------------------- documents
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
# - chunk rows (the rest of a text longer than ``CHUNK_CHARS``): ``user_id``, ``of`` (the document row's id);
# - namespace rows, one per (user, space, namespace) holding documents: ``user_id``, ``depth``, ``count``,
#   ``m<d>`` (the scope codes) and ``o<d>`` (the same without the user, for ``Memory.document_owners``);
# - prefix rows (``expiring`` / ``partial``), one per (user, space, prefix) under which a document with an expiry
#   (or without all its filter fields) was ever written: a search elsewhere needs no expiry clause (and a filter no
#   Python check), which an id read tells;
# - tombstones (``dead``, every other field but ``user_id`` cleared): what one atomic upsert leaves of rows it
#   removes; deleted right after (``where dead``), and by erasure.
# - vector rows (``<prefix>_document_vectors``): ``<doc id>~<n>`` for the n-th indexed text of a document, with
#   ``user_id``, ``of`` and the ``p<d>`` scope codes; a document row's ``vecs`` says how many are current.
# Chroma returns ``get`` results in the order rows were first added (an upsert keeps a row's place; a delete and
# add moves it to the end), which is the documents' insertion order, paged by Chroma's own limit/offset.

CHUNK_CHARS = 4_000_000
_DOC_FIELDS = ("user_id", "key", "depth", "created_at", "updated_at", "type", "parts", "exp", "ttl")


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


class DocumentRows:
    """Reads and writes of document rows; every call is scoped to one user (or, for admin calls, says so)."""

    def __init__(self, collection: Collection, vectors: Collection) -> None:
        self.collection = collection
        self.vectors = vectors
        self.lock = threading.RLock()  # a read-modify-write of one process is not interleaved with another's
        try:
            self.max_batch = min(int(collection._client.get_max_batch_size()), 5_000)
        except Exception:  # a client without the call: Chroma's smallest default
            self.max_batch = 1_000

    # ------------------------------------------------------------------ reads
    @guarded
    def read(self, user_id: str, ids: Sequence[str], *, text: bool = True) -> dict[str, DocRow]:
        """Live or expired document rows by id (an id read is cheap; a where-filter here would scan the user)."""
        if not ids:
            return {}
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
        return out

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
        got = self.collection.get(ids=[_prefix_row_id(kind, user_id, space, prefix)], include=["metadatas"])
        return any((m or {}).get("user_id") == user_id for m in got["metadatas"] or [])

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
        got = self.collection.get(ids=wanted, include=["documents"])
        pieces = dict(zip(got["ids"], got["documents"] or [], strict=True))
        for i, r in list(rows.items()):
            parts = int(r.fields.get("parts") or 1)
            if parts > 1:
                rest = [pieces.get(f"{i}#{n}") for n in range(1, parts)]
                if any(p is None for p in rest):  # a write replaced the row between the two reads
                    raise StorageUnavailableError("a large document changed while it was read; read it again")
                rows[i] = DocRow(r.id, r.space, r.namespace, (r.text or "") + "".join(p or "" for p in rest), r.fields)

    # ------------------------------------------------------------------ writes
    @guarded
    def write(
        self,
        user_id: str,
        puts: Sequence[DocRow],
        deletes: Sequence[DocRow],
        stored: dict[str, DocRow],
        vectors: dict[str, np.ndarray] | None = None,
        markers: dict[str, dict[str, Any]] | None = None,
    ) -> None:
        """Apply puts (rows to upsert) and deletes (stored rows to remove) as one Chroma upsert when possible.

        ``stored`` holds the current rows of every id written (from ``read``): their metadata keys are cleared
        (Chroma merges metadata), their chunks past the new end removed, namespace counts moved by the change.
        """
        vectors = vectors or {}
        with self.lock:
            stale_vectors = self._write_vectors(user_id, puts, deletes, stored, vectors)
            ids: list[str] = []
            texts: list[str] = []
            metas: list[dict[str, Any]] = []
            doomed: dict[str, dict[str, Any]] = {}  # id -> metadata keys to clear on a tombstone
            counts: dict[tuple[str, tuple[str, ...]], int] = {}
            for row in puts:
                old = stored.get(row.id)
                meta = _row_metadata(user_id, row)
                text = row.text or ""
                pieces = [text[i : i + CHUNK_CHARS] for i in range(0, len(text), CHUNK_CHARS)] or [""]
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
                    texts.append(piece)
                    metas.append({"user_id": user_id, "of": row.id})
                old_parts = int(old.fields.get("parts") or 1) if old is not None else 1
                for n in range(len(pieces), old_parts):
                    doomed[f"{row.id}#{n}"] = {"of": None}
                if old is None:
                    counts[(row.space, row.namespace)] = counts.get((row.space, row.namespace), 0) + 1
            for row in deletes:
                doomed[row.id] = _unfindable(row.fields)
                for n in range(1, int(row.fields.get("parts") or 1)):
                    doomed[f"{row.id}#{n}"] = {"of": None}
                counts[(row.space, row.namespace)] = counts.get((row.space, row.namespace), 0) - 1
            marker_ids, marker_metas, dead_markers = self._markers(user_id, counts, markers)
            for i, m in zip(marker_ids, marker_metas, strict=True):
                ids.append(i)
                texts.append("")
                metas.append(m)
            doomed.update(dead_markers)
            for kind, field in (("expiring", "exp"), ("partial", PARTIAL)):
                # the prefixes under which a document can expire, or lacks filter fields (kept until erasure)
                for i in sorted(
                    {
                        _prefix_row_id(kind, user_id, row.space, row.namespace[:d])
                        for row in puts
                        if row.fields.get(field)
                        for d in range(len(row.namespace) + 1)
                    }
                ):
                    ids.append(i)
                    texts.append("")
                    metas.append({"user_id": user_id, kind: True})
            if not ids:  # deletes only: one delete call
                self._delete_ids(list(doomed))
                self._drop_vectors(stale_vectors)
                return
            for i, clear in doomed.items():  # tombstones in the same upsert, removed right after
                ids.append(i)
                texts.append("")
                metas.append({**clear, "user_id": user_id, "dead": True})
            for start in range(0, len(ids), self.max_batch):
                chunk = slice(start, start + self.max_batch)
                self.collection.upsert(
                    ids=ids[chunk],
                    embeddings=[_NO_VECTOR] * len(ids[chunk]),
                    documents=texts[chunk],
                    metadatas=metas[chunk],
                )
            if doomed:
                with contextlib.suppress(Exception):  # a tombstone left behind is invisible; erasure removes it
                    self._delete_ids(list(doomed), where={"dead": {"$eq": True}})
            self._drop_vectors(stale_vectors)

    def _write_vectors(
        self,
        user_id: str,
        puts: Sequence[DocRow],
        deletes: Sequence[DocRow],
        stored: dict[str, DocRow],
        vectors: dict[str, np.ndarray],
    ) -> list[str]:
        """Upsert the vectors of the puts (before their documents, which count them in ``vecs``); return the ids
        of vector rows no document counts any more."""
        ids: list[str] = []
        embeddings: list[Any] = []
        metas: list[dict[str, Any]] = []
        stale: list[str] = []
        for row in puts:
            vecs = vectors.get(row.id)
            # a row written again without new vectors (a metadata rewrite) keeps the ones its ``vecs`` counts
            new = len(vecs) if vecs is not None else int(row.fields.get("vecs") or 0)
            for n in range(len(vecs) if vecs is not None else 0):
                ids.append(f"{row.id}~{n}")
                embeddings.append(vecs[n])  # type: ignore[index]
                metas.append(
                    {"user_id": user_id, "of": row.id, **_scope_fields(user_id, row.space, row.namespace, False)}
                )
            old = stored.get(row.id)
            stale.extend(f"{row.id}~{n}" for n in range(new, int(old.fields.get("vecs") or 0) if old else 0))
        for row in deletes:
            stale.extend(f"{row.id}~{n}" for n in range(int(row.fields.get("vecs") or 0)))
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
    ) -> list[tuple[str, int, float]]:
        """The ``n`` vectors under a prefix nearest to ``query``: (document id, vector number, cosine similarity),
        best first."""
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
                doc, _, num = i.rpartition("~")
                out.append((doc, int(num), 1.0 - float(dist)))
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
            extra = {"ttl": ttl} if ttl is not None else {}
            self.collection.update(ids=list(expiries), metadatas=[{"exp": t, **extra} for t in expiries.values()])

    @guarded
    def expired(self, user_id: str | None, at: float) -> list[DocRow]:
        """Document rows whose expiry is at or before ``at`` (of one user, or of everyone for a global sweep)."""
        got = self.collection.get(where={"exp": {"$lte": at}}, include=["metadatas"])
        rows = []
        for i, m in zip(got["ids"], got["metadatas"] or [], strict=True):
            if user_id is None or (m or {}).get("user_id") == user_id:
                row = _doc_row(i, m, None, str((m or {}).get("user_id")))
                if row is not None:
                    rows.append(row)
        return rows

    def remove(self, rows: Sequence[DocRow], at: float | None = None) -> int:
        """Delete rows (grouped per user) and move their namespace counts; with ``at``, only rows still expired
        then (a row refreshed meanwhile stays). Returns how many went."""
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
        return gone


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


def _prefix_row_id(kind: str, user_id: str, space: str, prefix: Sequence[str]) -> str:
    return f"{kind}:" + hashlib.sha256(json.dumps([user_id, space, list(prefix)]).encode()).hexdigest()[:40]


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
    code = meta.get(f"p{depth}", meta.get(f"t{depth}"))
    labels = json.loads(str(code))
    return DocRow(row_id, str(labels[1]), tuple(labels[2:]), text, meta)
