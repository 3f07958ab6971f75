"""Subprocess worker for test_crash.py: dump a store's state, then write until killed.

    python _crash_worker.py FOLDER ROUND SEED     # one writer
    python _crash_worker.py --zygote              # imports once, forks one writer per command

A writer opens ``Memory(path=FOLDER)``, prints ``STATE <json>`` (everything stored, read back after the previous
round's SIGKILL, plus proof that recall works), then performs random writes forever, printing one ``ACK ...``
line (flushed) after each write returns. ``ROUND -1`` only dumps.

The zygote exists because importing chromadb costs seconds: it imports memtend (opening no store and starting
no thread), prints ``READY``, then for each ``RUN FOLDER ROUND SEED`` line on stdin forks a writer (a fresh
process with its own Chroma client) and prints ``PID <pid>``; for ``WAIT <pid>`` it reaps the writer and prints
``EXIT <pid> <signal or -exit code>``.

ACK lines: ``ACK fact <user> <key> <n>`` (value ``v<n>``, n increasing), ``ACK event <user> <text>``,
``ACK kv <user> <key>``, ``ACK counter <user> <key> <n>``, ``ACK session <user> <key> <n>`` (working memory),
``ACK ledger <user> <n>`` (side-effect ledger), ``ACK compact <user>``.
"""

from __future__ import annotations

import json
import random
import sys
from typing import Any

from memtend import Event, Memory

USERS = ("crash-a", "crash-b")
FACT_KEYS = ("k0", "k1", "k2")


def _ack(*parts: object) -> None:
    sys.stdout.write("ACK " + " ".join(str(p) for p in parts) + "\n")
    sys.stdout.flush()


def dump(mem: Memory) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for uid in USERS:
        user = mem.user(uid)
        records = [r.to_dict() for r in user.list(status=None)]
        out[uid] = {
            "records": records,
            "facts": user.facts(),
            "store": [
                {"namespace": i["namespace"], "key": i["key"], "value": i["value"]} for i in user.export()["store"]
            ],
            "session": user.session("t").list(),
            "ledger": sorted(e.args["n"] for e in user.ledger("t").entries()),
            # the retrieval index loads from what was stored (embeddings included) and answers
            "recalled": len(user.recall("event crash marker", k=5)) if records else 0,
            "users": mem.users(),
            # each fact slot's history: (op, value before, value after), in order
            "fact_history": {
                r["key"]: [
                    [h.op, (h.before or {}).get("value"), (h.after or {}).get("value")] for h in user.history(r["id"])
                ]
                for r in records
                if r["kind"] == "fact" and r["status"] == "active"
            },
        }
    return out


def write_forever(mem: Memory, round_no: int, rng: random.Random) -> None:
    n = round_no * 100_000
    while True:
        n += 1
        uid = rng.choice(USERS)
        user = mem.user(uid)
        op = rng.random()
        if op < 0.3:
            key = rng.choice(FACT_KEYS)
            user.set_fact(key, f"v{n}")
            _ack("fact", uid, key, n)
        elif op < 0.5:
            text = f"event-{n} crash marker"
            user.log(text, session="s")
            _ack("event", uid, text)
        elif op < 0.58:
            texts = [f"event-{n}-{i} crash marker batch" for i in range(rng.randint(2, 6))]
            user.log_many(Event(t, session="s") for t in texts)
            for t in texts:
                _ack("event", uid, t)
        elif op < 0.66:
            key = f"key-{n}"
            user.store("kv").put(key, {"n": n})
            _ack("kv", uid, key)
        elif op < 0.74:
            key = f"c{n % 2}"
            user.store("counters").put(key, n)
            _ack("counter", uid, key, n)
        elif op < 0.84:
            key = f"s{n % 3}"
            user.session("t").set(key, n)
            _ack("session", uid, key, n)
        elif op < 0.93:
            user.ledger("t").record("deploy", {"n": n}, result={"id": f"dep-{n}"})
            _ack("ledger", uid, n)
        else:
            user.compact(keep_recent=3)
            _ack("compact", uid)


def writer(folder: str, round_no: int, seed: int) -> None:
    mem = Memory(path=folder)
    sys.stdout.write("STATE " + json.dumps(dump(mem)) + "\n")
    sys.stdout.flush()
    if round_no < 0:
        mem.close()
        return
    write_forever(mem, round_no, random.Random(seed))


def zygote() -> None:
    import os
    import threading

    assert threading.active_count() == 1, "forking is only safe with no other thread"
    print("READY", flush=True)
    for line in sys.stdin:
        cmd = line.split()
        if cmd[0] == "RUN":
            sys.stdout.flush()
            pid = os.fork()
            if pid == 0:
                code = 0
                try:
                    writer(cmd[1], int(cmd[2]), int(cmd[3]))
                except BaseException:
                    import traceback

                    traceback.print_exc()
                    code = 1
                finally:
                    sys.stdout.flush()
                    os._exit(code)
            print(f"PID {pid}", flush=True)
        elif cmd[0] == "WAIT":
            _, status = os.waitpid(int(cmd[1]), 0)
            result = os.WTERMSIG(status) if os.WIFSIGNALED(status) else -os.WEXITSTATUS(status)
            print(f"EXIT {cmd[1]} {result}", flush=True)


if __name__ == "__main__":
    if sys.argv[1] == "--zygote":
        zygote()
    else:
        writer(sys.argv[1], int(sys.argv[2]), int(sys.argv[3]))
