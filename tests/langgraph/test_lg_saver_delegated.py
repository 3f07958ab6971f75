"""``MemtendSaver(memory, checkpoints=<a LangGraph saver>)``: the checkpoints in the application's own saver
(SqliteSaver, AsyncSqliteSaver, InMemorySaver), the thread-to-user registry in memtend.

LangGraph's conformance suite on each backend; users kept apart in the backend; erasure and export reaching the
backend (including a thread whose registry document is missing); one registry write per thread, not per step;
secrets masked before the backend serializes; the sync and async paths of a real graph.
"""

from __future__ import annotations

import sqlite3
import zlib
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Annotated, Any, TypedDict

import pytest
from langchain_core.messages import AIMessage, AnyMessage, HumanMessage
from langgraph.checkpoint.base import BaseCheckpointSaver, empty_checkpoint
from langgraph.checkpoint.conformance import checkpointer_test, validate
from langgraph.checkpoint.conformance.capabilities import BASE_CAPABILITIES, Capability
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.checkpoint.sqlite import SqliteSaver
from langgraph.graph import START, StateGraph
from langgraph.graph.message import add_messages
from memtend.errors import InvalidInputError, UserNotFoundError
from memtend_langgraph import MemtendSaver
from memtend_langgraph.saver_delegated import DelegatedSaver
from memtend_langgraph.saver_registry import REGISTRY, backend_thread_id, split_backend_thread_id

USERS = ("ada", "bo", "cy")
CARD = "4111 1111 1111 1111"


def user_of_thread(config: Any) -> str | None:
    thread_id = (config.get("configurable") or {}).get("thread_id")
    return None if thread_id is None else USERS[zlib.crc32(str(thread_id).encode()) % len(USERS)]


class State(TypedDict):
    messages: Annotated[list[AnyMessage], add_messages]


def graph(checkpointer: BaseCheckpointSaver[Any]) -> Any:
    def first(state: State) -> dict[str, Any]:
        return {"messages": [AIMessage("first answer")]}

    def second(state: State) -> dict[str, Any]:
        return {"messages": [AIMessage("second answer")]}

    builder = StateGraph(State)
    builder.add_node("first", first)
    builder.add_node("second", second)
    builder.add_edge(START, "first")
    builder.add_edge("first", "second")
    return builder.compile(checkpointer=checkpointer)


def cfg(thread: str, user: str) -> dict[str, Any]:
    return {"configurable": {"thread_id": thread, "user_id": user}}


@pytest.fixture
def sqlite_conn(tmp_path: Path) -> Iterator[sqlite3.Connection]:
    conn = sqlite3.connect(str(tmp_path / "checkpoints.sqlite"), check_same_thread=False)
    yield conn
    conn.close()


def backend_threads(conn: sqlite3.Connection) -> set[str]:
    rows = conn.execute("SELECT thread_id FROM checkpoints UNION SELECT thread_id FROM writes").fetchall()
    return {r[0] for r in rows}


# ---------------------------------------------------------------------------------------------- conformance
def _assert_full(report: Any) -> None:
    report.print_report()
    results = report.to_dict()["results"]
    for capability in (*BASE_CAPABILITIES, Capability.COPY_THREAD):
        assert results[capability.value]["detected"], f"{capability.value} not detected"
    failed = {name: r["failures"] for name, r in results.items() if r["tests_failed"]}
    assert not failed, failed
    assert report.passed_all_base() and report.passed_all()
    assert str(report.conformance_level()).upper().endswith("FULL")


@pytest.mark.parametrize("backend", ["sqlite", "in_memory"])
async def test_conformance_full_on_a_delegated_backend(ephemeral_memory, tmp_path: Path, backend: str) -> None:  # type: ignore[no-untyped-def]
    conns: list[sqlite3.Connection] = []

    @checkpointer_test(name=f"MemtendSaver(checkpoints={backend})")
    async def delegated() -> AsyncIterator[MemtendSaver]:
        if backend == "sqlite":  # SqliteSaver has no async calls: the saver runs its sync ones in a thread
            conn = sqlite3.connect(str(tmp_path / f"c{len(conns)}.sqlite"), check_same_thread=False)
            conns.append(conn)
            inner: BaseCheckpointSaver[Any] = SqliteSaver(conn)
        else:
            inner = InMemorySaver()
        yield MemtendSaver(ephemeral_memory, checkpoints=inner, user_resolver=user_of_thread, admin=True)

    try:
        _assert_full(await validate(delegated))
    finally:
        for conn in conns:
            conn.close()


async def test_conformance_full_on_async_sqlite(ephemeral_memory, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    from langgraph.checkpoint.sqlite.aio import AsyncSqliteSaver

    count = iter(range(1000))

    @checkpointer_test(name="MemtendSaver(checkpoints=AsyncSqliteSaver)")
    async def delegated() -> AsyncIterator[MemtendSaver]:
        async with AsyncSqliteSaver.from_conn_string(str(tmp_path / f"a{next(count)}.sqlite")) as inner:
            yield MemtendSaver(ephemeral_memory, checkpoints=inner, user_resolver=user_of_thread, admin=True)

    _assert_full(await validate(delegated))


# ---------------------------------------------------------------------------------------------- isolation
def test_two_users_with_the_same_thread_id_never_meet(memory, sqlite_conn: sqlite3.Connection) -> None:  # type: ignore[no-untyped-def]
    saver = MemtendSaver(memory, checkpoints=SqliteSaver(sqlite_conn))
    app = graph(saver)
    app.invoke({"messages": [HumanMessage("alice speaking")]}, cfg("1", "alice"))
    app.invoke({"messages": [HumanMessage("bob speaking")]}, cfg("1", "bob"))
    alice = app.get_state(cfg("1", "alice"))
    bob = app.get_state(cfg("1", "bob"))
    assert [m.content for m in alice.values["messages"]] == ["alice speaking", "first answer", "second answer"]
    assert bob.values["messages"][0].content == "bob speaking"
    assert alice.config["configurable"]["thread_id"] == "1"  # the caller's id, not the backend's
    assert "memtend_user" not in alice.metadata
    assert backend_threads(sqlite_conn) == {backend_thread_id("alice", "1"), backend_thread_id("bob", "1")}
    # a user's listing across threads shows only their own
    listed = list(saver.list({"configurable": {"user_id": "alice"}}))
    assert listed and {t.config["configurable"]["thread_id"] for t in listed} == {"1"}
    assert all(
        t.checkpoint["channel_values"].get("messages", [HumanMessage("x")])[0].content != "bob speaking" for t in listed
    )
    # thread-level calls reach one user's thread
    saver.for_user("alice").delete_thread("1")
    assert app.get_state(cfg("1", "alice")).values == {}
    assert app.get_state(cfg("1", "bob")).values["messages"][0].content == "bob speaking"
    with pytest.raises(UserNotFoundError) as refused:
        saver.delete_thread("1")
    assert "bob" not in str(refused.value)
    with pytest.raises(UserNotFoundError):
        list(saver.list(None))


def test_an_admin_saver_lists_every_users_threads_under_their_own_ids(ephemeral_memory) -> None:  # type: ignore[no-untyped-def]
    inner = InMemorySaver()
    app = graph(MemtendSaver(ephemeral_memory, checkpoints=inner))
    app.invoke({"messages": [HumanMessage("a")]}, cfg("t", "alice"))
    app.invoke({"messages": [HumanMessage("b")]}, cfg("t", "bob"))
    inner.put(  # a thread the application wrote to the backend itself: not memtend's, not listed
        {"configurable": {"thread_id": "own", "checkpoint_ns": ""}}, empty_checkpoint(), {}, {}
    )
    admin = MemtendSaver(ephemeral_memory, checkpoints=inner, admin=True)
    listed = list(admin.list(None))
    assert {t.config["configurable"]["thread_id"] for t in listed} == {"t"}
    assert len(listed) == 8  # 4 checkpoints per invoke of the 2-node graph, two users
    assert sorted(admin.registry.owners(ephemeral_memory, "t")) == ["alice", "bob"]


def test_derived_thread_ids_round_trip_for_any_user_and_thread() -> None:
    for user, thread in [("a", "1"), ("al:ice", "x:y"), ("5:bob", ""), ("ü", "memtend:3:bob:1")]:
        if not thread:
            continue
        assert split_backend_thread_id(backend_thread_id(user, thread)) == (user, thread)
    assert backend_thread_id("ab", "c") != backend_thread_id("a", "b:c")
    for foreign in ["1", "memtend:", "memtend:x:a:b", "memtend:9:ab:c", "memtend:2:ab", None, 3]:
        assert split_backend_thread_id(foreign) is None


# ---------------------------------------------------------------------------------------------- erasure, export
def test_erasure_deletes_the_users_threads_from_the_backend_and_export_reads_them(memory, sqlite_conn) -> None:  # type: ignore[no-untyped-def]
    saver = MemtendSaver(memory, checkpoints=SqliteSaver(sqlite_conn))
    app = graph(saver)
    for thread in ("1", "2"):
        app.invoke({"messages": [HumanMessage(f"alice on {thread}")]}, cfg(thread, "alice"))
    app.invoke({"messages": [HumanMessage("bob's words")]}, cfg("1", "bob"))
    exported = memory.user("alice").export()["external"]["langgraph_checkpoints"]
    assert {e["thread_id"] for e in exported} == {"1", "2"}
    said = {m["content"] for e in exported for m in e["messages"]}
    assert {"alice on 1", "alice on 2", "first answer"} <= said and "bob's words" not in said
    assert all("memtend_user" not in e["metadata"] and "user_id" not in e["metadata"] for e in exported)
    receipt = memory.erase_user("alice")
    assert receipt.counts["external:langgraph_checkpoints"] == 2
    assert backend_threads(sqlite_conn) == {backend_thread_id("bob", "1")}
    assert app.get_state(cfg("1", "alice")).values == {}
    assert memory.user("alice").export()["external"]["langgraph_checkpoints"] == []
    assert app.get_state(cfg("1", "bob")).values["messages"][0].content == "bob's words"


def test_erasure_finds_a_thread_whose_registry_document_was_lost(ephemeral_memory, sqlite_conn) -> None:  # type: ignore[no-untyped-def]
    saver = MemtendSaver(ephemeral_memory, checkpoints=SqliteSaver(sqlite_conn))
    graph(saver).invoke({"messages": [HumanMessage("hello")]}, cfg("lost", "alice"))
    saver.registry.flush()  # the background writer gathers new threads for LINGER seconds: written now
    docs = ephemeral_memory.documents("alice", gate="off")
    assert docs.delete_prefix((REGISTRY,)) == 1  # as if a crash had kept it from being written
    assert saver.registry.threads_of(ephemeral_memory, "alice") == ["lost"]  # the backend's stamp
    ephemeral_memory.erase_user("alice")
    assert backend_threads(sqlite_conn) == set()


def test_a_thread_is_registered_once_not_per_step(ephemeral_memory, monkeypatch: pytest.MonkeyPatch) -> None:  # type: ignore[no-untyped-def]
    saver = MemtendSaver(ephemeral_memory, checkpoints=InMemorySaver())
    assert isinstance(saver, DelegatedSaver)
    calls: list[tuple[str, str]] = []
    real = saver.registry.register_soon

    def counted(memory: Any, user: str, thread: str) -> None:
        calls.append((user, thread))
        real(memory, user, thread)

    monkeypatch.setattr(saver.registry, "register_soon", counted)
    app = graph(saver)
    for _ in range(3):  # 3 invokes of 4 checkpoints each on one thread, then a second thread
        app.invoke({"messages": [HumanMessage("again")]}, cfg("same", "alice"))
    app.invoke({"messages": [HumanMessage("new")]}, cfg("other", "alice"))
    assert calls == [("alice", "same"), ("alice", "other")]
    saver.registry.flush()  # the background writer has put both owner documents
    docs = ephemeral_memory.documents("alice", gate="off")
    assert sorted(ns[1] for ns in docs.list_namespaces(prefix=(REGISTRY,))) == ["other", "same"]
    assert sorted(saver.registry.threads_of(ephemeral_memory, "alice")) == ["other", "same"]


def test_secrets_are_masked_before_the_backend_serializes(ephemeral_memory, sqlite_conn) -> None:  # type: ignore[no-untyped-def]
    app = graph(MemtendSaver(ephemeral_memory, checkpoints=SqliteSaver(sqlite_conn)))
    app.invoke({"messages": [HumanMessage(f"my card is {CARD}")]}, cfg("s", "alice"))
    blobs = b"".join(r[0] for r in sqlite_conn.execute("SELECT checkpoint FROM checkpoints").fetchall())
    blobs += b"".join(r[0] for r in sqlite_conn.execute("SELECT value FROM writes").fetchall())
    assert CARD.encode() not in blobs and b"4111111111111111" not in blobs
    assert b"my card is" in blobs


# ---------------------------------------------------------------------------------------------- async, opening
async def test_an_async_graph_on_async_sqlite_and_on_sqlite_run_in_a_thread(ephemeral_memory, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    from langgraph.checkpoint.sqlite.aio import AsyncSqliteSaver

    async with AsyncSqliteSaver.from_conn_string(str(tmp_path / "async.sqlite")) as inner:
        app = graph(MemtendSaver(ephemeral_memory, checkpoints=inner))
        out = await app.ainvoke({"messages": [HumanMessage("async hello")]}, cfg("a", "alice"))
        assert len(out["messages"]) == 3
        state = await app.aget_state(cfg("a", "alice"))
        assert state.config["configurable"]["thread_id"] == "a"
        history = [s async for s in app.aget_state_history(cfg("a", "alice"))]
        assert len(history) == 4
        assert await ephemeral_memory.aerase_user("alice")  # the backend is reached off the event loop
        assert (await app.aget_state(cfg("a", "alice"))).values == {}
    conn = sqlite3.connect(str(tmp_path / "sync.sqlite"), check_same_thread=False)
    try:
        saver = MemtendSaver(ephemeral_memory, checkpoints=SqliteSaver(conn))
        out = await graph(saver).ainvoke({"messages": [HumanMessage("x")]}, cfg("b", "bob"))
        assert len(out["messages"]) == 3 and saver._sync_backend
        assert backend_threads(conn) == {backend_thread_id("bob", "b")}
    finally:
        conn.close()


def test_from_conn_string_delegates_and_bad_backends_are_refused(tmp_path: Path, sqlite_conn) -> None:  # type: ignore[no-untyped-def]
    inner = SqliteSaver(sqlite_conn)
    with MemtendSaver.from_conn_string(str(tmp_path / "mem"), checkpoints=inner) as saver:
        saver.setup()  # the backend's tables too
        assert isinstance(saver, DelegatedSaver) and saver.checkpoints is inner
        graph(saver).invoke({"messages": [HumanMessage("hi")]}, cfg("1", "alice"))
    assert backend_threads(sqlite_conn) == {backend_thread_id("alice", "1")}
    with MemtendSaver.from_conn_string(str(tmp_path / "mem")) as plain:
        assert type(plain) is MemtendSaver  # no backend: checkpoints in Chroma, as before
        with pytest.raises(InvalidInputError) as refused:
            MemtendSaver(plain.memory, checkpoints="sqlite:///secret-path.db")  # type: ignore[arg-type]
        assert "secret-path" not in str(refused.value)
        with pytest.raises(InvalidInputError):
            MemtendSaver(plain.memory, checkpoints=plain)  # type: ignore[arg-type]
        with pytest.raises(InvalidInputError):
            MemtendSaver(plain.memory, checkpoints=InMemorySaver(), serde=InMemorySaver().serde)
