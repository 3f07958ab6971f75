"""The LangChain history benchmark, run small, so it cannot rot."""

from __future__ import annotations

from conftest import load_benchmark


def test_history_benchmark_runs_and_compares_with_its_peers() -> None:
    report = load_benchmark("langchain_history").run(n=24, reads=2)
    assert report["messages"] == 24
    for name in ("memtend", "in-memory", "sqlite"):
        assert report[name]["add_messages_ms"] > 0
        assert report[name]["messages_read_ms"] > 0
    assert report["ratio_vs_in-memory"]["messages_read_ms"] > 0
    assert report["ratio_vs_sqlite"]["add_messages_ms"] > 0
