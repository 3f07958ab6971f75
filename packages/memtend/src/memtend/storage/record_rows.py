"""Memory-record rows: writing a change's records with its history in one Chroma call, reading and deleting
them, fact slots and claims, journal rows."""

from __future__ import annotations

import time
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import numpy as np

from memtend.consistency import claims as fact_claims
from memtend.records import Kind, Record, Status, chroma_float
from memtend.results import HistoryEntry
from memtend.storage.chroma import delete_existing, guarded, history_vector, schema_read_once
from memtend.storage.filters import HISTORY_ID_PREFIX, JOURNAL_OWNER, KEPT_FOR, history_where, owned, where
from memtend.storage.history_format import (
    Stored,
    carried_entries,
    creation_entries,
    entry_row,
    history_row,
    holds_document,
    kept_entries,
    origin_entry,
)
from memtend.storage.layout import StoreCollections
from memtend.storage.marks import FOLD_KEY


class RecordRows(StoreCollections):
    """Reads and writes of memory-record rows (and the journal rows of multi-call writes), scoped to one user."""

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
        ``journal``: (row id, document) of the change's journal row (see :mod:`memtend.consistency.journal`), written
        in the first call. ``known``: records as already read by id (None: not stored); their metadata keys are not read
        again. ``deleting``: ids of records the change deletes after this call (their creation entries move to
        history rows here, see ``creation_entries``). ``mark``: (id, metadata) of the change mark telling other
        processes of this write (see :class:`ChangeMarks`), written in the last call. ``shared``: other processes
        may write the store, so a record not stored when it was read may be by now (a fact's slot): only records
        new by construction (``fresh``) keep their creation entry then. ``fold``: the write's change mark is folded
        into its record rows (``FOLD_KEY``, see :class:`ChangeMarks`; a write of new rows in one call, no ``mark``).

        A write whose every history entry creates one of its new records (a ``remember``, ``log``, ``log_many``,
        a fact's claim, see :mod:`memtend.consistency.claims`) writes no history row: each record keeps its creation
        entry in its own row (``h`` in its packed metadata; the row is that version of the record, so the entry's
        ``after`` is the row itself). A later write that replaces or deletes such a row moves the entry to a
        history row first, except an update that archives the old version under a new id in the same write (the
        slot design's fact update, which stores written before this one hold): its entry is kept in the archived
        row (``h`` whole, ``h_record`` naming the record) and the row's own entry stays in its new version, whole
        (``carried_entries``). Rows written before either way read the same."""
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
                stored[rid] = Stored(record.stored_keys or frozenset(record.to_metadata()), None, record)
        origins = creation_entries(records, history, stored) if fresh or not shared else {}
        # the entries left that replace a record whose old version is archived under a new id in this write (a
        # fact's update in the slot design): each is kept in that archived row, so the write needs no history row
        kept = kept_entries(records, [h for h in history if h.record_id not in origins], stored)
        # the replaced row's own entry (a fact slot's creation entry) stays in the new version of the row, whole
        # (so a fact's first update writes two rows like the later ones, not a third for that entry)
        carried = carried_entries(records, kept, stored)
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
        docs: list[str | None] = ["" if holds_document(stored.get(r.id)) else None for r in records]
        slots = [(r, origins.get(r.id), metas[n], embeddings[n]) for n, r in enumerate(records)]
        for r in archives:
            if r.id not in stored:
                continue
            keys, vector, _ = stored[r.id]
            meta = dict(r.to_metadata())
            for name in keys:
                meta.setdefault(name, None)
            ids.append(r.id)
            docs.append("" if holds_document(stored[r.id]) else None)
            metas.append(meta)
            embeddings.append(vector)
            slots.append((r, None, meta, vector))
        rest = [] if kept else [h for h in history if h.record_id not in origins]
        rows = [history_row(rest)] if rest else []
        # a stored row that held its own creation entry (or a kept entry) is replaced or deleted: the entry moves
        # to a history row of its own (named by the entry, so a replay writes the same row), in this same call
        written = {h.id for h in rest} | {h.id for h in kept.values()} | {str(o["id"]) for o in carried.values()}
        for item in stored.values():
            entry = origin_entry(item.record) if item.record is not None else None
            if entry is not None and entry.id not in written and entry.record_id not in origins:
                rows.append(entry_row(entry, entry.stored()))
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
            # the change goes in metadata, not the document: Chroma indexes documents for full-text search, which
            # makes writing a large journal much slower
            meta = {JOURNAL_OWNER: user_id, "journal": True, "at": time.time(), "change": journal[1]}
            dim = len(embeddings[0]) if embeddings else self._dimension(user_id)
            ids.insert(0, journal[0])
            docs.insert(0, None)
            metas.insert(0, meta)
            embeddings.insert(0, history_vector(journal[0], dim))
        calls = 0
        # rows that are all new are added: Chroma's add skips the look-up of stored rows that an upsert makes
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
            self._upkeep = schema_read_once(self.client.get_collection(name, self._embedding_function))
        for start in range(0, len(ids), self.max_batch):
            part = list(ids[start : start + self.max_batch])
            self._upkeep.update(ids=part, metadatas=[{FOLD_KEY: None} for _ in part])

    def _stored(self, user_id: str, ids: Sequence[str], *, with_embeddings: bool) -> dict[str, Stored]:
        """The metadata keys, vectors (with ``with_embeddings``) and records of the user's stored records among
        ``ids``."""
        if not ids:
            return {}
        include: list[Any] = ["documents", "metadatas", "embeddings"] if with_embeddings else ["documents", "metadatas"]
        out: dict[str, Stored] = {}
        for start in range(0, len(ids), self.max_batch):
            part = list(ids[start : start + self.max_batch])
            got = self.memories.get(ids=part, where=where(user_id), include=include)
            raw = got.get("embeddings") if with_embeddings else None
            rows = zip(got["ids"], got["documents"] or [], got["metadatas"] or [], strict=True)
            for n, (i, d, m) in enumerate(rows):
                vector = np.asarray(raw[n], dtype=np.float32) if raw is not None else None
                out[i] = Stored(frozenset(m or {}), vector, Record.from_chroma(i, d, dict(m or {})))
        return out

    @guarded
    def end_journal(self, user_id: str, journal_id: str) -> None:
        """Delete a journal row: its change is written whole."""
        self.write_calls += 1
        self.memories.delete(ids=[journal_id], where=owned(JOURNAL_OWNER, user_id, {}))

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
        got = self.memories.get(ids=[journal_id], where=owned(JOURNAL_OWNER, user_id, {}), include=["metadatas"])
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
        :mod:`memtend.consistency.claims`). Asked by id, a fact id or claim id reads the whole key (its claims: one more
        where-read)."""
        if ids is not None and not ids:
            return [], (np.zeros((0, 0), dtype=np.float32) if with_embeddings else None)
        include: list[Any] = ["documents", "metadatas"]
        if with_embeddings:
            include.append("embeddings")
        # Only the user clause goes to Chroma: it evaluates each part of an $and on its own, over every row the part
        # matches, so kind and status are cheaper to test here on the user's rows.
        if ids is None:
            rows, raw = read_rows(self.memories.get(where=where(user_id), include=include), with_embeddings)
        else:
            fids = sorted({f for f in (fact_claims.key_of(i) for i in ids) if f is not None})
            others = [i for i in dict.fromkeys(ids) if fact_claims.key_of(i) is None]
            rows, raw = [], []
            if others:
                got = self.memories.get(ids=others, where=where(user_id), include=include)
                rows, raw = read_rows(got, with_embeddings)
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
            return delete_existing(self.memories, list(ids), where(user_id))
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
        rows, raw = read_rows(self.memories.get(ids=list(fids), where=where(user_id), include=include), with_embeddings)
        key: Any = fids[0] if len(fids) == 1 else {"$in": list(fids)}
        flt = where(user_id, **{fact_claims.FACT_KEY_FIELD: key})
        more, more_raw = read_rows(self.memories.get(where=flt, include=include), with_embeddings)
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
        return read_rows(self.memories.get(ids=list(ids), where=where(user_id), include=include), with_embeddings)

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


def record_stamps(storage: StoreCollections, user_id: str) -> dict[str, Record]:
    """Every record of the user without its text or vector (metadata only): what a catch-up compares."""
    got = storage.memories.get(where=where(user_id), include=["metadatas"])
    rows = [Record.from_chroma(i, "", dict(m or {})) for i, m in zip(got["ids"], got["metadatas"] or [], strict=True)]
    return {r.id: r for r, _ in fact_claims.present(rows)}


@guarded
def drop_history_row(storage: StoreCollections, user_id: str, first_entry_id: str) -> None:
    """Delete the history row of one write (named by its first entry): a write taken back leaves no history."""
    storage.memories.delete(ids=[HISTORY_ID_PREFIX + first_entry_id], where=history_where(user_id))


def read_rows(got: Any, with_embeddings: bool) -> tuple[list[Record], list[Any]]:
    """The records of a Chroma get, and their vectors (with ``with_embeddings``; else an empty list)."""
    records = [
        Record.from_chroma(i, d, dict(m or {}))
        for i, d, m in zip(got["ids"], got["documents"] or [], got["metadatas"] or [], strict=True)
    ]
    raw = got.get("embeddings") if with_embeddings else None
    vectors = [np.asarray(v, dtype=np.float32) for v in raw] if raw is not None and len(raw) else []
    return records, vectors
