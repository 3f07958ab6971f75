"""Subprocess worker for test_atomic_sigkill.py: multi-write operations, killed with SIGKILL at random points.

    python _atomic_worker.py FOLDER write ROUND     # write until killed, one ACK line per finished operation
    python _atomic_worker.py FOLDER dump            # open (finishing what a kill left), print STATE <json>
    python _atomic_worker.py FOLDER retry BATCH     # dump, write BATCH again under its id, print AFTER <json>

``write`` alternates two operations that take several Chroma calls each: ``log_many`` of 300 events (stored in
pipelined chunks) under a batch id ``r<ROUND>-b<n>``, printing ``ACK batch <id>``; and a compaction of every event
(the memories collection's batch size is lowered to 350 rows so it takes two calls or more), printing ``ACK compact``.
It prints ``BEGIN batch <id>`` before each batch, so the test can retry the one a kill interrupted.
"""

from __future__ import annotations

import json
import sys

from memtend import Memory
from memtend.testing import HashEmbedder

USER = "atomic-user"
BATCH = 300


def _say(line: str) -> None:
    sys.stdout.write(line + "\n")
    sys.stdout.flush()


def batch_events(batch_id: str) -> list[str]:
    return [f"{batch_id} event {i}" for i in range(BATCH)]


def write(mem: Memory, round_no: int) -> None:
    mem.storage.max_batch = 350
    u = mem.user(USER)
    n = 0
    while True:
        batch_id = f"r{round_no}-b{n}"
        _say(f"BEGIN batch {batch_id}")
        u.log_many(batch_events(batch_id), batch_id=batch_id)
        _say(f"ACK batch {batch_id}")
        if n % 2 == 1:
            u.compact(keep_recent=0)
            _say("ACK compact")
        n += 1


def dump(mem: Memory) -> dict[str, object]:
    u = mem.user(USER)
    return {
        "records": [
            {
                "id": r.id,
                "kind": r.kind.value,
                "status": r.status.value,
                "text": r.text if r.kind.value == "event" else "",
                "superseded_by": r.superseded_by,
                "derived_from": r.derived_from,
            }
            for r in u.list(status=None)
        ],
        "history": [[h.op, h.record_id] for h in u.history()],
        "journals": len(mem.storage.journals()),
    }


def main() -> None:
    folder, mode = sys.argv[1], sys.argv[2]
    mem = Memory(path=folder, embedding_function=HashEmbedder())
    if mode == "dump":
        _say("STATE " + json.dumps(dump(mem)))
        mem.close()
        return
    if mode == "retry":  # as found on open, then after writing one batch again with its id (the caller did not
        # know whether it landed)
        _say("STATE " + json.dumps(dump(mem)))
        batch_id = sys.argv[3]
        mem.user(USER).log_many(batch_events(batch_id), batch_id=batch_id)
        _say("AFTER " + json.dumps(dump(mem)))
        mem.close()
        return
    _say("READY")
    write(mem, int(sys.argv[3]))


if __name__ == "__main__":
    main()
