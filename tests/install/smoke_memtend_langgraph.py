"""Smoke run of an installed ``memtend-langgraph``: a store item and a checkpoint per user, then erasure.

Run by ``tests/install/test_pip_install.py`` with the interpreter of a fresh virtual environment holding the
built wheels, outside the repository. Exits non-zero (an AssertionError) when anything is off.
"""

from __future__ import annotations

import tempfile
from pathlib import Path

from langgraph.checkpoint.base import empty_checkpoint
from memtend import Memory
from memtend_langgraph import MemtendSaver, MemtendStore


def main() -> None:
    with tempfile.TemporaryDirectory() as folder, Memory(path=Path(folder) / "store") as mem:
        store = MemtendStore(mem, user_label=0, index={"dims": 384, "fields": ["text"]})
        store.put(("alice", "memories"), "drink", {"text": "Prefers green tea over coffee"})
        store.put(("alice", "memories"), "trip", {"text": "Is flying to Lisbon in May"})
        store.put(("bob", "memories"), "pet", {"text": "Bob's dog is called Biscuit"})
        hits = store.search(("alice", "memories"), filter={"text": "Prefers green tea over coffee"})
        assert [h.key for h in hits] == ["drink"], hits
        assert [i.key for i in store.search(("alice",))] == ["drink", "trip"]

        saver = MemtendSaver(mem)
        config = {"configurable": {"thread_id": "t1", "checkpoint_ns": "", "user_id": "alice"}}
        saved = saver.put(config, empty_checkpoint(), {"source": "input", "step": -1, "parents": {}}, {})
        assert saver.get_tuple(saved) is not None

        mem.erase_user("alice")
        assert store.search(("alice", "memories")) == []
        assert saver.get_tuple(saved) is None
        assert store.get(("bob", "memories"), "pet") is not None
    print("smoke memtend-langgraph: ok")


if __name__ == "__main__":
    main()
