"""The fast tier's own helpers: the deterministic test embedder, hypothesis profiles, and ../shared in CI."""

from __future__ import annotations

import subprocess
import sys
import time

import conftest
import numpy as np
import pytest
from memtend.index.user_index import UserIndex
from memtend.records import Kind, Record, Status
from memtend.testing import HashEmbedder

TEXTS = [
    "We paddled the kayak across the lake at dawn",
    "The invoice for March is still unpaid",
    "Grandma's violin lesson moved to Thursday",
    "",
]


def test_hash_embedder_is_deterministic_across_processes() -> None:
    here = HashEmbedder().embed(TEXTS)
    code = f"from memtend.testing import HashEmbedder; print(HashEmbedder().embed({TEXTS!r}).tolist())"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=120)
    assert np.array_equal(np.array(eval(out.stdout), dtype=np.float32), here)


def test_hash_embedder_gives_unit_vectors_close_for_shared_words() -> None:
    embedder = HashEmbedder(dim=64)
    vectors = embedder.embed(TEXTS)
    assert vectors.shape == (4, 64) and vectors.dtype == np.float32
    assert np.allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-6)
    query = embedder.embed(["kayak on the lake"])[0]
    assert int(np.argmax(vectors @ query)) == 0
    assert [v.tolist() for v in embedder(["x"])] == embedder.embed(["x"]).tolist()  # Chroma's call convention
    assert HashEmbedder.build_from_config(embedder.get_config()).dim == 64
    with pytest.raises(TypeError):
        embedder.embed("one text")  # type: ignore[arg-type]
    with pytest.raises(ValueError):
        HashEmbedder(dim=2)


def record(i: int, text: str, status: Status = Status.ACTIVE) -> Record:
    at = time.time() - 3600 * (10 - i)
    return Record(id=f"r{i}", user_id="u", kind=Kind.NOTE, text=text, created_at=at, updated_at=at, status=status)


def test_the_retrieval_index_runs_on_the_test_embedder() -> None:
    embedder = HashEmbedder()
    records = [record(i, t) for i, t in enumerate(TEXTS[:3])] + [record(3, "kayak paddles for sale", Status.ARCHIVED)]
    index = UserIndex()
    index.upsert(records, embedder.embed([r.text for r in records]))
    query = "when did we kayak on the lake"
    hits = index.search(query, embedder.embed([query])[0], k=2, now=time.time())
    assert hits and hits[0][0] == "r0"
    assert "r3" not in {hit_id for hit_id, _ in hits}  # archived records are not recalled by default
    index.remove(["r0"])
    assert "r0" not in {i for i, _ in index.search(query, embedder.embed([query])[0], k=3, now=time.time())}


def test_hypothesis_profile_and_scaled_counts() -> None:
    assert conftest.PROFILE in ("ci", "dev") or conftest.os.environ.get("HYPOTHESIS_PROFILE") == conftest.PROFILE
    if conftest.PROFILE == "ci":
        assert conftest.scaled(400) == 400
    elif conftest.PROFILE == "dev":
        assert conftest.scaled(400) == 40 and conftest.scaled(25) == 10


def test_missing_shared_data_skips_locally_and_fails_in_ci(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(conftest, "IN_CI", False)
    with pytest.raises(pytest.skip.Exception):
        conftest.shared_path("data", "no-such-file.jsonl")
    monkeypatch.setattr(conftest, "IN_CI", True)
    with pytest.raises(pytest.fail.Exception, match="CI must check out"):
        conftest.shared_path("data", "no-such-file.jsonl")
