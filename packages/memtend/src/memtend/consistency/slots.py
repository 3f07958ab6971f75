"""Each fact key as readers see it (its current value, resolved from its claims and checkpoint: see
:mod:`memtend.consistency.claims`), kept in memory so that ``set_fact`` knows what its claim does without reading the
key from Chroma (two Chroma gets saved on every call).

Kept only while no other process can write the store (an embedded folder whose lock this process holds): every
write of the memories collection then goes through :class:`~memtend.storage.store.Storage`, which tells this cache what
it wrote (a checkpoint row as it reads back, with the creation entry its row keeps, its metadata keys and its
vector; ``set_fact`` puts what its claim made of the key once written), deleted, stamped or rewrote. A write that
fails (it may or may not have landed) and any rewrite the cache does not follow drop the entries concerned, so the
next ``set_fact`` reads them from Chroma again. An entry of None means the key is known to hold nothing.

The invariants this keeps between processes: docs/consistency.md."""

from __future__ import annotations

import copy
import threading
from collections import OrderedDict
from collections.abc import Iterable, Mapping
from typing import Any

import numpy as np

from memtend.consistency import claims as fact_claims
from memtend.records import Record, chroma_float

__all__ = ["FactSlots", "is_slot"]

MAX_SLOTS = 2_048  # entries kept (each holds one record and one vector: about 2 KB with a 384-d vector)
_SLOT_PREFIX = "fact:"

Slot = tuple[Record | None, np.ndarray | None]


def is_slot(record_id: str) -> bool:
    return record_id.startswith(_SLOT_PREFIX)


class FactSlots:
    """Fact slots by id (a fact id names its user too), with their owner; off until ``enabled``."""

    def __init__(self) -> None:
        self.enabled = False
        self._lock = threading.Lock()  # usage stamps are written from a background thread
        self._slots: OrderedDict[str, tuple[str, Record | None, np.ndarray | None]] = OrderedDict()

    def get(self, slot_id: str) -> Slot | None:
        """(record, vector) as stored at the slot (a copy: the caller may change it), or None when not known."""
        with self._lock:
            found = self._slots.get(slot_id)
            if found is None:
                return None
            self._slots.move_to_end(slot_id)
            _, record, vector = found
        return _copied(record), None if vector is None else vector.copy()

    def put(self, user_id: str, slot_id: str, record: Record | None, vector: np.ndarray | None) -> None:
        """What the slot holds now (as read, or as just written: ``record`` with its row's ``origin`` and
        ``stored_keys`` set)."""
        if not self.enabled:
            return
        kept = (user_id, _copied(record), None if vector is None else np.array(vector, dtype=np.float32))
        with self._lock:
            self._slots[slot_id] = kept
            self._slots.move_to_end(slot_id)
            while len(self._slots) > MAX_SLOTS:
                self._slots.popitem(last=False)

    def written(
        self, user_id: str, rows: Iterable[tuple[Record, Mapping[str, Any] | None, Mapping[str, Any], Any]]
    ) -> None:
        """Rows a write stored: (record, the creation entry its row keeps, the metadata sent, its vector). A
        metadata key sent as None is removed by Chroma."""
        rows = list(rows)
        slots = {record.id for record, _, _, _ in rows if is_slot(record.id)}
        for record, origin, meta, vector in rows:
            if self.enabled and fact_claims.is_claim(record.id):
                # a claim alone: set_fact puts what it made of the key once written; beside its slot row (a fold,
                # which archives the key's claims): the slot row is the key
                if fact_claims.key_of(record.id) not in slots:
                    self.drop([record.id])
            elif self.enabled and is_slot(record.id):
                stored = copy.copy(record)
                stored.origin = dict(origin) if origin is not None else None
                stored.stored_keys = frozenset(k for k, v in meta.items() if v is not None)
                stored.stored_document = False  # written without one (see Storage.write_records)
                self.put(user_id, record.id, stored, vector)

    def stamped(self, last_used: Mapping[str, float]) -> None:
        """Usage stamps written: the slots' ``last_used_at`` moves (an empty slot stays empty: Chroma skips it)."""
        with self._lock:
            for rid, at in last_used.items():
                found = self._slots.get(fact_claims.key_of(rid) or rid)
                record = found[1] if found is not None else None
                if record is not None and (record.row_id or record.id) == rid:
                    record.last_used_at = chroma_float(at)

    def drop(self, ids: Iterable[str]) -> None:
        """Forget the keys of these rows (slot ids or claim ids)."""
        with self._lock:
            for rid in ids:
                self._slots.pop(fact_claims.key_of(rid) or rid, None)

    def drop_user(self, user_id: str) -> None:
        with self._lock:
            for rid in [rid for rid, (owner, _, _) in self._slots.items() if owner == user_id]:
                del self._slots[rid]


def _copied(record: Record | None) -> Record | None:
    """A copy keeping what the record knows of its row (``replace`` would reset it)."""
    if record is None:
        return None
    out = copy.copy(record)
    out.derived_from = list(record.derived_from)
    out.extra = dict(record.extra)
    out.origin = dict(record.origin) if record.origin is not None else None
    out.stored_keys = record.stored_keys
    out.stored_document = record.stored_document
    out.row_id = record.row_id
    return out
