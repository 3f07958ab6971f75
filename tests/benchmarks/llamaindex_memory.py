"""MemtendMemory against LlamaIndex's own Memory on its default SQLite chat store: aput and aget over one session.

Both memories get the same session of ``n`` messages (user and assistant turns of about 25 words, one ``aput``
each, as an agent writes them), then ``gets`` rounds of one more ``aput`` and an ``aget`` (as an agent reads before
each model call; only the read is timed), then ``gets`` reads with nothing new in between. Both
run in the same process, one after the other; the figures are milliseconds per call and memtend / LlamaIndex
ratios (below 1 means memtend is faster). memtend's store is embedded Chroma on disk; LlamaIndex's is its default
``SQLAlchemyChatStore`` (SQLite in memory, through aiosqlite). The floor under memtend's ``aput`` is also printed:
one single-row upsert into a plain on-disk Chroma collection, per message.

    uv run python tests/benchmarks/llamaindex_memory.py            # 1,000 messages
    uv run python tests/benchmarks/llamaindex_memory.py --n 200
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import tempfile
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

from llama_index.core.base.llms.types import ChatMessage
from llama_index.core.memory import Memory as LlamaMemory
from memtend import Memory
from memtend_llamaindex import MemtendMemory

WORDS = "deploy billing staging release backup schema migration rollback customer invoice ticket queue".split()


def session_messages(n: int) -> list[ChatMessage]:
    out = []
    for i in range(n):
        words = " ".join(WORDS[(i * 7 + j) % len(WORDS)] for j in range(25))
        role = "user" if i % 2 == 0 else "assistant"
        out.append(ChatMessage(role=role, content=f"turn {i}: {words}"))
    return out


async def _time_each(calls: list[Callable[[], Awaitable[Any]]]) -> list[float]:
    times = []
    for call in calls:
        start = time.perf_counter()
        await call()
        times.append((time.perf_counter() - start) * 1000)
    return times


async def measure(memory: Any, messages: list[ChatMessage], gets: int) -> dict[str, float]:
    put_times = await _time_each([lambda m=m: memory.aput(m) for m in messages])
    get_times = []
    for i in range(gets):  # as in an agent loop: a new message, then a read (only the read is timed)
        await memory.aput(ChatMessage(role="user", content=f"follow-up {i}: what changed in the billing release?"))
        get_times += await _time_each([memory.aget])
    repeat_times = await _time_each([memory.aget for _ in range(gets)])  # reads with nothing new in between
    shown = await memory.aget()
    return {
        "aput_ms": statistics.mean(put_times),
        "aput_last100_ms": statistics.mean(put_times[-100:]),
        "aget_ms": statistics.median(get_times),
        "aget_repeat_ms": statistics.median(repeat_times),
        "shown_messages": float(len(shown)),
        "stored_messages": float(len(await memory.aget_all())),
    }


def chroma_upsert_ms(folder: Path, messages: list[ChatMessage]) -> float:
    """The storage floor: one single-row upsert per message into a plain on-disk Chroma collection."""
    import chromadb

    collection = chromadb.PersistentClient(path=str(folder)).get_or_create_collection("floor", embedding_function=None)
    times = []
    for i, message in enumerate(messages):
        start = time.perf_counter()
        collection.upsert(ids=[f"m{i}"], embeddings=[[0.0]], documents=[message.model_dump_json()])
        times.append((time.perf_counter() - start) * 1000)
    return statistics.mean(times)


async def run_async(n: int, gets: int, folder: Path) -> dict[str, dict[str, float]]:
    messages = session_messages(n)
    with Memory(path=folder / "memtend") as mem:
        ours = MemtendMemory.from_defaults(user_id="bench", session_id="s1", memory=mem)
        memtend_figures = await measure(ours, messages, gets)
    upstream = LlamaMemory.from_defaults(session_id="s1")
    llama_figures = await measure(upstream, [m.model_copy() for m in messages], gets)
    floor = {"aput_ms": chroma_upsert_ms(folder / "chroma", messages)}
    return {"memtend": memtend_figures, "llamaindex": llama_figures, "chroma": floor}


def run(n: int = 1000, gets: int = 20, folder: Path | None = None) -> dict[str, dict[str, float]]:
    with tempfile.TemporaryDirectory(prefix="memtend-li-bench-") as tmp:
        return asyncio.run(run_async(n, gets, Path(folder or tmp)))


def report(figures: dict[str, dict[str, float]], n: int) -> None:
    ours, theirs = figures["memtend"], figures["llamaindex"]
    print(f"one session of {n} messages, same process, memtend vs LlamaIndex Memory (default SQLite chat store)")
    print(f"{'':30}{'memtend':>12}{'LlamaIndex':>12}{'ratio':>9}")
    for key, label in (
        ("aput_ms", "aput, ms (mean)"),
        ("aput_last100_ms", "aput, last 100, ms (mean)"),
        ("aget_ms", "aget after aput, ms (median)"),
        ("aget_repeat_ms", "aget again, ms (median)"),
    ):
        print(f"{label:30}{ours[key]:12.2f}{theirs[key]:12.2f}{ours[key] / theirs[key]:9.2f}")
    floor = figures["chroma"]["aput_ms"]
    print(f"{'Chroma alone: one upsert, ms':30}{floor:12.2f}{'':12}{ours['aput_ms'] / floor:9.2f}  (memtend aput / it)")
    print(f"{'messages shown by aget':30}{ours['shown_messages']:12.0f}{theirs['shown_messages']:12.0f}")
    print(f"{'messages stored':30}{ours['stored_messages']:12.0f}{theirs['stored_messages']:12.0f}")


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--n", type=int, default=1000)
    parser.add_argument("--gets", type=int, default=20)
    args = parser.parse_args()
    report(run(args.n, args.gets), args.n)
