"""One write at a time: memtend's ``remember``, ``log`` and ``set_fact`` beside a raw Chroma ``collection.add`` of one
document and the embedding alone, measured interleaved in one run with the same embedding function. A second raw
peer, ``raw_add_fact``, adds the text ``set_fact`` stores (the key in words, then the value: a few tokens longer
than the raw add's text, so its embedding costs a little more); the summary gives ``set_fact`` over both.

Each round times every operation once, in an order shuffled from round to round (so no side always gets the warm or
the busy turn, nor always follows the same operation: a rotated order keeps who follows whom). The raw peer is what a
caller of Chroma would write: a collection with the same embedding function, created with Chroma's defaults, one
``add`` per document. Printed: p50/p95 in milliseconds and the ratios of the p50s (and p95s) to the raw add and of
the p50s to the embedding alone, with a 90 % interval of each p50 ratio (the rounds resampled, both sides of a round
together: a write's time swings with the disk's, so one run's ratio is known only to within it); and, per memtend
call, how many Chroma write calls (add, upsert, update, delete on any collection) it made at most, how many read
calls (get, query, count) at the median and at most, and the p50 of the time its reads took (``read ms``: the share
of the call a write that reads nothing would save). ``--backend server`` starts a local ``chroma run`` in a temporary
folder (a store other processes may share: memtend also marks its writes for them, a single write's mark folded
into its own row after the first; every ``store_state.FOLD_WINDOW``-th write moves the mark row, and its flags
are removed by a background metadata update, not a call of the write).

    uv run python tests/benchmarks/single_write.py [--n 200] [--backend persistent|ephemeral|server] [--runs 3]
        [--json]
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import random
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import chromadb
from memtend import Memory
from memtend.policies.precedence import fact_text
from memtend.testing.chroma_calls import counting_reads, counting_writes

OPERATIONS = ("remember", "log", "set_fact", "raw_add", "raw_add_fact", "embed")


def _percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


@contextlib.contextmanager
def _client(backend: str, folder: str) -> Iterator[Any]:
    if backend == "persistent":
        yield chromadb.PersistentClient(path=folder)
    elif backend == "ephemeral":
        yield chromadb.EphemeralClient()
    elif backend == "server":
        with _server(Path(folder) / "server") as port:
            yield chromadb.HttpClient(host="127.0.0.1", port=port)
    else:
        raise ValueError(f"unknown backend {backend!r}")


@contextlib.contextmanager
def _server(path: Path) -> Iterator[int]:
    """A local ``chroma run`` on a free port, stopped afterwards."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = int(s.getsockname()[1])
    chroma = shutil.which("chroma") or str(Path(sys.executable).parent / "chroma")
    command = [chroma, "run", "--path", str(path), "--host", "127.0.0.1", "--port", str(port)]
    proc = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                chromadb.HttpClient(host="127.0.0.1", port=port).heartbeat()
                break
            except Exception:
                if proc.poll() is not None or time.monotonic() > deadline:
                    raise RuntimeError("chroma run did not start") from None
                time.sleep(0.2)
        yield port
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            proc.kill()


def run(
    n: int = 200, backend: str = "persistent", embedding_function: Any = None, warmup: int = 5
) -> dict[str, dict[str, float]]:
    """Time ``n`` rounds; returns {operation: {p50_ms, p95_ms, vs_raw_add, p95_vs_raw_add, vs_embed[,
    chroma_writes]}}."""
    if embedding_function is None:
        from memtend.storage.embeddings import default_embedding_function

        embedding_function = default_embedding_function()
    with tempfile.TemporaryDirectory(prefix="memtend-single-write-") as folder, _client(backend, folder) as client:
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

        def raw_add_fact() -> None:  # a raw add of the text set_fact stores and embeds (the key in words, the value)
            i = next(counter)
            raw.add(ids=[f"raw-{i}"], documents=[fact_text(f"project.item{i % 25}", text("value"))])

        ops: dict[str, Callable[[], Any]] = {
            "remember": lambda: user.remember(text("note")),
            "log": lambda: user.log(text("event")),
            "set_fact": lambda: user.set_fact(f"project.item{next(counter) % 25}", text("value")),
            "raw_add": raw_add,
            "raw_add_fact": raw_add_fact,
            "embed": lambda: embedding_function([text("embed")]),
        }
        times: dict[str, list[float]] = {op: [] for op in OPERATIONS}
        writes: dict[str, list[int]] = {op: [] for op in ("remember", "log", "set_fact")}
        reads: dict[str, list[list[tuple[str, float]]]] = {op: [] for op in writes}
        order = list(OPERATIONS)
        shuffler = random.Random(0)
        for round_no in range(warmup + n):
            shuffler.shuffle(order)
            for op in order:
                with counting_writes(memory) as calls, counting_reads(memory) as read_calls:
                    start = time.perf_counter()
                    ops[op]()
                    elapsed = time.perf_counter() - start
                if round_no >= warmup:
                    times[op].append(elapsed * 1000)
                    if op in writes:
                        writes[op].append(len(calls))
                        reads[op].append(read_calls)
        memory.close()
    p50 = {op: statistics.median(ts) for op, ts in times.items()}
    p95 = {op: _percentile(ts, 0.95) for op, ts in times.items()}
    out: dict[str, dict[str, float]] = {}
    for op in times:
        low, high = _ratio_interval(times[op], times["raw_add"])
        row = {
            "p50_ms": p50[op],
            "p95_ms": p95[op],
            "vs_raw_add": p50[op] / p50["raw_add"],
            "vs_raw_add_low": low,
            "vs_raw_add_high": high,
            "p95_vs_raw_add": p95[op] / p95["raw_add"],
            "vs_embed": p50[op] / p50["embed"],
        }
        if op == "set_fact":  # beside the raw add of the very text it stores, with that ratio's interval too
            row["vs_raw_add_fact"] = p50[op] / p50["raw_add_fact"]
            row["vs_raw_add_fact_low"], row["vs_raw_add_fact_high"] = _ratio_interval(times[op], times["raw_add_fact"])
        if op in writes:
            row["chroma_writes"] = max(writes[op])
            row["chroma_reads_p50"] = statistics.median(len(r) for r in reads[op])
            row["chroma_reads_max"] = max(len(r) for r in reads[op])
            row["read_ms_p50"] = statistics.median(sum(t for _, t in r) * 1000 for r in reads[op])
        out[op] = row
    return out


def _ratio_interval(times: list[float], peer: list[float], draws: int = 1_000) -> tuple[float, float]:
    """A 90 % interval of p50(times) / p50(peer), by resampling the rounds (both sides of a round drawn together:
    they ran side by side): how far the ratio of one run is from telling "at or below" apart from "above"."""
    draw = random.Random(1)
    rounds = range(len(times))
    ratios = []
    for _ in range(draws):
        picked = [draw.choice(rounds) for _ in rounds]
        ratios.append(statistics.median(times[i] for i in picked) / statistics.median(peer[i] for i in picked))
    return _percentile(ratios, 0.05), _percentile(ratios, 0.95)


def _load() -> str:
    """The machine's load averages over 1, 5 and 15 minutes (figures taken on a busy machine say little)."""
    try:
        return "load average " + ", ".join(f"{x:.2f}" for x in os.getloadavg()) + f" on {os.cpu_count()} cores"
    except OSError:
        return "load average unknown"


def _table(results: dict[str, dict[str, float]]) -> None:
    head = f"{'operation':<10} {'p50 ms':>8} {'p95 ms':>8} {'p50/raw add':>12} {'(90 % in)':>10} {'p95/raw add':>12}"
    print(f"{head} {'p50/embed':>10} {'writes':>7} {'reads p50/max':>14} {'read ms':>8}")
    for op, r in results.items():
        writes = f"{int(r['chroma_writes'])}" if "chroma_writes" in r else ""
        read_calls = f"{r['chroma_reads_p50']:g}/{int(r['chroma_reads_max'])}" if "chroma_reads_max" in r else ""
        read_ms = f"{r['read_ms_p50']:.2f}" if "read_ms_p50" in r else ""
        interval = f"{r['vs_raw_add_low']:.2f}-{r['vs_raw_add_high']:.2f}"
        ratios = f"{r['vs_raw_add']:12.2f} {interval:>10} {r['p95_vs_raw_add']:12.2f} {r['vs_embed']:10.2f}"
        print(f"{op:<10} {r['p50_ms']:8.2f} {r['p95_ms']:8.2f} {ratios} {writes:>7} {read_calls:>14} {read_ms:>8}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--n", type=int, default=200, help="timed rounds (each times every operation once)")
    parser.add_argument("--backend", choices=("persistent", "ephemeral", "server"), default="persistent")
    parser.add_argument("--runs", type=int, default=1, help="independent runs (a fresh store each), then a summary")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    runs = []
    for number in range(1, args.runs + 1):
        before = _load()
        results = run(n=args.n, backend=args.backend)
        runs.append(results)
        if args.json:
            continue
        print(f"run {number}/{args.runs}: {args.n} rounds on {args.backend} Chroma, one interleaved run, the same")
        print(f"embedding function; {before} at the start, {_load().removeprefix('load average ')} at the end")
        _table(results)
        print()
    if args.json:
        print(json.dumps(runs[0] if args.runs == 1 else runs, indent=2))
        return
    print(f"p50 over raw Chroma's add of one document (<= 1.00: at or below it), {args.runs} run(s):")
    for op in ("remember", "log", "set_fact"):
        ratios = [r[op]["vs_raw_add"] for r in runs]
        spread = f"{min(ratios):.2f}-{max(ratios):.2f}" if len(ratios) > 1 else f"{ratios[0]:.2f}"
        verdict = "at or below" if max(ratios) <= 1.0 else ("above in some runs" if min(ratios) <= 1.0 else "above")
        writes = max(int(r[op]["chroma_writes"]) for r in runs)
        read_calls = max(r[op]["chroma_reads_p50"] for r in runs)
        read_share = max(r[op]["read_ms_p50"] / r["raw_add"]["p50_ms"] for r in runs)
        print(
            f"  {op:<9} {spread:>10}  ({verdict}; Chroma write calls per call: {writes}, read calls p50: "
            f"{read_calls:g}, their time {read_share:.2f} of the raw add)"
        )
        intervals = ", ".join(f"{r[op]['vs_raw_add_low']:.2f}-{r[op]['vs_raw_add_high']:.2f}" for r in runs)
        print(f"  {'':<9} 90 % intervals of each run's ratio (rounds resampled): {intervals}")
    same_text = [r["set_fact"]["vs_raw_add_fact"] for r in runs]
    spread = f"{min(same_text):.2f}-{max(same_text):.2f}" if len(same_text) > 1 else f"{same_text[0]:.2f}"
    print(f"  set_fact over a raw add of the same text (the key in words, then the value): {spread}")
    intervals = ", ".join(
        f"{r['set_fact']['vs_raw_add_fact_low']:.2f}-{r['set_fact']['vs_raw_add_fact_high']:.2f}" for r in runs
    )
    print(f"  {'':<9} 90 % intervals of each run's ratio (rounds resampled): {intervals}")


if __name__ == "__main__":
    main()
