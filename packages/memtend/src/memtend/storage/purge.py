"""Rewriting the files of a local Chroma folder so that nothing deleted survives in them.

Deleting a row through Chroma removes it from every table, but the files keep its bytes: SQLite leaves them in
the free space of the pages that held them and in free pages, and the full-text index keeps the tokens of deleted
documents until its segments are merged; the vector index marks a deleted item and keeps its vector, and writes
uninitialised memory (whatever the process held, any user's text included) into the unused tail of its files.
(Chroma's write-ahead log, the ``embeddings_queue`` table, is purged through the API by
:meth:`memtend.storage.store.Storage.erase_user`.)

- :func:`scrub_sqlite` merges every FTS5 index into one segment (``optimize``, which drops deleted entries),
  rewrites the whole database into fresh pages (``VACUUM``) and, in WAL mode, truncates the write-ahead file. It
  uses its own SQLite connection, which SQLite's locking makes safe beside a live Chroma client (Chroma's own
  ``chroma vacuum`` does the same).
- :func:`scrub_vector_indexes` zeroes the vectors of deleted items and the unused tails of the index files.

``Memory.erase_user`` runs both on an embedded folder. A ``chroma run`` server owns its folder: stop it, run
``memtend scrub --path DIR``, and start it again.
"""

from __future__ import annotations

import sqlite3
import struct
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from memtend.errors import StorageUnavailableError, StoreNotFoundError
from memtend.storage import locking

SQLITE_FILE = "chroma.sqlite3"
_BUSY_TIMEOUT = 120.0  # seconds to wait for a Chroma write in progress to finish
# header.bin of a persisted vector index (Chroma's hnswlib): version, offsetLevel0, max_elements, cur_element_count,
# size_data_per_element, label_offset, offsetData, maxlevel, enterpoint_node, maxM, maxM0, M, mult, ef_construction
_HNSW_HEADER = struct.Struct("<i6Q2i3QdQ")
_HNSW_VERSION = 1
_DELETE_MARK = 0x01  # in the third byte of an element's level-0 link count


@dataclass(frozen=True)
class ScrubReport:
    """What :func:`scrub_sqlite` did: bytes of the database file before and after, FTS indexes merged, seconds."""

    path: str
    bytes_before: int
    bytes_after: int
    fts_tables: tuple[str, ...]
    seconds: float


def sqlite_file(folder: str | Path) -> Path:
    """The SQLite database of a Chroma folder."""
    return Path(folder) / SQLITE_FILE


def scrub_folder(folder: str | Path) -> ScrubReport:
    """Scrub a Chroma folder no process is using (a stopped ``chroma run`` server's, or an embedded store's): the
    vector index files, then the database. Refuses with ``StoreLockedError`` while a memtend process holds it;
    a server does not hold memtend's lock, so stop it first."""
    path = Path(folder)
    if not sqlite_file(path).is_file():
        raise StoreNotFoundError(f"{path} holds no Chroma store ({SQLITE_FILE} is missing); check the path")
    lock = locking.acquire(path)
    try:
        return scrub_files(path)
    finally:
        lock.release()


def scrub_files(folder: str | Path) -> ScrubReport:
    """The vector index files, then the database, of a Chroma folder; a failure is a ``StorageUnavailableError``
    saying that the rows are gone and how to finish (the scrub can be run again at any time)."""
    try:
        scrub_vector_indexes(folder)
        return scrub_sqlite(sqlite_file(folder))
    except (OSError, sqlite3.Error, TimeoutError) as exc:
        raise StorageUnavailableError(
            f"the rows were deleted, but rewriting the files of {folder} failed ({type(exc).__name__}: {exc}); "
            "their bytes may remain on disk until it succeeds: erase again, or run `memtend --path DIR scrub`"
        ) from exc


def scrub_sqlite(path: str | Path, *, timeout: float = _BUSY_TIMEOUT) -> ScrubReport:
    """Remove the remains of deleted rows from a Chroma SQLite file (see the module's docstring)."""
    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"no Chroma database at {path}")
    started = time.perf_counter()
    before = _size(path)
    con = sqlite3.connect(str(path), timeout=timeout, isolation_level=None)
    try:
        con.execute("PRAGMA secure_delete = ON")
        tables = _fts5_tables(con)
        for name in tables:
            quoted = _quote(name)
            con.execute(f"INSERT INTO {quoted}({quoted}) VALUES ('optimize')")  # names read from the schema
        con.execute("VACUUM")
        if str(con.execute("PRAGMA journal_mode").fetchone()[0]).lower() == "wal":
            _truncate_wal(con, timeout)
    finally:
        con.close()
    return ScrubReport(str(path), before, _size(path), tuple(tables), time.perf_counter() - started)


def scrub_vector_indexes(folder: str | Path) -> int:
    """Zero what a Chroma folder's vector index files keep beyond their live items; returns how many files changed.

    hnswlib allocates its buffers without clearing them and writes them whole when an index is created, so the
    unused tail of ``data_level0.bin`` and ``length.bin`` holds whatever the process's memory held then (texts
    of any user included); and an item deleted is only marked, its vector kept. Both are zeroed in the files
    (the live index never reads them back: it reads its files only when it loads). A file whose header does not
    read as expected is left alone."""
    changed = 0
    for header in sorted(Path(folder).glob("*/header.bin")):
        fields = _read_header(header)
        if fields is None:
            continue
        count, per_element, offset_data, label_offset = fields
        data_file, length_file = header.with_name("data_level0.bin"), header.with_name("length.bin")
        if data_file.is_file():
            changed += _zero_data(data_file, count, per_element, offset_data, label_offset)
        if length_file.is_file():
            changed += _zero_from(length_file, count * 4)
    return changed


def _read_header(path: Path) -> tuple[int, int, int, int] | None:
    raw = path.read_bytes()
    if len(raw) != _HNSW_HEADER.size:
        return None
    version, level0, max_elements, count, per_element, label_offset, offset_data, *_ = _HNSW_HEADER.unpack(raw)
    if version != _HNSW_VERSION or level0 != 0 or not 0 <= count <= max_elements:
        return None
    if not 4 <= offset_data < label_offset <= per_element - 8:
        return None
    return count, per_element, offset_data, label_offset


def _zero_data(path: Path, count: int, per_element: int, offset_data: int, label_offset: int) -> int:
    """Zero the vectors of deleted items and everything past the live ones (only the bytes that are not zero)."""
    raw = path.read_bytes()
    live = min(count, len(raw) // per_element)
    items = np.frombuffer(raw, dtype=np.uint8, count=live * per_element).reshape(live, per_element)
    deleted = np.flatnonzero(items[:, 2] & _DELETE_MARK)
    dirty = [int(i) for i in deleted if items[i, offset_data:label_offset].any()]
    tail = raw[live * per_element :]
    if not dirty and not any(tail):
        return 0
    with path.open("r+b") as f:
        blank = bytes(label_offset - offset_data)
        for i in dirty:
            f.seek(i * per_element + offset_data)
            f.write(blank)
        if any(tail):
            f.seek(live * per_element)
            f.write(bytes(len(tail)))
    return 1


def _zero_from(path: Path, start: int) -> int:
    raw = path.read_bytes()
    if not any(raw[start:]):
        return 0
    with path.open("r+b") as f:
        f.seek(start)
        f.write(bytes(len(raw) - start))
    return 1


def _fts5_tables(con: sqlite3.Connection) -> list[str]:
    rows = con.execute("SELECT name, sql FROM sqlite_master WHERE type = 'table' AND sql LIKE 'CREATE VIRTUAL TABLE%'")
    return [str(name) for name, sql in rows if "fts5" in str(sql).lower()]


def _truncate_wal(con: sqlite3.Connection, timeout: float) -> None:
    """Copy the WAL into the database and cut the WAL file to nothing (retried while a reader holds it)."""
    deadline = time.monotonic() + timeout
    while True:
        busy = con.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchone()[0]
        if not busy:
            return
        if time.monotonic() > deadline:
            raise TimeoutError("the SQLite write-ahead file stayed in use; run the scrub again when Chroma is idle")
        time.sleep(0.05)


def _quote(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


def _size(path: Path) -> int:
    return sum(p.stat().st_size for p in (path, Path(f"{path}-wal")) if p.exists())
