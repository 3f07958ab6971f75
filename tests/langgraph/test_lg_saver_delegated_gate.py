"""The delegated saver's rule for secrets reads only what entered the state since the thread's previous checkpoint:
a secret arriving late is still masked or refused, a channel that did not move is not read again (its masked form
is reused), and a put whose parent this process has not seen reads every channel. The registry's background
writer writes its pending threads when the Memory closes.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from pathlib import Path
from typing import Annotated, Any, TypedDict

import pytest
from langchain_core.messages import AIMessage, AnyMessage, HumanMessage
from langgraph.checkpoint.base.id import uuid6
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.checkpoint.sqlite import SqliteSaver
from langgraph.graph import START, StateGraph
from langgraph.graph.message import add_messages
from memtend import Memory, SensitiveDataError
from memtend_langgraph import MemtendSaver, saver_gated
from memtend_langgraph.saver_registry import REGISTRY

CARD = "4111 1111 1111 1111"


class State(TypedDict, total=False):
    messages: Annotated[list[AnyMessage], add_messages]
    note: str


def four_steps(checkpointer: Any) -> Any:
    """Four nodes; the third writes ``note`` (a card number), the others only append a message."""

    def plain(i: int) -> Any:
        return lambda state: {"messages": [AIMessage(f"answer {i}")]}

    def third(state: State) -> dict[str, Any]:
        return {"messages": [AIMessage(f"paid with {CARD}")], "note": f"card on file {CARD}"}

    builder = StateGraph(State)
    builder.add_node("n1", plain(1))
    builder.add_node("n2", plain(2))
    builder.add_node("n3", third)
    builder.add_node("n4", plain(4))
    builder.add_edge(START, "n1")
    builder.add_edge("n1", "n2")
    builder.add_edge("n2", "n3")
    builder.add_edge("n3", "n4")
    return builder.compile(checkpointer=checkpointer)


def cfg(thread: str) -> dict[str, Any]:
    return {"configurable": {"thread_id": thread, "user_id": "alice"}}


class Reads(list[list[str]]):
    """The channel names of each put the rule read, and the message texts it was handed."""

    def __init__(self) -> None:
        super().__init__()
        self.messages: list[list[str]] = []


@pytest.fixture
def read_channels(monkeypatch: pytest.MonkeyPatch) -> Reads:
    """The channels handed to the rule for secrets, one list per put (the seam: saver_gated's call of masked); the
    messages handed over are added to ``read_channels.messages`` (a list of lists: the ones of each put)."""
    calls = Reads()
    real = saver_gated.masked

    def counted(value: Any, redact: bool) -> Any:
        calls.append(sorted(value))
        calls.messages.append([m.content for m in value.get("messages", [])])
        return real(value, redact)

    monkeypatch.setattr(saver_gated, "masked", counted)
    return calls


@pytest.fixture
def sqlite_conn(tmp_path: Path) -> Iterator[sqlite3.Connection]:
    conn = sqlite3.connect(str(tmp_path / "checkpoints.sqlite"), check_same_thread=False)
    yield conn
    conn.close()


def stored_bytes(conn: sqlite3.Connection) -> bytes:
    rows = conn.execute(
        "SELECT checkpoint FROM checkpoints UNION ALL SELECT metadata FROM checkpoints"
        " UNION ALL SELECT value FROM writes"
    ).fetchall()
    return b"".join(r[0] if isinstance(r[0], bytes) else str(r[0]).encode() for r in rows)


def test_a_secret_entering_at_step_3_is_masked_and_not_read_again(  # type: ignore[no-untyped-def]
    ephemeral_memory, sqlite_conn, read_channels: Reads
) -> None:
    saver = MemtendSaver(ephemeral_memory, checkpoints=SqliteSaver(sqlite_conn))
    app = four_steps(saver)
    app.invoke({"messages": [HumanMessage("hello")]}, cfg("late"))
    blobs = stored_bytes(sqlite_conn)
    assert CARD.encode() not in blobs and b"4111111111111111" not in blobs
    assert b"card on file" in blobs
    state = app.get_state(cfg("late"))
    assert state.values["note"].startswith("card on file [REDACTED")
    said = [m.content for m in state.values["messages"]]
    assert said[0] == "hello" and said[-1] == "answer 4" and said[3].startswith("paid with [REDACTED")
    # each message was read once, at the put after it entered: the earlier ones are the objects read then
    handed = [content for put in read_channels.messages for content in put]
    assert sorted(handed) == sorted(["hello", "answer 1", "answer 2", f"paid with {CARD}", "answer 4"])
    # the note was read once, at the step that wrote it; the step after reused its masked form
    assert sum("note" in channels for channels in read_channels) == 1
    after = read_channels[next(i for i, c in enumerate(read_channels) if "note" in c) + 1 :]
    assert after and all("messages" in c and "note" not in c for c in after)
    checkpoints = list(saver.list(cfg("late")))
    assert checkpoints[0].checkpoint["channel_values"]["note"] == state.values["note"]  # the newest, masked


def test_a_secret_entering_at_step_3_is_refused_with_redact_false(ephemeral_memory, sqlite_conn) -> None:  # type: ignore[no-untyped-def]
    saver = MemtendSaver(ephemeral_memory, checkpoints=SqliteSaver(sqlite_conn), redact=False)
    app = four_steps(saver)
    with pytest.raises(SensitiveDataError, match="MemtendSaver"):
        app.invoke({"messages": [HumanMessage("hello")]}, cfg("late"))
    assert CARD.encode() not in stored_bytes(sqlite_conn)
    steps = [t.metadata["step"] for t in saver.list(cfg("late"))]
    assert steps and max(steps) < 3  # the steps before the secret were kept


def test_a_channel_that_did_not_move_is_read_only_once(ephemeral_memory, read_channels: Reads) -> None:  # type: ignore[no-untyped-def]
    app = four_steps(MemtendSaver(ephemeral_memory, checkpoints=InMemorySaver()))
    app.invoke({"messages": [HumanMessage("one")]}, cfg("t"))
    read_channels.clear()
    app.invoke({"messages": [HumanMessage("two")]}, cfg("t"))  # the thread's newest checkpoint is read back first
    # the note is read again only at the step that writes it again (n3), not at the four puts before it
    assert ["note" in channels for channels in read_channels] == [False, False, False, False, True, False]
    assert read_channels[0] == ["__start__"]  # the input: the rest of the state is what was read back


def test_a_put_whose_parent_this_process_has_not_seen_reads_every_channel(  # type: ignore[no-untyped-def]
    ephemeral_memory, sqlite_conn, read_channels: Reads
) -> None:
    four_steps(MemtendSaver(ephemeral_memory, checkpoints=SqliteSaver(sqlite_conn))).invoke(
        {"messages": [HumanMessage("before the restart")]}, cfg("r")
    )
    restarted = MemtendSaver(ephemeral_memory, checkpoints=SqliteSaver(sqlite_conn))  # nothing remembered
    newest = next(SqliteSaver(sqlite_conn).list(None))  # read around the saver: not a read through it
    parent = {"configurable": {**cfg("r")["configurable"], "checkpoint_id": newest.checkpoint["id"]}}
    read_channels.clear()
    child = {**newest.checkpoint, "id": str(uuid6(clock_seq=9))}
    restarted.put(parent, child, {"source": "update", "step": 9}, {})  # type: ignore[arg-type]
    assert read_channels == [sorted(newest.checkpoint["channel_values"])]
    # once put here, the same values under the same versions are not read again; a value swapped in is
    read_channels.clear()
    mine = {"configurable": {**cfg("r")["configurable"], "checkpoint_id": child["id"]}}
    values = {**child["channel_values"], "note": f"new card {CARD}"}
    swapped = {**child, "id": str(uuid6(clock_seq=10)), "channel_values": values}
    restarted.put(mine, swapped, {"source": "update", "step": 10}, {})  # type: ignore[arg-type]
    assert read_channels == [["note"]]
    newest_now = restarted.get_tuple(cfg("r"))
    assert newest_now is not None and newest_now.checkpoint["id"] == swapped["id"]
    assert CARD not in str(newest_now.checkpoint["channel_values"])


def test_pending_thread_registrations_are_written_when_the_memory_closes(tmp_path: Path, embedding_function) -> None:  # type: ignore[no-untyped-def]
    memory = Memory(path=tmp_path / "store", embedding_function=embedding_function)
    four_steps(MemtendSaver(memory, checkpoints=InMemorySaver())).invoke({"messages": [HumanMessage("x")]}, cfg("c"))
    memory.close()  # the saver is not closed: the Memory writes what its background writer still holds
    with Memory(path=tmp_path / "store", embedding_function=embedding_function) as reopened:
        docs = reopened.documents("alice", gate="off")
        assert [ns[1] for ns in docs.list_namespaces(prefix=(REGISTRY,))] == ["c"]


def test_checkpoint_metadata_is_read_but_langgraphs_own_fields(ephemeral_memory, sqlite_conn) -> None:  # type: ignore[no-untyped-def]
    saver = MemtendSaver(ephemeral_memory, checkpoints=SqliteSaver(sqlite_conn))
    four_steps(saver).invoke(
        {"messages": [HumanMessage("hi")]}, {**cfg("m"), "metadata": {"ticket": f"card {CARD}"}}, durability="exit"
    )
    stored = saver.get_tuple(cfg("m"))
    assert stored is not None and stored.metadata["ticket"].startswith("card [REDACTED")
    assert stored.metadata["source"] == "loop" and stored.metadata["step"] == 4
    words = {"source": f"a {CARD}", "step": 7, "parents": {"": f"x {CARD}"}, "user_id": "alice"}
    saver.put(cfg("m2"), {**stored.checkpoint, "id": str(uuid6(clock_seq=1))}, words, {})  # type: ignore[arg-type]
    put = saver.get_tuple(cfg("m2"))
    assert put is not None and CARD not in str(put.metadata) and put.metadata["step"] == 7
    assert CARD.encode() not in stored_bytes(sqlite_conn)
