"""MemtendSaver beyond the conformance suite: a real graph run in sync, big checkpoints, users, erasure, threads."""

from __future__ import annotations

import operator
import os
import threading
import uuid
from typing import Annotated, Any

import pytest
from langgraph.checkpoint.base import empty_checkpoint
from langgraph.graph import END, START, StateGraph
from lg_fixtures import lg_memory_fixture  # noqa: F401  (the lg_memory fixture)
from memtend_langgraph import MemtendSaver, UserMismatchError, UserNotFoundError
from typing_extensions import TypedDict


class Notes(TypedDict):
    notes: Annotated[list[str], operator.add]
    blob: str


def build_graph(saver: MemtendSaver):  # type: ignore[no-untyped-def]
    def take_note(state: Notes) -> dict[str, Any]:
        return {"notes": [f"note {len(state['notes'])}"]}

    def summarise(state: Notes) -> dict[str, Any]:
        return {"notes": [f"{len(state['notes'])} notes so far"]}

    builder = StateGraph(Notes)
    builder.add_node("take_note", take_note)
    builder.add_node("summarise", summarise)
    builder.add_edge(START, "take_note")
    builder.add_edge("take_note", "summarise")
    builder.add_edge("summarise", END)
    return builder.compile(checkpointer=saver)


def config(thread: str, user: str = "alice") -> dict[str, Any]:
    return {"configurable": {"thread_id": thread, "user_id": user}}


def test_invoke_then_history_in_sync(lg_memory) -> None:  # type: ignore[no-untyped-def]
    graph = build_graph(MemtendSaver(lg_memory))
    first = graph.invoke({"notes": ["start"], "blob": ""}, config("t1"))
    assert first["notes"] == ["start", "note 1", "2 notes so far"]
    second = graph.invoke({"notes": ["again"], "blob": ""}, config("t1"))
    assert second["notes"][-1] == "5 notes so far"  # the second run continued the saved state
    history = list(graph.get_state_history(config("t1")))
    assert len(history) == 8  # input, take_note, summarise: one checkpoint each, plus the empty start, per run
    assert history[0].values["notes"] == second["notes"]
    steps = [snapshot.metadata["step"] for snapshot in history]
    assert steps == sorted(steps, reverse=True)  # newest first
    assert graph.get_state(config("t1")).values == second
    assert graph.get_state(config("t1", user="bob")).values == {}  # another user has no such thread


def test_async_invoke_matches_sync(ephemeral_memory) -> None:  # type: ignore[no-untyped-def]
    import asyncio

    graph = build_graph(MemtendSaver(ephemeral_memory))
    result = asyncio.run(graph.ainvoke({"notes": ["a"], "blob": ""}, config("ta")))
    assert result["notes"] == ["a", "note 1", "2 notes so far"]
    assert graph.get_state(config("ta")).values == result


def test_checkpoint_of_several_megabytes_round_trips(ephemeral_memory) -> None:  # type: ignore[no-untyped-def]
    graph = build_graph(MemtendSaver(ephemeral_memory))
    blob = os.urandom(3 * 1024 * 1024).hex()  # 6 MB of text in the state
    graph.invoke({"notes": [], "blob": blob}, config("big"))
    state = graph.get_state(config("big"))
    assert state.values["blob"] == blob
    assert len(list(graph.get_state_history(config("big")))) == 4


def test_a_checkpoint_belongs_to_its_user_and_goes_with_erasure(lg_memory) -> None:  # type: ignore[no-untyped-def]
    saver = MemtendSaver(lg_memory)
    graph = build_graph(saver)
    graph.invoke({"notes": ["alice's"], "blob": ""}, config("shared-id", "alice"))
    graph.invoke({"notes": ["bob's"], "blob": ""}, config("shared-id", "bob"))
    assert graph.get_state(config("shared-id", "alice")).values["notes"][0] == "alice's"
    assert graph.get_state(config("shared-id", "bob")).values["notes"][0] == "bob's"

    exported = lg_memory.user("alice").export()["documents"]
    assert any("shared-id" in str(doc) for doc in exported), "export lists the user's checkpoints"

    lg_memory.erase_user("alice")
    assert graph.get_state(config("shared-id", "alice")).values == {}
    assert list(saver.list(config("shared-id", "alice"))) == []
    assert graph.get_state(config("shared-id", "bob")).values["notes"][0] == "bob's"


def test_thread_only_calls_reach_one_users_thread(ephemeral_memory) -> None:  # type: ignore[no-untyped-def]
    saver = MemtendSaver(ephemeral_memory)
    graph = build_graph(saver)
    graph.invoke({"notes": ["x"], "blob": ""}, config("t-del", "alice"))
    graph.invoke({"notes": ["y"], "blob": ""}, config("t-del", "bob"))
    graph.invoke({"notes": ["z"], "blob": ""}, config("t-keep", "bob"))
    with pytest.raises(UserNotFoundError, match="admin=True"):
        saver.delete_thread("t-del")  # names no user: refused, not applied to every user holding "t-del"
    with pytest.raises(UserNotFoundError):
        list(saver.list(None))
    saver.for_user("alice").delete_thread("t-del")
    assert list(saver.list(config("t-del", "alice"))) == []
    assert len(list(saver.list(config("t-del", "bob")))) == 4  # bob's thread of the same id is untouched
    admin = MemtendSaver(ephemeral_memory, admin=True)
    assert {t.config["configurable"]["thread_id"] for t in admin.list(None)} == {"t-del", "t-keep"}
    admin.delete_thread("t-del")  # an operator's sweep reaches every owner
    assert list(saver.list(config("t-del", "bob"))) == []
    assert len(list(saver.list(config("t-keep", "bob")))) == 4


def test_a_config_without_user_is_refused(ephemeral_memory) -> None:  # type: ignore[no-untyped-def]
    saver = MemtendSaver(ephemeral_memory)
    cfg = {"configurable": {"thread_id": "t", "checkpoint_ns": ""}}
    with pytest.raises(UserNotFoundError, match="user_id"):
        saver.put(cfg, empty_checkpoint(), {"source": "input", "step": -1, "parents": {}}, {})
    with pytest.raises(UserNotFoundError):
        saver.get_tuple(cfg)
    resolved = MemtendSaver(ephemeral_memory, user_resolver=lambda c: c["configurable"]["thread_id"].split(":")[0])
    stored = resolved.put(
        {"configurable": {"thread_id": "carol:1", "checkpoint_ns": ""}},
        empty_checkpoint(),
        {"source": "input", "step": -1, "parents": {}},
        {},
    )
    assert resolved.get_tuple(stored) is not None
    assert ephemeral_memory.document_owners(("langgraph_checkpoints", "carol:1")) == ["carol"]


def test_saves_from_many_threads_at_once(ephemeral_memory) -> None:  # type: ignore[no-untyped-def]
    saver = MemtendSaver(ephemeral_memory)
    errors: list[BaseException] = []

    def run(n: int) -> None:
        try:
            graph = build_graph(saver)
            for _ in range(3):
                graph.invoke({"notes": [f"w{n}"], "blob": ""}, config(f"thread-{n}", f"user{n % 3}"))
        except BaseException as exc:  # collected for the main thread
            errors.append(exc)

    workers = [threading.Thread(target=run, args=(n,)) for n in range(6)]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join()
    assert not errors, errors
    for n in range(6):
        tuples = list(saver.list(config(f"thread-{n}", f"user{n % 3}")))
        assert len(tuples) == 12
        assert tuples[0].checkpoint["channel_values"]["notes"][-1] == "8 notes so far"


def test_pending_writes_come_back_in_task_order(ephemeral_memory) -> None:  # type: ignore[no-untyped-def]
    saver = MemtendSaver(ephemeral_memory)
    cfg = config(str(uuid.uuid4()))
    cfg["configurable"]["checkpoint_ns"] = ""
    stored = saver.put(cfg, empty_checkpoint(), {"source": "input", "step": -1, "parents": {}}, {})
    saver.put_writes(stored, [("b", 2), ("a", 1)], task_id="task-2", task_path="~1")
    saver.put_writes(stored, [("c", 3)], task_id="task-1", task_path="~0")
    saver.put_writes(stored, [("b", "retry ignored")], task_id="task-2", task_path="~1")
    writes = saver.get_tuple(stored).pending_writes  # type: ignore[union-attr]
    assert writes == [("task-1", "c", 3), ("task-2", "b", 2), ("task-2", "a", 1)]


def test_latest_is_the_newest_id_whatever_the_order_of_puts(ephemeral_memory) -> None:  # type: ignore[no-untyped-def]
    from langgraph.checkpoint.base.id import uuid6

    saver = MemtendSaver(ephemeral_memory)
    older, newer = str(uuid6(clock_seq=1)), str(uuid6(clock_seq=2))
    base = {"configurable": {"thread_id": "order", "checkpoint_ns": "", "user_id": "alice"}}
    for checkpoint_id, run in ((newer, "run-new"), (older, "run-old")):
        checkpoint = empty_checkpoint()
        checkpoint["id"] = checkpoint_id
        saver.put(base, checkpoint, {"source": "loop", "step": 0, "parents": {}, "run_id": run}, {})
    assert saver.get_tuple(base).checkpoint["id"] == newer  # type: ignore[union-attr]
    assert [t.checkpoint["id"] for t in saver.list(base)] == [newer, older]  # newest first, not as put
    assert [t.checkpoint["id"] for t in saver.list({"configurable": {"thread_id": "order", "user_id": "alice"}})] == [
        newer,
        older,
    ]
    saver.for_user("alice").delete_for_runs(["run-new"])  # the newest goes: the next newest is the latest again
    assert saver.get_tuple(base).checkpoint["id"] == older  # type: ignore[union-attr]
    saver.for_user("alice").prune(["order"], strategy="delete")
    assert saver.get_tuple(base) is None


def test_a_resolver_scopes_thread_only_calls_to_its_user(ephemeral_memory) -> None:  # type: ignore[no-untyped-def]
    by_prefix = MemtendSaver(ephemeral_memory, user_resolver=lambda c: str(c["configurable"]["thread_id"])[:3])
    plain = MemtendSaver(ephemeral_memory)
    meta = {"source": "input", "step": -1, "parents": {}}
    by_prefix.put({"configurable": {"thread_id": "ann-1", "checkpoint_ns": ""}}, empty_checkpoint(), meta, {})
    # the same thread id kept for another user (written with that user named in the config)
    zed = {"configurable": {"thread_id": "ann-1", "checkpoint_ns": "", "user_id": "zed"}}
    plain.put(zed, empty_checkpoint(), meta, {})
    by_prefix.delete_thread("ann-1")
    assert by_prefix.get_tuple({"configurable": {"thread_id": "ann-1"}}) is None
    assert plain.get_tuple({"configurable": {"thread_id": "ann-1", "user_id": "zed"}}) is not None  # not ann's
    with pytest.raises(UserMismatchError):
        by_prefix.copy_thread("ann-1", "bea-1")  # the resolver puts "bea-1" under another user: refused
    assert ephemeral_memory.document_owners(("langgraph_checkpoints", "bea-1")) == []


def test_put_writes_is_one_chroma_write_keeping_regular_writes_and_replacing_special_ones(ephemeral_memory) -> None:  # type: ignore[no-untyped-def]
    from langgraph.checkpoint.base import empty_checkpoint
    from langgraph.constants import ERROR

    saver = MemtendSaver(ephemeral_memory, default_user="alice")
    config = {"configurable": {"thread_id": "w1", "checkpoint_ns": ""}}
    stored = saver.put(config, empty_checkpoint(), {}, {})
    rows = ephemeral_memory.storage.documents
    real = rows.write_users  # every document write goes through it (one Chroma write, or journaled)
    calls: list[int] = []

    def counted(parts: Any) -> Any:
        calls.append(sum(len(part.puts) for part in parts))
        return real(parts)

    rows.write_users = counted  # type: ignore[method-assign]
    try:
        saver.put_writes(stored, [("a", 1), (ERROR, "first error")], task_id="t1")
        saver.put_writes(stored, [("a", "retry ignored"), (ERROR, "latest error")], task_id="t1")
    finally:
        rows.write_users = real  # type: ignore[method-assign]
    assert calls == [2, 1]  # one Chroma write each (the retry writes only the error again)
    writes = saver.get_tuple(stored).pending_writes  # type: ignore[union-attr]
    assert sorted(writes, key=str) == sorted([("t1", "a", 1), ("t1", ERROR, "latest error")], key=str)
