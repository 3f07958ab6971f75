"""A user's retrieval index as cached by a store's handles, and how it catches up with what other processes
wrote (by comparing change marks; see docs/consistency.md)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from memtend.index.user_index import UserIndex
from memtend.policies.conflicts import ConflictJudge
from memtend.policies.retrieval import RetrievalConfig
from memtend.records import Record, Status
from memtend.storage.record_rows import record_stamps
from memtend.storage.store import Storage


class SyncedIndex:
    """A user's index plus the change marks it last caught up with (None on a store no other process writes)."""

    def __init__(self, user_id: str, index: UserIndex) -> None:
        self.user_id = user_id
        self.index = index
        self.marks: dict[str, tuple[str, str]] | None = None
        self.stale: set[str] = set()  # fact keys this process wrote claims of without knowing what they resolve to

    @classmethod
    def load(
        cls, storage: Storage, user_id: str, config: RetrievalConfig, judge: ConflictJudge | None = None
    ) -> SyncedIndex:
        records, vectors = storage.get_records(
            user_id, statuses=[Status.ACTIVE, Status.PENDING_REVIEW], with_embeddings=True
        )
        index = UserIndex(config, judge)
        if records:
            assert vectors is not None
            # Neighbours in a session follow time, then the order of writing (Chroma returns rows in that order;
            # a stable sort keeps it for records that share a timestamp).
            order = sorted(range(len(records)), key=lambda i: records[i].created_at)
            index.upsert([records[i] for i in order], vectors[order])
        return cls(user_id, index)

    def catch_up(self, storage: Storage) -> None:
        """Bring the index to what storage holds now: compare the stored records' metadata with the indexed
        ones, fetch (with vectors) what is new or changed, drop what is gone or archived."""
        stored = record_stamps(storage, self.user_id)
        live = {rid: r for rid, r in stored.items() if r.status is not Status.ARCHIVED}
        gone = [rid for rid in self.index.ids() if rid not in live]
        changed = [
            rid for rid, r in live.items() if rid not in self.index or _stamp(self.index.record(rid)) != _stamp(r)
        ]
        if gone:
            self.index.remove(gone)
        self.refresh(storage, changed)

    def refresh(self, storage: Storage, changed: Sequence[str]) -> None:
        """Bring these records to what storage holds now: fetched (with vectors) when live, dropped otherwise."""
        if changed:
            records, vectors = storage.get_records(self.user_id, list(changed), with_embeddings=True)
            fresh = [i for i, r in enumerate(records) if r.status is not Status.ARCHIVED]
            if fresh:
                assert vectors is not None
                order = sorted(fresh, key=lambda i: records[i].created_at)
                self.index.upsert([records[i] for i in order], vectors[order])
            missing = set(changed) - {records[i].id for i in fresh}
            if missing:  # archived or deleted between the two reads
                self.index.remove([rid for rid in missing if rid in self.index])


def _stamp(record: Record) -> tuple[Any, ...]:
    """What tells two versions of a record apart (everything but the text, vector and last-used time: a write that
    changes the text also moves updated_at)."""
    return (
        record.status,
        round(record.updated_at, 3),  # Chroma may round a float's last digit
        record.source,
        record.superseded_by,
        record.value,
        record.flagged,
        record.kind,
        record.session,
        record.expires_at,
        tuple(record.derived_from),
        sorted(record.extra.items()),
    )
