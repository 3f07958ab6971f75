"""What erasing a user down to the bytes costs, beside deleting the same rows through Chroma alone.

A store on disk holds ``--records`` records spread over ``--users`` users (events, facts with an archived value,
session state, documents, and the history of all of it). Users are erased alternately two ways, measured in the
same run:

- memtend: ``Memory.erase_user`` (rows deleted, vectors overwritten first, Chroma made to save its vector indexes
  and purge its log, the FTS index merged, ``VACUUM``, hnswlib files cleared);
- peer: the user's rows deleted from every collection through Chroma, which is what ``erase_user`` did before
  (it leaves the bytes in the files).

Then ``--erasures`` more users are erased in one ``Memory.erase_users`` call (the files rewritten once).

Printed: the median milliseconds of each, their ratio, the share of memtend's time spent on the file scrub, and
the database size.

    uv run python tests/benchmarks/erasure_cost.py --records 10000 --users 100 --erasures 5
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

from memtend import Memory
from memtend.storage.filters import where
from memtend.storage.purge import scrub_files, sqlite_file
from memtend.testing import HashEmbedder


def _fill(memory: Memory, records: int, users: int) -> list[str]:
    ids = [f"user-{n:04d}" for n in range(users)]
    per_user = max(4, records // users)
    for uid in ids:
        u = memory.user(uid)
        u.log_many([f"{uid} event {i}: moved the billing job to queue {i % 7}" for i in range(per_user - 3)])
        u.set_fact("city", f"{uid} lives in Lisbon")
        u.set_fact("city", f"{uid} lives in Porto")  # archives the first value
        u.remember(f"{uid} prefers short answers")
        u.session("s1").set("branch", f"{uid}-main")
        u.documents().put(("notes",), "n1", {"body": f"{uid} keeps a note"})
    memory.flush_usage()
    return ids


def _delete_rows(memory: Memory, user_id: str) -> None:
    """The peer: every row of the user deleted through Chroma, nothing else."""
    for col in memory.storage.collections().values():
        ids = col.get(where=where(user_id), include=[])["ids"]
        for start in range(0, len(ids), 2_000):
            col.delete(ids=ids[start : start + 2_000], where=where(user_id))


def run(records: int = 10_000, users: int = 100, erasures: int = 5) -> dict[str, Any]:
    with tempfile.TemporaryDirectory(prefix="memtend-erasure-bench-") as tmp:
        folder = Path(tmp) / "store"
        with Memory(path=folder, embedding_function=HashEmbedder()) as memory:
            started = time.perf_counter()
            victims = _fill(memory, records, users)
            fill_s = time.perf_counter() - started
            size = sqlite_file(folder).stat().st_size
            ours, peer, scrub = [], [], []
            for n in range(erasures):
                first, second = victims[2 * n], victims[2 * n + 1]
                turns = [("ours", first), ("peer", second)] if n % 2 == 0 else [("peer", first), ("ours", second)]
                for side, uid in turns:
                    t = time.perf_counter()
                    if side == "ours":
                        memory.erase_user(uid)
                        ours.append(time.perf_counter() - t)
                    else:
                        _delete_rows(memory, uid)
                        peer.append(time.perf_counter() - t)
            batch = victims[2 * erasures : 3 * erasures]  # erase_users: the files rewritten once for all
            t = time.perf_counter()
            memory.erase_users(batch)
            batch_ms = (time.perf_counter() - t) * 1000 / max(1, len(batch))
            for _ in range(max(1, erasures // 2)):  # the file part alone, on the store as it is now
                t = time.perf_counter()
                with memory.storage.documents.lock:
                    scrub_files(folder)
                scrub.append(time.perf_counter() - t)
            rows = sum(len(memory.user(u).list(status=None)) for u in memory.users())
    ours_ms, peer_ms = statistics.median(ours) * 1000, statistics.median(peer) * 1000
    scrub_ms = statistics.median(scrub) * 1000
    return {
        "records": rows,
        "users": users,
        "fill_s": fill_s,
        "sqlite_mb": size / 1e6,
        "ours_ms": ours_ms,
        "peer_ms": peer_ms,
        "ratio": ours_ms / peer_ms,
        "file_scrub_ms": scrub_ms,
        "batch_ms_per_user": batch_ms,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--records", type=int, default=10_000)
    parser.add_argument("--users", type=int, default=100)
    parser.add_argument("--erasures", type=int, default=5)
    args = parser.parse_args()
    r = run(args.records, args.users, args.erasures)
    print(
        f"{r['users']} users, chroma.sqlite3 {r['sqlite_mb']:.1f} MB before the erasures (filled in "
        f"{r['fill_s']:.0f} s), {r['records']} memory records left after them"
    )
    print(f"erase_user (to the bytes)      {r['ours_ms']:8.1f} ms")
    print(f"peer: rows deleted via Chroma  {r['peer_ms']:8.1f} ms")
    print(f"ratio                          {r['ratio']:8.2f}x")
    print(f"of which the file scrub        {r['file_scrub_ms']:8.1f} ms (FTS optimize, VACUUM, index files)")
    print(f"erase_users, per user          {r['batch_ms_per_user']:8.1f} ms (files rewritten once for the batch)")


if __name__ == "__main__":
    main()
