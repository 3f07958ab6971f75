"""The fact-readers benchmark still runs (tiny sizes, no wall-clock limit): every measure is timed and its ratio to
the raw Chroma peer is finite."""

from __future__ import annotations

import math

import pytest
from conftest import load_benchmark


@pytest.mark.parametrize("backend", ["persistent", "ephemeral"])
def test_fact_readers_benchmark_runs(backend: str) -> None:
    bench = load_benchmark("fact_readers")
    results = bench.run(users=2, keys=4, writes=2, events=3, backend=backend)
    assert set(results) == {"first_recall", "raw_user_rows", "get_fact_cold", "raw_get", "get_fact_seen"}
    for name, r in results.items():
        assert r["p50_ms"] > 0 and r["p95_ms"] >= r["p50_ms"], name
        assert "vs_raw" not in r or math.isfinite(r["vs_raw"]), name
