"""The LoCoMo retrieval benchmark, run on one conversation: memtend's public API beats its baselines, the same turns
stored as notes rank as the events do, and the tuning and held-out parts split the conversations."""

from __future__ import annotations

import json
from types import ModuleType
from typing import Any

import pytest
from conftest import load_benchmark, shared_path

DATA_PARTS = ("data", "locomo", "locomo_dev.json")  # in ../shared: skipped locally when absent, failed in CI

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def bench() -> ModuleType:
    return load_benchmark("locomo")


@pytest.fixture(scope="module")
def result(bench: ModuleType) -> dict[str, Any]:
    systems = ("memtend", "memtend-times", "memtend-notes-times", "bm25", "minilm")
    return bench.run(shared_path(*DATA_PARTS), ["conv-30"], systems=systems)


def all_five(result: dict[str, Any], system: str) -> dict[str, float]:
    return result["systems"][system]["parts"]["all"]["all five"]


def test_memtend_beats_bm25_and_minilm_on_one_conversation(result: dict[str, Any]) -> None:
    memtend, bm25, minilm = (all_five(result, s) for s in ("memtend", "bm25", "minilm"))
    assert memtend["questions"] == bm25["questions"] == minilm["questions"] > 90
    assert memtend["frac@10"] > bm25["frac@10"] - 2.0
    assert memtend["frac@10"] > minilm["frac@10"]
    assert memtend["frac@10"] >= 70.0  # measured 85 on conv-30; a broken ranking lands near BM25 (~60)


def test_times_only_logging_recalls_as_well_as_sessions(result: dict[str, Any]) -> None:
    with_sessions, times_only = all_five(result, "memtend"), all_five(result, "memtend-times")
    assert times_only["questions"] == with_sessions["questions"]
    for k in ("frac@5", "frac@10"):
        assert times_only[k] >= with_sessions[k] - 1.0  # without time windows: about 10 points lower


def test_notes_without_sessions_recall_as_well_as_events(result: dict[str, Any]) -> None:
    events, notes = all_five(result, "memtend"), all_five(result, "memtend-notes-times")
    assert notes["questions"] == events["questions"]
    for k in ("frac@5", "frac@10"):
        assert notes[k] >= events[k] - 1.0  # stood 14 points lower when notes had no timeline and were judged


def test_the_split_is_by_conversation_and_covers_the_data(bench: ModuleType) -> None:
    tune, report = set(bench.SPLITS["tune"]), set(bench.SPLITS["report"])
    assert tune and report and not tune & report
    with open(shared_path(*DATA_PARTS), encoding="utf-8") as f:
        assert {sample["sample_id"] for sample in json.load(f)} == tune | report
    result = bench.run(shared_path(*DATA_PARTS), ["conv-26", "conv-41"], systems=("bm25",))
    assert result["parts"] == {"tune": ["conv-26"], "report": ["conv-41"], "all": ["conv-26", "conv-41"]}
    parts = result["systems"]["bm25"]["parts"]
    assert (
        parts["tune"]["all five"]["questions"] + parts["report"]["all five"]["questions"]
        == (parts["all"]["all five"]["questions"])
    )


def test_numbers_are_consistent(result: dict[str, Any]) -> None:
    assert result["conversations"] == ["conv-30"]
    assert result["parts"] == {"tune": ["conv-30"], "all": ["conv-30"]}
    for system in result["systems"].values():
        for group in system["parts"]["all"].values():
            assert 0.0 <= group["R_all@5"] <= group["frac@5"] <= group["frac@10"] <= 100.0
            assert group["R_all@5"] <= group["R_all@10"] <= group["frac@10"]
        assert system["latency"]["median_ms"] > 0.0
        assert system["latency"]["p95_ms"] >= system["latency"]["median_ms"]
        assert system["ingest_seconds"] > 0.0


def test_evidence_normalisation(bench: ModuleType) -> None:
    assert bench.normalise_evidence(["D8:6; D9:17", "D:11:26", "D30:05", "D"]) == ["D8:6", "D9:17", "D11:26", "D30:5"]


def test_session_dates_parse_as_utc(bench: ModuleType) -> None:
    assert bench.parse_session_date("1:56 pm on 8 May, 2023") == 1683554160.0  # 2023-05-08 13:56 UTC
    assert bench.parse_session_date("12:19 am on 4 January, 2024") == 1704327540.0


def test_memories_and_questions_of_one_conversation(bench: ModuleType) -> None:
    (conv,) = bench.load(shared_path(*DATA_PARTS), ["conv-26"])
    assert conv.turns[0].text.startswith("Caroline: ")
    assert any("[shares " in t.text for t in conv.turns)
    assert conv.now == max(t.at for t in conv.turns)
    known = {t.dia_id for t in conv.turns}
    assert all(q.evidence and q.evidence <= known for q in conv.questions)
    assert {q.category for q in conv.questions} == {1, 2, 3, 4, 5}
