"""Subprocess worker for test_concurrency.py: one of several processes sharing a ``chroma run`` server.

    python _server_worker.py HOST PORT PREFIX INDEX NPROCS

Loads its retrieval indexes first (so seeing the other processes' writes later needs the catch-up through the
history collection), prints ``READY``; on ``WRITE`` (stdin) writes to its own user and to the shared user,
interleaved with recalls, and prints ``WROTE``; on ``CHECK`` prints ``RESULT <json>`` with what it sees.
"""

from __future__ import annotations

import json
import sys

import chromadb
from memtend import Event, Memory

ROUNDS = 4


def own_user(i: int) -> str:
    return f"proc-{i}"


def main() -> None:
    host, port, prefix, index, nprocs = sys.argv[1], int(sys.argv[2]), sys.argv[3], int(sys.argv[4]), int(sys.argv[5])
    mk = f"p{index}mk"
    mem = Memory(client=chromadb.HttpClient(host=host, port=port), collection_prefix=prefix)
    users = [own_user(i) for i in range(nprocs)] + ["shared"]
    for uid in users:  # load every index now, while the others have not written yet
        mem.user(uid).recall("event", k=5)
    print("READY", flush=True)
    assert sys.stdin.readline().strip() == "WRITE"
    own, shared = mem.user(own_user(index)), mem.user("shared")
    own.set_fact("colour", f"{mk} colour")
    own.store("session:t1").put("owner", mk)
    for r in range(ROUNDS):
        own.log(f"{mk} own event {r}")
        shared.log(f"{mk} shared event {r}")
        shared.set_fact("winner", f"{mk} round {r}")  # every process writes the same key
        shared.recall("shared event", k=3)
    shared.log_many(Event(f"{mk} shared batch event {j}") for j in range(3))
    shared.set_fact(f"from.p{index}", f"{mk} was here")
    print("WROTE", flush=True)
    assert sys.stdin.readline().strip() == "CHECK"
    result = {
        "recall": {
            uid: [h.record.user_id + "|" + h.text for h in mem.user(uid).recall("event round colour", k=200)]
            for uid in users
        },
        "shared_events": [r.text for r in shared.list(kinds=["event"], status=None)],
        "shared_facts": shared.facts(),
        "winner_records": [r.status.value for r in shared.list(kinds=["fact"], status=None) if r.key == "winner"],
    }
    print("RESULT " + json.dumps(result), flush=True)
    mem.close()


if __name__ == "__main__":
    main()
