"""Change marks: how processes sharing a store see each other's writes and erasures (see docs/consistency.md)."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
from chromadb.api.models.Collection import Collection

from memtend.storage.chroma import guarded, history_vector

_ERASURES = "erasures"  # the id (and ``m_store`` value) of the store-wide row whose token changes with every erasure
_ERASING = "erasing_user"  # the field naming the user of an erasure in progress
_STORE_MARK = "m_store"  # the field of the store-wide erasure row (string-valued: Chroma indexes those lookups)
MARK_OWNER = "m_user"  # the owner field of change marks in the memories collection
# on the record rows of a folded write, until a mark row lists it: the user's id, in the marks' own owner field (the
# marks' read finds them with no clause of its own; a record row also names its owner in ``user_id``, a mark no)
FOLD_KEY = MARK_OWNER
FOLDED_TOKEN = ""  # the token ChangeMarks.read_recent gives a folded write's row (a mark's token is never empty)


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
    ``state.FOLD_WINDOW`` writes, listing the folded writes among its recent ones; only then are their flags
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
