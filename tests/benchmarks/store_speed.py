"""Store and large-value speed: ``MemtendStore`` put and get, and an 8 MB message through ``MemtendSaver`` and
``MemtendStore``, beside LangGraph's own backends, in one process, with interleaved repetitions.

Cases (each timed once per repetition; the order rotates every repetition, so a slow spell of the machine falls on
every backend alike; the figure is the median, with the minimum beside it):

* ``store.put``: one item (``{"text": ~12 words, "category", "n"}``, a new key each time) with ``index`` on
  ``["text"]``: ``memtend`` (``MemtendStore`` on embedded Chroma, memtend's model), ``in_memory`` (``InMemoryStore``
  with the same model through LangChain's ``Embeddings``), ``sqlite`` (``SqliteStore``, no index: it has no vector
  search without sqlite-vec). Beside them ``raw_chroma``: one upsert of a tiny row into a raw collection (the floor
  of any durable Chroma write).
* ``store.get``: one item by key, of the ``--items`` put before the timed repetitions; ``raw_chroma``: one id get.
* ``large.checkpoint_put`` / ``large.store_put``: a checkpoint holding one ``HumanMessage`` of ``--large-mb`` MB
  (``MemtendSaver`` against ``SqliteSaver``), and a store item of that text (``MemtendStore`` against
  ``SqliteStore``, no index), a new checkpoint / key and a new text each time (a message the saver's gate has read
  before is known clean by a digest and not read again, so a repeated text would time that cache instead).

The load average is read before and after the timed repetitions and printed beside the figures.

    uv run python tests/benchmarks/store_speed.py [--reps 15] [--items 200] [--large-reps 3] [--large-mb 8] [--json]

``run(reps, items, large_reps, large_mb)`` returns the figures as a dict (a smoke test calls it small).
"""

from __future__ import annotations

import argparse
import itertools
import json
import os
import shutil
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from contextlib import ExitStack
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
if str(HERE) not in sys.path:
    sys.path.insert(0, str(HERE))

import langgraph_adapters  # noqa: E402

Case = Callable[[], None]
USER = "bench-user"


def large_text(megabytes: float) -> str:
    """English-like words with digits among them (what the write gate's number detectors read), ``megabytes`` MB."""
    size = int(megabytes * 1_000_000)
    words = "deploy the billing service to staging after refund ticket 42 is closed on 2024-05-01".split()
    text = " ".join(itertools.islice(itertools.cycle(words), size // 5 + 1))
    return text[:size]


def store_cases(stack: ExitStack, folder: Path, items: int) -> dict[tuple[str, str], Case]:
    import chromadb
    from langchain_core.embeddings import Embeddings
    from langgraph.store.memory import InMemoryStore
    from langgraph.store.sqlite import SqliteStore
    from memtend import Memory
    from memtend.storage.embeddings import default_embedding_function
    from memtend_langgraph import MemtendStore

    embedding_function = default_embedding_function()
    memory = stack.enter_context(Memory(path=folder / "store-memtend", embedding_function=embedding_function))
    index: Any = {"dims": 384, "fields": ["text"]}
    embeddings = type("ModelEmbeddingsLC", (langgraph_adapters.ModelEmbeddings, Embeddings), {})(embedding_function)
    sqlite = stack.enter_context(SqliteStore.from_conn_string(str(folder / "store.sqlite")))
    sqlite.setup()
    stores = {
        "memtend": MemtendStore(memory, user_label=0, index=index),
        "in_memory": InMemoryStore(index={**index, "embed": embeddings}),
        "sqlite": sqlite,
    }
    rows = langgraph_adapters.items(items, 0)
    for store in stores.values():
        for namespace, key, value in rows:
            store.put(namespace, key, value)
    raw = chromadb.PersistentClient(path=str(folder / "raw")).get_or_create_collection("raw_rows")
    raw.upsert(ids=["probe"], embeddings=[[0.0]], documents=["{}"], metadatas=[{"k": "v"}])
    fresh = itertools.count()
    cases: dict[tuple[str, str], Case] = {}
    for name, store in stores.items():

        def put(store: Any = store, name: str = name) -> None:
            n = next(fresh)
            store.put(("user-1", "memories"), f"new-{n}", {"text": langgraph_adapters.sentence(_rng(n), 12), "n": n})

        def get(store: Any = store) -> None:
            namespace, key, _ = rows[next(fresh) % len(rows)]
            assert store.get(namespace, key) is not None

        cases[("store.put", name)] = put
        cases[("store.get", name)] = get

    def raw_put() -> None:
        raw.upsert(ids=[f"r{next(fresh)}"], embeddings=[[0.0]], documents=["{}"], metadatas=[{"k": "v"}])

    def raw_get() -> None:
        assert raw.get(ids=["probe"], include=["documents", "metadatas"])["ids"]

    cases[("store.put", "raw_chroma")] = raw_put
    cases[("store.get", "raw_chroma")] = raw_get
    return cases


def _rng(n: int) -> Any:
    import random

    return random.Random(n)


def large_cases(stack: ExitStack, folder: Path, megabytes: float) -> dict[tuple[str, str], Case]:
    from langchain_core.messages import HumanMessage
    from langgraph.checkpoint.base import empty_checkpoint
    from langgraph.checkpoint.base.id import uuid6
    from langgraph.checkpoint.sqlite import SqliteSaver
    from langgraph.store.sqlite import SqliteStore
    from memtend import Memory
    from memtend.storage.embeddings import default_embedding_function
    from memtend_langgraph import MemtendSaver, MemtendStore

    text = large_text(megabytes)
    memory = stack.enter_context(Memory(path=folder / "large-memtend", embedding_function=default_embedding_function()))
    savers = {
        "memtend": MemtendSaver(memory),
        "sqlite": stack.enter_context(SqliteSaver.from_conn_string(str(folder / "large-saver.sqlite"))),
    }
    sqlite_store = stack.enter_context(SqliteStore.from_conn_string(str(folder / "large-store.sqlite")))
    sqlite_store.setup()
    stores = {"memtend": MemtendStore(memory, user_label=0), "sqlite": sqlite_store}
    fresh = itertools.count()
    cases: dict[tuple[str, str], Case] = {}
    for name, saver in savers.items():

        def put_checkpoint(saver: Any = saver) -> None:
            n = next(fresh)
            checkpoint = empty_checkpoint()
            checkpoint["id"] = str(uuid6(clock_seq=n))
            checkpoint["channel_values"] = {"messages": [HumanMessage(f"{n} {text}")]}  # new text: read by the gate
            checkpoint["channel_versions"] = {"messages": f"{n + 1:032}.0"}
            config = {"configurable": {"thread_id": f"t{n}", "checkpoint_ns": "", "user_id": USER}}
            saver.put(config, checkpoint, {"source": "input", "step": -1, "parents": {}}, {})

        cases[("large.checkpoint_put", name)] = put_checkpoint
    for name, store in stores.items():

        def put_item(store: Any = store) -> None:
            n = next(fresh)
            store.put((USER, "files"), f"big-{n}", {"text": f"{n} {text}"})

        cases[("large.store_put", name)] = put_item
    return cases


def timed_rounds(cases: dict[tuple[str, str], Case], reps: int) -> dict[tuple[str, str], list[float]]:
    for case in cases.values():  # one untimed pass: imports, models and first connections
        case()
    samples: dict[tuple[str, str], list[float]] = {}
    order = list(cases)
    for rep in range(reps):
        shift = rep % len(order)
        for key in order[shift:] + order[:shift]:
            started = time.perf_counter()
            cases[key]()
            samples.setdefault(key, []).append((time.perf_counter() - started) * 1000)
    return samples


def run(reps: int = 15, items: int = 200, large_reps: int = 3, large_mb: float = 8.0) -> dict[str, Any]:
    folder = Path(tempfile.mkdtemp(prefix="memtend-store-bench-"))
    try:
        with ExitStack() as stack:
            small = store_cases(stack, folder, items)
            large = large_cases(stack, folder, large_mb)
            load_start = os.getloadavg()
            samples = timed_rounds(small, reps)
            samples.update(timed_rounds(large, large_reps))
            load_end = os.getloadavg()
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    rows: dict[str, dict[str, dict[str, float]]] = {}
    for (name, backend), times in samples.items():
        rows.setdefault(name, {})[backend] = {"median_ms": statistics.median(times), "min_ms": min(times)}
    ratios = {
        f"{name} memtend/{peer}": backends["memtend"]["median_ms"] / figures["median_ms"]
        for name, backends in rows.items()
        for peer, figures in backends.items()
        if peer != "memtend"
    }
    return {
        "reps": reps,
        "items": items,
        "large_reps": large_reps,
        "large_mb": large_mb,
        "cpus": os.cpu_count(),
        "load_average_start": list(load_start),
        "load_average_end": list(load_end),
        "rows": rows,
        "ratios": ratios,
    }


def print_report(report: dict[str, Any]) -> None:
    start = ", ".join(f"{x:.2f}" for x in report["load_average_start"])
    end = ", ".join(f"{x:.2f}" for x in report["load_average_end"])
    print(
        f"{report['reps']} interleaved repetitions ({report['large_reps']} of the {report['large_mb']:g} MB cases), "
        f"{report['items']} items stored; {report['cpus']} cpus; load average (1, 5, 15 min) {start} before, "
        f"{end} after"
    )
    print(f"\n{'case':<24}{'backend':<12}{'median ms':>12}{'min ms':>12}{'memtend/it':>12}")
    for name, backends in report["rows"].items():
        for backend, figures in backends.items():
            ratio = report["ratios"].get(f"{name} memtend/{backend}")
            shown = f"{ratio:12.2f}" if ratio is not None else ""
            print(f"{name:<24}{backend:<12}{figures['median_ms']:12.2f}{figures['min_ms']:12.2f}{shown}")


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--reps", type=int, default=15)
    parser.add_argument("--items", type=int, default=200)
    parser.add_argument("--large-reps", type=int, default=3)
    parser.add_argument("--large-mb", type=float, default=8.0)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    report = run(args.reps, args.items, args.large_reps, args.large_mb)
    if args.json:
        print(json.dumps(report, indent=2))
    else:
        print_report(report)


if __name__ == "__main__":
    main()
