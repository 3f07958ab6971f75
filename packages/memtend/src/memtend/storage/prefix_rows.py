"""Prefix rows of the document store: one per (user, space, prefix) under which a document with an expiry
(``expiring``) or without all its filter fields (``partial``) was written, what this process knows of them, and
their removal by upkeep once their prefix holds no document (safe beside other processes writing under it).

Below the space's root a prefix row carries ``at`` (when it was written) and ``scope`` (the prefix's scope code),
by which :func:`tidy` finds and checks it; the root's rows stay (every search of the space reads them).
"""

from __future__ import annotations

import hashlib
import json
import threading
import time
from collections import OrderedDict
from collections.abc import Iterable, Sequence
from contextlib import AbstractContextManager
from typing import Any, Protocol

from memtend.storage.chroma import NO_VECTOR, Where

PREFIX_KINDS = ("expiring", "partial")
_KIND_IDS = tuple(f"{kind}:" for kind in PREFIX_KINDS)
# a prefix row is not removed within PREFIX_GRACE seconds of its last write, however empty its prefix: another
# process may be writing under it; a prefix still holding documents is looked at again RECHECK_SECONDS later
PREFIX_GRACE = 600.0
RECHECK_SECONDS = 86_400.0
Prefixes = set[tuple[str, tuple[str, ...]]]  # (space, prefix labels)


class DocumentRows(Protocol):
    """What the removal of prefix rows uses of :class:`memtend.storage.document_rows.DocumentRows`."""

    collection: Any
    prefixes: PrefixAnswers
    exclusive: bool
    max_batch: int

    @property
    def lock(self) -> AbstractContextManager[Any]: ...

    def namespaces(self, user_id: str, space: str, prefix: Sequence[str]) -> list[tuple[str, ...]]: ...


MAX_PREFIX_ANSWERS = 4_096  # prefix-row answers kept (an id and a flag each)


class PrefixAnswers:
    """Whether each prefix row (``expiring`` / ``partial``) exists, as last read or written by this process; off
    until ``enabled`` (by Memory, when no other process can write the store: every write of its rows then passes
    through :class:`DocumentRows`). A write that adds a prefix row marks it present before it is sent, so a "no"
    kept here is never older than a write of this process; erasure, the removal of empty prefixes and a replayed
    journal drop what they may have changed. A stale "yes" costs only an unneeded clause; a "no" is kept only when
    no write marked anything while it was read."""

    def __init__(self) -> None:
        self.enabled = False
        self._lock = threading.Lock()
        self._known: OrderedDict[str, tuple[str, bool]] = OrderedDict()  # row id -> (user id, exists)
        self._generation = 0  # moved by every mark and drop: a read that overlapped one keeps nothing

    def get(self, row_id: str) -> bool | None:
        with self._lock:
            found = self._known.get(row_id)
            if found is None:
                return None
            self._known.move_to_end(row_id)
            return found[1]

    def generation(self) -> int:
        with self._lock:
            return self._generation

    def read(self, user_id: str, row_id: str, exists: bool, generation: int) -> None:
        """What a read found, kept unless a write or drop happened since ``generation`` was taken."""
        if not self.enabled:
            return
        with self._lock:
            if generation == self._generation or exists:
                self._keep(row_id, user_id, exists)

    def written(self, user_id: str, row_ids: Iterable[str]) -> None:
        """Prefix rows about to be written: present from now on (kept even if the write fails: a stale "yes" is
        only slower)."""
        with self._lock:
            self._generation += 1
            if self.enabled:
                for row_id in row_ids:
                    self._keep(row_id, user_id, True)

    def drop(self, row_ids: Iterable[str]) -> None:
        with self._lock:
            self._generation += 1
            for row_id in row_ids:
                self._known.pop(row_id, None)

    def drop_user(self, user_id: str) -> None:
        with self._lock:
            self._generation += 1
            for row_id in [i for i, (owner, _) in self._known.items() if owner == user_id]:
                del self._known[row_id]

    def clear(self) -> None:
        with self._lock:
            self._generation += 1
            self._known.clear()

    def _keep(self, row_id: str, user_id: str, exists: bool) -> None:
        self._known[row_id] = (user_id, exists)
        self._known.move_to_end(row_id)
        while len(self._known) > MAX_PREFIX_ANSWERS:
            self._known.popitem(last=False)


def prefix_row_id(kind: str, user_id: str, space: str, prefix: Sequence[str]) -> str:
    return f"{kind}:" + hashlib.sha256(json.dumps([user_id, space, list(prefix)]).encode()).hexdigest()[:40]


def prefix_meta(kind: str, user_id: str, space: str, labels: Sequence[str], stamp: float) -> dict[str, Any]:
    """A prefix row's metadata: below the space's root (whose rows stay), the time it was written and the scope
    code it stands for."""
    meta: dict[str, Any] = {"user_id": user_id, kind: True}
    if labels:
        meta["at"] = stamp
        meta["scope"] = json.dumps([user_id, space, *labels], ensure_ascii=False)  # as document_rows.scope_code
    return meta


def tidy(rows: DocumentRows, at: float, limit: int) -> int:
    """Remove the prefix rows of prefixes that hold no document any more, of any user: at most ``limit`` rows last
    written more than ``PREFIX_GRACE`` seconds before ``at`` are looked at (a prefix still holding documents is
    looked at again ``RECHECK_SECONDS`` later). Returns how many prefixes were emptied of rows.

    Beside other processes (a server) a row goes only by a delete that matches it while its ``at`` is still older
    than ``at - PREFIX_GRACE``: a process writing a document under the prefix rewrites the row with its own time in
    the same upsert as the document, so a write that lands after the check finds the row kept. The window left (a
    write between Chroma's own match and delete inside that one call, or a clock more than the grace behind) is
    closed by checking the prefix again after the delete: one holding documents then gets its rows back. A reader
    in that instant may miss the racing document once; none is lost."""
    got = rows.collection.get(where={"at": {"$lt": at - PREFIX_GRACE}}, limit=limit, include=["metadatas"])
    found: dict[str, Prefixes] = {}
    for i, m in zip(got["ids"], got["metadatas"] or [], strict=True):
        code = (m or {}).get("scope")
        if not i.startswith(_KIND_IDS) or not isinstance(code, str):
            continue  # a journal row (it has an ``at`` too)
        user_id, space, *labels = (str(label) for label in json.loads(code))
        if (m or {}).get("user_id") == user_id and labels:
            found.setdefault(user_id, set()).add((space, tuple(labels)))
    emptied = 0
    for user_id, prefixes in found.items():
        with rows.lock:
            empty = {p for p in prefixes if not rows.namespaces(user_id, *p)}
            busy = sorted(i for space, labels in prefixes - empty for i in _row_ids(user_id, space, labels))
            if busy:  # their documents stay a while: not looked at again on every pass
                rows.collection.update(ids=busy, metadatas=[{"at": at + RECHECK_SECONDS}] * len(busy))
            drop(rows, user_id, empty, at)
            emptied += len(empty)
    return emptied


def drop_empty(rows: DocumentRows, user_id: str, namespaces: Prefixes, at: float) -> None:
    """Remove the prefix rows of the prefixes of ``namespaces`` (deepest first) under which no namespace holds a
    document now (hold ``rows.lock``); the space's root keeps its rows. Beside other processes only rows past
    ``PREFIX_GRACE`` go (see :func:`tidy`)."""
    empty: Prefixes = set()
    for space, namespace in namespaces:
        for d in range(len(namespace), 0, -1):
            if (space, namespace[:d]) in empty:
                continue
            if rows.namespaces(user_id, space, namespace[:d]):
                break  # a document stays under it, so under every shorter prefix too
            empty.add((space, namespace[:d]))
    drop(rows, user_id, empty, at)


def drop(rows: DocumentRows, user_id: str, prefixes: Prefixes, at: float) -> None:
    """Delete the prefix rows of ``prefixes``, found holding no document (hold ``rows.lock``). On an exclusive
    store they go at once; beside other processes only those written more than ``PREFIX_GRACE`` before ``at``, and
    a prefix that holds a document again right after gets its rows back (see :func:`tidy`)."""
    if not prefixes:
        return
    of = {i: p for p in prefixes for i in _row_ids(user_id, *p)}
    got = rows.collection.get(ids=sorted(of), include=["metadatas"])
    present = {i: dict(m or {}) for i, m in zip(got["ids"], got["metadatas"] or [], strict=True)}
    present = {i: m for i, m in present.items() if m.get("user_id") == user_id}
    if not present:
        return
    if rows.exclusive:  # every write of the store takes this lock: nothing can be writing under them
        _delete(rows, sorted(present))
        rows.prefixes.drop(present)
        return
    stamp = time.time()
    unstamped = sorted(i for i, m in present.items() if "at" not in m)  # written before rows carried a time
    if unstamped:  # stamped now, removed by a pass once past the grace period
        rows.collection.update(ids=unstamped, metadatas=[_meta_of(i, user_id, of[i], stamp) for i in unstamped])
    doomed = sorted(i for i in present if "at" in present[i])
    if not doomed:
        return
    _delete(rows, doomed, where={"at": {"$lt": at - PREFIX_GRACE}})
    rows.prefixes.drop(doomed)
    # another process may have written under one of them between the check and the delete
    back = sorted(i for i in doomed if rows.namespaces(user_id, *of[i]))
    if back:
        rows.collection.upsert(
            ids=back,
            embeddings=[NO_VECTOR] * len(back),
            documents=[""] * len(back),
            metadatas=[_meta_of(i, user_id, of[i], stamp) for i in back],
        )


def _row_ids(user_id: str, space: str, prefix: Sequence[str]) -> list[str]:
    return [prefix_row_id(kind, user_id, space, prefix) for kind in PREFIX_KINDS]


def _meta_of(row_id: str, user_id: str, prefix: tuple[str, tuple[str, ...]], stamp: float) -> dict[str, Any]:
    return prefix_meta(row_id.partition(":")[0], user_id, prefix[0], prefix[1], stamp)


def _delete(rows: DocumentRows, ids: list[str], where: Where | None = None) -> None:
    for start in range(0, len(ids), rows.max_batch):
        rows.collection.delete(ids=ids[start : start + rows.max_batch], where=where)
