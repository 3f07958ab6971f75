"""What read-time fact precedence (memtend.consistency.claims) costs readers: a ``get_fact`` of a key this process has
not seen (the key's rows read: its slot row by id, its claims by key), of one it has (an embedded folder: cached, no
read), and a user's first recall (the per-user index loaded, every key resolved), beside raw Chroma reads of the
same rows measured in the same run: a get of one row by id, and a get of the user's rows (the raw part of loading
an index). Users write each key several times (claims pile up until the forget cycle folds them).

    uv run python tests/benchmarks/fact_readers.py [--users 30] [--keys 20] [--writes 3] [--events 60]
        [--backend persistent|ephemeral] [--json]

``ephemeral``: an in-process EphemeralClient, a store other handles may write (no folder lock: nothing cached
between calls; the user's index cache is emptied before the reads, so each first recall loads it)."""

from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import tempfile
import time

import chromadb
from memtend import Memory, Source
from memtend.records import fact_id
from memtend.testing import HashEmbedder


def _p(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


def run(
    users: int = 30, keys: int = 20, writes: int = 3, events: int = 60, backend: str = "persistent"
) -> dict[str, dict[str, float]]:
    """Returns {measure: {p50_ms, p95_ms[, vs_raw]}}."""
    with tempfile.TemporaryDirectory(prefix="memtend-fact-readers-") as folder:
        client = chromadb.EphemeralClient() if backend == "ephemeral" else None

        def open_memory() -> Memory:
            if client is None:
                return Memory(path=folder, embedding_function=HashEmbedder())
            return Memory(client=client, embedding_function=HashEmbedder())

        rng = random.Random(7)
        memory = open_memory()
        for n in range(users):
            u = memory.user(f"user{n}")
            u.log_many([f"event {i} of user {n} about topic {rng.randint(0, 50)}" for i in range(events)])
            for w in range(writes):
                for k in range(keys):
                    source = rng.choice([Source.USER, Source.AGENT])
                    u.set_fact(f"key{k}", f"value {w} {rng.randint(0, 9)}", source=source)
        if client is None:
            memory.close()
            memory = open_memory()
        else:  # the same in-memory store: its handles share one index cache, emptied here
            memory._indexes.clear()
        col = memory.storage.memories
        times: dict[str, list[float]] = {"first_recall": [], "raw_user_rows": [], "get_fact_cold": [], "raw_get": []}
        times["get_fact_seen"] = []
        for n in range(users):
            uid = f"user{n}"
            u = memory.user(uid)
            t = time.perf_counter()
            col.get(where={"user_id": {"$eq": uid}}, include=["metadatas", "embeddings"])
            times["raw_user_rows"].append(time.perf_counter() - t)
            t = time.perf_counter()
            u.recall("topic 7", k=5)
            times["first_recall"].append(time.perf_counter() - t)
            for k in range(0, keys, 4):
                t = time.perf_counter()
                col.get(ids=[fact_id(uid, f"key{k}")], include=["metadatas"])
                times["raw_get"].append(time.perf_counter() - t)
                t = time.perf_counter()
                u.get_fact(f"key{k}")
                times["get_fact_cold"].append(time.perf_counter() - t)
                t = time.perf_counter()
                u.get_fact(f"key{k}")
                times["get_fact_seen"].append(time.perf_counter() - t)
        memory.close()
    out: dict[str, dict[str, float]] = {}
    for name, values in times.items():
        ms = [v * 1000 for v in values]
        out[name] = {"p50_ms": statistics.median(ms), "p95_ms": _p(ms, 0.95)}
    for name, peer in (("first_recall", "raw_user_rows"), ("get_fact_cold", "raw_get"), ("get_fact_seen", "raw_get")):
        out[name]["vs_raw"] = out[name]["p50_ms"] / out[peer]["p50_ms"]
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--users", type=int, default=30)
    parser.add_argument("--keys", type=int, default=20)
    parser.add_argument("--writes", type=int, default=3)
    parser.add_argument("--events", type=int, default=60)
    parser.add_argument("--backend", choices=("persistent", "ephemeral"), default="persistent")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    load = os.getloadavg()
    results = run(args.users, args.keys, args.writes, args.events, args.backend)
    if args.json:
        print(json.dumps(results, indent=2))
        return
    print(
        f"{args.backend}: {args.users} users, {args.keys} keys written {args.writes} times, {args.events} events each;"
    )
    print(f"load average {load[0]:.2f}, {load[1]:.2f}, {load[2]:.2f} at the start")
    print(f"{'measure':<16}{'p50 ms':>9}{'p95 ms':>9}{'p50/raw':>9}")
    for name, r in results.items():
        ratio = f"{r['vs_raw']:.2f}" if "vs_raw" in r else ""
        print(f"{name:<16}{r['p50_ms']:>9.2f}{r['p95_ms']:>9.2f}{ratio:>9}")


if __name__ == "__main__":
    main()
