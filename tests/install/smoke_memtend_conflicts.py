"""Smoke run of an installed ``memtend-conflicts``: ``Memory()`` finds the judge by its entry point, and a change
said in other words outranks the note it replaces, while ``conflict_judge=None`` leaves the ranking alone.

Run by ``tests/install/test_pip_install.py`` like the other smoke scripts (a fresh virtual environment with the
built wheels, outside the repository, offline). Exits non-zero (an AssertionError) when anything is off.
"""

from __future__ import annotations

import tempfile
from pathlib import Path

from memtend import Memory
from memtend_conflicts import ParaphraseJudge

DAY = 86_400.0
NOW = 1_767_225_600.0  # 2026-01-01
FILLERS = [
    "Bought a bread machine last year.",
    "Prefers window seats on flights.",
    "Plays five-a-side football on Thursdays.",
    "Allergic to cats, fine with dogs.",
    "The boiler was serviced in October.",
]
OLD, NEW, QUERY = (
    "I drink three coffees a day.",
    "Quit caffeine entirely, herbal tea only.",
    "How much coffee do I drink?",
)


def ranked(folder: Path, judge: object) -> list[str]:
    with Memory(path=folder, conflict_judge=judge) as mem:
        if judge is not None:
            assert isinstance(mem.conflict_judge, ParaphraseJudge), mem.conflict_judge
        user = mem.user("coffee")
        for i, text in enumerate(FILLERS):
            user.remember(text, at=NOW - (60 + i) * DAY)
        user.remember(OLD, at=NOW - 40 * DAY)
        user.remember(NEW, at=NOW - 5 * DAY)
        return [hit.record.text for hit in user.recall(QUERY, k=6, now=NOW)]


def main() -> None:
    from memtend.extras import AUTO

    with tempfile.TemporaryDirectory() as folder:
        judged = ranked(Path(folder) / "judged", AUTO)
        alone = ranked(Path(folder) / "alone", None)
    assert judged.index(NEW) < judged.index(OLD), judged
    assert alone.index(OLD) < alone.index(NEW), alone  # the newest-wins rules alone do not see this change
    print("smoke memtend-conflicts: ok")


if __name__ == "__main__":
    main()
