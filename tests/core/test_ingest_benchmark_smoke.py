"""The ingest benchmark still runs: every timed batch is stored, the texts are the ones the embedder alone was
given, and the ratios are finite (no wall-clock limit here: the ratios are the benchmark's to print;
tests/benchmarks/ingest.py)."""

from __future__ import annotations

import math

from conftest import load_benchmark


def test_ingest_benchmark_runs(embedding_function: object) -> None:
    bench = load_benchmark("ingest")
    out = bench.run(
        repeats=2, batches_per_repeat=2, batch=10, users=3, warm_index=True, embedding_function=embedding_function
    )
    assert out["batches"] == 4 and len(out["ratios"]) == 2
    assert out["stored_records"] == 5 * 10  # four timed batches and the warm-up
    assert out["stored_rows"] >= out["stored_records"]
    assert out["texts_changed_by_gate"] == 0  # both sides embedded the same texts
    assert out["inside"]["chroma_writes_per_batch"] >= 1
    for value in (*out["ratios"], out["batch_ratio"]["min"], out["embed_ms_per_batch"], out["inside"]["embed_ms"]):
        assert math.isfinite(value) and value > 0


def test_ingest_batches_are_the_scale_corpus_round_robin() -> None:
    bench = load_benchmark("ingest")
    plan = bench.batches(4, 5, 3)
    assert [uid for uid, _ in plan] == ["user-00000", "user-00001", "user-00002", "user-00000"]
    texts = [e.text for _, events in plan for e in events]
    assert len(texts) == 20 and all(isinstance(t, str) and t for t in texts)
