"""The scale benchmark, run small: everything is stored and recallable, the index cache stays bounded, every
query answers, indexes are updated in place, and every ratio is a finite number. No wall-clock limits here:
the timing targets are judged by the full benchmark (tests/benchmarks/scale.py)."""

from __future__ import annotations

import math
from types import ModuleType
from typing import Any

import pytest
from conftest import load_benchmark

MEMORIES, USERS, QUERIES, MAX_CACHED = 1_000, 20, 30, 5
PEERS = {"peer_users": 3, "peer_writes": 2, "peer_batches": 1, "peer_batch": 10}
SYSTEMS = (
    "memtend",
    "raw Chroma",
    "langchain-chroma",
    "LlamaIndex Chroma",
    "LangGraph InMemoryStore",
    "LangGraph SqliteStore",
    "embedding alone",
)


@pytest.fixture(scope="module")
def bench() -> ModuleType:
    return load_benchmark("scale")


@pytest.fixture(scope="module")
def report(bench: ModuleType) -> dict[str, Any]:
    return bench.run(
        MEMORIES,
        USERS,
        QUERIES,
        seed=0,
        max_cached_users=MAX_CACHED,
        peer_every=4,
        **PEERS,  # type: ignore[arg-type]
    )


def finite_positive(x: Any) -> bool:
    return isinstance(x, float | int) and math.isfinite(x) and x > 0


def test_generated_corpus_is_seeded_varied_and_passes_the_gate(bench: ModuleType) -> None:
    from memtend.policies import gate
    from memtend.records import Source

    corpus = bench.generate(600, 6, 10, seed=5)
    again = bench.generate(600, 6, 10, seed=5)
    texts = [it.text for uid in corpus.users for it in corpus.items[uid]]
    assert texts == [it.text for uid in again.users for it in again.items[uid]]
    counts = [len(corpus.items[uid]) for uid in corpus.users]
    assert sum(counts) == corpus.size == 600 and min(counts) >= 5 and len(set(counts)) > 1
    lengths = [len(t.split()) for t in texts]
    assert min(lengths) >= 5 and max(lengths) <= 60
    assert sum(n <= 12 for n in lengths) > 100 and sum(n >= 30 for n in lengths) > 50  # short and long
    assert len({w.lower() for t in texts for w in t.split()}) > 800
    assert any(it.single for uid in corpus.users for it in corpus.items[uid])
    for text in texts:
        gate.check_write(text, Source.USER)  # no generated text is refused as sensitive
    assert all(len(corpus.queries[uid]) >= 10 for uid in corpus.users)


@pytest.mark.slow
def test_everything_is_stored_and_recallable(report: dict[str, Any]) -> None:
    stored = report["stored"]
    assert report["ingest"]["memories"] == MEMORIES
    assert stored["returned_ids"] == stored["collection_count"] == MEMORIES
    assert stored["missing"] == 0 and stored["users_with_mismatch"] == 0 and stored["ok"]
    recallable = report["recallable"]
    assert recallable["checked"] == QUERIES and recallable["found"] == recallable["checked"]


@pytest.mark.slow
def test_every_query_returns_results(report: dict[str, Any]) -> None:
    recall = report["recall"]
    assert recall["empty_results"] == 0
    assert recall["one_user"]["memtend"]["n"] == recall["one_user"]["chroma"]["n"] == QUERIES
    assert recall["sample_users"] == USERS - 1
    assert recall["sample_cold"]["memtend"]["n"] == recall["sample_warm"]["memtend"]["n"] == USERS - 1


@pytest.mark.slow
def test_index_cache_is_bounded(report: dict[str, Any]) -> None:
    memory = report["memory"]
    assert memory["bounded"] and memory["cached_users"] == MAX_CACHED
    assert all(point["cached_users"] <= MAX_CACHED for point in memory["checkpoints"].values())
    assert finite_positive(memory["index_bytes_per_user"])
    assert finite_positive(memory["peak_rss_mb"])


@pytest.mark.slow
def test_indexes_load_once_and_update_in_place(report: dict[str, Any]) -> None:
    recall = report["recall"]
    # each sampled user's first recall loads its index, the second one does not
    assert recall["sample_not_cold"] == 0 and recall["sample_loads"] == recall["sample_users"]
    cycle = report["incremental"]
    assert cycle["index_loads"] == 0 and cycle["same_index_object"]
    assert cycle["index_grew_by"] == cycle["new_records_found"] == cycle["cycles"]


@pytest.mark.slow
def test_ratios_are_finite_numbers(report: dict[str, Any]) -> None:
    ingest, recall = report["ingest"], report["recall"]
    ratios = [
        ingest["ratio"],
        ingest["peer"]["log_many_ratio"],
        ingest["peer"]["remember_ratio"],
        report["incremental"]["ratio_p50"],
        report["memory"]["unbounded_growth_mb"],
    ]
    for key in ("one_user", "sample_warm", "sample_cold"):
        ratios += [recall[key]["ratio_p50"], recall[key]["ratio_p95"]]
    assert all(finite_positive(x) for x in ratios), ratios
    assert math.isfinite(report["memory"]["growth_share"])
    assert isinstance(ingest["pass"], bool) and isinstance(recall["one_user"]["pass"], bool)


@pytest.mark.slow
def test_the_table_shows_every_target(bench: ModuleType, report: dict[str, Any]) -> None:
    text = bench.table(report)
    assert text.count("PASS") + text.count("FAIL") >= 8
    assert "n/a" not in text


@pytest.mark.slow
def test_every_peer_answers_and_every_figure_is_measured(bench: ModuleType, report: dict[str, Any]) -> None:
    peers = report["peers"]
    assert peers["users"] == PEERS["peer_users"] and peers["writes"] == PEERS["peer_writes"]
    for name in SYSTEMS:
        figures = peers[name]
        assert figures["empty_results"] == 0, name
        for key in ("first_recall", "second_recall", "single_write"):
            assert figures[key]["n"] == (PEERS["peer_users"] if "recall" in key else PEERS["peer_writes"])
            assert finite_positive(figures[key]["p95_ms"]), (name, key)
        assert finite_positive(figures["ingest_per_s"]) and finite_positive(figures["ingest_ratio"]), name
    text = bench.peers_table(report)
    assert all(name in text for name in SYSTEMS) and "n/a" not in text


@pytest.mark.slow
def test_the_machine_load_and_where_peak_memory_rose_are_reported(bench: ModuleType, report: dict[str, Any]) -> None:
    load = report["load"]
    assert load["cores"] >= 1 and 0 <= load["load1_min"] <= load["load1_mean"] <= load["load1_max"]
    assert list(load["by_phase"]) == ["ingest", "recall", "memory", "peers"]
    assert all(math.isfinite(x) for x in load["by_phase"].values())
    peaks = list(report["memory"]["peak_rss_by_phase_mb"].values())
    assert len(peaks) == 3 and all(finite_positive(x) for x in peaks) and peaks == sorted(peaks)
    assert "machine load" in bench.table(report) and "load" in bench.peers_table(report)
