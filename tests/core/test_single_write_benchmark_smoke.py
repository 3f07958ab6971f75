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
        assert 0 < r["vs_raw_add_low"] <= r["vs_raw_add_high"] < math.inf, op  # the ratio's resampled interval
    assert results["raw_add"]["vs_raw_add_low"] == results["raw_add"]["vs_raw_add_high"] == 1.0
    fact = results["set_fact"]  # set_fact beside a raw add of the very text it stores, with that ratio's interval
    assert 0 < fact["vs_raw_add_fact_low"] <= fact["vs_raw_add_fact_high"] < math.inf
    assert fact["vs_raw_add_fact"] == fact["p50_ms"] / results["raw_add_fact"]["p50_ms"]
    assert {results[op]["chroma_writes"] for op in ("remember", "log", "set_fact")} == {1}
    for op in ("remember", "log", "set_fact"):  # the reads are counted and timed (a write that reads takes longer)
        r = results[op]
        assert 0 <= r["chroma_reads_p50"] <= r["chroma_reads_max"] and r["read_ms_p50"] >= 0, op
        assert (r["read_ms_p50"] > 0) == (r["chroma_reads_p50"] > 0), op
    if backend == "persistent":  # a store only this process writes: a new record needs no read
        assert results["remember"]["chroma_reads_max"] == 0 and results["log"]["chroma_reads_max"] == 0
    # set_fact is one claim row: no read on a shared store; where the folder lock is held, a key read once (its slot
    # row by id, its claims by key) and then known (memtend.consistency.claims)
    assert results["set_fact"]["chroma_reads_max"] == (2 if backend == "persistent" else 0)


@pytest.mark.parametrize("backend", ["persistent", "ephemeral"])
def test_write_breakdown_benchmark_runs(embedding_function: object, backend: str) -> None:
    """The breakdown of a single write (raw add, the same row in steps towards memtend's, memtend's call) runs and
    times every step."""
    bench = load_benchmark("write_breakdown")
    results = bench.run(n=3, backend=backend, embedding_function=embedding_function, warmup=1)
    assert set(results) == set(bench.OPERATIONS)
    assert results["raw_add"]["vs_raw_add"] == 1.0
    for op, r in results.items():
        assert r["p50_ms"] > 0 and math.isfinite(r["vs_raw_add"]) and math.isfinite(r["over_embed_ms"]), op
