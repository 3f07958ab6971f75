"""The single-write benchmark still runs: every operation is timed, memtend's single writes are one Chroma write
each on an embedded folder (a store no other process writes), and the ratios are finite (no wall-clock limit
here: the ratios are the benchmark's to print)."""

from __future__ import annotations

import math

from conftest import load_benchmark


def test_single_write_benchmark_runs(embedding_function: object) -> None:
    bench = load_benchmark("single_write")
    results = bench.run(n=3, backend="persistent", embedding_function=embedding_function, warmup=1)
    assert set(results) == {"remember", "log", "set_fact", "raw_add", "embed"}
    for op, r in results.items():
        assert r["p50_ms"] > 0 and math.isfinite(r["vs_raw_add"]) and math.isfinite(r["vs_embed"]), op
    assert {results[op]["chroma_writes"] for op in ("remember", "log", "set_fact")} == {1}
