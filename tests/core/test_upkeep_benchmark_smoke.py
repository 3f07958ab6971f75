"""The upkeep-pass benchmark still runs (no wall-clock limit here: the figures are the benchmark's to print)."""

from __future__ import annotations

import math

from conftest import load_benchmark


def test_upkeep_pass_benchmark_runs() -> None:
    bench = load_benchmark("upkeep_pass")
    r = bench.run(users=4, records=6, per_pass=2)
    assert r["passes"] >= 2, "two users a pass: a round over four users takes more than one"
    assert r["active"] == r["peer_active"], "a round of passes leaves what the per-user loop leaves"
    assert math.isfinite(r["ratio"]) and r["ours_ms"] > 0 and r["peer_ms"] > 0 and r["idle_pass_ms"] > 0
