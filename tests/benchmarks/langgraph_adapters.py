"""LangGraph adapters benchmark: MemtendSaver and MemtendStore against LangGraph's own backends, in one run.

Checkpointer: ``MemtendSaver`` (embedded Chroma on disk) against ``InMemorySaver`` and ``SqliteSaver`` (a file),
over ``--checkpoints`` checkpoints of one thread, each a realistic agent state (a transcript of ``--messages``
chat messages of about 300 characters, growing by one per step): ``put`` (each the child of the previous one),
``put_writes`` (two writes per checkpoint), ``get_tuple`` by id, and ``list`` (the whole thread, and the newest 10).
Beside them, one tuned Chroma write: an ``upsert`` of the same bytes (base64 in ``documents``, a 1-d embedding)
into a raw collection, the floor for a checkpoint put (goal: a put within 1.5x of it).

Store: ``MemtendStore`` (fields ``["text"]`` embedded with memtend's model) against ``InMemoryStore`` (the same
model through LangChain's ``Embeddings``) and ``SqliteStore`` (a file; no vector search without sqlite-vec), over
``--items`` items: ``put`` one at a time, ``get``, a filtered ``search`` and a ``query`` search (limit 10).

Every figure is milliseconds per operation; the ratios are memtend over each peer, measured in the same run.

    uv run python tests/benchmarks/langgraph_adapters.py [--checkpoints 1000] [--items 10000] [--json]

``run(checkpoints, items, messages, seed)`` returns the numbers as a dict (a smoke test calls it small).
"""

from __future__ import annotations

import argparse
import base64
import json
import random
import shutil
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

WORDS = (
    "deploy billing service staging production rollback ticket customer refund invoice order shipment "
    "database migration schema index query latency error timeout retry queue worker cache session token "
    "user prefers short answers weekly report meeting calendar reminder travel hotel flight budget"
).split()


def sentence(rng: random.Random, words: int) -> str:
    return " ".join(rng.choice(WORDS) for _ in range(words))


@contextmanager
def timed(out: dict[str, float], name: str, count: int) -> Iterator[None]:
    started = time.perf_counter()
    yield
    out[name] = (time.perf_counter() - started) * 1000 / max(count, 1)


# ---------------------------------------------------------------------------------------------------- checkpointer
def checkpoints(n: int, messages: int, seed: int) -> list[dict[str, Any]]:
    from langgraph.checkpoint.base import empty_checkpoint
    from langgraph.checkpoint.base.id import uuid6

    rng = random.Random(seed)
    transcript = [{"role": "user", "content": sentence(rng, 45)} for _ in range(messages)]
    out = []
    for step in range(n):
        transcript = [*transcript[1:], {"role": rng.choice(["user", "assistant"]), "content": sentence(rng, 45)}]
        checkpoint = empty_checkpoint()
        checkpoint["id"] = str(uuid6(clock_seq=step))
        checkpoint["channel_values"] = {"messages": list(transcript), "step": step}
        checkpoint["channel_versions"] = {"messages": f"{step + 1:032}.0", "step": f"{step + 1:032}.0"}
        out.append(checkpoint)
    return out


def bench_saver(saver: Any, cps: list[dict[str, Any]], thread: str, extra: dict[str, Any]) -> dict[str, float]:
    out: dict[str, float] = {}
    configs = []
    parent = {"configurable": {"thread_id": thread, "checkpoint_ns": "", **extra}}
    with timed(out, "put", len(cps)):
        for step, checkpoint in enumerate(cps):
            stored = saver.put(parent, checkpoint, {"source": "loop", "step": step, "parents": {}}, {})
            parent = {"configurable": {**stored["configurable"], **extra}}
            configs.append(parent)
    with timed(out, "put_writes", len(cps)):
        for step, config in enumerate(configs):
            saver.put_writes(config, [("messages", {"step": step}), ("step", step)], task_id=f"task-{step}")
    with timed(out, "get_tuple", len(cps)):
        for config in configs:
            assert saver.get_tuple(config) is not None
    thread_config = {"configurable": {"thread_id": thread, **extra}}
    with timed(out, "list_all", 1):
        assert len(list(saver.list(thread_config))) == len(cps)
    with timed(out, "list_10", 1):
        assert len(list(saver.list(thread_config, limit=10))) == 10
    return out


def bench_raw_chroma_write(client: Any, cps: list[dict[str, Any]]) -> float:
    """One tuned Chroma write per checkpoint: the serialized bytes, base64, in one upsert with a 1-d embedding."""
    from langgraph.checkpoint.serde.jsonplus import JsonPlusSerializer

    serde = JsonPlusSerializer()
    collection = client.get_or_create_collection("raw_checkpoints", embedding_function=None)
    payloads = [base64.b64encode(serde.dumps_typed(c)[1]).decode() for c in cps]
    started = time.perf_counter()
    for checkpoint, payload in zip(cps, payloads, strict=True):
        collection.upsert(ids=[checkpoint["id"]], documents=[payload], embeddings=[[0.0]], metadatas=[{"t": "x"}])
    return (time.perf_counter() - started) * 1000 / len(cps)


# ---------------------------------------------------------------------------------------------------- store
def items(n: int, seed: int) -> list[tuple[tuple[str, ...], str, dict[str, Any]]]:
    rng = random.Random(seed)
    return [
        (("user-1", "memories"), f"m{i}", {"text": sentence(rng, 12), "category": f"c{i % 10}", "n": i})
        for i in range(n)
    ]


def bench_store(store: Any, rows: list[tuple[tuple[str, ...], str, dict[str, Any]]], query: bool) -> dict[str, float]:
    out: dict[str, float] = {}
    rng = random.Random(1)
    with timed(out, "put", len(rows)):
        for namespace, key, value in rows:
            store.put(namespace, key, value)
    probes = [rng.choice(rows) for _ in range(min(200, len(rows)))]
    with timed(out, "get", len(probes)):
        for namespace, key, _ in probes:
            assert store.get(namespace, key) is not None
    with timed(out, "search_filter", len(probes)):
        for namespace, _, value in probes:
            assert store.search(namespace, filter={"category": value["category"]}, limit=10)
    if query:
        with timed(out, "search_query", len(probes)):
            for namespace, _, value in probes:
                assert store.search(namespace, query=value["text"], limit=10)
    return out


class ModelEmbeddings:
    """memtend's embedding model behind LangChain's Embeddings interface, so InMemoryStore ranks with it too."""

    def __init__(self, embedding_function: Any) -> None:
        self.fn = embedding_function

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        return [list(map(float, v)) for v in self.fn(texts)]

    def embed_query(self, text: str) -> list[float]:
        return self.embed_documents([text])[0]


# ---------------------------------------------------------------------------------------------------- run
def run(checkpoints_n: int = 1000, items_n: int = 10_000, messages: int = 20, seed: int = 0) -> dict[str, Any]:
    import chromadb
    from langchain_core.embeddings import Embeddings
    from langgraph.checkpoint.memory import InMemorySaver
    from langgraph.checkpoint.sqlite import SqliteSaver
    from langgraph.store.memory import InMemoryStore
    from langgraph.store.sqlite import SqliteStore
    from memtend import Memory
    from memtend.storage.embeddings import default_embedding_function
    from memtend_langgraph import MemtendSaver, MemtendStore

    folder = Path(tempfile.mkdtemp(prefix="memtend-lg-bench-"))
    report: dict[str, Any] = {"checkpoints": checkpoints_n, "items": items_n}
    try:
        cps = checkpoints(checkpoints_n, messages, seed)
        from langgraph.checkpoint.serde.jsonplus import JsonPlusSerializer

        report["checkpoint_bytes"] = len(JsonPlusSerializer().dumps_typed(cps[-1])[1])
        embedding_function = default_embedding_function()
        savers: dict[str, dict[str, float]] = {}
        with Memory(path=folder / "memtend", embedding_function=embedding_function) as memory:
            savers["memtend"] = bench_saver(MemtendSaver(memory), cps, "t", {"user_id": "user-1"})
        savers["in_memory"] = bench_saver(InMemorySaver(), cps, "t", {})
        with SqliteSaver.from_conn_string(str(folder / "saver.sqlite")) as sqlite_saver:
            savers["sqlite"] = bench_saver(sqlite_saver, cps, "t", {})
        raw_client = chromadb.PersistentClient(path=str(folder / "raw"))
        report["raw_chroma_write_ms"] = bench_raw_chroma_write(raw_client, cps)
        report["saver"] = savers

        rows = items(items_n, seed)
        stores: dict[str, dict[str, float]] = {}
        with Memory(path=folder / "memtend-store", embedding_function=embedding_function) as memory:
            store = MemtendStore(memory, user_label=0, index={"dims": 384, "fields": ["text"]})  # type: ignore[typeddict-item]
            stores["memtend"] = bench_store(store, rows, query=True)
        embeddings = type("ModelEmbeddingsLC", (ModelEmbeddings, Embeddings), {})(embedding_function)
        stores["in_memory"] = bench_store(
            InMemoryStore(index={"dims": 384, "embed": embeddings, "fields": ["text"]}), rows, query=True
        )
        with SqliteStore.from_conn_string(str(folder / "store.sqlite")) as sqlite_store:
            sqlite_store.setup()
            stores["sqlite"] = bench_store(sqlite_store, rows, query=False)
        report["store"] = stores
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    report["ratios"] = ratios(report)
    return report


def ratios(report: dict[str, Any]) -> dict[str, float]:
    out: dict[str, float] = {}
    for part in ("saver", "store"):
        mine = report[part]["memtend"]
        for peer in ("in_memory", "sqlite"):
            for op, ms in mine.items():
                theirs = report[part][peer].get(op)
                if theirs:
                    out[f"{part}.{op} / {peer}"] = ms / theirs
    out["saver.put / raw chroma write"] = report["saver"]["memtend"]["put"] / report["raw_chroma_write_ms"]
    return out


def print_report(report: dict[str, Any]) -> None:
    print(f"checkpoints: {report['checkpoints']} of {report['checkpoint_bytes']:,} bytes; items: {report['items']}")
    for part in ("saver", "store"):
        ops = list(report[part]["memtend"])
        print(f"\n{part} (ms per op)  " + "".join(f"{op:>14}" for op in ops))
        for name, numbers in report[part].items():
            print(f"{name:>18}  " + "".join(f"{numbers.get(op, float('nan')):>14.3f}" for op in ops))
    print(f"\none tuned raw Chroma write: {report['raw_chroma_write_ms']:.3f} ms")
    print("\nratios (memtend / peer, same run):")
    for name, value in report["ratios"].items():
        print(f"  {name:<40} {value:8.2f}")


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--checkpoints", type=int, default=1000)
    parser.add_argument("--items", type=int, default=10_000)
    parser.add_argument("--messages", type=int, default=20)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    report = run(args.checkpoints, args.items, args.messages, args.seed)
    print(json.dumps(report, indent=2) if args.json else "", end="")
    if not args.json:
        print_report(report)


if __name__ == "__main__":
    main()
