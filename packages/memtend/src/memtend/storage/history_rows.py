"""History rows: one per write, listing its changes, kept beside the records they describe; read, scrubbed of
deleted records' text, and the creation entries a record row keeps until it is replaced."""

from __future__ import annotations

import json
import logging
from collections.abc import Sequence
from dataclasses import replace
from typing import Any

import numpy as np
from chromadb.api.models.Collection import Collection

from memtend.consistency import claims as fact_claims
from memtend.policies import history_scrub
from memtend.results import HistoryEntry
from memtend.storage.chroma import NO_VECTOR, SCRUB_BATCH, WRITE_BATCH, Where, guarded, history_vector
from memtend.storage.filters import HISTORY_OWNER, KEPT_FOR, owned, where
from memtend.storage.history_format import entry_row, expanded, keeps_origin, kept_entry, row_entries, row_history
from memtend.storage.record_rows import RecordRows, read_rows

_log = logging.getLogger("memtend")


class HistoryRows(RecordRows):
    """Reads and writes of history rows, scoped to one user."""

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
            mine = owned(owner, user_id, {})
            if record_ids:  # rows naming any of the records (one $contains per id: Chroma has no "any of" on arrays)
                touching: list[Where] = [{"record_ids": {"$contains": rid}} for rid in record_ids]
                clause = touching[0] if len(touching) == 1 else {"$or": touching}
                flt: Where = {"$and": [mine, clause]}
            else:
                flt = owned(owner, user_id, {"at": {"$gte": since} if since is not None else None})
            got = collection.get(where=flt, include=["documents", "metadatas"])
            for i, d, m in zip(got["ids"], got["documents"] or [], got["metadatas"] or [], strict=True):
                out.append((collection, i, d, dict(m or {})))
        return out

    @guarded
    def prune_history(self, user_id: str, before: float, limit: int | None = None) -> int:
        """Delete the user's history rows written before ``before`` whose records are all gone (a fact's rows
        count as its key's while any row of the key is stored); at most ``limit`` rows. Returns how many."""
        got = self.memories.get(where=owned(HISTORY_OWNER, user_id, {"at": {"$lt": before}}), include=["metadatas"])
        if not got["ids"]:
            return 0
        live = set(self.memories.get(where=where(user_id), include=[])["ids"])
        live |= {k for k in (fact_claims.key_of(i) for i in list(live)) if k is not None}
        doomed = []
        for row_id, meta in zip(got["ids"], got["metadatas"] or [], strict=True):
            named = [str(i) for i in (meta or {}).get("record_ids") or []]
            if named and not any(i in live or fact_claims.key_of(i) in live for i in named):
                doomed.append(row_id)
        doomed = doomed[:limit] if limit is not None else doomed
        for start in range(0, len(doomed), WRITE_BATCH):
            self.memories.delete(ids=doomed[start : start + WRITE_BATCH])
        return len(doomed)

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
            for start in range(0, len(ids), WRITE_BATCH):
                chunk = ids[start : start + WRITE_BATCH]
                vectors = [history_vector(i, dim) if dim > 1 else NO_VECTOR for i in chunk]
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
            row_id, doc, history_meta = entry_row(entry, body)
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
        for start in range(0, len(record_ids), SCRUB_BATCH):
            for collection, hid, doc, _meta in self._history_rows(
                user_id, record_ids=record_ids[start : start + SCRUB_BATCH]
            ):
                if hid not in rows:
                    rows[hid] = row_entries(doc)
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
            for found in row_history(hid, doc, meta):
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
        """The history entries fact keys' claims derive (see :mod:`memtend.consistency.claims`): every key's, or the
        key's of ``record_id`` when it is a fact id."""
        if record_id is None:
            got = self.memories.get(where=where(user_id), include=["documents", "metadatas"])
            rows, _ = read_rows(got, False)
        elif record_id.startswith(fact_claims.SLOT_PREFIX):
            rows, _ = self.key_rows(user_id, [record_id])
        else:
            return []
        return [
            replace(e, before=expanded(e.before), after=expanded(e.after))  # as history reads show every entry
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
                entry = kept_entry(i, d, dict(m or {}), expand=expand)
                if entry is not None and (record_id is None or entry.record_id == record_id):
                    out.append((i, entry))
        return out

    def _count_creation_entries(self, user_id: str) -> int:
        """How many of the user's record rows keep their creation entry (each counts as a history row)."""
        got = self.memories.get(where=where(user_id), include=["metadatas"])
        return sum(1 for m in got["metadatas"] or [] if m and keeps_origin(m))
