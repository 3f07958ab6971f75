"""The single-write benchmark still runs: every operation is timed, memtend's single writes are one Chroma write
each, on an embedded folder (a store no other process writes) and on an in-process client other handles may share
(the change mark goes in the same upsert), and the ratios are finite (no wall-clock limit here: the ratios are the
benchmark's to print)."""

from __future__ import annotations

import math

import pytest
from conftest import load_benchmark


@pytest.mark.parametrize("backend", ["persistent", "ephemeral"])
def test_single_write_benchmark_runs(embedding_function: object, backend: str) -> None:
    bench = load_benchmark("single_write")
    results = bench.run(n=3, backend=backend, embedding_function=embedding_function, warmup=1)
    assert set(results) == {"remember", "log", "set_fact", "raw_add", "raw_add_fact", "embed"}
    for op, r in results.items():
        assert r["p50_ms"] > 0 and math.isfinite(r["vs_raw_add"]) and math.isfinite(r["vs_embed"]), op
        assert math.isfinite(r["p95_vs_raw_add"]), op
    assert {results[op]["chroma_writes"] for op in ("remember", "log", "set_fact")} == {1}
