"""Smoke run of an installed ``memtend``: remember, recall and erase through the public API.

Run by ``tests/install/test_pip_install.py`` with the interpreter of a fresh virtual environment that has the
built wheels installed, outside the repository, with the offline model made available as on an air-gapped
machine. Exits non-zero (an AssertionError) when anything is off.
"""

from __future__ import annotations

import tempfile
from pathlib import Path

from memtend import Memory


def main() -> None:
    with tempfile.TemporaryDirectory() as folder, Memory(path=Path(folder) / "store") as mem:
        alice = mem.user("alice")
        alice.remember("Prefers green tea over coffee in the morning")
        alice.remember("Is flying to Lisbon in May")
        mem.user("bob").remember("Bob's dog is called Biscuit")

        hits = alice.recall("What does she like to drink?", k=2)
        assert hits and "green tea" in hits[0].text, [h.text for h in hits]
        assert all("Biscuit" not in h.text for h in hits), "recall crossed users"

        receipt = mem.erase_user("alice")
        assert receipt.total >= 2, receipt
        assert mem.user("alice").recall("green tea", k=2) == []
        assert [h.text for h in mem.user("bob").recall("pet", k=1)] == ["Bob's dog is called Biscuit"]
    print("smoke memtend: ok")


if __name__ == "__main__":
    main()
