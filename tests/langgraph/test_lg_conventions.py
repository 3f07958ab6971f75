"""The conventions a LangGraph user expects of a saver and a store: ``from_conn_string`` (a folder or a server
URL) under ``with`` and ``async with``, ``setup()``, ``close()``, both as context managers, and an export in
which a person reads each checkpoint's messages."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Annotated, Any

import pytest
from conftest import ChromaServer, unique_prefix
from langchain_core.messages import AIMessage, AnyMessage, HumanMessage, ToolMessage
from langgraph.graph import END, START, StateGraph
from langgraph.graph.message import add_messages
from lg_fixtures import lg_memory_fixture  # noqa: F401  (the lg_memory fixture)
from memtend import InvalidInputError, Memory, MemoryClosedError
from memtend_langgraph import MemtendSaver, MemtendStore
from memtend_langgraph.saver_codec import CHECKPOINTS
from typing_extensions import TypedDict


class Chat(TypedDict):
    messages: Annotated[list[AnyMessage], add_messages]


def weather_graph(saver: MemtendSaver, store: MemtendStore | None = None):  # type: ignore[no-untyped-def]
    """A real tool-calling loop: the agent asks for the weather, the tool answers, the agent replies."""

    def agent(state: Chat) -> dict[str, Any]:
        last = state["messages"][-1]
        if isinstance(last, HumanMessage):
            call = {"name": "get_weather", "args": {"city": last.text.split()[-1].strip("?")}, "id": "call-1"}
            return {"messages": [AIMessage(content="", tool_calls=[call])]}
        return {"messages": [AIMessage(content=f"It is {last.text}.")]}

    def tools(state: Chat) -> dict[str, Any]:
        call = state["messages"][-1].tool_calls[0]  # type: ignore[union-attr]
        answer = "sunny, 24C" if call["args"]["city"] == "Lisbon" else "rainy, 9C"
        return {"messages": [ToolMessage(content=answer, tool_call_id=call["id"], name=call["name"])]}

    def route(state: Chat) -> str:
        return "tools" if getattr(state["messages"][-1], "tool_calls", None) else END

    builder = StateGraph(Chat)
    builder.add_node("agent", agent)
    builder.add_node("tools", tools)
    builder.add_edge(START, "agent")
    builder.add_conditional_edges("agent", route, ["tools", END])
    builder.add_edge("tools", "agent")
    return builder.compile(checkpointer=saver, store=store)


def config(thread: str, user: str) -> dict[str, Any]:
    return {"configurable": {"thread_id": thread, "user_id": user}}


OPEN_IN_CHILD = """
import sys
from memtend import Memory, StoreLockedError
try:
    mem = Memory(path=sys.argv[1])
except StoreLockedError:
    print("LOCKED")
else:
    print("OPEN", len(mem.user("alice").documents(gate="off").search(("langgraph_checkpoints",), limit=100)))
    mem.close()
"""


def open_in_another_process(folder: Path) -> str:
    done = subprocess.run(
        [sys.executable, "-c", OPEN_IN_CHILD, str(folder)], capture_output=True, text=True, timeout=180, check=True
    )
    return done.stdout.strip()


def test_from_conn_string_on_a_folder_under_with_releases_the_lock_on_exit(tmp_path: Path, embedding_function) -> None:  # type: ignore[no-untyped-def]
    folder = tmp_path / "store"
    with MemtendSaver.from_conn_string(str(folder), embedding_function=embedding_function) as saver:
        saver.setup()
        final = weather_graph(saver).invoke({"messages": [HumanMessage("Weather in Lisbon?")]}, config("1", "alice"))
        assert final["messages"][-1].text == "It is sunny, 24C."
        assert open_in_another_process(folder) == "LOCKED"
    after = open_in_another_process(folder)  # the lock went with the block; what was written is there
    assert after.startswith("OPEN ") and int(after.split()[1]) > 0
    with pytest.raises(MemoryClosedError):
        saver.setup()
    with pytest.raises(MemoryClosedError):
        saver.get_tuple(config("1", "alice"))


@pytest.mark.server
async def test_async_from_conn_string_on_a_server_url(chroma_server: ChromaServer, embedding_function) -> None:  # type: ignore[no-untyped-def]
    url, prefix = f"http://127.0.0.1:{chroma_server.port}", unique_prefix()
    options = {"embedding_function": embedding_function, "collection_prefix": prefix}
    async with (
        MemtendSaver.from_conn_string(url, **options) as saver,
        MemtendStore.from_conn_string(url, **options) as store,
    ):
        await saver.asetup()
        graph = weather_graph(saver, store)
        await graph.ainvoke({"messages": [HumanMessage("Weather in Oslo?")]}, config("t", "bob"))
        await store.aput(("memories", "bob"), "city", {"text": "lives in Oslo"})
    with pytest.raises(MemoryClosedError):
        await saver.aget_tuple(config("t", "bob"))
    with pytest.raises(MemoryClosedError):
        await store.aget(("memories", "bob"), "city")
    async with (
        MemtendSaver.from_conn_string(url, **options) as again,
        MemtendStore.from_conn_string(url, **options) as store2,
    ):
        state = await weather_graph(again).aget_state(config("t", "bob"))
        assert [m.type for m in state.values["messages"]] == ["human", "ai", "tool", "ai"]
        assert state.values["messages"][-1].text == "It is rainy, 9C."
        item = await store2.aget(("memories", "bob"), "city")
        assert item is not None and item.value == {"text": "lives in Oslo"}


def test_a_saver_and_a_store_over_the_callers_memory_leave_it_open(lg_memory: Memory) -> None:
    with MemtendSaver(lg_memory) as saver:
        saver.setup()
        weather_graph(saver).invoke({"messages": [HumanMessage("Weather in Lisbon?")]}, config("1", "alice"))
    with MemtendStore(lg_memory) as store:
        store.put(("memories", "alice"), "k", {"text": "likes sun"})
    assert MemtendSaver(lg_memory).get_tuple(config("1", "alice")) is not None  # the Memory is still open
    assert lg_memory.user("alice").documents().get(("langgraph_store", "memories", "alice"), "k") is not None


async def test_async_with_a_store_and_a_saver(lg_memory: Memory) -> None:
    async with MemtendStore(lg_memory) as store, MemtendSaver(lg_memory) as saver:
        await store.aput(("memories", "alice"), "k", {"text": "likes sun"})
        await weather_graph(saver, store).ainvoke({"messages": [HumanMessage("Weather in Lisbon?")]},
                                                  config("1", "alice"))  # fmt: skip
        assert (await store.aget(("memories", "alice"), "k")) is not None
    assert (await MemtendSaver(lg_memory).aget_tuple(config("1", "alice"))) is not None


def test_options_go_to_the_saver_or_to_the_memory(tmp_path: Path, embedding_function) -> None:  # type: ignore[no-untyped-def]
    folder = str(tmp_path / "store")
    with MemtendSaver.from_conn_string(folder, default_user="carol", embedding_function=embedding_function,
                                       collection_prefix="mine") as saver:  # fmt: skip
        assert saver.default_user == "carol"
        weather_graph(saver).invoke({"messages": [HumanMessage("Weather in Lisbon?")]},
                                    {"configurable": {"thread_id": "x"}})  # fmt: skip
        assert saver.memory.user("carol").documents(gate="off").search((CHECKPOINTS, "x"), limit=1)
        assert all(c.name.startswith("mine") for c in saver.memory.storage.client.list_collections())
    with (
        pytest.raises(InvalidInputError, match="no_such_option"),
        MemtendSaver.from_conn_string(folder, no_such_option=1),
    ):
        pass
    with MemtendStore.from_conn_string(folder, cross_user=True, embedding_function=embedding_function) as store:
        assert store.cross_user  # the failed opening above left the folder unlocked
    opener = MemtendSaver.from_conn_string(folder, embedding_function=embedding_function)
    with opener, pytest.raises(RuntimeError, match="already entered"), opener:
        pass


def test_export_shows_each_checkpoints_messages_readable(lg_memory: Memory) -> None:
    saver = MemtendSaver(lg_memory)
    graph = weather_graph(saver)
    graph.invoke({"messages": [HumanMessage("Weather in Lisbon?")]}, config("1", "alice"))
    graph.invoke({"messages": [HumanMessage("Weather in Oslo?")]}, config("1", "bob"))  # same thread id, bob
    exported = lg_memory.user("alice").export()
    json.dumps(exported)  # still JSON
    checkpoints = [d for d in exported["documents"] if d["namespace"][0] == CHECKPOINTS]
    assert checkpoints and all(d["value"] and d["readable"]["thread_id"] == "1" for d in checkpoints)
    assert all("user_id" not in d["readable"]["metadata"] for d in checkpoints)  # the export names its user once
    latest = max(checkpoints, key=lambda d: d["readable"]["metadata"]["step"])["readable"]
    assert [(m["role"], m["content"]) for m in latest["messages"]] == [
        ("user", "Weather in Lisbon?"),
        ("assistant", ""),
        ("tool", "sunny, 24C"),
        ("assistant", "It is sunny, 24C."),
    ]
    assert latest["messages"][1]["tool_calls"] == [
        {"id": "call-1", "name": "get_weather", "arguments": {"city": "Lisbon"}}
    ]
    assert latest["messages"][2]["tool_call_id"] == "call-1"
    assert latest["parent_checkpoint_id"] in {d["key"] for d in checkpoints}
    everything = json.dumps(exported)
    assert "Oslo" not in everything and "rainy" not in everything  # bob's thread "1" is not in alice's export
    bob = json.dumps(lg_memory.user("bob").export())
    assert "rainy, 9C" in bob and "Lisbon" not in bob
