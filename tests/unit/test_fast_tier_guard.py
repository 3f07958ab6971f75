"""The fast tier's guard (tests/conftest.py): a test in tests/unit that imports chromadb or onnxruntime (when its
module loads or while it runs), opens a Chroma client or builds the embedding model fails; here each part is
shown to see what it must, then the test takes back what it did so the guard passes it."""

from __future__ import annotations

from pathlib import Path

import memtend.storage.embeddings as embeddings  # loaded when the test starts, so the guard refuses its model builders
import pytest
from conftest import FAST_TIER_PROBLEMS, HEAVY_IMPORTS, FastTierError, refusing


def test_an_import_of_chromadb_is_seen_with_the_fast_tier_file_that_made_it() -> None:
    before = len(HEAVY_IMPORTS.seen)
    try:
        assert HEAVY_IMPORTS.find_spec("chromadb") is None  # it notes, never finds: the import goes on as before
        HEAVY_IMPORTS.find_spec("onnxruntime")
        HEAVY_IMPORTS.find_spec("json")
        HEAVY_IMPORTS.find_spec("chromadb.api")  # a submodule comes after its package: the package's is the one
        assert HEAVY_IMPORTS.seen[before:] == [("chromadb", Path(__file__)), ("onnxruntime", Path(__file__))]
    finally:
        del HEAVY_IMPORTS.seen[before:]


def test_building_the_embedding_model_is_refused(request: pytest.FixtureRequest) -> None:
    problems = request.node.stash[FAST_TIER_PROBLEMS]
    with pytest.raises(FastTierError, match="builds the embedding model"):
        embeddings.default_embedding_function()
    with pytest.raises(FastTierError, match="builds the embedding model"):
        embeddings.load_embedding_function()
    assert problems == [
        "builds the embedding model (default_embedding_function)",
        "builds the embedding model (load_embedding_function)",
    ]
    problems.clear()  # what this test did on purpose


def test_a_refusal_notes_what_was_done_and_raises() -> None:
    problems: list[str] = []
    with pytest.raises(FastTierError, match="opens a Chroma client: move it out of tests/unit"):
        refusing(problems, "opens a Chroma client")(object(), path="x")
    assert problems == ["opens a Chroma client"]
