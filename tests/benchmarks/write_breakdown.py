"""Where a single ``remember`` spends its time beyond a raw Chroma add: the raw add of one document beside the same
write made in steps towards memtend's, and memtend's own call, timed interleaved in one run with one embedding
function (each round times every operation once, in an order shuffled from round to round).

Operations (each writes a collection of its own, so every collection grows alike):

- ``raw_add``: the peer of ``single_write.py``: ``add(ids, documents)`` on a collection made with Chroma's defaults;
- ``cfg_add``: the same call on a collection made with memtend's configuration of its memories collection;
- ``vec_add``: the text embedded first, then ``add(ids, embeddings, metadatas)`` with the metadata memtend writes
  for a note (no document), on a collection as memtend opens it (configuration, schema read once);
- ``vec_upsert``: the same row written with ``upsert``;
- ``vec_upsert_mark``: ``upsert`` of that row and a change-mark-like row (one fixed id, rewritten by every write,
  its metadata as memtend's: the writer's token and its last 32 writes' ids) in one call: what a write on a shared
  store sent before the marks were folded into the record rows;
- ``remember``: memtend's call (on a shared store, ``--backend server``, a store other processes may write, its
  change mark is folded into the record's row: one row added, see ``storage.ChangeMarks``);
- ``remember_mark_row``: the same call on a store of its own whose every write moves the process's mark row
  instead (a 2-row upsert: what a shared store's single write sent before folded marks); the same as ``remember``
  where no other process can write the store (``--backend persistent``);
- ``remember_gate_first``: the same call with its gate run before the embedding instead of on a helper beside it
  (an A/B of ``Memory.gated_beside_embedding`` in the same run);
- ``embed``: the embedding alone.

The metadata of ``vec_*`` is copied from what memtend's own ``remember`` writes (captured once, before timing).

    uv run python tests/benchmarks/write_breakdown.py [--n 150] [--backend persistent|ephemeral|server]
"""

from __future__ import annotations

import argparse
import json
import random
import statistics
import sys
import tempfile
import time
import uuid
from collections import deque
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
from memtend import Memory
from memtend.storage.chroma import history_vector
from memtend.storage.chroma import schema_read_once as _schema_read_once

sys.path.insert(0, str(Path(__file__).parent))  # the sibling script, also when a smoke test loads this one by path
from single_write import _client, _load

OPERATIONS = (
    "raw_add",
    "cfg_add",
    "vec_add",
    "vec_upsert",
    "vec_upsert_mark",
    "remember",
    "remember_mark_row",
    "remember_gate_first",
    "embed",
)
_MEMORIES_CONFIG = {"hnsw": {"space": "cosine", "sync_threshold": 100, "ef_construction": 16, "max_neighbors": 4}}


def _captured_meta(memory: Memory) -> dict[str, Any]:
    """The metadata memtend writes for a note's row (captured from one ``remember``)."""
    col = memory.storage.memories
    seen: list[dict[str, Any]] = []

    def capture(real: Callable[..., Any]) -> Callable[..., Any]:
        def call(*args: Any, **kwargs: Any) -> Any:
            seen.extend(kwargs["metadatas"])
            return real(*args, **kwargs)

        return call

    for method in ("add", "upsert"):
        setattr(col, method, capture(getattr(col, method)))
    try:
        memory.user("template-user").remember("a note to copy the shape of memtend's metadata from")
    finally:
        for method in ("add", "upsert"):
            delattr(col, method)
    return next(m for m in seen if "user_id" in m)


def run(n: int, backend: str, warmup: int = 5, embedding_function: Any = None) -> dict[str, dict[str, float]]:
    """Time ``n`` rounds; returns {operation: {p50_ms, vs_raw_add, over_embed_ms}}."""
    from memtend.storage.embeddings import default_embedding_function

    ef = embedding_function if embedding_function is not None else default_embedding_function()
    with tempfile.TemporaryDirectory(prefix="memtend-write-breakdown-") as folder, _client(backend, folder) as client:
        memory = Memory(client=client, embedding_function=ef, collection_prefix="bench")
        template = _captured_meta(memory)
        user = memory.user("bench-user")
        marking = Memory(client=client, embedding_function=ef, collection_prefix="bench_marks")
        note_write = marking._state.note_write
        marking._state.note_write = lambda uid, ids, foldable=False: note_write(uid, ids, False)  # type: ignore[method-assign]
        marking_user = marking.user("bench-user")
        raw = client.get_or_create_collection("raw_peer", embedding_function=ef)
        cfg = client.get_or_create_collection("cfg_peer", embedding_function=ef, configuration=_MEMORIES_CONFIG)
        steps = {  # as memtend opens its collections: its configuration, the schema read once
            name: _schema_read_once(
                client.get_or_create_collection(name, embedding_function=ef, configuration=_MEMORIES_CONFIG)
            )
            for name in ("vec_add", "vec_upsert", "vec_upsert_mark")
        }
        counter = iter(range(10**9))
        writer = uuid.uuid4().hex
        recent: deque[tuple[int, list[str]]] = deque(maxlen=32)
        mark_id = "mark:" + uuid.uuid4().hex[:40]

        def text(kind: str) -> str:
            i = next(counter)
            return f"{kind} {i}: the user mentioned project apollo number {i * 7919 % 10007} and a deadline"

        def row(kind: str) -> tuple[str, np.ndarray, dict[str, Any]]:
            body = text(kind)
            vector = np.asarray(ef([body]), dtype=np.float32)[0]
            packed = {**json.loads(str(template["r"])), "text": body, "created_at": time.time()}
            meta = {**template, "r": json.dumps(packed), "last_used_at": time.time()}
            return uuid.uuid4().hex, vector, meta

        def vec(name: str, method: str) -> None:
            rid, vector, meta = row(name)
            getattr(steps[name], method)(ids=[rid], embeddings=np.asarray([vector]), metadatas=[meta])

        def vec_upsert_mark() -> None:
            rid, vector, meta = row("mark")
            seq = next(counter)
            recent.append((seq, [rid]))
            mark = {"m_user": "bench-user", "token": f"{writer[:16]}:{seq}", "recent": json.dumps(list(recent))}
            steps["vec_upsert_mark"].upsert(
                ids=[rid, mark_id],
                embeddings=np.asarray([vector, history_vector(mark_id, len(vector))]),
                metadatas=[meta, mark],
            )

        def gate_first(call: Callable[[], Any]) -> None:  # as before 8242658: the gate, then the embedding
            memory.gated_beside_embedding = lambda text, gate: (gate(), {})  # type: ignore[method-assign]
            try:
                call()
            finally:
                del memory.gated_beside_embedding

        ops: dict[str, Callable[[], Any]] = {
            "raw_add": lambda: raw.add(ids=[uuid.uuid4().hex], documents=[text("raw")]),
            "cfg_add": lambda: cfg.add(ids=[uuid.uuid4().hex], documents=[text("cfg")]),
            "vec_add": lambda: vec("vec_add", "add"),
            "vec_upsert": lambda: vec("vec_upsert", "upsert"),
            "vec_upsert_mark": vec_upsert_mark,
            "remember": lambda: user.remember(text("note")),
            "remember_mark_row": lambda: marking_user.remember(text("note")),
            "remember_gate_first": lambda: gate_first(lambda: user.remember(text("note"))),
            "embed": lambda: ef([text("embed")]),
        }
        times: dict[str, list[float]] = {op: [] for op in OPERATIONS}
        order = list(OPERATIONS)
        shuffler = random.Random(0)
        for round_no in range(warmup + n):
            shuffler.shuffle(order)
            for op in order:
                start = time.perf_counter()
                ops[op]()
                elapsed = time.perf_counter() - start
                if round_no >= warmup:
                    times[op].append(elapsed * 1000)
        memory.close()
        marking.close()
    p50 = {op: statistics.median(ts) for op, ts in times.items()}
    return {
        op: {"p50_ms": p50[op], "vs_raw_add": p50[op] / p50["raw_add"], "over_embed_ms": p50[op] - p50["embed"]}
        for op in OPERATIONS
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--n", type=int, default=150, help="timed rounds (each times every operation once)")
    parser.add_argument("--backend", choices=("persistent", "ephemeral", "server"), default="persistent")
    parser.add_argument("--runs", type=int, default=1)
    args = parser.parse_args()
    for number in range(1, args.runs + 1):
        before = _load()
        results = run(args.n, args.backend)
        print(f"run {number}/{args.runs}: {args.n} rounds on {args.backend} Chroma; {before} at the start")
        print(f"{'operation':<20} {'p50 ms':>8} {'p50/raw add':>12} {'p50 - embed':>12}")
        for op, r in results.items():
            print(f"{op:<20} {r['p50_ms']:8.2f} {r['vs_raw_add']:12.2f} {r['over_embed_ms']:12.2f}")
        print()


if __name__ == "__main__":
    main()
