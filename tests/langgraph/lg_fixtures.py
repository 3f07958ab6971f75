"""Fixtures for the LangGraph adapter tests (imported by each test module: a second conftest.py would shadow the
root one for `from conftest import ...`): a fresh Memory on each real Chroma backend."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

LG_BACKENDS = [
    pytest.param("ephemeral", id="ephemeral"),
    pytest.param("persistent", id="persistent"),
    pytest.param("server", id="server", marks=pytest.mark.server),
]


def unique_prefix() -> str:
    return "lg" + uuid.uuid4().hex[:12]


def open_memory(backend: str, tmp_path: Path, embedding_function, request: pytest.FixtureRequest):  # type: ignore[no-untyped-def]
    import chromadb
    from memtend import Memory

    if backend == "ephemeral":
        return Memory(
            client=chromadb.EphemeralClient(), embedding_function=embedding_function, collection_prefix=unique_prefix()
        )
    if backend == "persistent":
        return Memory(path=tmp_path / "store", embedding_function=embedding_function)
    server = request.getfixturevalue("chroma_server")
    return Memory(client=server.client(), embedding_function=embedding_function, collection_prefix=unique_prefix())


@pytest.fixture(params=LG_BACKENDS, name="lg_memory")
def lg_memory_fixture(request: pytest.FixtureRequest, tmp_path: Path, embedding_function) -> Iterator[object]:  # type: ignore[no-untyped-def]
    """A fresh Memory on an in-process client, a folder on disk, and a `chroma run` server."""
    memory = open_memory(str(request.param), tmp_path, embedding_function, request)
    yield memory
    memory.close()
