"""The store and large-value speed benchmark, run tiny, so it cannot rot: every row is printed with a figure."""

from __future__ import annotations

import pytest
from conftest import load_benchmark


@pytest.mark.slow
def test_store_speed_benchmark_times_and_prints_every_case(capsys: pytest.CaptureFixture[str]) -> None:
    module = load_benchmark("store_speed")
    report = module.run(reps=2, items=5, large_reps=1, large_mb=0.5)
    expected = {
        "store.put": {"memtend", "in_memory", "sqlite", "raw_chroma"},
        "store.get": {"memtend", "in_memory", "sqlite", "raw_chroma"},
        "large.checkpoint_put": {"memtend", "sqlite"},
        "large.store_put": {"memtend", "sqlite"},
    }
    assert {name: set(backends) for name, backends in report["rows"].items()} == expected
    for backends in report["rows"].values():
        for figures in backends.values():
            assert 0 < figures["min_ms"] <= figures["median_ms"]
    assert len(report["ratios"]) == sum(len(b) - 1 for b in expected.values())
    module.print_report(report)
    printed = capsys.readouterr().out
    assert "load average" in printed
    for name, backends in expected.items():
        for backend in backends:
            assert any(line.split()[:2] == [name, backend] for line in printed.splitlines()), (name, backend)
