"""Read-check-write across processes on a shared store (a ``chroma run`` server), where Chroma offers no
compare-and-set.

In one process the store's lock makes review, restore, delete, erasure and fact writes linearisable. Between
processes each such call is checked after it is written, against what it can see then:

- **erasure**: ``Memory.erase_user`` marks the user as being erased before it deletes anything and moves the
  store-wide erasure token when done (:class:`~memtend.storage.marks.ChangeMarks`). A call whose marks show an erasure
  that overlapped it deletes what it wrote, if still as written, and raises ``RecordNotFoundError``: nothing
  erased comes back.
- **review, restore, delete**: every write stores its history in the same Chroma upsert as its records (a history
  row; an update that archives the old version under a new id keeps its entry in that archived row), so a
  concurrent call on the same record is seen as a history entry this call did not write and did not see before.
  A concurrent reject, delete or purge wins over an approve or restore that landed after it: the record is
  deleted again and the call raises ``RecordNotFoundError``.
- **precedence** needs no check here: a fact's value is a claim row, new by construction and written without a
  read, and every reader replays a key's claims in write order (:mod:`memtend.consistency.claims`), so a lower source
  never stays over a higher one whichever order racing writes land in.

The invariants this keeps between processes: docs/consistency.md."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, TypeVar

import numpy as np

from memtend.errors import RecordNotFoundError
from memtend.policies.changes import Change
from memtend.records import Record, Status
from memtend.storage.record_rows import drop_history_row

if TYPE_CHECKING:
    from memtend.handle import MemoryHandle

T = TypeVar("T")
_WINS_OVER_REVIEW = frozenset({"reject", "delete", "purge"})
_FACT_WRITES = frozenset({"add", "update", "restore", "approve"})


def shared(memory: MemoryHandle) -> bool:
    return not memory.exclusive


def erasing_seen(memory: MemoryHandle, user_id: str, before: dict[str, str]) -> bool:
    """True when an erasure of the user overlapped the call: one in progress now, or one finished since
    ``before`` (the marks read before the call read anything)."""
    marks = memory.storage.changes
    now_marks = marks.read(user_id)
    if marks.erasing_id(user_id) in now_marks:
        return True
    return now_marks.get(marks.erasures_id) != before.get(marks.erasures_id)


def guarded(
    memory: MemoryHandle,
    user_id: str,
    record_ids: Sequence[str],
    plan: Callable[[], tuple[T, Change]],
) -> T:
    """Plan and apply a review, restore or delete of ``record_ids`` (hold the memory's lock); on a shared store,
    check it afterwards against erasures and concurrent calls on the same records, and take back what it wrote
    when it lost (then RecordNotFoundError). ``plan`` reads what it needs and returns (result, change)."""
    if not shared(memory):
        result, change = plan()
        memory.apply(change)
        return result
    storage = memory.storage
    marks_before = storage.changes.read(user_id)
    seen = {e.id for rid in record_ids for e in storage.get_history(user_id, record_id=rid)}
    result, change = plan()
    touched = [r.id for r in [*change.upserts, *change.archives]]
    stored, raw = storage.stored_rows(user_id, touched, with_embeddings=True)  # as stored: a fact's claims too
    replaced = {r.id: (r, raw[i]) for i, r in enumerate(stored) if raw}
    memory.apply(change)
    own = {h.id for h in change.history}
    # (a reject, delete or purge by another process is always a history row: the rows alone, a read fewer; an entry
    # that moved from a record's own row into a history row meanwhile is in ``seen``)
    after = [e for rid in record_ids for e in storage.get_history(user_id, record_id=rid, rows_only=True)]
    lost = erasing_seen(memory, user_id, marks_before)
    deleted = {e.record_id for e in after if e.id not in seen and e.id not in own and e.op in _WINS_OVER_REVIEW}
    if lost or deleted:
        _take_back(memory, user_id, change, replaced, erased=lost, deleted=deleted)
        what = "erased" if lost else "deleted or rejected"
        raise RecordNotFoundError(
            f"record {record_ids[0]!r} was {what} by another process while this call ran; nothing of it was kept"
        )
    return result


def _take_back(
    memory: MemoryHandle,
    user_id: str,
    change: Change,
    replaced: dict[str, tuple[Record, np.ndarray]],
    *,
    erased: bool,
    deleted: set[str],
) -> None:
    """Undo a change that lost a race: rows it created go; rows it replaced get their stored version back,
    unless the user was erased or the row was deleted meanwhile (then they go too)."""
    written = [r.id for r in change.upserts] + [r.id for r in change.archives]
    stored, _ = memory.storage.stored_rows(user_id, written)
    mine = {r.id: r for r in [*change.upserts, *change.archives]}
    doomed = [r.id for r in stored if r.id in mine and _same(r, mine[r.id])]
    back = [
        replaced[rid]
        for rid in doomed
        if rid in replaced and not erased and rid not in deleted and replaced[rid][0].status is not Status.ARCHIVED
    ]
    keep = {rec.id for rec, _ in back}
    gone = [rid for rid in doomed if rid not in keep]
    if gone:
        memory.storage.delete_records(user_id, gone)
    if back:
        memory.storage.write_records(user_id, [rec for rec, _ in back], np.vstack([v for _, v in back]))
    if change.history:
        drop_history_row(memory.storage, user_id, change.history[0].id)
    memory.forget_index(user_id)  # reloaded from storage on next use


def _same(stored: Record, written: Record) -> bool:
    """The stored row is the version this call wrote (times compared to the millisecond: Chroma may round the
    last digit of a float)."""
    return (stored.status, stored.value, stored.source) == (written.status, written.value, written.source) and abs(
        stored.updated_at - written.updated_at
    ) < 1e-3
