"""A missing or damaged store file gives a typed error naming what is wrong, never a silently empty store nor a
raw Chroma error; an intact store opens and keeps what it held."""

from __future__ import annotations

import json
import os
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from memtend import Event, InvalidInputError, Memory, StoreDamagedError
from memtend.storage.files import DATABASE, MANIFEST


def _forget_cached_clients() -> None:
    """Chroma keeps one system per folder in a process; drop it so the next open reads the files again (as a
    fresh process would)."""
    from chromadb.api.client import SharedSystemClient

    SharedSystemClient.clear_system_cache()


def _make_store(folder: Path, embedding_function: Any) -> None:
    with Memory(path=folder, embedding_function=embedding_function) as mem:
        user = mem.user("alice")
        user.log_many([Event(f"routine event number {i} about green tea") for i in range(120)])
        user.set_fact("colour", "teal")
    _forget_cached_clients()


def _segments(folder: Path) -> list[Path]:
    return sorted(p for p in folder.iterdir() if p.is_dir())


def _open_and_read(folder: Path, embedding_function: Any) -> None:
    with Memory(path=folder, embedding_function=embedding_function) as mem:
        user = mem.user("alice")
        user.recall("green tea")
        user.list()


@pytest.fixture(scope="module")
def pristine(tmp_path_factory: pytest.TempPathFactory, embedding_function: Any) -> Path:
    folder = tmp_path_factory.mktemp("pristine") / "store"
    _make_store(folder, embedding_function)
    return folder


@pytest.fixture
def store(pristine: Path, tmp_path: Path) -> Path:
    """A copy of a store with records, facts and saved vector indexes (damaged by each test as it likes)."""
    folder = tmp_path / "store"
    shutil.copytree(pristine, folder)
    return folder


def test_a_new_store_is_marked_and_reopens_with_its_data(store: Path, embedding_function: Any) -> None:
    manifest = json.loads((store / MANIFEST).read_text())
    assert manifest["store"] == "memtend"
    assert _segments(store), "the fixture store has saved vector indexes"
    with Memory(path=store, embedding_function=embedding_function) as mem:
        assert mem.user("alice").facts() == {"colour": "teal"}
        assert len(mem.user("alice").list()) == 121


def test_a_store_written_before_the_manifest_is_adopted(store: Path, embedding_function: Any) -> None:
    (store / MANIFEST).unlink()
    with Memory(path=store, embedding_function=embedding_function) as mem:
        assert mem.user("alice").facts() == {"colour": "teal"}
    assert (store / MANIFEST).exists()


def _delete_database(folder: Path) -> None:
    (folder / DATABASE).unlink()


def _truncate_database(folder: Path) -> None:
    with (folder / DATABASE).open("r+b") as f:
        f.truncate(0)


def _truncate_half(folder: Path) -> None:
    size = (folder / DATABASE).stat().st_size
    with (folder / DATABASE).open("r+b") as f:
        f.truncate(size // 2)


def _garble_header(folder: Path) -> None:
    with (folder / DATABASE).open("r+b") as f:
        f.write(b"not a database at all" * 50)


def _garble_pages(folder: Path) -> None:
    with (folder / DATABASE).open("r+b") as f:
        f.seek(4096)
        f.write(bytes(range(256)) * 200)


def _database_a_folder(folder: Path) -> None:
    (folder / DATABASE).unlink()
    (folder / DATABASE).mkdir()


def _remove_segment_folders(folder: Path) -> None:
    for segment in _segments(folder):
        shutil.rmtree(segment)


def _remove_an_index_file(folder: Path) -> None:
    for segment in _segments(folder):
        (segment / "header.bin").unlink()


def _garble_index_files(folder: Path) -> None:
    for segment in _segments(folder):
        for file in segment.iterdir():
            file.write_bytes(b"junk")


DAMAGE: list[tuple[str, Callable[[Path], None], str]] = [
    ("deleted chroma.sqlite3", _delete_database, DATABASE),
    ("chroma.sqlite3 truncated to 0 bytes", _truncate_database, DATABASE),
    ("chroma.sqlite3 truncated to half", _truncate_half, DATABASE),
    ("chroma.sqlite3 header overwritten", _garble_header, DATABASE),
    ("chroma.sqlite3 pages garbled", _garble_pages, DATABASE),
    ("chroma.sqlite3 replaced by a folder", _database_a_folder, DATABASE),
    ("segment folders removed", _remove_segment_folders, "index"),
    ("an index file removed", _remove_an_index_file, "header.bin"),
    ("index files garbled", _garble_index_files, "damaged"),
]


@pytest.mark.parametrize(("name", "damage", "named"), DAMAGE, ids=[d[0] for d in DAMAGE])
def test_a_damaged_store_raises_a_typed_error_naming_it(
    store: Path, embedding_function: Any, name: str, damage: Callable[[Path], None], named: str
) -> None:
    damage(store)
    with pytest.raises(StoreDamagedError) as info:
        _open_and_read(store, embedding_function)
    message = str(info.value)
    assert named in message, f"{name}: the error does not name what is wrong: {message}"
    assert "backup" in message, "the error says what to do"
    assert "teal" not in message and "green tea" not in message, "no stored value in the message"
    if named == DATABASE:  # nothing was silently re-created in its place
        assert not (store / DATABASE).is_file() or (store / DATABASE).stat().st_size < 10_000_000


def test_a_deleted_database_never_opens_as_an_empty_store(store: Path, embedding_function: Any) -> None:
    _delete_database(store)
    for _ in range(2):  # and the failed open did not create an empty one for the next try
        with pytest.raises(StoreDamagedError):
            Memory(path=store, embedding_function=embedding_function)
    assert not (store / DATABASE).exists()


def test_a_path_that_is_a_file_or_unusable_is_refused(tmp_path: Path, embedding_function: Any) -> None:
    file = tmp_path / "a-file"
    file.write_text("hello")
    bad: list[Any] = [file, 5, b"/tmp/x", "", "a\x00b", "st\ud800re", file / "below"]
    for path in bad:
        with pytest.raises(InvalidInputError):
            Memory(path=path, embedding_function=embedding_function)
    assert file.read_text() == "hello"


def test_opening_checks_no_files_beyond_the_folder(store: Path) -> None:
    """The open check reads the folder's own files only (cheap: no Chroma round trip)."""
    from memtend.storage.files import check_files

    check_files(store)
    assert os.listdir(store)


@pytest.mark.slow
@pytest.mark.server
def test_a_server_on_a_damaged_folder_gives_a_typed_error(tmp_path: Path) -> None:
    """Through a `chroma run` server, damage Chroma finds while serving (its saved vector index garbled while it
    was stopped) reaches the caller as StoreDamagedError naming what Chroma reports, not a raw Chroma error."""
    from conftest import ChromaServer
    from memtend.testing import HashEmbedder

    folder = tmp_path / "server-data"
    server = ChromaServer(folder)
    server.start()
    try:
        with Memory(client=server.client(), embedding_function=HashEmbedder()) as mem:
            mem.user("alice").log_many([Event(f"routine event number {i} about green tea") for i in range(300)])
    finally:
        server.stop()
    segments = _segments(folder)
    assert segments, "the server saved a vector index"
    _garble_index_files(folder)
    server.start()
    try:
        with pytest.raises(StoreDamagedError) as info:  # on open (its look for unfinished writes reads the
            # memories collection) or at the latest on the first recall
            mem = Memory(client=server.client(), embedding_function=HashEmbedder())
            try:
                mem.user("alice").recall("green tea")
            finally:
                mem.close()
        assert "hnsw" in str(info.value) and "backup" in str(info.value)
        assert "green tea" not in str(info.value)
    finally:
        server.stop()
