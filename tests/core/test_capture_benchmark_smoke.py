"""The capture benchmark (tests/benchmarks/capture_cycle.py) still runs, small, on real Chroma and the real model:
every figure is counted for all three systems, and what the figures rest on holds (logging every turn stores every
user turn; a good model's candidates, through the real validation, precedence and write-or-merge, store no
chit-chat and leave no corrected value active). No wall-clock limit: the times are the benchmark's to print."""

from __future__ import annotations

import json

import pytest
from conftest import load_benchmark


@pytest.mark.parametrize("backend", ["ephemeral", "persistent"])
def test_capture_benchmark_runs(embedding_function: object, backend: str) -> None:
    bench = load_benchmark("capture_cycle")
    results = bench.run(splits=("tune",), users=1, backend=backend, embedding_function=embedding_function)
    by_system = results["tune"]
    assert set(by_system) == set(bench.SYSTEMS)
    for system, out in by_system.items():
        for figure in bench.FIGURES:
            assert 0 <= out[figure]["n"] <= out[figure]["of"], (system, figure)
        assert out["kept"]["of"] > 0 and out["chitchat_stored"]["of"] > 0 and out["old_active"]["of"] > 0, system
        assert out["hit@3"]["of"] > 0 and out["active"] > 0, system
    every, offline, llm = by_system["every-turn"], by_system["offline"], by_system["scripted-llm"]
    assert every["chitchat_stored"]["share"] == 1.0 and every["kept"]["share"] == 1.0
    assert every["old_active"]["share"] == 1.0  # a logged turn is never superseded
    assert offline["chitchat_stored"]["n"] < every["chitchat_stored"]["n"]
    assert offline["active"] < every["active"]
    assert llm["model_calls"] > 0 and every["model_calls"] == offline["model_calls"] == 0
    assert llm["kept"]["share"] == 1.0 and llm["chitchat_stored"]["n"] == 0 and llm["tool_stored"]["n"] == 0
    assert llm["old_active"]["n"] == 0  # a keyed correction archives the old value


def test_scripted_model_answers_only_the_lines_it_knows() -> None:
    """The scripted model reads the prompt's numbered user lines: a known durable line gets its candidate with that
    turn, anything else (the assistant's words, unknown user lines) nothing."""
    bench = load_benchmark("capture_cycle")
    conv = bench.load("tune", 1)[0]
    model = bench.ScriptedModel([conv])
    statement = next(iter(conv.statements.values()))
    said = conv.sessions[int(statement.session[1:]) - 1][statement.turn].content
    prompt = f"rules\nConversation:\n[4] user: hello there\n[5] assistant: {said}\n[6] user: {said}"
    memories = json.loads(model(prompt))["memories"]
    assert [m["turn"] for m in memories] == [6] and memories[0]["kind"] == statement.llm["kind"]
    assert json.loads(model("rules\nConversation:\n[0] user: ok"))["memories"] == []
