"""One write at a time: memtend's ``remember``, ``log`` and ``set_fact`` beside a raw Chroma ``collection.add`` of one
document and the embedding alone, measured interleaved in one run with the same embedding function.

Each round times every operation once, in an order that rotates from round to round (so no side always gets the
warm or the busy turn). The raw peer is what a caller of Chroma would write: a collection with the same embedding
function, created with Chroma's defaults, one ``add`` per document. Printed: p50/p95 in milliseconds and the
ratios of the p50s to the raw add and to the embedding alone; and, per memtend call, how many Chroma write calls
(add, upsert, update, delete on any collection) it made.

    uv run python tests/benchmarks/single_write.py [--n 200] [--backend persistent|ephemeral] [--json]
"""

from __future__ import annotations

import argparse
import json
import statistics
import tempfile
import time
from collections.abc import Callable
from typing import Any

import chromadb
from memtend import Memory
from memtend.testing.chroma_calls import counting_writes

OPERATIONS = ("remember", "log", "set_fact", "raw_add", "embed")


def _percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


def _client(backend: str, folder: str) -> Any:
    if backend == "persistent":
        return chromadb.PersistentClient(path=folder)
    if backend == "ephemeral":
        return chromadb.EphemeralClient()
    raise ValueError(f"unknown backend {backend!r}")


def run(
    n: int = 200, backend: str = "persistent", embedding_function: Any = None, warmup: int = 5
) -> dict[str, dict[str, float]]:
    """Time ``n`` rounds; returns {operation: {p50_ms, p95_ms, vs_raw_add, vs_embed[, chroma_writes]}}."""
    if embedding_function is None:
        from memtend.embeddings import default_embedding_function

        embedding_function = default_embedding_function()
    with tempfile.TemporaryDirectory(prefix="memtend-single-write-") as folder:
        client = _client(backend, folder)
        memory = Memory(client=client, embedding_function=embedding_function, collection_prefix="bench")
        raw = client.get_or_create_collection("raw_peer", embedding_function=embedding_function)
        user = memory.user("bench-user")
        counter = iter(range(10**9))

        def text(kind: str) -> str:
            i = next(counter)
            return f"{kind} {i}: the user mentioned project apollo number {i * 7919 % 10007} and a deadline"

        def raw_add() -> None:
            i = next(counter)
            raw.add(ids=[f"raw-{i}"], documents=[text("raw note")])

        ops: dict[str, Callable[[], Any]] = {
            "remember": lambda: user.remember(text("note")),
            "log": lambda: user.log(text("event")),
            "set_fact": lambda: user.set_fact(f"project.item{next(counter) % 25}", text("value")),
            "raw_add": raw_add,
            "embed": lambda: embedding_function([text("embed")]),
        }
        times: dict[str, list[float]] = {op: [] for op in OPERATIONS}
        writes: dict[str, list[int]] = {op: [] for op in ("remember", "log", "set_fact")}
        order = list(OPERATIONS)
        for round_no in range(warmup + n):
            order = order[1:] + order[:1]
            for op in order:
                with counting_writes(memory) as calls:
                    start = time.perf_counter()
                    ops[op]()
                    elapsed = time.perf_counter() - start
                if round_no >= warmup:
                    times[op].append(elapsed * 1000)
                    if op in writes:
                        writes[op].append(len(calls))
        memory.close()
    p50 = {op: statistics.median(ts) for op, ts in times.items()}
    out: dict[str, dict[str, float]] = {}
    for op, ts in times.items():
        row = {
            "p50_ms": p50[op],
            "p95_ms": _percentile(ts, 0.95),
            "vs_raw_add": p50[op] / p50["raw_add"],
            "vs_embed": p50[op] / p50["embed"],
        }
        if op in writes:
            row["chroma_writes"] = max(writes[op])
        out[op] = row
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--n", type=int, default=200, help="timed rounds (each times every operation once)")
    parser.add_argument("--backend", choices=("persistent", "ephemeral"), default="persistent")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    results = run(n=args.n, backend=args.backend)
    if args.json:
        print(json.dumps(results, indent=2))
        return
    print(f"{args.n} rounds on {args.backend} Chroma, one interleaved run, the same embedding function")
    print(f"{'operation':<10} {'p50 ms':>8} {'p95 ms':>8} {'p50/raw add':>12} {'p50/embed':>10} {'writes':>7}")
    for op, r in results.items():
        writes = f"{int(r['chroma_writes'])}" if "chroma_writes" in r else ""
        print(
            f"{op:<10} {r['p50_ms']:8.2f} {r['p95_ms']:8.2f} {r['vs_raw_add']:12.2f} {r['vs_embed']:10.2f} {writes:>7}"
        )


if __name__ == "__main__":
    main()
