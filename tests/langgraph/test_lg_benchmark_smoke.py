"""The LangGraph adapters benchmark, run small, so it cannot rot."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest

BENCHMARK = Path(__file__).resolve().parents[1] / "benchmarks" / "langgraph_adapters.py"


@pytest.mark.slow
def test_benchmark_runs_and_reports_every_ratio() -> None:
    spec = importlib.util.spec_from_file_location("memtend_benchmark_langgraph_adapters", BENCHMARK)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    report = module.run(checkpoints_n=12, items_n=20, messages=4)
    for part, ops in (("saver", 5), ("store", 4)):
        for backend in ("memtend", "in_memory", "sqlite"):
            assert all(ms > 0 for ms in report[part][backend].values())
        assert len(report[part]["memtend"]) == ops
    assert report["raw_chroma_write_ms"] > 0
    assert "saver.put / raw chroma write" in report["ratios"]
    assert "store.search_query / in_memory" in report["ratios"]
    module.print_report(report)
