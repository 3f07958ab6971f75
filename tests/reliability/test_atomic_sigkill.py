"""SIGKILL in the middle of operations that take several Chroma writes (a ``log_many`` of 300 events stored in
chunks, a compaction of hundreds of events over several calls): after the store is opened again, each is all or
nothing, and retrying an interrupted batch under its batch id stores it once.

A worker (``_atomic_worker.py``) writes on an embedded folder and prints a line after each operation; the test
kills it at a seeded random moment, then a fresh process opens the folder (finishing what the journal says was
begun) and dumps the user's records and history, which the test checks.
"""

from __future__ import annotations

import json
import os
import random
import signal
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

WORKER = Path(__file__).with_name("_atomic_worker.py")
ROUNDS = 3
SEED = 20_261_130
BATCH = 300
FINISHED: list[str] = []  # opens that found a journal and finished its write (how often a kill landed mid-write)


def _env() -> dict[str, str]:
    return {**os.environ, "ANONYMIZED_TELEMETRY": "False", "PYTHONUNBUFFERED": "1"}


def _run(folder: Path, *args: str) -> dict[str, dict[str, Any]]:
    """Run the worker in a dump mode: its STATE (and AFTER) lines."""
    out = subprocess.run(
        [sys.executable, str(WORKER), str(folder), *args], capture_output=True, text=True, env=_env(), timeout=300
    )
    assert out.returncode == 0, out.stderr[-3000:]
    if "finishing an interrupted write" in out.stderr:
        FINISHED.append(args[0])
    lines = (x.split(" ", 1) for x in out.stdout.splitlines() if x.startswith(("STATE ", "AFTER ")))
    return {tag: dict(json.loads(body)) for tag, body in lines}


def _check(state: dict[str, Any], acked: set[str], begun: set[str]) -> None:
    records = state["records"]
    by_id = {r["id"]: r for r in records}
    assert state["journals"] == 0, "a journal row outlived the open that should have finished it"
    events = [r for r in records if r["kind"] == "event"]
    per_batch = Counter(r["text"].split(" event ")[0] for r in events)
    for batch, n in per_batch.items():
        assert n == BATCH, f"batch {batch} is stored {n} of {BATCH} times: not all or nothing"
        assert batch in begun
    missing = acked - set(per_batch)
    assert not missing, f"acknowledged batches are gone: {sorted(missing)}"
    ops = Counter(op for op, _ in state["history"])
    adds = Counter(rid for op, rid in state["history"] if op == "add")
    assert all(n == 1 for n in adds.values()), "an add was recorded twice"
    assert set(adds) >= {r["id"] for r in events}, "an event has no history"
    summaries = [r for r in records if r["kind"] == "summary"]
    assert ops["compact"] == len(summaries), "a summary without its history entry (or the reverse)"
    for r in records:  # a compaction is whole: everything it replaced is archived behind an existing summary
        if r["status"] == "archived":
            assert by_id.get(r["superseded_by"], {}).get("kind") == "summary", f"{r['id']} archived behind nothing"
    for s in summaries:
        for rid in s["derived_from"]:
            assert by_id[rid]["status"] == "archived" and by_id[rid]["superseded_by"] == s["id"]
    active_summaries = [s for s in summaries if s["status"] == "active"]
    assert len(active_summaries) <= 1


@pytest.mark.slow
def test_sigkill_during_multi_write_operations_is_all_or_nothing(tmp_path: Path) -> None:
    folder = tmp_path / "store"
    rng = random.Random(SEED)
    acked: set[str] = set()
    begun: set[str] = set()
    compactions = 0
    for round_no in range(ROUNDS):
        proc = subprocess.Popen(
            [sys.executable, str(WORKER), str(folder), "write", str(round_no)],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env=_env(),
        )
        assert proc.stdout is not None
        assert proc.stdout.readline().strip() == "READY", proc.stderr.read() if proc.stderr else ""
        target = rng.randint(2, 4)  # kill once this many batches have begun, a random moment into the last
        starts = 0
        current = ""
        while starts < target:
            line = proc.stdout.readline().strip()
            assert line, proc.stderr.read() if proc.stderr else "the worker ended"
            if line.startswith("BEGIN batch "):
                current = line.split()[-1]
                begun.add(current)
                starts += 1
            elif line.startswith("ACK batch "):
                acked.add(line.split()[-1])
            elif line == "ACK compact":
                compactions += 1
        time.sleep(rng.uniform(0.0, 0.5))
        proc.send_signal(signal.SIGKILL)
        rest, _ = proc.communicate(timeout=60)
        for line in rest.splitlines():  # acknowledged before the kill landed
            if line.startswith("BEGIN batch "):
                current = line.split()[-1]
                begun.add(current)
            elif line.startswith("ACK batch "):
                acked.add(line.split()[-1])
        assert proc.returncode == -signal.SIGKILL
        # the caller does not know whether the interrupted batch landed: it retries under the same batch id
        states = _run(folder, "retry", current) if current not in acked else _run(folder, "dump")
        _check(states["STATE"], acked, begun)
        if "AFTER" in states:
            acked.add(current)
            _check(states["AFTER"], acked, begun)
    history = _run(folder, "dump")["STATE"]["history"]
    assert compactions >= 1 or any(op == "compact" for op, _ in history)
    print(f"{len(FINISHED)} of {ROUNDS} kills landed in the middle of a journaled write")
