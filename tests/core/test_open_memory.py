"""``open_memory``: one string names a store (a folder or a ``chroma run`` server URL), and export readers: an
adapter shows its opaque bytes documents readable in ``export()`` without the core decoding them."""

from __future__ import annotations

import logging
from pathlib import Path

import pytest
from conftest import ChromaServer, free_port, unique_prefix
from memtend import InvalidInputError, Memory, StorageUnavailableError, open_memory
from memtend.documents import add_export_reader


def test_a_folder_path_opens_an_embedded_store(tmp_path: Path, embedding_function) -> None:  # type: ignore[no-untyped-def]
    with open_memory(str(tmp_path / "store"), embedding_function=embedding_function) as mem:
        mem.user("alice").remember("Keeps bees")
    with open_memory(tmp_path / "store", embedding_function=embedding_function) as mem:  # a PathLike too
        assert [r.text for r in mem.user("alice").list()] == ["Keeps bees"]


@pytest.mark.server
def test_a_url_opens_the_server_and_the_environment_names_it(
    chroma_server: ChromaServer, embedding_function, monkeypatch: pytest.MonkeyPatch
) -> None:  # type: ignore[no-untyped-def]
    prefix = unique_prefix()
    with open_memory(f"http://127.0.0.1:{chroma_server.port}", embedding_function=embedding_function,
                     collection_prefix=prefix) as mem:  # fmt: skip
        mem.user("alice").remember("Keeps bees")
        assert mem.storage.client.get_settings().chroma_api_impl.endswith("FastAPI")
    monkeypatch.setenv("MEMTEND_URL", f"http://127.0.0.1:{chroma_server.port}/")
    with open_memory(embedding_function=embedding_function, collection_prefix=prefix) as mem:
        assert [r.text for r in mem.user("alice").list()] == ["Keeps bees"]


def test_no_string_and_no_url_variable_is_the_default_folder(
    tmp_path: Path, embedding_function, monkeypatch: pytest.MonkeyPatch
) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.delenv("MEMTEND_URL", raising=False)
    monkeypatch.setenv("MEMTEND_PATH", str(tmp_path / "env-store"))
    with open_memory(embedding_function=embedding_function) as mem:
        mem.user("alice").log("hello")
    assert (tmp_path / "env-store" / "chroma.sqlite3").exists()


@pytest.mark.parametrize(
    "target",
    [
        "postgres://127.0.0.1:5432",
        "http://admin:hunter2secret@127.0.0.1:8000",
        "http://127.0.0.1:8000/api?token=hunter2secret",
        "http://127.0.0.1:notaport",
        "http://:8000",
        "",
        "   ",
    ],
)
def test_a_url_memtend_cannot_use_is_refused_without_repeating_it(target: str) -> None:
    with pytest.raises(InvalidInputError) as raised:
        open_memory(target)
    assert "hunter2secret" not in str(raised.value) and "admin" not in str(raised.value)


def test_options_are_memorys_and_the_store_is_named_once(tmp_path: Path) -> None:
    with pytest.raises(InvalidInputError, match="no_such_option"):
        open_memory(str(tmp_path / "s"), no_such_option=1)
    with pytest.raises(InvalidInputError, match="no client or path"):
        open_memory(str(tmp_path / "s"), path=str(tmp_path / "other"))
    assert not (tmp_path / "s").exists() and not (tmp_path / "other").exists()


def test_a_server_that_does_not_answer_is_a_typed_error() -> None:
    with pytest.raises(StorageUnavailableError, match="Start it"):
        open_memory(f"http://127.0.0.1:{free_port()}")


# ---------------------------------------------------------------------- export readers
def test_a_registered_reader_shows_bytes_documents_readable_beside_them(ephemeral_memory: Memory) -> None:
    docs = ephemeral_memory.documents("alice", gate="off")
    docs.put(("blobs", "t1"), "k1", b"HELLO|world")
    docs.put(("other",), "k2", b"opaque")
    docs.put(("blobs", "t1"), "k3", {"json": "values are shown as they are"})
    seen: list[tuple[tuple[str, ...], str]] = []

    def reader(namespace: tuple[str, ...], key: str, value: bytes) -> dict[str, str]:
        seen.append((namespace, key))
        left, right = value.decode().split("|")
        return {"greeting": left.lower(), "to": right}

    add_export_reader(ephemeral_memory, "blobs", reader)
    exported = {d["key"]: d for d in ephemeral_memory.user("alice").export()["documents"]}
    assert exported["k1"]["readable"] == {"greeting": "hello", "to": "world"}
    assert exported["k1"]["value"] == "SEVMTE98d29ybGQ="  # the bytes are still there, as base64
    assert "readable" not in exported["k2"] and "readable" not in exported["k3"]
    assert seen == [(("blobs", "t1"), "k1")]


def test_a_reader_that_fails_leaves_the_bytes_and_logs_no_value(
    ephemeral_memory: Memory, caplog: pytest.LogCaptureFixture
) -> None:
    ephemeral_memory.documents("alice", gate="off").put(("blobs",), "k", b"SECRET-PAYLOAD")

    def broken(namespace: tuple[str, ...], key: str, value: bytes) -> object:
        raise ValueError(value.decode())

    add_export_reader(ephemeral_memory, "blobs", broken)
    with caplog.at_level(logging.WARNING, logger="memtend.documents"):
        (doc,) = ephemeral_memory.user("alice").export()["documents"]
    assert "readable" not in doc and doc["value"]
    assert "ValueError" in caplog.text and "SECRET-PAYLOAD" not in caplog.text


def test_readers_belong_to_their_memory_and_are_checked(ephemeral_memory: Memory, embedding_function) -> None:  # type: ignore[no-untyped-def]
    import chromadb

    other = Memory(client=chromadb.EphemeralClient(), embedding_function=embedding_function,
                   collection_prefix=unique_prefix())  # fmt: skip
    try:
        other.documents("alice", gate="off").put(("blobs",), "k", b"x")
        add_export_reader(ephemeral_memory, "blobs", lambda ns, key, value: "read")
        (doc,) = other.user("alice").export()["documents"]
        assert "readable" not in doc
    finally:
        other.close()
    with pytest.raises(InvalidInputError):
        add_export_reader(ephemeral_memory, "", lambda ns, key, value: None)
    with pytest.raises(InvalidInputError):
        add_export_reader(ephemeral_memory, "blobs", "not callable")  # type: ignore[arg-type]
