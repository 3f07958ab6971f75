"""Batch ingest: memtend's ``log_many`` beside the embedding model alone on the same texts and the same batches.

The peer is exactly what ``log_many`` embeds with: the embedding function instance the ``Memory`` holds, called
on the same list of texts (so the same ONNX session, threads, batching by length and 256-token truncation). The
store is an embedded folder (``PersistentClient`` on disk) that grows as the run goes: ``--repeats`` repeats of
``--batches`` batches of ``--batch`` events each, round robin over ``--users`` users, with the texts, times and
sessions of the scale benchmark's generated corpus. Every batch is timed both ways, one right after the other,
the order alternating from batch to batch, so the machine's load hits both sides alike. Nothing of ``log_many``
runs on after it returns (which would stall the peer: a Chroma call holds the GIL): on an embedded folder the
journal row of a batch stored in several calls is deleted inside the next batch's call, and timed there.

Printed: per repeat, the embedder's time over ``log_many``'s (the ingest ratio: 1.0 means ``log_many`` runs at
the embedding model's own speed), and their median and spread over the repeats and over single batches; and
where ``log_many``'s time went: the embedding inside it, the Chroma write calls, and the rest (gate, record
building, index update, journal, locks).

    uv run python tests/benchmarks/ingest.py [--repeats 5] [--batches 8] [--batch 100] [--users 20]
        [--prefill 0] [--warm-index] [--json]

``run(...)`` returns the numbers as a dict (a smoke test calls it small).
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import statistics
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from types import ModuleType
from typing import Any

import chromadb
from memtend import Memory
from memtend.results import Event

TARGET = 0.95  # log_many throughput / the embedding model's throughput on the same batches (issue 16)
_WRITES = ("add", "upsert", "update", "delete")


def _scale() -> ModuleType:
    """The scale benchmark's corpus generator (its texts, times and sessions), imported from its file."""
    name = "memtend_benchmark_scale"
    if name in sys.modules:
        return sys.modules[name]
    spec = importlib.util.spec_from_file_location(name, Path(__file__).with_name("scale.py"))
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


def batches(count: int, size: int, users: int, seed: int = 0) -> list[tuple[str, list[Event]]]:
    """``count`` batches of ``size`` events, batch i for user i mod ``users``, from the scale corpus's texts."""
    corpus = _scale().generate(count * size, users, 1, seed)
    pool = [it for uid in corpus.users for it in corpus.items[uid]]
    out = []
    for b in range(count):
        chunk = pool[b * size : (b + 1) * size]
        out.append((corpus.users[b % users], [Event(text=it.text, at=it.at, session=it.session) for it in chunk]))
    return out


class _Clock:
    """Wall time spent inside wrapped callables (the embedding function, Chroma's write calls)."""

    def __init__(self) -> None:
        self.embed_s = 0.0
        self.write_s = 0.0
        self.writes = 0

    def timed(self, fn: Callable[..., Any], slot: str) -> Callable[..., Any]:
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            start = time.perf_counter()
            try:
                return fn(*args, **kwargs)
            finally:
                elapsed = time.perf_counter() - start
                if slot == "embed":
                    self.embed_s += elapsed
                else:
                    self.write_s += elapsed
                    self.writes += 1

        return wrapper


@contextmanager
def _clocked(memory: Memory) -> Iterator[_Clock]:
    """Time memtend's embedding calls and Chroma write calls (on every collection) while the block runs."""
    clock = _Clock()
    ef = memory.embedding_function
    memory.embedding_function = clock.timed(ef, "embed")
    wrapped = []
    for col in memory.storage.collections().values():
        for method in _WRITES:
            setattr(col, method, clock.timed(getattr(col, method), "write"))
            wrapped.append((col, method))
    try:
        yield clock
    finally:
        memory.embedding_function = ef
        for col, method in wrapped:
            delattr(col, method)


def _spread(values: list[float]) -> dict[str, float]:
    return {"median": statistics.median(values), "min": min(values), "max": max(values)}


def run(
    repeats: int = 5,
    batches_per_repeat: int = 8,
    batch: int = 100,
    users: int = 20,
    *,
    prefill: int = 0,
    warm_index: bool = False,
    embedding_function: Any = None,
    seed: int = 0,
    quiet: bool = True,
) -> dict[str, Any]:
    """Time ``repeats`` x ``batches_per_repeat`` batches both ways; returns ratios and where the time went.

    ``prefill``: memories stored (untimed, in batches) before timing starts, so the store has a size already;
    ``warm_index``: each user recalls once first, so their retrieval index is cached and updated by every write
    (as in an application that recalls between writes); without it no index is loaded, as in the scale run."""
    if embedding_function is None:
        from memtend.storage.embeddings import default_embedding_function

        embedding_function = default_embedding_function()
    pre = -(-prefill // batch)
    plan = batches(pre + 1 + repeats * batches_per_repeat, batch, users, seed)
    with tempfile.TemporaryDirectory(prefix="memtend-ingest-") as folder:
        memory = Memory(client=chromadb.PersistentClient(path=folder), embedding_function=embedding_function)
        ef = memory.embedding_function  # the instance log_many embeds with: the peer calls it the same way
        for uid, events in plan[: pre + 1]:  # the prefill, and one warm-up batch (ONNX and Chroma first calls)
            memory.user(uid).log_many(events)
            ef([e.text for e in events])
        if warm_index:
            for uid in dict.fromkeys(uid for uid, _ in plan):
                memory.user(uid).recall("what happened", k=1)
        ratios: list[float] = []
        batch_ratios: list[float] = []
        embed_s = ingest_s = inner_embed_s = write_s = 0.0
        writes = changed = 0
        timed = plan[pre + 1 :]
        for r in range(repeats):
            e_sum = i_sum = 0.0
            for b, (uid, events) in enumerate(timed[r * batches_per_repeat : (r + 1) * batches_per_repeat]):
                texts = [e.text for e in events]
                user = memory.user(uid)
                e_time = i_time = 0.0
                for side in ("embed", "ingest") if (r + b) % 2 == 0 else ("ingest", "embed"):
                    if side == "embed":
                        start = time.perf_counter()
                        ef(texts)
                        e_time = time.perf_counter() - start
                    else:
                        with _clocked(memory) as clock:
                            start = time.perf_counter()
                            records = user.log_many(events)
                            i_time = time.perf_counter() - start
                        inner_embed_s += clock.embed_s
                        write_s += clock.write_s
                        writes += clock.writes
                        changed += sum(rec.text != text for rec, text in zip(records, texts, strict=True))
                e_sum += e_time
                i_sum += i_time
                batch_ratios.append(e_time / i_time)
            ratios.append(e_sum / i_sum)
            embed_s += e_sum
            ingest_s += i_sum
            if not quiet:
                print(f"  repeat {r + 1}/{repeats}: ratio {ratios[-1]:.3f}", file=sys.stderr)
        stored = memory.storage.memories.count()
        records = sum(len(memory.user(uid).list(kinds=["event"])) for uid in dict.fromkeys(uid for uid, _ in plan))
        memory.close()
    n = repeats * batches_per_repeat
    return {
        "batches": n,
        "batch": batch,
        "users": users,
        "stored_rows": stored,
        "stored_records": records,
        "ratio": _spread(ratios),
        "ratios": ratios,
        "batch_ratio": _spread(batch_ratios),
        "embed_ms_per_batch": 1e3 * embed_s / n,
        "log_many_ms_per_batch": 1e3 * ingest_s / n,
        # inside log_many (the embedding runs on a helper thread, so embed + write + rest can exceed the total)
        "inside": {
            "embed_ms": 1e3 * inner_embed_s / n,
            "chroma_write_ms": 1e3 * write_s / n,
            "chroma_writes_per_batch": writes / n,
            "rest_ms": 1e3 * (ingest_s - write_s) / n - 1e3 * inner_embed_s / n,
        },
        "texts_changed_by_gate": changed,
        "target": TARGET,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--batches", type=int, default=8, help="timed batches per repeat")
    parser.add_argument("--batch", type=int, default=100, help="events per log_many call")
    parser.add_argument("--users", type=int, default=20)
    parser.add_argument("--prefill", type=int, default=0, help="memories stored untimed before timing")
    parser.add_argument("--warm-index", action="store_true", help="each user recalls once first")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    out = run(
        args.repeats,
        args.batches,
        args.batch,
        args.users,
        prefill=args.prefill,
        warm_index=args.warm_index,
        seed=args.seed,
        quiet=args.json,
    )
    if args.json:
        print(json.dumps(out, indent=2))
        return
    r, b, inside = out["ratio"], out["batch_ratio"], out["inside"]
    print(
        f"{out['batches']} batches of {out['batch']} over {out['users']} users, embedded folder, "
        f"{out['stored_rows']:,} rows at the end"
    )
    print("ingest ratio (the embedding model's time / log_many's, same texts and batches) per repeat:")
    print("  " + "  ".join(f"{x:.3f}" for x in out["ratios"]))
    print(f"  median {r['median']:.3f}, spread {r['min']:.3f}-{r['max']:.3f} (target >= {out['target']})")
    print(f"  single batches: median {b['median']:.3f}, spread {b['min']:.3f}-{b['max']:.3f}")
    print(
        f"per batch: embedding alone {out['embed_ms_per_batch']:.1f} ms, log_many {out['log_many_ms_per_batch']:.1f} ms"
    )
    print(
        f"  inside log_many: embedding {inside['embed_ms']:.1f} ms (helper thread), Chroma writes "
        f"{inside['chroma_write_ms']:.1f} ms ({inside['chroma_writes_per_batch']:.1f} calls), the rest "
        f"{inside['rest_ms']:.1f} ms"
    )
    if out["texts_changed_by_gate"]:
        print(f"  (the gate changed {out['texts_changed_by_gate']} texts: they were embedded twice)")


if __name__ == "__main__":
    main()
