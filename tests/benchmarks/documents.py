"""Document store read latency beside a raw Chroma ``get`` with the same filter, measured in the same run.

One user holds ``--total`` documents, ``--namespace`` of them in one namespace (the rest spread over other
namespaces), and other users hold as many again. For each read the store's latency is printed next to the raw
Chroma call that reads the same rows (same where-filter, limit and offset) and the ratio (goal: within 1.5x):

- search: a page of 10 from the middle of the namespace (Chroma's own limit/offset);
- filtered search: a page of documents whose value field ``lvl`` is at least 3 (a Chroma metadata filter);
- list: ``list_namespaces`` of the user (its namespace rows);
- get: one document by key (an id read).

    uv run python tests/benchmarks/documents.py --total 100000 --namespace 10000
"""

from __future__ import annotations

import argparse
import statistics
import time
from collections.abc import Callable
from typing import Any

import chromadb
from memtend import Memory, PutDocument
from memtend.documents import DocumentStore
from memtend.storage.document_rows import doc_id, scope_code

USER = "bench-user"
NAMESPACE = ("bench", "big")


def _timed_pair(ours: Callable[[], Any], raw: Callable[[], Any], repeats: int) -> tuple[float, float, Any, Any]:
    """Median milliseconds of each, measured alternately after warming both (Chroma's first reads after a bulk
    write are slower, and the machine's load drifts: neither side gets the cold or the busy turns)."""
    for _ in range(2):
        ours()
        raw()
    ours_times, raw_times = [], []
    got = want = None
    turns = [(ours, ours_times), (raw, raw_times)]
    for _ in range(repeats):
        turns.reverse()
        for fn, times in turns:
            t = time.perf_counter()
            out = fn()
            times.append(time.perf_counter() - t)
            if fn is ours:
                got = out
            else:
                want = out
    return statistics.median(ours_times) * 1000, statistics.median(raw_times) * 1000, got, want


def _fill(memory: Memory, total: int, namespace_size: int) -> DocumentStore:
    docs = memory.documents(USER, gate="off")
    others = memory.documents("someone-else", gate="off")
    batch: list[PutDocument] = []
    for n in range(total):
        ns = NAMESPACE if n < namespace_size else ("bench", f"ns{n % 20}")
        batch.append(PutDocument(ns, f"k{n:07d}", {"lvl": n % 7, "text": f"document number {n}"}))
        if len(batch) == 2_000:
            docs.put_many(batch)
            others.put_many(batch)
            batch = []
    if batch:
        docs.put_many(batch)
        others.put_many(batch)
    return docs


def run(
    total: int = 2_000, namespace_size: int = 500, repeats: int = 5, embedding_function: Any = None
) -> dict[str, dict[str, float]]:
    """Fill an in-process Chroma and time each read beside its raw peer; returns {read: {ours, raw, ratio}}."""
    if embedding_function is None:
        from memtend.storage.embeddings import default_embedding_function

        embedding_function = default_embedding_function()
    memory = Memory(
        client=chromadb.EphemeralClient(),
        embedding_function=embedding_function,
        collection_prefix=f"bench{time.time_ns() % 10**9}",
    )
    try:
        docs = _fill(memory, total, namespace_size)
        col = memory.storage.documents.collection
        d = len(NAMESPACE)
        code = scope_code(USER, "", NAMESPACE)
        scope = {f"p{d}": code}
        middle = namespace_size // 2
        include: Any = ["documents", "metadatas"]
        results: dict[str, dict[str, float]] = {}

        Read = Callable[[], Any]

        def compare(name: str, ours: Read, raw: Read, same: Callable[[Any, Any], bool]) -> None:
            ours_ms, raw_ms, got, want = _timed_pair(ours, raw, repeats)
            assert same(got, want), f"{name}: the store and the raw call read different rows"
            results[name] = {"ours_ms": ours_ms, "raw_ms": raw_ms, "ratio": ours_ms / raw_ms}

        def same_page(got: Any, want: Any) -> bool:
            return [doc.key for doc in got] == [m["key"] for m in want["metadatas"]]

        compare(
            "search page",
            lambda: docs.search(NAMESPACE, limit=10, offset=middle),
            lambda: col.get(where=scope, limit=10, offset=middle, include=include),
            same_page,
        )
        compare(
            "filtered search",
            lambda: docs.search(NAMESPACE, filter={"lvl": {"$gte": 3}}, limit=10, offset=middle // 2),
            lambda: col.get(
                where={"$and": [scope, {"f:lvl": {"$gte": 3}}]}, limit=10, offset=middle // 2, include=include
            ),
            same_page,
        )
        compare(
            "list namespaces",
            lambda: docs.list_namespaces(),
            lambda: col.get(where={"m0": scope_code(USER, "", ())}, include=["metadatas"]),
            lambda got, want: len(got) == len(want["ids"]),
        )
        key = f"k{middle:07d}"
        compare(
            "get",
            lambda: docs.get(NAMESPACE, key),
            lambda: col.get(ids=[doc_id(USER, "", NAMESPACE, key)], include=include),
            lambda got, want: got is not None and got.key == want["metadatas"][0]["key"],
        )
        return results
    finally:
        memory.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--total", type=int, default=20_000, help="documents of the user (and of another user)")
    parser.add_argument("--namespace", type=int, default=2_000, help="documents in the namespace read")
    parser.add_argument("--repeats", type=int, default=9)
    args = parser.parse_args()
    started = time.perf_counter()
    results = run(args.total, args.namespace, args.repeats)
    print(f"{args.total} documents per user (2 users), {args.namespace} in the namespace read")
    print(f"median of {args.repeats} runs each")
    print(f"{'read':<18}{'store ms':>10}{'raw Chroma ms':>15}{'ratio':>8}")
    for name, r in results.items():
        print(f"{name:<18}{r['ours_ms']:>10.2f}{r['raw_ms']:>15.2f}{r['ratio']:>8.2f}")
    print(f"(whole run {time.perf_counter() - started:.0f} s)")


if __name__ == "__main__":
    main()
