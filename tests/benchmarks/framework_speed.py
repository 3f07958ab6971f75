"""Framework speed: what a LangGraph, LangChain or LlamaIndex user feels with memtend, beside the framework's own
backends, in one process, with interleaved repetitions.

Cases (each timed once per repetition; the order of the cases rotates every repetition, so a slow spell of the
machine falls on every backend alike; the figure is the median, with the minimum beside it):

* ``graph.invoke`` / ``graph.stream`` in each durability mode (``sync``, ``async``, ``exit``): a StateGraph of
  ``--nodes`` nodes in a chain, each appending a chat message of about 300 characters, the first putting an item in
  the store and the last searching it, on a new thread each time. Backends: ``memtend`` (``MemtendSaver`` +
  ``MemtendStore`` on one embedded Chroma folder), ``sqlite`` (``SqliteSaver`` + ``SqliteStore``, files) and
  ``in_memory`` (``InMemorySaver`` + ``InMemoryStore``).
* ``agent.turn``: one ``create_agent`` turn (a fake chat model, an ``InMemorySaver``, a new thread each time) with
  ``MemtendMiddleware`` (``memtend``) and the same agent without it (``plain``).
* ``history.turn``: one ``add_messages`` of a human message and its answer; ``history.read``: the whole history of
  ``--history`` messages. ``MemtendChatMessageHistory`` against ``SQLChatMessageHistory`` (langchain-community).
* ``llamaindex.turn``: one ``FunctionAgent.run`` (a mock function-calling LLM) with ``MemtendMemory`` against
  LlamaIndex's default ``Memory``; ``write_once`` is ``MemtendMemory(write_once=True)`` (the question held and
  written with the answer: one write a turn).

The ratios are memtend's median over each peer's (above 1: memtend is slower). Beside each wall-clock median is the
median CPU time of the process over the case (every thread's: a background write counts in whichever case it
overlaps); on a loaded machine it moves far less than the wall clock, and the ``(cpu)`` column compares the
delegated saver to SqliteSaver by it. The load average is read before and after the timed repetitions and printed
beside the figures: on a shared machine it says how much they are worth.

    uv run python tests/benchmarks/framework_speed.py [--reps 15] [--nodes 6] [--history 1000] [--json]
        [--graph-backends sqlite,delegated]   # those backends' graph cases alone, in a quiet process
        [--only history,llamaindex]           # only these groups of cases (graph, agent, history, llamaindex)

``run(reps, nodes, history)`` returns the figures as a dict (a smoke test calls it small).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import shutil
import statistics
import sys
import tempfile
import time
import warnings
from collections.abc import Callable
from contextlib import ExitStack
from pathlib import Path
from typing import Annotated, Any, TypedDict

HERE = Path(__file__).resolve().parent
for _folder in (HERE, HERE.parent / "langchain"):  # the sibling benchmarks and the LangChain fakes are reused
    if str(_folder) not in sys.path:
        sys.path.insert(0, str(_folder))

import langchain_history  # noqa: E402
import langgraph_adapters  # noqa: E402
import llamaindex_memory  # noqa: E402
from langchain_core.messages import AnyMessage  # noqa: E402
from langgraph.graph.message import add_messages  # noqa: E402

MODES = ("sync", "async", "exit")
HISTORY_INVOKES = 10  # invokes making the thread get_state_history and saver.list_thread read
USER = "bench-user"
Case = Callable[[], None]


class State(TypedDict):
    """The graph's state: the chat so far and how many nodes have run."""

    messages: Annotated[list[AnyMessage], add_messages]
    step: int


# ---------------------------------------------------------------------------------------------------- LangGraph
def build_graph(nodes: int, checkpointer: Any, store: Any) -> Any:
    """A chain of ``nodes`` nodes; each appends a message, the first puts a store item, the last searches."""
    from langchain_core.messages import AIMessage
    from langgraph.graph import START, StateGraph
    from langgraph.runtime import Runtime

    rng = langgraph_adapters.random.Random(0)
    texts = [langgraph_adapters.sentence(rng, 45) for _ in range(nodes)]

    def make_node(i: int) -> Callable[[State, Runtime[Any]], dict[str, Any]]:  # Runtime: the graph's store
        def node(state: State, runtime: Runtime[Any]) -> dict[str, Any]:
            if runtime.store is not None and i == 0:
                runtime.store.put((USER, "notes"), f"n{state['step']}", {"text": texts[i]})
            if runtime.store is not None and i == nodes - 1:
                runtime.store.search((USER, "notes"), limit=5)
            return {"messages": [AIMessage(texts[i])], "step": state["step"] + 1}

        return node

    builder = StateGraph(State)
    previous = START
    for i in range(nodes):
        builder.add_node(f"node{i}", make_node(i))  # type: ignore[call-overload]
        builder.add_edge(previous, f"node{i}")
        previous = f"node{i}"
    return builder.compile(checkpointer=checkpointer, store=store)


def graph_cases(
    stack: ExitStack, folder: Path, nodes: int, only: tuple[str, ...] | None = None
) -> dict[tuple[str, str], Case]:
    from langchain_core.messages import HumanMessage
    from langgraph.checkpoint.memory import InMemorySaver
    from langgraph.checkpoint.sqlite import SqliteSaver
    from langgraph.store.memory import InMemoryStore
    from memtend import Memory
    from memtend_langgraph import MemtendSaver, MemtendStore

    memory = stack.enter_context(Memory(path=folder / "memtend-graph"))
    delegate_to = stack.enter_context(SqliteSaver.from_conn_string(str(folder / "delegated.sqlite")))
    backends: dict[str, tuple[Any, Any]] = {
        "memtend": (MemtendSaver(memory), MemtendStore(memory, user_label=0)),  # the user first: (USER, "notes")
        "sqlite": (stack.enter_context(SqliteSaver.from_conn_string(str(folder / "saver.sqlite"))), None),
        # the checkpoints in a SqliteSaver of its own, the registry in memtend; the store is sqlite's, so the
        # ratio to sqlite is the checkpointer's alone
        "delegated": (MemtendSaver(memory, checkpoints=delegate_to), None),
        "in_memory": (InMemorySaver(), InMemoryStore()),
    }
    try:
        from langgraph.store.sqlite import SqliteStore

        sqlite_store = stack.enter_context(SqliteStore.from_conn_string(str(folder / "store.sqlite")))
        sqlite_store.setup()
        backends["sqlite"] = (backends["sqlite"][0], sqlite_store)
        backends["delegated"] = (backends["delegated"][0], sqlite_store)
    except ImportError:
        pass  # SqliteSaver alone, with no store
    counter = iter(range(1_000_000_000))

    def case(graph: Any, op: str, mode: str, backend: str) -> Case:
        again = f"{backend}-again-{mode}"  # invoke_again: one thread per backend and mode, invoked every time

        def go() -> None:
            thread = again if op == "invoke_again" else f"{backend}-{op}-{mode}-{next(counter)}"
            config = {"configurable": {"thread_id": thread, "user_id": USER}}
            state_in = {"messages": [HumanMessage("Where is my order?")], "step": 0}
            if op != "stream":
                out = graph.invoke(state_in, config, durability=mode)
                steps = out["step"]
            else:
                steps = sum(1 for _ in graph.stream(state_in, config, durability=mode, stream_mode="updates"))
            if steps != nodes:
                raise AssertionError(f"{backend} graph.{op}[{mode}] ran {steps} of {nodes} nodes")

        return go

    def history_case(graph: Any, backend: str) -> Case:
        config = {"configurable": {"thread_id": f"{backend}-history", "user_id": USER}}
        for _ in range(HISTORY_INVOKES):  # a thread of HISTORY_INVOKES * (nodes + 1) checkpoints
            graph.invoke({"messages": [HumanMessage("Where is my order?")], "step": 0}, config, durability="exit")
        expected = len(list(graph.get_state_history(config)))

        def go() -> None:
            got = len(list(graph.get_state_history(config)))
            if got != expected:
                raise AssertionError(f"{backend} get_state_history gave {got} of {expected} states")

        return go

    def threads_case(saver: Any, backend: str) -> Case:
        def go() -> None:  # every checkpoint of the history thread, through the saver's own list
            if not any(
                True for _ in saver.list({"configurable": {"thread_id": f"{backend}-history", "user_id": USER}})
            ):
                raise AssertionError(f"{backend} listed no checkpoint")

        return go

    cases: dict[tuple[str, str], Case] = {}
    for backend, (saver, store) in backends.items():
        if only is not None and backend not in only:
            continue
        graph = build_graph(nodes, saver, store)
        for mode in MODES:
            for op in ("invoke", "stream", "invoke_again"):
                cases[(f"graph.{op}[{mode}]", backend)] = case(graph, op, mode, backend)
        cases[("graph.get_state_history", backend)] = history_case(graph, backend)
        cases[("saver.list_thread", backend)] = threads_case(saver, backend)
    return cases


# ---------------------------------------------------------------------------------------------------- LangChain
def agent_cases(stack: ExitStack, folder: Path) -> dict[tuple[str, str], Case]:
    from langchain.agents import create_agent
    from langchain_core.messages import AIMessage, HumanMessage
    from langgraph.checkpoint.memory import InMemorySaver
    from lc_fakes import ScriptedChatModel
    from memtend import Memory
    from memtend_langchain import MemtendMiddleware

    memory = stack.enter_context(Memory(path=folder / "memtend-agent"))
    alice = memory.user(USER)
    for i in range(10):
        alice.remember(f"{USER} asked about order {i}, which shipped on day {i + 1}")
    counter = iter(range(1_000_000_000))

    def case(name: str, middleware: list[Any]) -> Case:
        graph = create_agent(
            ScriptedChatModel(responses=[AIMessage("It shipped yesterday.")]),
            tools=[],
            system_prompt="You are a helpful assistant.",
            middleware=middleware,
            checkpointer=InMemorySaver(),
        )

        def go() -> None:
            config = {"configurable": {"thread_id": f"{name}-{next(counter)}"}}
            state = graph.invoke(
                {"messages": [HumanMessage("Where is my order 3?")]}, config, context={"user_id": USER}
            )
            if state["messages"][-1].text != "It shipped yesterday.":
                raise AssertionError(f"the {name} agent answered {state['messages'][-1].text!r}")

        return go

    return {
        ("agent.turn", "memtend"): case("memtend", [MemtendMiddleware(memory)]),
        ("agent.turn", "plain"): case("plain", []),
    }


def history_cases(stack: ExitStack, folder: Path, history: int) -> dict[tuple[str, str], Case]:
    from langchain_core.messages import AIMessage, HumanMessage
    from memtend import Memory
    from memtend_langchain import MemtendChatMessageHistory

    memory = stack.enter_context(Memory(path=folder / "memtend-history"))
    makers: dict[str, Callable[[str], Any]] = {
        "memtend": lambda session: MemtendChatMessageHistory(USER, session, memory=memory),
    }
    make_sqlite = langchain_history._sqlite_history(folder)
    if make_sqlite is not None:
        makers["sqlite"] = lambda session: _sqlite_session(folder, session)
    turns = langchain_history.session(history)
    cases: dict[tuple[str, str], Case] = {}
    for backend, make in makers.items():
        reader, writer = make("read"), make("turn")
        for turn in turns:
            reader.add_messages(turn)

        def turn_case(writer: Any = writer) -> None:
            writer.add_messages([HumanMessage("What changed in the release?"), AIMessage("Nothing yet.")])

        def read_case(reader: Any = reader, backend: str = backend) -> None:
            got = len(reader.messages)
            if got != history:
                raise AssertionError(f"{backend} read {got} of {history} messages")

        cases[("history.turn", backend)] = turn_case
        cases[(f"history.read_{history}", backend)] = read_case
    return cases


def _sqlite_session(folder: Path, session: str) -> Any:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        from langchain_community.chat_message_histories import SQLChatMessageHistory

        return SQLChatMessageHistory(session_id=session, connection=f"sqlite:///{folder / 'history.db'}")


# ---------------------------------------------------------------------------------------------------- LlamaIndex
def llamaindex_cases(stack: ExitStack, folder: Path, loop: asyncio.AbstractEventLoop) -> dict[tuple[str, str], Case]:
    from collections.abc import Sequence

    from llama_index.core.agent.workflow import FunctionAgent
    from llama_index.core.base.llms.types import ChatMessage
    from llama_index.core.llms.mock import MockFunctionCallingLLM
    from llama_index.core.memory import Memory as LlamaMemory
    from llama_index.core.tools import FunctionTool
    from memtend import Memory
    from memtend_llamaindex import MemtendMemory

    memory = stack.enter_context(Memory(path=folder / "memtend-llamaindex"))
    prompts = [m.content or "" for m in llamaindex_memory.session_messages(50) if m.role == "user"]

    def answer(messages: Sequence[ChatMessage], **kwargs: Any) -> ChatMessage:
        return ChatMessage(role="assistant", content="Noted.")

    def lookup_order(order: int) -> str:
        """Look an order up by its number."""
        return f"order {order}: shipped"

    def case(name: str, agent_memory: Any) -> Case:
        agent = FunctionAgent(
            tools=[FunctionTool.from_defaults(lookup_order)], llm=MockFunctionCallingLLM(response_generator=answer)
        )
        count = iter(range(1_000_000_000))

        async def turn(prompt: str) -> Any:  # the workflow needs a running loop to start in
            return await agent.run(prompt, memory=agent_memory)

        def go() -> None:
            reply = loop.run_until_complete(turn(prompts[next(count) % len(prompts)]))
            if str(reply) != "Noted.":
                raise AssertionError(f"the {name} agent answered {reply!r}")

        return go

    ours = MemtendMemory.from_defaults(user_id=USER, session_id="s1", memory=memory)
    once = MemtendMemory.from_defaults(user_id=USER, session_id="s2", memory=memory, write_once=True)
    return {
        ("llamaindex.turn", "memtend"): case("memtend", ours),
        ("llamaindex.turn", "write_once"): case("write_once", once),
        ("llamaindex.turn", "default"): case("default", LlamaMemory.from_defaults(session_id="s1")),
    }


# ---------------------------------------------------------------------------------------------------- run
GROUPS = ("graph", "agent", "history", "llamaindex")


def run(
    reps: int = 15,
    nodes: int = 6,
    history: int = 1000,
    graph_backends: tuple[str, ...] | None = None,
    only: tuple[str, ...] = GROUPS,
) -> dict[str, Any]:
    """Every case of the ``only`` groups (or, with ``graph_backends``, the graph cases of those backends alone, in a
    process no other backend's background work shares)."""
    folder = Path(tempfile.mkdtemp(prefix="memtend-speed-bench-"))
    loop = asyncio.new_event_loop()
    samples: dict[tuple[str, str], list[float]] = {}
    cpu: dict[tuple[str, str], list[float]] = {}
    try:
        with ExitStack() as stack, warnings.catch_warnings():
            warnings.simplefilter("ignore")  # deprecation notices of the peers are not figures
            cases = graph_cases(stack, folder, nodes, graph_backends) if "graph" in only or graph_backends else {}
            if graph_backends is None:
                if "agent" in only:
                    cases.update(agent_cases(stack, folder))
                if "history" in only:
                    cases.update(history_cases(stack, folder, history))
                if "llamaindex" in only:
                    cases.update(llamaindex_cases(stack, folder, loop))
            for case in cases.values():  # one untimed pass: imports, models and first connections
                case()
            load_start = os.getloadavg()
            order = list(cases)
            for rep in range(reps):
                shift = rep % len(order)
                for key in order[shift:] + order[:shift]:
                    started, started_cpu = time.perf_counter(), time.process_time()
                    cases[key]()
                    samples.setdefault(key, []).append((time.perf_counter() - started) * 1000)
                    cpu.setdefault(key, []).append((time.process_time() - started_cpu) * 1000)
            load_end = os.getloadavg()
    finally:
        loop.close()
        shutil.rmtree(folder, ignore_errors=True)
    rows: dict[str, dict[str, dict[str, float]]] = {}
    for (name, backend), times in samples.items():
        rows.setdefault(name, {})[backend] = {
            "median_ms": statistics.median(times),
            "min_ms": min(times),
            "cpu_ms": statistics.median(cpu[(name, backend)]),
        }
    return {
        "reps": reps,
        "nodes": nodes,
        "history": history,
        "cpus": os.cpu_count(),
        "load_average_start": list(load_start),
        "load_average_end": list(load_end),
        "rows": rows,
        "ratios": ratios(rows),
    }


def ratios(rows: dict[str, dict[str, dict[str, float]]]) -> dict[str, float]:
    """memtend's median over each peer's, per case; and the delegated saver's over SqliteSaver's alone."""
    out: dict[str, float] = {}
    for name, backends in rows.items():
        for peer, figures in backends.items():
            for ours in ("memtend", "write_once"):
                if peer not in ("memtend", "delegated", "write_once") and ours in backends:
                    out[f"{name} {ours}/{peer}"] = backends[ours]["median_ms"] / figures["median_ms"]
        if "delegated" in backends and "sqlite" in backends:
            out[f"{name} delegated/sqlite"] = backends["delegated"]["median_ms"] / backends["sqlite"]["median_ms"]
    return out


def print_report(report: dict[str, Any]) -> None:
    start = ", ".join(f"{x:.2f}" for x in report["load_average_start"])
    end = ", ".join(f"{x:.2f}" for x in report["load_average_end"])
    print(
        f"{report['reps']} interleaved repetitions, {report['nodes']}-node graph, {report['history']}-message history; "
        f"{report['cpus']} cpus; load average (1, 5, 15 min) {start} before, {end} after"
    )
    print(
        f"\n{'case':<30}{'backend':<12}{'median ms':>12}{'min ms':>12}{'cpu ms':>10}{'memtend/it':>12}"
        f"{'delegated/sqlite':>18}{'(cpu)':>8}"
    )
    for name, backends in report["rows"].items():
        for backend, figures in backends.items():
            ratio = report["ratios"].get(f"{name} memtend/{backend}")
            shown = f"{ratio:12.2f}" if ratio is not None else f"{'':12}"
            delegated = report["ratios"].get(f"{name} delegated/sqlite") if backend == "delegated" else None
            shown += f"{delegated:18.2f}" if delegated is not None else ""
            if delegated is not None and figures.get("cpu_ms") and backends["sqlite"].get("cpu_ms"):
                shown += f"{figures['cpu_ms'] / backends['sqlite']['cpu_ms']:8.2f}"
            median, least, used = figures["median_ms"], figures["min_ms"], figures["cpu_ms"]
            print(f"{name:<30}{backend:<12}{median:12.2f}{least:12.2f}{used:10.2f}{shown}")
    for name, ratio in report["ratios"].items():
        if " write_once/" in name:
            print(f"{name}: {ratio:.2f}")


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--reps", type=int, default=15)
    parser.add_argument("--nodes", type=int, default=6)
    parser.add_argument("--history", type=int, default=1000)
    parser.add_argument("--json", action="store_true")
    parser.add_argument(
        "--graph-backends", help="comma-separated (e.g. sqlite,delegated): only these backends' graph cases"
    )
    parser.add_argument("--only", default=",".join(GROUPS), help=f"comma-separated groups of cases, of {GROUPS}")
    args = parser.parse_args(argv)
    backends = tuple(args.graph_backends.split(",")) if args.graph_backends else None
    groups = tuple(args.only.split(","))
    if not set(groups) <= set(GROUPS):
        parser.error(f"--only takes groups of {GROUPS}")
    report = run(args.reps, args.nodes, args.history, backends, groups)
    if args.json:
        print(json.dumps(report, indent=2))
    else:
        print_report(report)


if __name__ == "__main__":
    main()
