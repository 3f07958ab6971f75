"""What one upkeep pass costs, beside the per-user calls an application had to schedule before upkeep ran by itself.

A store on disk holds ``--users`` users with ``--records`` records each (events, scoped notes, session state). The
same work is done two ways on two copies of the store, measured in the same run, with the clock moved past every
window so that each user has something to archive, fold, compact and purge:

- memtend: ``Memory.upkeep()`` passes of ``--per-pass`` users until a round over the store ends (each pass finds its
  users from the cursor, takes the lease, and sweeps expired documents first);
- peer: for each user of ``Memory.users()``, ``forget``, ``compact`` and ``purge`` called in a loop, which is what an
  application ran by hand before.

Then one more round on the memtend copy, with nothing left to do (the steady cost of a pass). Printed: the
milliseconds of each, per user, and the ratio.

    uv run python tests/benchmarks/upkeep_pass.py --users 200 --records 60 --per-pass 50
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path
from typing import Any

from memtend import Event, Memory, RetentionPolicy, Upkeep
from memtend.records import DAY
from memtend.testing import HashEmbedder

RETENTION = RetentionPolicy(archive_grace_days=1.0, session_days=1.0)


def _fill(memory: Memory, users: int, records: int, t0: float) -> None:
    for n in range(users):
        uid = f"user-{n:04d}"
        u = memory.user(uid)
        events = [Event(text=f"{uid} step {i}: moved the billing job to queue {i % 7}", at=t0) for i in range(records)]
        u.log_many(events)
        u.remember(f"{uid}: the task is the billing migration. It blocks the March release.", scope="task", at=t0)
        u.remember(f"{uid}: scratch for this session only", scope="session", at=t0)
        u.session("s1").set("branch", f"{uid}-main")
    memory.flush_usage()


def _open(folder: Path, per_pass: int, compact_over: int) -> Memory:
    settings = Upkeep(
        every_seconds=None,
        on_close=False,
        users_per_pass=per_pass,
        compact_over=compact_over,
        keep_recent=compact_over // 2,
    )
    return Memory(path=folder, embedding_function=HashEmbedder(), retention=RETENTION, upkeep=settings)


def _round(memory: Memory, at: float) -> tuple[float, int]:
    """Passes until a round over the store ends: seconds, passes."""
    start = time.perf_counter()
    passes = 0
    while True:
        passes += 1
        if memory.upkeep(now=at).round_done:
            return time.perf_counter() - start, passes


def _peer(memory: Memory, at: float, compact_over: int) -> float:
    start = time.perf_counter()
    for uid in memory.users():
        user = memory.user(uid)
        user.forget(now=at)
        user.compact(keep_recent=compact_over // 2)
        user.purge(now=at)
    return time.perf_counter() - start


def run(users: int = 200, records: int = 60, per_pass: int = 50) -> dict[str, Any]:
    compact_over = max(2, records // 2)
    t0 = time.time()
    later = t0 + 10 * DAY  # every window over: notes fold or go, session state expires, the log compacts
    with tempfile.TemporaryDirectory(prefix="memtend-upkeep-bench-") as tmp:
        figures: dict[str, Any] = {"users": users, "records": records, "per_pass": per_pass}
        ours_folder, peer_folder = Path(tmp) / "ours", Path(tmp) / "peer"
        for folder in (ours_folder, peer_folder):
            with _open(folder, per_pass, compact_over) as memory:
                _fill(memory, users, records, t0)
        with _open(ours_folder, per_pass, compact_over) as memory:
            seconds, passes = _round(memory, later)
            figures["ours_ms"] = seconds * 1000
            figures["passes"] = passes
            idle, idle_passes = _round(memory, later)
            figures["idle_round_ms"] = idle * 1000
            figures["idle_pass_ms"] = idle * 1000 / idle_passes
            figures["active"] = sum(len(memory.user(u).list()) for u in memory.users())
        with _open(peer_folder, per_pass, compact_over) as memory:
            figures["peer_ms"] = _peer(memory, later, compact_over) * 1000
            figures["peer_active"] = sum(len(memory.user(u).list()) for u in memory.users())
    figures["ours_ms_per_user"] = figures["ours_ms"] / users
    figures["peer_ms_per_user"] = figures["peer_ms"] / users
    figures["ratio"] = figures["ours_ms"] / figures["peer_ms"]
    return figures


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--users", type=int, default=200)
    parser.add_argument("--records", type=int, default=60)
    parser.add_argument("--per-pass", type=int, default=50)
    args = parser.parse_args()
    r = run(args.users, args.records, args.per_pass)
    print(f"{r['users']} users x {r['records']} events, {r['per_pass']} users a pass ({r['passes']} passes a round)")
    print(
        f"memtend round : {r['ours_ms']:9.0f} ms  ({r['ours_ms_per_user']:.1f} ms a user), {r['active']} active after"
    )
    print(f"peer loop     : {r['peer_ms']:9.0f} ms  ({r['peer_ms_per_user']:.1f} ms a user), {r['peer_active']} active")
    print(f"ratio         : {r['ratio']:.2f}x")
    print(f"idle pass     : {r['idle_pass_ms']:9.0f} ms  (a round with nothing to do: {r['idle_round_ms']:.0f} ms)")


if __name__ == "__main__":
    main()
