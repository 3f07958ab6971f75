"""Subprocess worker for test_delegated_sigkill.py: a LangGraph graph on ``MemtendSaver(memory,
checkpoints=SqliteSaver(...))`` with ``durability="sync"``, killed by the test while its third node runs.

    python _delegated_worker.py FOLDER run      # invoke; the third node prints ACKED, then waits to be killed
    python _delegated_worker.py FOLDER resume   # open again, print STATE <json> (what survived), then resume the
                                                # thread to its end and print DONE <json>

Nothing is instrumented: the third node starting is LangGraph's own sign that the two steps before it were
acknowledged (in "sync" mode a step's checkpoint is committed before the next step starts).
"""

from __future__ import annotations

import json
import sqlite3
import sys
import time
from pathlib import Path
from typing import Annotated, Any, TypedDict

from langchain_core.messages import AIMessage, AnyMessage, HumanMessage
from langgraph.checkpoint.sqlite import SqliteSaver
from langgraph.graph import START, StateGraph
from langgraph.graph.message import add_messages
from memtend import Memory
from memtend.testing import HashEmbedder
from memtend_langgraph import MemtendSaver

USER = "kill-user"
CONFIG: Any = {"configurable": {"thread_id": "t1", "user_id": USER}}


class State(TypedDict):
    messages: Annotated[list[AnyMessage], add_messages]


def _say(line: str) -> None:
    sys.stdout.write(line + "\n")
    sys.stdout.flush()


def build(saver: MemtendSaver, pause: bool) -> Any:
    def one(state: State) -> dict[str, Any]:
        return {"messages": [AIMessage("step one done")]}

    def two(state: State) -> dict[str, Any]:
        return {"messages": [AIMessage("step two done")]}

    def three(state: State) -> dict[str, Any]:
        if pause:
            _say("ACKED")
            time.sleep(120)  # the test kills the process here
        return {"messages": [AIMessage("step three done")]}

    builder = StateGraph(State)
    for name, node in (("one", one), ("two", two), ("three", three)):
        builder.add_node(name, node)
    builder.add_edge(START, "one")
    builder.add_edge("one", "two")
    builder.add_edge("two", "three")
    return builder.compile(checkpointer=saver)


def main() -> None:
    folder, mode = Path(sys.argv[1]), sys.argv[2]
    memory = Memory(path=folder / "memtend", embedding_function=HashEmbedder())
    conn = sqlite3.connect(str(folder / "checkpoints.sqlite"), check_same_thread=False)
    saver = MemtendSaver(memory, checkpoints=SqliteSaver(conn))
    if mode == "run":
        build(saver, pause=True).invoke({"messages": [HumanMessage("start")]}, CONFIG, durability="sync")
        return
    graph = build(saver, pause=False)
    state = graph.get_state(CONFIG)
    registered = saver.registry.threads_of(memory, USER)  # the registry's, and the backend's stamped threads
    _say(
        "STATE "
        + json.dumps(
            {
                "messages": [m.content for m in state.values.get("messages", [])],
                "next": list(state.next),
                "registered": registered,
            }
        )
    )
    final = graph.invoke(None, CONFIG, durability="sync")
    _say("DONE " + json.dumps([m.content for m in final["messages"]]))
    conn.close()
    memory.close()


if __name__ == "__main__":
    main()
