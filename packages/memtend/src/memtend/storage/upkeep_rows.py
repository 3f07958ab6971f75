"""The store-wide rows of upkeep (see :mod:`memtend.upkeep.schedule`): a lease, so that one process at a time runs
a pass over a store several processes share, and the cursor a pass resumes from.

They live in the ``<prefix>_changes`` collection (where change marks were kept before; no user's reads, counts or
erasure look there) under ids of their own. Chroma has no compare-and-swap, but two of its calls give one: an
``add`` of an id that is already stored leaves the stored row as it is (the first writer wins), and a ``delete``
by id with a ``where`` clause deletes only the row as it was read. A lease is taken by adding its row and reading
it back; an expired one is first deleted under the token it was read with, so of two processes taking it over,
only one's delete and add stand.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass

from chromadb.api.models.Collection import Collection

from memtend.storage.chroma import NO_VECTOR, guarded
from memtend.storage.filters import HISTORY_OWNER, JOURNAL_OWNER

LEASE_ID = "upkeep:lease"
CURSOR_ID = "upkeep:cursor"
_KIND = "upkeep"  # metadata field naming what the row is


@dataclass(frozen=True)
class Cursor:
    """Where the next pass resumes: the offset into the memories collection's rows, and how many full rounds over
    the store have ended."""

    offset: int = 0
    rounds: int = 0


class UpkeepRows:
    """The lease and the cursor of one store."""

    def __init__(self, collection: Collection, memories: Collection) -> None:
        self.collection = collection
        self.memories = memories

    @guarded
    def owners(self, offset: int, limit: int) -> tuple[list[tuple[str, int]], int]:
        """The users owning the memories collection's rows ``offset`` to ``offset + limit`` (records, history and
        journal rows, in the order Chroma keeps them), each once with the place of its first row in the page, and
        how many rows were read (fewer than ``limit``: the end of the collection)."""
        got = self.memories.get(include=["metadatas"], limit=limit, offset=offset)
        seen: dict[str, int] = {}
        for n, meta in enumerate(got["metadatas"] or []):
            meta = meta or {}
            owner = meta.get("user_id", meta.get(HISTORY_OWNER, meta.get(JOURNAL_OWNER)))
            if owner is not None:
                seen.setdefault(str(owner), n)
        return list(seen.items()), len(got["ids"])

    @guarded
    def take_lease(self, holder: str, at: float, seconds: float) -> str | None:
        """Take the store's upkeep lease for ``seconds`` from ``at``: its token, or None while another holder's
        lease runs (a holder taking its own lease again gets a fresh token)."""
        got = self.collection.get(ids=[LEASE_ID], include=["metadatas"])
        if got["ids"]:
            meta = dict((got["metadatas"] or [{}])[0] or {})
            if meta.get("holder") != holder and float(meta.get("until", 0.0)) > at:
                return None
            self.collection.delete(ids=[LEASE_ID], where={"token": str(meta.get("token", ""))})
        token = uuid.uuid4().hex
        self.collection.add(
            ids=[LEASE_ID],
            embeddings=[NO_VECTOR],
            metadatas=[{_KIND: "lease", "holder": holder, "token": token, "until": at + seconds}],
        )
        stored = self.collection.get(ids=[LEASE_ID], include=["metadatas"])["metadatas"] or [{}]
        return token if (stored[0] or {}).get("token") == token else None

    @guarded
    def release(self, token: str) -> None:
        """Give the lease back (only the lease this token took: a later holder's stays)."""
        self.collection.delete(ids=[LEASE_ID], where={"token": token})

    @guarded
    def cursor(self) -> Cursor:
        got = self.collection.get(ids=[CURSOR_ID], include=["metadatas"])
        if not got["ids"]:
            return Cursor()
        meta = dict((got["metadatas"] or [{}])[0] or {})
        return Cursor(int(meta.get("offset", 0)), int(meta.get("rounds", 0)))

    @guarded
    def save_cursor(self, cursor: Cursor, at: float) -> None:
        self.collection.upsert(
            ids=[CURSOR_ID],
            embeddings=[NO_VECTOR],
            metadatas=[{_KIND: "cursor", "offset": cursor.offset, "rounds": cursor.rounds, "at": at}],
        )
