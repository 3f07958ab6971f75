"""The document-store benchmark still runs: every read returns the rows the raw Chroma call returns, and the
timings are finite (no wall-clock limit here: the ratios are the benchmark's to print)."""

from __future__ import annotations

import math

from conftest import load_benchmark


def test_documents_benchmark_runs(embedding_function: object) -> None:
    bench = load_benchmark("documents")
    results = bench.run(total=150, namespace_size=50, repeats=1, embedding_function=embedding_function)
    assert set(results) == {"search page", "filtered search", "list namespaces", "get"}
    for r in results.values():
        assert math.isfinite(r["ratio"]) and r["ours_ms"] > 0 and r["raw_ms"] > 0
