"""A document write planned ahead of its storage call, and the one call that applies one or more users' writes.

The document store plans a write (validation, the write gate, embedding: everything that can refuse it) before any
row is read; :func:`write_planned` then reads what the writes replace and applies every user's part as one storage
write (:meth:`~memtend.storage.document_rows.DocumentRows.write_users`: one Chroma call, or journaled), so a
write reaching several users (a LangGraph store batch) is all or nothing as one user's is, SIGKILL included.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from memtend.errors import InvalidInputError
from memtend.storage.document_rows import DocRow, UserRows

if TYPE_CHECKING:
    from memtend.handle import MemoryHandle

__all__ = ["PlannedWrite", "live", "write_planned"]


@dataclass(frozen=True)
class PlannedWrite:
    """One user's write as planned: per document id, (the op's position, put only if absent, the row to write or
    None for a delete); how many ops it came from, the namespaces it touches, its vectors and masked kinds."""

    user_id: str
    space: str
    count: int
    at: float
    rows: dict[str, tuple[int, bool, DocRow | None]]
    namespaces: frozenset[tuple[str, tuple[str, ...]]]
    vectors: dict[str, np.ndarray]
    masked: dict[str, tuple[str, ...]]


def live(row: DocRow, t: float) -> bool:
    """Whether a stored row is live at ``t`` (no expiry, or one after ``t``)."""
    exp = row.expires_at
    return exp is None or exp > t


def write_planned(memory: MemoryHandle, plans: Sequence[PlannedWrite]) -> list[list[bool]]:
    """Apply planned writes of one or more users together (one per user and space). Returns, per plan and op,
    whether it was written (a delete: whether a live document went; an if-absent put: whether none was there)."""
    keys = [(p.user_id, p.space) for p in plans]
    if len(set(keys)) < len(keys):
        raise InvalidInputError("a write across users takes one part per user: merge a user's parts into one")
    rows = memory.storage.documents
    staged: list[tuple[UserRows, list[bool]]] = []
    with rows.lock:
        for plan in plans:
            stored, markers = rows.read_for_write(plan.user_id, list(plan.rows), plan.namespaces)
            staged.append(_stage(plan, stored, markers))
        parts = [part for part, _ in staged if part.puts or part.deletes]
        if parts:
            rows.write_users(parts)
    for plan, (part, _) in zip(plans, staged, strict=True):
        if part.puts or part.deletes:
            memory.emit_documents_changed(plan.user_id, part.puts, part.deletes, plan.masked)
    return [written for _, written in staged]


def _stage(
    plan: PlannedWrite, stored: dict[str, DocRow], markers: dict[str, dict[str, object]]
) -> tuple[UserRows, list[bool]]:
    """The rows a planned write puts and removes, given the rows stored now; which of its ops write."""
    written = [False] * plan.count
    puts: list[DocRow] = []
    deletes: list[DocRow] = []
    for i, (n, if_absent, row) in plan.rows.items():
        old = stored.get(i)
        old_live = old is not None and live(old, plan.at)
        if row is None:
            if old is not None:
                deletes.append(old)
                written[n] = old_live
            continue
        if if_absent and old_live:
            continue
        if old_live and old is not None:
            row.fields["created_at"] = float(old.fields["created_at"])
        puts.append(row)
        written[n] = True
    ids = {r.id for r in puts}
    vectors = {i: v for i, v in plan.vectors.items() if i in ids}
    return UserRows(plan.user_id, puts, deletes, stored, vectors, markers), written
