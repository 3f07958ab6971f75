"""Subprocess worker for test_lg_agent_server.py: one Agent Server worker process, as the server runs it.

    python _agent_server_worker.py PROJECT_DIR INDEX TURNS        (MEMTEND_URL names the chroma run server)

Reads ``PROJECT_DIR/langgraph.json``, imports its ``checkpointer`` and ``store`` paths the way the Agent Server
does (a file path and an attribute), enters both async context managers, prints ``READY`` and waits for ``GO``
on stdin, so every worker writes at once. Then runs a real graph for two users of its own on two threads each
(one thread id, ``shared``, is used by every user of every worker), the node writing a store item each turn,
reads everything back through the same factories and prints ``RESULT <json>``.
"""

from __future__ import annotations

import asyncio
import importlib.util
import json
import sys
from pathlib import Path
from typing import Annotated, Any

from langchain_core.messages import AIMessage, AnyMessage, HumanMessage
from langchain_core.runnables import RunnableConfig
from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.config import get_store
from langgraph.graph import START, StateGraph
from langgraph.graph.message import add_messages
from langgraph.store.base import BaseStore
from typing_extensions import TypedDict


class Chat(TypedDict):
    messages: Annotated[list[AnyMessage], add_messages]


def users_of(index: int) -> list[str]:
    return [f"w{index}-alice", f"w{index}-bob"]


def threads_of(index: int) -> list[str]:
    return ["shared", f"w{index}-own"]


def load(project: Path, reference: str) -> Any:
    """``./file.py:name`` relative to the project, imported as the Agent Server imports a langgraph.json path."""
    file, name = reference.rsplit(":", 1)
    spec = importlib.util.spec_from_file_location(f"project_{Path(file).stem}", project / file)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return getattr(module, name)


def build(saver: BaseCheckpointSaver, store: BaseStore):  # type: ignore[no-untyped-def]
    async def reply(state: Chat, config: RunnableConfig) -> dict[str, Any]:
        user = config["configurable"]["user_id"]
        thread = config["configurable"]["thread_id"]
        said = state["messages"][-1].text
        turn = sum(1 for m in state["messages"] if m.type == "human")
        await get_store().aput(("memories", user), f"{thread}-{turn}", {"text": f"{user} said {said}"})
        return {"messages": [AIMessage(content=f"{user} heard {said}")]}

    builder = StateGraph(Chat)
    builder.add_node("reply", reply)
    builder.add_edge(START, "reply")
    return builder.compile(checkpointer=saver, store=store)


async def converse(graph: Any, user: str, thread: str, turns: int) -> None:
    for turn in range(turns):
        config = {"configurable": {"thread_id": thread, "user_id": user}}
        await graph.ainvoke({"messages": [HumanMessage(f"{user}/{thread} turn {turn}")]}, config)


async def main() -> None:
    project, index, turns = Path(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3])
    settings = json.loads((project / "langgraph.json").read_text())
    checkpointer = load(project, settings["checkpointer"]["path"])
    store_factory = load(project, settings["store"]["path"])
    async with checkpointer() as saver, store_factory() as store:
        assert isinstance(saver, BaseCheckpointSaver) and isinstance(store, BaseStore)
        graph = build(saver, store)
        print("READY", flush=True)
        assert (await asyncio.to_thread(sys.stdin.readline)).strip() == "GO"
        await asyncio.gather(
            *(converse(graph, user, thread, turns) for user in users_of(index) for thread in threads_of(index))
        )
        result: dict[str, Any] = {}
        for user in users_of(index):
            seen: dict[str, Any] = {}
            for thread in threads_of(index):
                config = {"configurable": {"thread_id": thread, "user_id": user}}
                state = await graph.aget_state(config)
                history = [t async for t in saver.alist(config)]
                seen[thread] = {
                    "messages": [m.text for m in state.values["messages"]],
                    "checkpoints": len(history),
                    "owners": sorted({t.metadata.get("user_id") for t in history}),
                }
            items = await store.asearch(("memories", user), limit=100)
            seen["store"] = sorted(item.value["text"] for item in items)
            result[user] = seen
    print("RESULT " + json.dumps(result), flush=True)


if __name__ == "__main__":
    asyncio.run(main())
