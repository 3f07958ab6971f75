"""LangChain chat history benchmark: memtend's history beside LangChain's own, in the same run.

A session of ``n`` messages (human and AI turns, with a tool call and its result every tenth turn) is written
the way ``RunnableWithMessageHistory`` writes it (one ``add_messages`` per turn: the human message and the
answer), then read whole (``messages``) ``reads`` times. Histories:

* ``memtend``: ``MemtendChatMessageHistory`` on embedded Chroma in a temporary folder (PersistentClient);
* ``in-memory``: langchain-core's ``InMemoryChatMessageHistory`` (a Python list: the floor);
* ``sqlite``: langchain-community's ``SQLChatMessageHistory`` on a SQLite file, when it is installed.

Printed: milliseconds per ``add_messages`` call and per whole-history read, and memtend's time over each peer's.

    uv run python tests/benchmarks/langchain_history.py [--n 1000] [--reads 5] [--json]

``run(n, reads)`` returns the numbers as a dict (a smoke test calls it small).
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import Any

from langchain_core.chat_history import BaseChatMessageHistory, InMemoryChatMessageHistory
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, ToolMessage


def session(n: int) -> list[list[BaseMessage]]:
    """``n`` messages as turns (lists passed to one add_messages each)."""
    turns: list[list[BaseMessage]] = []
    count = 0
    i = 0
    while count < n:
        if i % 10 == 9 and n - count >= 4:
            turn: list[BaseMessage] = [
                HumanMessage(f"Please look up order {i} and tell me its status."),
                AIMessage("", tool_calls=[{"name": "lookup_order", "args": {"order": i}, "id": f"call_{i}"}]),
                ToolMessage(f'{{"order": {i}, "status": "shipped"}}', tool_call_id=f"call_{i}", name="lookup_order"),
                AIMessage(f"Order {i} has shipped."),
            ]
        else:
            turn = [
                HumanMessage(f"Turn {i}: what did we decide about the release schedule for component {i % 7}?"),
                AIMessage(f"For component {i % 7} we agreed to ship on the second Tuesday; item {i} is tracked."),
            ]
        turn = turn[: n - count]
        turns.append(turn)
        count += len(turn)
        i += 1
    return turns


def measure(history: BaseChatMessageHistory, turns: list[list[BaseMessage]], reads: int) -> dict[str, float]:
    writes: list[float] = []
    for turn in turns:
        start = time.perf_counter()
        history.add_messages(turn)
        writes.append(time.perf_counter() - start)
    expected = sum(len(t) for t in turns)
    read_times: list[float] = []
    for _ in range(reads):
        start = time.perf_counter()
        got = history.messages
        read_times.append(time.perf_counter() - start)
        if len(got) != expected:
            raise AssertionError(f"{type(history).__name__} returned {len(got)} of {expected} messages")
    return {
        "add_messages_ms": statistics.median(writes) * 1000,
        "add_messages_total_s": sum(writes),
        "messages_read_ms": statistics.median(read_times) * 1000,
    }


def _sqlite_history(folder: Path) -> Callable[[], BaseChatMessageHistory] | None:
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            from langchain_community.chat_message_histories import SQLChatMessageHistory
    except ImportError:
        return None

    def make() -> BaseChatMessageHistory:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return SQLChatMessageHistory(session_id="bench", connection=f"sqlite:///{folder / 'history.db'}")

    return make


def run(n: int = 1000, reads: int = 5) -> dict[str, Any]:
    from memtend import Memory
    from memtend_langchain import MemtendChatMessageHistory

    turns = session(n)
    report: dict[str, Any] = {"messages": n, "turns": len(turns), "reads": reads}
    with tempfile.TemporaryDirectory(prefix="memtend-lc-bench-") as tmp:
        folder = Path(tmp)
        with Memory(path=folder / "memtend") as mem:
            report["memtend"] = measure(MemtendChatMessageHistory("bench-user", "bench", memory=mem), turns, reads)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # InMemoryChatMessageHistory warns that it is deprecated
            report["in-memory"] = measure(InMemoryChatMessageHistory(), turns, reads)
        make_sqlite = _sqlite_history(folder)
        if make_sqlite is not None:
            report["sqlite"] = measure(make_sqlite(), turns, reads)
    for peer in ("in-memory", "sqlite"):
        if peer in report:
            report[f"ratio_vs_{peer}"] = {
                name: report["memtend"][name] / max(report[peer][name], 1e-9)
                for name in ("add_messages_ms", "messages_read_ms")
            }
    return report


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=1000)
    parser.add_argument("--reads", type=int, default=5)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    report = run(args.n, args.reads)
    if args.json:
        print(json.dumps(report, indent=2))
        return 0
    print(f"{report['messages']} messages in {report['turns']} add_messages calls; whole history read {args.reads}x")
    print(f"{'history':<12}{'add_messages ms (median)':>26}{'total add s':>14}{'messages read ms':>20}")
    for name in ("memtend", "in-memory", "sqlite"):
        if name in report:
            row = report[name]
            print(
                f"{name:<12}{row['add_messages_ms']:>26.2f}{row['add_messages_total_s']:>14.2f}"
                f"{row['messages_read_ms']:>20.2f}"
            )
    for peer in ("in-memory", "sqlite"):
        if f"ratio_vs_{peer}" in report:
            ratio = report[f"ratio_vs_{peer}"]
            print(
                f"memtend / {peer}: add_messages {ratio['add_messages_ms']:.1f}x, "
                f"messages {ratio['messages_read_ms']:.1f}x"
            )
    if "sqlite" not in report:
        print("sqlite: langchain-community is not installed; peer skipped")
    return 0


if __name__ == "__main__":
    sys.exit(main())
