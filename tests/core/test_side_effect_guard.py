"""The core's side-effect policy (``SideEffectGuard``) over a real ledger: same call, answer, refuse, allow,
failures released, marks, and claims that make two identical calls at once run once."""

from __future__ import annotations

import threading
from typing import Any

import pytest
from memtend import InvalidInputError, Memory, SideEffectGuard, side_effecting
from memtend.working.side_effects import Verdict, is_marked


def make_call(runs: list[str]) -> Any:
    def call() -> str:
        runs.append("ran")
        return '{"order_id": "ord-42", "status": "created"}'

    return call


def answer(verdict: Verdict) -> str:
    return verdict.text


def test_the_same_call_in_any_key_order_is_answered_with_the_first_ids(memory: Memory) -> None:
    ledger = memory.user("alice").ledger("s1")
    guard = SideEffectGuard(["place_order"])
    runs: list[str] = []
    first = guard.run(ledger, "place_order", {"sku": "A1", "qty": 2}, make_call(runs), answer=answer)
    second = guard.run(ledger, "place_order", {"qty": 2.0, "sku": "A1"}, make_call(runs), answer=answer)
    other = guard.run(ledger, "place_order", {"sku": "A1", "qty": 3}, make_call(runs), answer=answer)
    assert runs == ["ran", "ran"]  # the first and the one with other arguments
    assert "ord-42" in first and "ord-42" in second and second.startswith("Not run again")
    assert "created" in second  # the earlier result is part of the answer
    assert other == first
    assert ledger.stats()["repeats"] == 0


def test_refuse_and_allow(memory: Memory) -> None:
    user = memory.user("alice")
    runs: list[str] = []
    refuse = SideEffectGuard(["place_order"], on_repeat="refuse")
    refuse.run(user.ledger("r"), "place_order", {"sku": "A1"}, make_call(runs), answer=answer)
    verdict = refuse.before(user.ledger("r"), "place_order", {"sku": "A1"})
    assert not verdict.run and verdict.refused and "ord-42" in verdict.text and verdict.text.startswith("Refused")

    allow = SideEffectGuard(["place_order"], on_repeat="allow")
    for _ in range(2):
        allow.run(user.ledger("a"), "place_order", {"sku": "A1"}, make_call(runs), answer=answer)
    assert len(runs) == 3
    assert user.ledger("a").stats()["repeats"] == 1


def test_a_failed_call_is_released_and_a_crashed_one_stays_pending(memory: Memory) -> None:
    ledger = memory.user("alice").ledger("f")
    guard = SideEffectGuard(["deploy"])

    def broken() -> str:
        raise RuntimeError("boom")

    with pytest.raises(RuntimeError):
        guard.run(ledger, "deploy", {"v": 1}, broken, answer=answer)
    assert ledger.entries() == []
    assert guard.run(ledger, "deploy", {"v": 1}, lambda: "error", answer=answer, is_error=lambda r: True) == "error"
    assert ledger.entries() == []

    assert guard.before(ledger, "deploy", {"v": 2}).run  # reserved, then the process "dies"
    repeat = guard.before(ledger, "deploy", {"v": 2})
    assert not repeat.run and "not recorded" in repeat.text


def test_identical_calls_at_once_run_once(memory: Memory) -> None:
    ledger = memory.user("alice").ledger("p")
    guard = SideEffectGuard(["deploy"])
    runs: list[str] = []
    gate = threading.Barrier(4)

    def worker() -> None:
        gate.wait()
        guard.run(ledger, "deploy", {"v": 1}, make_call(runs), answer=answer)

    threads = [threading.Thread(target=worker) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert runs == ["ran"]


async def test_async_twins(memory: Memory) -> None:
    ledger = memory.user("alice").ledger("async")
    guard = SideEffectGuard(["deploy"])
    runs: list[str] = []

    async def call() -> str:
        runs.append("ran")
        return '{"id": "d-1"}'

    await guard.arun(ledger, "deploy", {"v": 1}, call, answer=answer)
    again = await guard.arun(ledger, "deploy", {"v": 1}, call, answer=answer)
    assert runs == ["ran"] and "d-1" in again


def test_marks_and_bad_options() -> None:
    @side_effecting
    def deploy() -> None: ...

    assert is_marked(deploy) and not is_marked(lambda: None, None)
    assert SideEffectGuard().guards("deploy", deploy) and not SideEffectGuard().guards("deploy")
    with pytest.raises(InvalidInputError, match="on_repeat"):
        SideEffectGuard(on_repeat="twice")  # type: ignore[arg-type]
    with pytest.raises(InvalidInputError, match="list of tool names"):
        SideEffectGuard("deploy")
    with pytest.raises(InvalidInputError, match="tool names"):
        SideEffectGuard(["deploy", ""])
    with pytest.raises(InvalidInputError, match="side-effecting"):
        side_effecting(42)
