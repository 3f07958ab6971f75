"""memtend.testing's isolation machine, driven over a tiny in-memory surface: it passes a surface that keeps
users apart and catches one that leaks (so the machine adapters reuse can fail)."""

from __future__ import annotations

import subprocess
import sys
from typing import Any

import pytest
from hypothesis import HealthCheck, Phase, settings
from hypothesis.stateful import run_state_machine_as_test
from memtend.records import Source, check_user_id
from memtend.testing import Driver, Seen, make_isolation_machine

FAST = settings(
    max_examples=8,
    stateful_step_count=8,
    deadline=None,
    database=None,
    derandomize=True,
    report_multiple_bugs=False,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much],
)


class DictDriver(Driver):
    """Everything in a dict per user: the smallest surface that keeps users apart."""

    name = "dict"

    def __init__(self) -> None:
        self.texts: dict[str, list[str]] = {}

    def write(self, user_id: str, text: str, *, kind: str, source: Source = Source.USER) -> None:
        self.texts.setdefault(user_id, []).append(text)

    def recall(self, user_id: str, query: str) -> list[Seen]:
        words = set(query.lower().split())
        return [Seen(user_id, t) for t in self.texts.get(user_id, []) if words & set(t.lower().split())]

    def list(self, user_id: str) -> list[Seen]:
        return [Seen(user_id, t) for t in self.texts.get(user_id, [])]

    def export(self, user_id: str) -> Any:
        return {"user_id": user_id, "texts": list(self.texts.get(user_id, []))}

    def erase(self, user_id: str) -> None:
        self.texts.pop(user_id, None)

    def validate_user(self, user_id: object) -> None:
        check_user_id(user_id)


class LeakyDriver(DictDriver):
    """Recall returns every user's texts: the bug the machine exists to find."""

    def recall(self, user_id: str, query: str) -> list[Seen]:
        return [Seen(None, t) for texts in self.texts.values() for t in texts]


def test_a_surface_that_keeps_users_apart_passes() -> None:
    run_state_machine_as_test(make_isolation_machine(DictDriver), settings=FAST)


def test_a_leaking_surface_is_caught() -> None:
    with pytest.raises(AssertionError, match=r"recall for .* (shows|returned a text)"):
        no_shrinking = settings(FAST, phases=[Phase.generate])  # the first failure is enough
        run_state_machine_as_test(make_isolation_machine(LeakyDriver), settings=no_shrinking)


def test_importing_memtend_testing_needs_neither_hypothesis_nor_chromadb() -> None:
    code = "import memtend.testing, sys; print('hypothesis' in sys.modules, 'chromadb' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=120)
    assert out.stdout.split() == ["False", "False"]
