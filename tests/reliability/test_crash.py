"""SIGKILL at random points: the embedded store reopens, keeps every acknowledged write, and holds no half-applied
update.

A worker process (``_crash_worker.py``) writes bursts (fact updates with increasing values, events one by one
and in batches, keyed-store items and counters, session state, side-effect ledger entries, compactions) to
``Memory(path=...)`` and prints an acknowledgement after each write returns. The test kills it with SIGKILL at
a seeded random point, then the next round's worker (a fresh process) reopens the folder and dumps everything,
which the test checks against the acknowledgements. The killed process's flock goes with it, so the next one
can open the store.
"""

from __future__ import annotations

import itertools
import json
import os
import queue
import random
import signal
import subprocess
import sys
import threading
import time
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

import pytest

WORKER = Path(__file__).with_name("_crash_worker.py")
ROUNDS = 10
SEED = 20_240_611


@dataclass
class Acked:
    """Everything the workers acknowledged, across rounds."""

    facts: dict[tuple[str, str], int] = field(default_factory=dict)
    events: dict[str, set[str]] = field(default_factory=lambda: defaultdict(set))
    kv: dict[str, set[str]] = field(default_factory=lambda: defaultdict(set))
    counters: dict[tuple[str, str], int] = field(default_factory=dict)
    session: dict[tuple[str, str], int] = field(default_factory=dict)
    ledger: dict[str, set[int]] = field(default_factory=lambda: defaultdict(set))
    compactions: int = 0
    total: int = 0

    def take(self, line: str) -> None:
        parts = line.split(" ", 3)
        assert parts[0] == "ACK", line
        what, uid = parts[1], parts[2]
        self.total += 1
        if what == "fact":
            key, n = parts[3].split(" ")
            self.facts[(uid, key)] = max(self.facts.get((uid, key), 0), int(n))
        elif what == "event":
            self.events[uid].add(parts[3])
        elif what == "kv":
            self.kv[uid].add(parts[3])
        elif what == "counter":
            key, n = parts[3].split(" ")
            self.counters[(uid, key)] = max(self.counters.get((uid, key), 0), int(n))
        elif what == "session":
            key, n = parts[3].split(" ")
            self.session[(uid, key)] = max(self.session.get((uid, key), 0), int(n))
        elif what == "ledger":
            self.ledger[uid].add(int(parts[3]))
        elif what == "compact":
            self.compactions += 1
        else:
            raise AssertionError(line)


class Zygote:
    """The worker in ``--zygote`` mode: forks one fresh writer process per round (chromadb is imported once)."""

    def __init__(self, log: IO[bytes]) -> None:
        env = {**os.environ, "ANONYMIZED_TELEMETRY": "False", "PYTHONUNBUFFERED": "1"}
        self.proc = subprocess.Popen(
            [sys.executable, str(WORKER), "--zygote"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=log,
            text=True,
            env=env,
        )
        self.lines: queue.Queue[str | None] = queue.Queue()
        threading.Thread(target=self._pump, daemon=True).start()
        assert self.next_line() == "READY"

    def _pump(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            self.lines.put(line.rstrip("\n"))
        self.lines.put(None)

    def next_line(self, timeout: float = 180.0) -> str:
        try:
            line = self.lines.get(timeout=timeout)
        except queue.Empty:
            raise AssertionError(f"no output from the worker within {timeout} s") from None
        assert line is not None, "the zygote exited"
        return line

    def send(self, command: str) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(command + "\n")
        self.proc.stdin.flush()

    def close(self) -> None:
        if self.proc.stdin is not None:
            self.proc.stdin.close()
        try:
            self.proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()


def check_state(state: dict[str, Any], acked: Acked) -> None:
    for uid, got in state.items():
        records = got["records"]
        by_id = {r["id"]: r for r in records}
        assert len(by_id) == len(records), "a record id appears twice"
        active = [r for r in records if r["status"] == "active"]

        # facts: every acknowledged value is there, or a later one
        for (owner, key), n in acked.facts.items():
            if owner == uid:
                assert key in got["facts"], f"acknowledged fact {key} of {uid} is gone"
                assert int(got["facts"][key][1:]) >= n, f"fact {key} of {uid} went back below acknowledged v{n}"
        active_facts = [r for r in active if r["kind"] == "fact"]
        assert sorted(r["key"] for r in active_facts) == sorted(got["facts"]), "one active record per fact key"
        assert all(r["id"].startswith("fact:") for r in active_facts), "an archived fact value became active twice"
        current_by_key = {r["key"]: r["id"] for r in active_facts}
        for r in records:
            if r["kind"] == "fact" and r["status"] == "archived":
                # half-applied update: an archived value whose successor never landed
                assert r["superseded_by"] == current_by_key.get(r["key"]), f"archived fact {r['id']} has no successor"
        # fact history: whole after any kill (the slot's creation entry and each update's entry ride in the rows
        # the update writes): one add, then one update per archived value, each starting where the last ended
        for key, entries in got["fact_history"].items():
            assert entries and entries[0][0] == "add", f"fact {key} of {uid} lost its creation entry: {entries[:3]}"
            assert all(op == "update" for op, _, _ in entries[1:]), entries
            for (_, _, last), (_, before, _) in itertools.pairwise(entries):
                assert before == last, f"fact {key} of {uid}: an update is missing from its history"
            assert entries[-1][2] == got["facts"][key], f"fact {key} of {uid}: history ends elsewhere than its value"
            old_values = sorted(
                r["value"] for r in records if r["kind"] == "fact" and r["status"] == "archived" and r["key"] == key
            )
            assert old_values == sorted(before for _, before, _ in entries[1:]), (
                f"fact {key} of {uid}: archive vs history"
            )

        # events: every acknowledged one exactly once (active, or archived behind a summary)
        event_texts = [r["text"] for r in records if r["kind"] == "event"]
        assert len(event_texts) == len(set(event_texts)), "an event was stored twice"
        missing = acked.events[uid] - set(event_texts)
        assert not missing, f"{len(missing)} acknowledged events of {uid} are gone, e.g. {sorted(missing)[:3]}"

        # summaries: provenance intact, every replaced record archived behind an existing summary
        for r in records:
            if r["kind"] == "summary":
                lost = [i for i in r["derived_from"] if i not in by_id]
                assert not lost, f"summary {r['id']} derives from records that do not exist: {lost[:3]}"
            if r["status"] == "archived" and r["kind"] in ("event", "summary"):
                assert r["superseded_by"] in by_id, f"{r['kind']} {r['id']} archived behind a missing summary"
                assert by_id[r["superseded_by"]]["kind"] == "summary"
        active_texts = [r["text"] for r in active if r["kind"] != "summary"]
        assert len(active_texts) == len(set(active_texts)), "an active record is duplicated"

        # keyed store
        kv_keys = {(i["namespace"], i["key"]): i["value"] for i in got["store"]}
        missing_kv = {k for k in acked.kv[uid] if ("kv", k) not in kv_keys}
        assert not missing_kv, f"acknowledged store keys of {uid} are gone: {sorted(missing_kv)[:3]}"
        for (owner, key), n in acked.counters.items():
            if owner == uid:
                assert kv_keys.get(("counters", key), -1) >= n, f"counter {key} of {uid} went below acknowledged {n}"
        # working memory: session state and the side-effect ledger
        for (owner, key), n in acked.session.items():
            if owner == uid:
                assert got["session"].get(key, -1) >= n, f"session key {key} of {uid} went below acknowledged {n}"
        missing_calls = acked.ledger[uid] - set(got["ledger"])
        assert not missing_calls, f"acknowledged ledger entries of {uid} are gone: {sorted(missing_calls)[:3]}"
        assert len(got["ledger"]) == len(set(got["ledger"])), "a ledger entry is duplicated"
        assert all(r["user_id"] == uid for r in records)


@pytest.mark.slow
def test_sigkill_loses_no_acknowledged_write(tmp_path: Path) -> None:
    folder = tmp_path / "store"
    folder.mkdir()
    rng = random.Random(SEED)
    acked = Acked()
    kills = 0
    log_path = tmp_path / "worker.log"
    with open(log_path, "wb") as log:
        zygote = Zygote(log)
        try:
            for round_no in range(ROUNDS + 1):
                final = round_no == ROUNDS
                zygote.send(f"RUN {folder} {-1 if final else round_no} {rng.randrange(2**31)}")
                pid, state = 0, None
                while not pid or state is None:  # the fork's STATE may come before or after its PID
                    line = zygote.next_line()
                    if line.startswith("PID "):
                        pid = int(line.split()[1])
                    elif line.startswith("STATE "):
                        state = json.loads(line[len("STATE ") :])
                    else:
                        raise AssertionError(f"unexpected {line[:200]!r}; log:\n{log_path.read_text()[-3000:]}")
                # a fresh process reopened the store after the previous SIGKILL: check it
                check_state(state, acked)
                if not final:
                    for _ in range(rng.randint(1, 50)):
                        line = zygote.next_line()
                        assert line.startswith("ACK "), f"{line[:200]!r}; log:\n{log_path.read_text()[-3000:]}"
                        acked.take(line)
                    time.sleep(rng.uniform(0.0, 0.03))
                    os.kill(pid, signal.SIGKILL)
                zygote.send(f"WAIT {pid}")
                while not (line := zygote.next_line()).startswith("EXIT "):
                    acked.take(line)  # written before the kill: acknowledged too
                result = int(line.split()[2])
                if final:
                    assert result == 0, log_path.read_text()[-3000:]
                else:
                    assert result == signal.SIGKILL, f"the writer ended on its own ({result}) before the kill"
                    kills += 1
        finally:
            zygote.close()
    assert kills == ROUNDS
    assert acked.facts and any(acked.events.values()), "the seeded rounds exercised facts and events"
    assert acked.session and any(acked.ledger.values()), "and working memory"
    assert acked.total > ROUNDS
