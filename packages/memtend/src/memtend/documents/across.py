"""Several users' document batches run as one: what an adapter call reaching many users needs (a LangGraph store
``batch`` whose ops name alice's and bob's namespaces), so that it is all or nothing as one user's batch is.

Every user's writes are planned (validated, gated, embedded) before anything is read, every read sees the state
before the writes, and the writes of all users go to storage as one write: one Chroma call, or journaled with one
journal row per user in its first call, rolled forward on the next open after a kill (see
:mod:`memtend.documents.staging`).
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from typing import Any

from memtend.documents.staging import PlannedWrite, write_planned
from memtend.documents.store import DocumentOp, DocumentStore, _as_list
from memtend.errors import InvalidInputError

__all__ = ["abatch_across_users", "batch_across_users"]


def batch_across_users(parts: Sequence[tuple[DocumentStore, Sequence[DocumentOp]]]) -> list[list[Any]]:
    """Run each ``(store, ops)`` part as :meth:`DocumentStore.batch` would, with the writes of every part applied
    together, all or none. The stores share one Memory and are of different users. Returns each part's results."""
    parts = _as_list(parts, "parts")
    memory = None
    for part in parts:
        if not (isinstance(part, tuple) and len(part) == 2 and isinstance(part[0], DocumentStore)):
            raise InvalidInputError("batch_across_users takes (DocumentStore, ops) pairs")
        if memory is None:
            memory = part[0]._memory
        elif part[0]._memory is not memory:
            raise InvalidInputError("batch_across_users writes within one Memory: every store must share it")
    ops = [_as_list(part_ops, "ops") for _, part_ops in parts]
    writes = [store._batch_writes(o) for (store, _), o in zip(parts, ops, strict=True)]
    plans: list[PlannedWrite] = [  # every user's writes gated before anything is read or written
        store._plan_write(w) for (store, _), w in zip(parts, writes, strict=True) if w
    ]
    results = [store._batch_reads(o) for (store, _), o in zip(parts, ops, strict=True)]
    if plans and memory is not None:
        write_planned(memory, plans)
    return results


async def abatch_across_users(parts: Sequence[tuple[DocumentStore, Sequence[DocumentOp]]]) -> list[list[Any]]:
    return await asyncio.to_thread(batch_across_users, parts)
