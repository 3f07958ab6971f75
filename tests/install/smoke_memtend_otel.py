"""Smoke run of an installed ``memtend-otel``: memtend finds the observer by its entry point (no import of it by the
core), memory calls reach it with their outcome and timing, and with only the OpenTelemetry API installed (no SDK)
every call still works.

Run by ``tests/install/test_pip_install.py`` like the other smoke scripts (a fresh virtual environment with the
built wheels, outside the repository, offline). Exits non-zero (an AssertionError) when anything is off.
"""

from __future__ import annotations

import tempfile
from pathlib import Path
from typing import Any

from memtend import Memory
from memtend.metrics import observers, set_observers
from memtend_otel import OTelObserver


class Counting(OTelObserver):
    def __init__(self) -> None:
        super().__init__()
        self.seen: list[tuple[str, str]] = []

    def operation(self, user_id: str, entry: Any, started_ns: int, ended_ns: int) -> None:
        assert ended_ns >= started_ns
        self.seen.append((entry.op, entry.outcome))
        super().operation(user_id, entry, started_ns, ended_ns)


def main() -> None:
    assert any(isinstance(o, OTelObserver) for o in observers()), "the entry point was not found"
    counting = Counting()
    set_observers([counting])
    with tempfile.TemporaryDirectory() as folder, Memory(path=Path(folder) / "store") as mem:
        alice = mem.user("alice")
        alice.remember("Prefers short answers")
        state = alice.session("t1")
        state.set("branch", "main")
        state.get("branch")
        state.get("brnch")
        assert alice.metrics()["memory_hit_rate"] == 0.5
    assert ("remember", "active") in counting.seen and ("get", "miss") in counting.seen, counting.seen
    assert not any("Prefers" in o or "main" in o for _, o in counting.seen)
    print("memtend-otel smoke: ok")


if __name__ == "__main__":
    main()
