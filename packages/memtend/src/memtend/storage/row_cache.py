"""Document rows this process read, by id, on a store no other process writes (an embedded folder).

Every write of such a store passes through :class:`~memtend.storage.document_rows.DocumentRows`, which drops an id
from here before it sends a change; a read keeps what Chroma returned only if no change was made while it read (a
generation count). A row is kept as read, never as written: Chroma can return a float a last bit apart from the one
it was sent, and a kept row must equal what a read from Chroma gives. Erasure, a replayed journal and an expiry
update drop what they may change. Rows over ``MAX_CACHED_CHARS`` of text are never kept; the whole cache holds at
most ``MAX_ROWS`` rows and ``MAX_TOTAL_CHARS`` characters of text.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Generic, Protocol, TypeVar

__all__ = ["MAX_CACHED_CHARS", "MAX_ROWS", "MAX_TOTAL_CHARS", "RowCache"]

MAX_ROWS = 4_096
MAX_CACHED_CHARS = 64_000
MAX_TOTAL_CHARS = 8_000_000


class _Row(Protocol):
    @property
    def id(self) -> str: ...
    @property
    def text(self) -> str | None: ...


Row = TypeVar("Row", bound=_Row)


@dataclass(frozen=True)
class _Entry(Generic[Row]):
    owner: str
    row: Row | None  # None: no document row of ``owner`` has this id
    has_text: bool

    @property
    def size(self) -> int:
        return len(self.row.text or "") if self.row is not None else 0


class RowCache(Generic[Row]):
    """Rows by id (or that an id holds none), kept only while ``enabled``; see the module docstring."""

    def __init__(self) -> None:
        self.enabled = False
        self._lock = threading.Lock()
        self._entries: OrderedDict[str, _Entry[Row]] = OrderedDict()
        self._chars = 0
        self._generation = 0  # moved by every change: a read that overlapped one keeps nothing

    def lookup(self, user_id: str, ids: Sequence[str], *, text: bool) -> tuple[dict[str, Row], list[str]]:
        """(rows known for ``user_id``, ids to read from Chroma)."""
        if not self.enabled:
            return {}, list(ids)
        found: dict[str, Row] = {}
        missing: list[str] = []
        with self._lock:
            for i in ids:
                entry = self._entries.get(i)
                if entry is None or entry.owner != user_id or (text and not entry.has_text):
                    missing.append(i)
                    continue
                self._entries.move_to_end(i)
                if entry.row is not None:
                    found[i] = entry.row
        return found, missing

    def generation(self) -> int:
        with self._lock:
            return self._generation

    def read(self, user_id: str, ids: Iterable[str], rows: dict[str, Row], *, text: bool, generation: int) -> None:
        """What a read of ``ids`` found (``rows``; an id without one holds none), kept if nothing changed since
        ``generation`` was taken."""
        if not self.enabled:
            return
        with self._lock:
            if generation != self._generation:
                return
            for i in ids:
                self._keep(i, _Entry(user_id, rows.get(i), text))

    def changing(self, ids: Iterable[str]) -> None:
        """Ids a change is about to reach: forgotten before it is sent."""
        with self._lock:
            self._generation += 1
            for i in ids:
                self._forget(i)

    def drop_user(self, user_id: str) -> None:
        with self._lock:
            self._generation += 1
            for i in [i for i, e in self._entries.items() if e.owner == user_id]:
                self._forget(i)

    def clear(self) -> None:
        with self._lock:
            self._generation += 1
            self._entries.clear()
            self._chars = 0

    def _keep(self, row_id: str, entry: _Entry[Row]) -> None:
        self._forget(row_id)
        if entry.size > MAX_CACHED_CHARS:
            return
        self._entries[row_id] = entry
        self._chars += entry.size
        while len(self._entries) > MAX_ROWS or self._chars > MAX_TOTAL_CHARS:
            _, old = self._entries.popitem(last=False)
            self._chars -= old.size

    def _forget(self, row_id: str) -> None:
        old = self._entries.pop(row_id, None)
        if old is not None:
            self._chars -= old.size
