"""The framework speed benchmark, run tiny, so it cannot rot: every row is printed with a positive figure."""

from __future__ import annotations

import pytest
from conftest import load_benchmark

CASES = [
    *(f"graph.{op}[{mode}]" for mode in ("sync", "async", "exit") for op in ("invoke", "stream", "invoke_again")),
    "graph.get_state_history",
    "saver.list_thread",
]
GRAPH_BACKENDS = {"memtend", "sqlite", "delegated", "in_memory"}


@pytest.mark.slow
def test_framework_speed_benchmark_times_and_prints_every_case(capsys: pytest.CaptureFixture[str]) -> None:
    module = load_benchmark("framework_speed")
    report = module.run(reps=2, nodes=3, history=6)
    expected = {
        **{case: GRAPH_BACKENDS for case in CASES},
        "agent.turn": {"memtend", "plain"},
        "history.turn": {"memtend", "sqlite"},
        "history.read_6": {"memtend", "sqlite"},
        "llamaindex.turn": {"memtend", "write_once", "default"},
    }
    assert {name: set(backends) for name, backends in report["rows"].items()} == expected
    for backends in report["rows"].values():
        for figures in backends.values():
            assert 0 < figures["min_ms"] <= figures["median_ms"]
    # memtend (and write_once) over each peer but the delegated saver; the delegated saver over sqlite alone
    assert len(report["ratios"]) == sum(len(b - {"delegated"}) - 1 for b in expected.values()) + len(CASES)
    assert all(f"{case} delegated/sqlite" in report["ratios"] for case in CASES)
    assert all(ratio > 0 for ratio in report["ratios"].values())
    assert len(report["load_average_start"]) == 3
    module.print_report(report)
    printed = capsys.readouterr().out
    assert "load average" in printed
    for name, backends in expected.items():
        for backend in backends:
            assert any(line.split()[:2] == [name, backend] for line in printed.splitlines()), (name, backend)


@pytest.mark.slow
def test_framework_speed_benchmark_runs_only_the_groups_asked() -> None:
    module = load_benchmark("framework_speed")
    report = module.run(reps=1, history=4, only=("history",))
    assert set(report["rows"]) == {"history.turn", "history.read_4"}
    assert set(report["ratios"]) == {"history.turn memtend/sqlite", "history.read_4 memtend/sqlite"}
