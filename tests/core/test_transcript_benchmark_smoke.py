"""The transcript-compaction benchmark, run small: its targets hold."""

from __future__ import annotations

import pytest
from conftest import load_benchmark


@pytest.fixture(scope="module")
def report() -> dict:
    return load_benchmark("transcript_compaction").run(n_transcripts=6, seed=3)


@pytest.mark.parametrize("row", ["extractive/oneshot", "extractive/rolling"])
def test_extractive_targets(report: dict, row: str) -> None:
    numbers = report[row]
    assert numbers["token_reduction_pct"] >= 70
    assert numbers["constraints_kept_pct"] == 100
    assert numbers["constraints_reported_pct"] == 100
    assert numbers["side_effect_ids_kept_pct"] == 100
    assert numbers["compactions"] >= 6


@pytest.mark.parametrize("mode", ["oneshot", "rolling"])
def test_scripted_model_keeps_everything_with_backfill(report: dict, mode: str) -> None:
    numbers = report[f"scripted-llm/{mode}"]
    assert numbers["token_reduction_pct"] >= 70
    assert numbers["constraints_kept_pct"] == numbers["side_effect_ids_kept_pct"] == 100
    assert numbers["origins"].get("llm", 0) > 0
    without = report[f"scripted-llm-no-backfill/{mode}"]
    assert without["side_effect_ids_kept_pct"] < 100  # the stand-in model does drop ids


def test_scripted_model_exercises_retry(report: dict) -> None:
    origins = report["scripted-llm/oneshot"]["origins"]
    assert origins.get("llm-retry", 0) >= 1
    assert report["scripted-llm/oneshot"]["model_calls"] > sum(origins.values())
