"""The history row format: how a write's entries become rows (and a new record's row keeps its creation entry
until it is replaced), and how rows read back as entries."""

from __future__ import annotations

import json
import logging
from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import Any, NamedTuple

import numpy as np

from memtend.records import Record, Status, expand_snapshot
from memtend.results import HistoryEntry
from memtend.storage.filters import HISTORY_ID_PREFIX, HISTORY_OWNER

_log = logging.getLogger("memtend")


class Stored(NamedTuple):
    """What a write reads of a stored record it replaces: its metadata keys, its vector (when asked) and itself."""

    keys: frozenset[str]
    vector: np.ndarray | None
    record: Record | None


def creation_entries(
    records: Sequence[Record], history: Sequence[HistoryEntry], stored: Mapping[str, Stored]
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


def kept_entries(
    records: Sequence[Record], entries: Sequence[HistoryEntry], stored: Mapping[str, Stored]
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


def holds_document(item: Stored | None) -> bool:
    """Whether a stored row may hold a Chroma document (a row read from Chroma knows; one not read may)."""
    if item is None:
        return False
    record = item.record
    return record is None or record.stored_document or not record.stored_keys


def carried_entries(
    records: Sequence[Record], kept: Mapping[str, HistoryEntry], stored: Mapping[str, Stored]
) -> dict[str, dict[str, Any]]:
    """Record id -> the entry its replaced row kept, whole (``record_id``, ``before``, ``after`` and time), for each
    record of the write whose update entry an archived row of the same write keeps (``kept``): the new version of
    the row keeps it in turn (read back by ``origin_entry`` as it was), instead of a history row of its own. A
    later write that deletes or rewrites the row otherwise moves it to a history row, as any kept entry."""
    if not kept:
        return {}
    updated = {h.record_id for h in kept.values()}
    out: dict[str, dict[str, Any]] = {}
    for r in records:
        item = stored.get(r.id)
        entry = origin_entry(item.record) if r.id in updated and item is not None and item.record else None
        if entry is not None and entry.record_id == r.id:
            out[r.id] = entry.stored() | {"at": entry.at}
    return out


def keeps_origin(meta: Mapping[str, Any]) -> bool:
    """Whether a stored record row keeps its creation entry (``h`` in its packed fields)."""
    packed = meta.get("r")
    if not isinstance(packed, str) or '"h"' not in packed:
        return False
    try:
        return isinstance(json.loads(packed).get("h"), dict)
    except ValueError:
        return False


def kept_entry(
    row_id: str, document: str | None, meta: Mapping[str, Any], *, expand: bool = True
) -> HistoryEntry | None:
    """The history entry a stored record row keeps in itself (its creation entry, or the entry an archived row keeps
    for the record it was replaced in), expanded as history reads show it (``expand=False``: as stored); None for a
    row keeping none (or a malformed one, left unread)."""
    if not keeps_origin(meta):
        return None
    entry = origin_entry(Record.from_chroma(row_id, document, dict(meta)))
    if entry is None or not expand:
        return entry
    return replace(entry, before=expanded(entry.before), after=expanded(entry.after))


def origin_entry(record: Record) -> HistoryEntry | None:
    """The creation entry a stored record keeps in its own row, or None (a malformed one is left unread)."""
    origin = record.origin
    if origin is None:
        return None
    if "record_id" in origin:  # a whole entry an archived row keeps for the record it replaced (see kept_entries)
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


def history_row(entries: Sequence[HistoryEntry]) -> tuple[str, str, dict[str, Any]]:
    """(id, document, metadata) of the history row holding the entries of one write: the document lists the
    entries, the metadata names the owner, the time and every record touched."""
    first = entries[0]
    meta: dict[str, Any] = {
        HISTORY_OWNER: first.user_id,
        "at": first.at,
        "record_ids": sorted({e.record_id for e in entries}),
    }
    return HISTORY_ID_PREFIX + first.id, json.dumps({"entries": [e.stored() for e in entries]}), meta


def entry_row(entry: HistoryEntry, body: dict[str, Any]) -> tuple[str, str, dict[str, Any]]:
    """(id, document, metadata) of the history row a creation entry moves to when its record's row changes: named
    by the entry (a replay writes the same row), its time kept exact in the entry (Chroma may round the last digit
    of a metadata float)."""
    meta: dict[str, Any] = {HISTORY_OWNER: entry.user_id, "at": entry.at, "record_ids": [entry.record_id]}
    return HISTORY_ID_PREFIX + entry.id, json.dumps({"entries": [{**body, "at": entry.at}]}), meta


def expanded(snapshot: Any) -> dict[str, Any] | None:
    return expand_snapshot(snapshot) if isinstance(snapshot, dict) else None


def row_history(row_id: str, document: str | None, meta: Mapping[str, Any]) -> list[HistoryEntry]:
    """The entries of one history row, as written. An entry lacking its id, operation or record id (a row damaged,
    or edited outside memtend) is left out with a warning naming the row, so the user's other history still reads
    and the damage is not hidden (memtend never writes such an entry)."""
    row_at = float(meta["at"])
    entries: list[HistoryEntry] = []
    damaged = 0
    for body in row_entries(document, keep_damaged=True):
        if not isinstance(body, dict) or not all(name in body for name in _ENTRY_NAMES):
            damaged += 1
            continue
        entries.append(
            HistoryEntry(
                id=str(body["id"]),
                user_id=str(meta.get(HISTORY_OWNER, meta.get("user_id"))),
                op=str(body["op"]),
                record_id=str(body["record_id"]),
                before=expanded(body.get("before")),
                after=expanded(body.get("after")),
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


def row_entries(document: str | None, *, keep_damaged: bool = False) -> list[Any]:
    """The entry bodies of a history row's document (``keep_damaged``: with those that are not objects, for the
    reader to count)."""
    body = json.loads(document or "{}")
    entries = body.get("entries")
    if not isinstance(entries, list):
        return []
    return list(entries) if keep_damaged else [e for e in entries if isinstance(e, dict)]
