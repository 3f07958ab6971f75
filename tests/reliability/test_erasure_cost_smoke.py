"""The erasure cost benchmark still runs (no wall-clock limit here: the ratio is the benchmark's to print)."""

from __future__ import annotations

import math

import pytest
from conftest import load_benchmark


@pytest.mark.slow
def test_erasure_cost_benchmark_runs() -> None:
    bench = load_benchmark("erasure_cost")
    r = bench.run(records=60, users=6, erasures=2)
    assert r["users"] == 6 and r["records"] == 0, "all six users (four one by one, two at once) were erased"
    assert math.isfinite(r["ratio"]) and r["ours_ms"] > 0 and r["peer_ms"] > 0 and r["file_scrub_ms"] > 0
    assert r["batch_ms_per_user"] > 0
