"""The files of an embedded store: which folder a path names, whether it holds a store, and whether its files are
whole, checked once when the store is opened (no Chroma call, a few file reads and one read-only SQLite query).

When memtend creates a store it writes a small manifest, ``memtend-store.json``, next to Chroma's files. A folder
with the manifest but without Chroma's database (deleted, truncated, overwritten) is a damaged store, never an
empty one: opening it raises :class:`StoreDamagedError` naming the file and what to do, instead of silently
starting over. A folder written by an earlier memtend (Chroma's files, no manifest) is checked the same way and
gets its manifest.
"""

from __future__ import annotations

import contextlib
import json
import os
import sqlite3
import time
from pathlib import Path

from memtend.errors import InvalidInputError, StoreDamagedError

MANIFEST = "memtend-store.json"
DATABASE = "chroma.sqlite3"
_SQLITE_HEADER = b"SQLite format 3\x00"
_HNSW_FILES = ("header.bin", "data_level0.bin", "length.bin", "link_lists.bin")
_FIX = "Restore the folder from a backup; to start over with an empty store, move the folder away first."


def check_path(path: object) -> Path:
    """The folder a ``path`` argument names, refused with a typed error when it cannot be one."""
    if isinstance(path, bytes) or not isinstance(path, str | os.PathLike):
        raise InvalidInputError(f"path must be a str or a path-like folder name, got {type(path).__name__}")
    text = os.fspath(path)
    if not isinstance(text, str) or not text.strip():
        raise InvalidInputError("path must name a folder (a non-empty str)")
    if "\x00" in text:
        raise InvalidInputError("path must not contain a NUL character")
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        raise InvalidInputError("path holds characters that are not valid unicode (a lone surrogate?)") from None
    return Path(text)


def prepare_folder(path: object) -> Path:
    """The store folder for ``path``, created when missing; refused when it is a file or cannot be created."""
    folder = check_path(path)
    if folder.exists() and not folder.is_dir():
        raise InvalidInputError(f"the store path {folder} is a file, not a folder; pass a folder for the store")
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise InvalidInputError(
            f"cannot create the store folder {folder} ({exc.strerror or type(exc).__name__}); "
            "pass a folder you can write to"
        ) from None
    return folder


def holds_store(folder: Path) -> bool:
    """True when ``folder`` holds a store (memtend's manifest or Chroma's database), whole or damaged."""
    return (folder / MANIFEST).exists() or (folder / DATABASE).exists()


def check_files(folder: Path) -> None:
    """Raise :class:`StoreDamagedError` when the store in ``folder`` lost or garbled a file. A folder holding no
    store passes (a new store is created there)."""
    database = folder / DATABASE
    manifest = folder / MANIFEST
    if not database.exists() and not database.is_symlink():
        if manifest.exists():
            raise StoreDamagedError(
                f"the store in {folder} has lost its database file {DATABASE} (its manifest {MANIFEST} says a "
                f"store was created there). {_FIX}"
            )
        return
    if not database.is_file():
        raise StoreDamagedError(f"{database} is not a regular file, so the store cannot be opened. {_FIX}")
    try:
        with database.open("rb") as f:
            header = f.read(len(_SQLITE_HEADER))
    except OSError as exc:
        raise StoreDamagedError(f"cannot read {database} ({exc.strerror or type(exc).__name__}). {_FIX}") from None
    if header != _SQLITE_HEADER:
        what = "is empty (truncated)" if not header else "is not a SQLite database (overwritten or garbled)"
        raise StoreDamagedError(f"the store's database file {database} {what}. {_FIX}")
    _check_segments(folder, database)


def _check_segments(folder: Path, database: Path) -> None:
    """Every vector index Chroma says it saved has its folder and files."""
    # A killed writer leaves a hot journal: SQLite rolls it back on the first read-write open (as Chroma's own open
    # would), and a read-only connection cannot read the file until then.
    hot = any(database.with_name(database.name + suffix).exists() for suffix in ("-journal", "-wal"))
    mode = "rw" if hot else "ro"
    try:
        with contextlib.closing(sqlite3.connect(f"{database.resolve().as_uri()}?mode={mode}", uri=True)) as db:
            saved = [
                row[0]
                for row in db.execute(
                    "SELECT s.id FROM segments s JOIN max_seq_id m ON m.segment_id = s.id "
                    "WHERE s.scope = 'VECTOR' AND m.seq_id > 0"
                )
            ]
            vector_segments = {row[0] for row in db.execute("SELECT id FROM segments WHERE scope = 'VECTOR'")}
    except sqlite3.Error as exc:
        raise StoreDamagedError(f"the store's database file {database} cannot be read ({exc}). {_FIX}") from None
    for segment in saved:
        if not (folder / segment).is_dir():
            raise StoreDamagedError(
                f"the store in {folder} has lost the vector index folder {segment}/ that its database refers to. {_FIX}"
            )
    for segment in vector_segments:
        index = folder / segment
        if index.is_dir():
            missing = [name for name in _HNSW_FILES if not (index / name).is_file()]
            if missing:
                raise StoreDamagedError(f"the vector index folder {index} has lost {', '.join(missing)}. {_FIX}")


def write_manifest(folder: Path) -> None:
    """Mark ``folder`` as a memtend store (once; an existing manifest is kept)."""
    manifest = folder / MANIFEST
    if manifest.exists():
        return
    data = {"store": "memtend", "format": 1, "backend": "chroma-persistent", "created_at": time.time()}
    partial = folder / (MANIFEST + ".tmp")
    with contextlib.suppress(OSError):  # a read-only folder still opens; it just stays unmarked
        partial.write_text(json.dumps(data) + "\n", encoding="utf-8")
        os.replace(partial, manifest)
