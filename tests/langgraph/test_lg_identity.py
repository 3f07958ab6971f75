"""One identity for every LangGraph call: the run's context first, then the config; places that disagree are
refused; thread-level calls reach one user's threads; store namespaces name their user by a template."""

from __future__ import annotations

import asyncio
import operator
from dataclasses import dataclass
from typing import Annotated, Any

import pytest
from langgraph.checkpoint.base import empty_checkpoint
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.graph import END, START, StateGraph
from langgraph.runtime import Runtime
from langgraph.store.base import BaseStore
from langgraph.types import Command, interrupt
from lg_fixtures import lg_memory_fixture  # noqa: F401  (the lg_memory fixture)
from memtend import Memory
from memtend.identity import SHARED_OWNER
from memtend_langgraph import MemtendSaver, MemtendStore, UserMismatchError, UserNotFoundError
from memtend_langgraph.saver_registry import split_backend_thread_id
from typing_extensions import TypedDict


class Notes(TypedDict):
    notes: Annotated[list[str], operator.add]


@dataclass
class Who:
    user_id: str


def notes_graph(saver: MemtendSaver, store: MemtendStore | None = None):  # type: ignore[no-untyped-def]
    def take_note(state: Notes, runtime: Runtime[Any]) -> dict[str, Any]:
        return {"notes": [f"note {len(state['notes'])}"]}

    builder = StateGraph(Notes)
    builder.add_node("take_note", take_note)
    builder.add_edge(START, "take_note")
    builder.add_edge("take_note", END)
    return builder.compile(checkpointer=saver, store=store)


def thread(thread_id: str, user: str | None = None) -> dict[str, Any]:
    configurable: dict[str, Any] = {"thread_id": thread_id}
    if user is not None:
        configurable["user_id"] = user
    return {"configurable": configurable}


def test_the_user_given_only_in_context_keeps_the_thread_under_that_user(lg_memory: Memory) -> None:
    saver = MemtendSaver(lg_memory)
    graph = notes_graph(saver)
    graph.invoke({"notes": ["a"]}, thread("1"), context={"user_id": "alice"})  # LangGraph 1.x: no user in config
    graph.invoke({"notes": ["b"]}, thread("1"), context=Who("bob"))  # a context_schema object works too
    assert lg_memory.document_owners(("langgraph_checkpoints", "1")) == ["alice", "bob"]
    # outside a run, name the user in the config; each user's thread "1" is their own
    assert graph.get_state(thread("1", "alice")).values["notes"] == ["a", "note 1"]
    assert graph.get_state(thread("1", "bob")).values["notes"] == ["b", "note 1"]
    graph.invoke({"notes": ["c"]}, thread("1"), context={"user_id": "alice"})  # the next run continues alice's
    assert graph.get_state(thread("1", "alice")).values["notes"] == ["a", "note 1", "c", "note 3"]
    with pytest.raises(UserNotFoundError):
        graph.get_state(thread("1"))  # no user named anywhere: refused, never someone's thread


@pytest.mark.parametrize("where", ["chroma", "delegated"])
def test_naming_no_user_outside_a_run_says_how_to_name_one_there(ephemeral_memory: Memory, where: str) -> None:
    checkpoints = InMemorySaver() if where == "delegated" else None
    graph = notes_graph(MemtendSaver(ephemeral_memory, checkpoints=checkpoints))
    graph.invoke({"notes": ["a"]}, thread("1"), context={"user_id": "alice"})
    state_calls = {
        "get_state": lambda: graph.get_state(thread("1")),
        "get_state_history": lambda: list(graph.get_state_history(thread("1"))),
        "update_state": lambda: graph.update_state(thread("1"), {"notes": ["z"]}),
    }
    for name, call in state_calls.items():
        with pytest.raises(UserNotFoundError) as refused:
            call()
        message = str(refused.value)
        assert "outside a graph run" in message and "'user_id'" in message, name  # the fix these calls can take
        assert "context={" not in message and "invoke the graph" not in message, name  # they take no context=
    with pytest.raises(UserNotFoundError) as in_a_run:
        graph.invoke({"notes": ["b"]}, thread("1"))
    assert "context={'user_id': ...}" in str(in_a_run.value) and "outside a graph run" not in str(in_a_run.value)
    assert graph.get_state(thread("1", "alice")).values["notes"] == ["a", "note 1"]  # nothing was written


async def test_async_runs_read_the_user_from_context_too(ephemeral_memory: Memory) -> None:
    graph = notes_graph(MemtendSaver(ephemeral_memory))
    await graph.ainvoke({"notes": ["a"]}, thread("1"), context=Who("alice"))
    await graph.ainvoke({"notes": ["b"]}, thread("1"), context=Who("bob"))
    assert (await graph.aget_state(thread("1", "bob"))).values["notes"] == ["b", "note 1"]
    with pytest.raises(UserMismatchError):
        await graph.ainvoke({"notes": ["c"]}, thread("1", "alice"), context=Who("bob"))
    assert (await graph.aget_state(thread("1", "alice"))).values["notes"] == ["a", "note 1"]


def test_config_and_context_naming_different_users_are_refused_before_anything_is_written(
    lg_memory: Memory,
) -> None:
    graph = notes_graph(MemtendSaver(lg_memory))
    with pytest.raises(UserMismatchError) as refused:
        graph.invoke({"notes": ["x"]}, thread("1", "alice"), context={"user_id": "bob"})
    assert "alice" not in str(refused.value) and "bob" not in str(refused.value)  # names places, not ids
    assert set(refused.value.places) == {"the run's context (user_id)", "configurable.user_id"}
    assert lg_memory.document_owners(("langgraph_checkpoints",)) == []
    graph.invoke({"notes": ["x"]}, thread("1", "alice"), context={"user_id": "alice"})  # agreeing places are fine
    assert lg_memory.document_owners(("langgraph_checkpoints",)) == ["alice"]


def test_alice_and_bob_each_have_a_thread_1_and_deleting_one_leaves_the_other(lg_memory: Memory) -> None:
    saver = MemtendSaver(lg_memory)
    graph = notes_graph(saver)
    for user in ("alice", "bob"):
        graph.invoke({"notes": [user]}, thread("1"), context={"user_id": user})
    with pytest.raises(UserNotFoundError):
        saver.delete_thread("1")  # names no user
    for call in (lambda: saver.prune(["1"]), lambda: saver.copy_thread("1", "2"), lambda: list(saver.list({}))):
        with pytest.raises(UserNotFoundError):
            call()
    assert [t.config["configurable"]["thread_id"] for t in saver.list(thread("1", "alice"))]  # alice's exist
    only_alice = {t.checkpoint["id"] for t in saver.list({"configurable": {"user_id": "alice"}})}
    only_bob = {t.checkpoint["id"] for t in saver.list({"configurable": {"user_id": "bob"}})}
    assert only_alice and only_bob and not only_alice & only_bob  # a user but no thread: that user's only

    alice = saver.for_user("alice")
    alice.copy_thread("1", "copy")
    alice.prune(["copy"])
    assert lg_memory.document_owners(("langgraph_checkpoints", "copy")) == ["alice"]
    alice.delete_thread("1")
    assert graph.get_state(thread("1", "alice")).values == {}
    assert graph.get_state(thread("1", "bob")).values["notes"] == ["bob", "note 1"]
    with pytest.raises(UserMismatchError):
        alice.get_tuple(thread("1", "bob"))  # a view for alice refuses a config naming bob

    defaulted = MemtendSaver(lg_memory, default_user="bob")  # a one-user application
    defaulted.delete_thread("copy")  # bob has no thread "copy": alice's is not reached
    assert lg_memory.document_owners(("langgraph_checkpoints", "copy")) == ["alice"]


def test_a_thread_level_call_inside_a_run_is_for_the_runs_user(ephemeral_memory: Memory) -> None:
    saver = MemtendSaver(ephemeral_memory)
    graph = notes_graph(saver)
    graph.invoke({"notes": ["old"]}, thread("old"), context={"user_id": "alice"})
    graph.invoke({"notes": ["old"]}, thread("old"), context={"user_id": "bob"})

    def tidy(state: Notes) -> dict[str, Any]:
        saver.delete_thread("old")  # called from bob's run: bob's thread "old"
        return {"notes": ["tidied"]}

    builder = StateGraph(Notes)
    builder.add_node("tidy", tidy)
    builder.add_edge(START, "tidy")
    builder.add_edge("tidy", END)
    builder.compile(checkpointer=saver).invoke({"notes": []}, thread("t"), context={"user_id": "bob"})
    assert ephemeral_memory.document_owners(("langgraph_checkpoints", "old")) == ["alice"]


def test_get_state_of_an_interrupted_subgraph_finds_its_user(lg_memory: Memory) -> None:
    def ask(state: Notes) -> dict[str, Any]:
        answer = interrupt("which colour?")
        return {"notes": [f"answer {answer}"]}

    child = StateGraph(Notes)
    child.add_node("ask", ask)
    child.add_edge(START, "ask")
    child.add_edge("ask", END)
    parent = StateGraph(Notes)
    parent.add_node("child", child.compile())
    parent.add_edge(START, "child")
    parent.add_edge("child", END)
    graph = parent.compile(checkpointer=MemtendSaver(lg_memory))

    for user in ("alice", "bob"):
        graph.invoke({"notes": [user]}, thread("1"), context={"user_id": user})
    state = graph.get_state(thread("1", "alice"), subgraphs=True)
    (task,) = state.tasks
    assert task.state is not None and task.state.values["notes"] == ["alice"]  # type: ignore[union-attr]
    assert task.state.next == ("ask",)  # type: ignore[union-attr]
    done = graph.invoke(Command(resume="blue"), thread("1"), context={"user_id": "alice"})
    assert done["notes"][-1] == "answer blue" and "bob" not in done["notes"]  # alice's run resumed alice's
    bob = graph.get_state(thread("1", "bob"), subgraphs=True)
    assert bob.tasks[0].state.values["notes"] == ["bob"]  # type: ignore[union-attr]


@pytest.mark.parametrize("where", ["chroma", "delegated"])
def test_a_checkpointing_subgraph_on_one_thread_id_is_each_users_own(ephemeral_memory: Memory, where: str) -> None:
    def ask(state: Notes) -> dict[str, Any]:
        return {"notes": [f"answer {interrupt('which colour?')}"]}

    child = StateGraph(Notes)
    child.add_node("ask", ask)
    child.add_edge(START, "ask")
    child.add_edge("ask", END)
    parent = StateGraph(Notes)
    parent.add_node("child", child.compile(checkpointer=True))  # its checkpoints under "child": no task id in it
    parent.add_edge(START, "child")
    parent.add_edge("child", END)
    checkpoints = InMemorySaver() if where == "delegated" else None
    graph = parent.compile(checkpointer=MemtendSaver(ephemeral_memory, checkpoints=checkpoints))

    def child_history(user: str) -> list[list[str]]:
        config = {"configurable": {"thread_id": "1", "checkpoint_ns": "child", "user_id": user}}
        return [s.values.get("notes", []) for s in graph.get_state_history(config)]  # type: ignore[arg-type]

    for user in ("alice", "bob"):
        graph.invoke({"notes": [user]}, thread("1"), context={"user_id": user})
    for user in ("alice", "bob", "alice"):
        (task,) = graph.get_state(thread("1", user), subgraphs=True).tasks
        assert task.state.values["notes"] == [user] and task.state.next == ("ask",)  # type: ignore[union-attr]
    (task,) = asyncio.run(graph.aget_state(thread("1", "bob"), subgraphs=True)).tasks
    assert task.state.values["notes"] == ["bob"]  # type: ignore[union-attr]
    for _ in ("after a read of every subgraph", "after a read of the parent alone"):
        with pytest.raises(UserNotFoundError):  # once a call has returned, a read naming no one gets no one's
            graph.get_state({"configurable": {"thread_id": "1", "checkpoint_ns": "child"}})
        graph.get_state(thread("1", "alice"))
    for user in ("alice", "bob"):
        graph.invoke(Command(resume=f"{user}'s colour"), thread("1"), context={"user_id": user})
    for user, other in (("alice", "bob"), ("bob", "alice")):
        assert graph.get_state(thread("1", user)).values["notes"] == [user, user, f"answer {user}'s colour"]
        history = [s.values.get("notes", []) for s in graph.get_state_history(thread("1", user))]
        assert len(history) >= 3 and not any(other in str(notes) for notes in history)
        assert child_history(user)[0] == [user, f"answer {user}'s colour"]
        assert not any(other in str(notes) for notes in child_history(user))

    ephemeral_memory.erase_user("alice")
    assert graph.get_state(thread("1", "alice")).values == {}
    assert list(graph.get_state_history(thread("1", "alice"))) == [] and child_history("alice") == []
    assert graph.get_state(thread("1", "bob")).values["notes"] == ["bob", "bob", "answer bob's colour"]
    assert child_history("bob")[0] == ["bob", "answer bob's colour"]
    if where == "chroma":
        assert ephemeral_memory.document_owners(("langgraph_checkpoints", "1")) == ["bob"]
    else:  # the backend holds bob's parent and subgraph checkpoints only
        assert checkpoints is not None
        held = {
            (c.config["configurable"]["thread_id"], c.config["configurable"]["checkpoint_ns"])
            for c in checkpoints.list(None)
        }
        assert {ns for _, ns in held} == {"", "child"}
        assert {split_backend_thread_id(t) for t, _ in held} == {("bob", "1")}


def test_the_conformance_view_exists_only_when_opened(ephemeral_memory: Memory) -> None:
    graph = notes_graph(MemtendSaver(ephemeral_memory))
    graph.invoke({"notes": ["a"]}, thread("1", "alice"))
    graph.invoke({"notes": ["b"]}, thread("2", "bob"))
    with pytest.raises(UserNotFoundError, match="admin=True"):
        list(MemtendSaver(ephemeral_memory).list(None))
    everyone = MemtendSaver(ephemeral_memory, admin=True)
    assert {t.config["configurable"]["thread_id"] for t in everyone.list(None)} == {"1", "2"}
    with pytest.raises(UserNotFoundError):  # admin opens views across users; a write still needs its user
        everyone.get_tuple(thread("1"))


def test_a_listing_naming_no_one_lists_the_default_users_only_and_a_resolver_needs_a_thread(
    ephemeral_memory: Memory,
) -> None:
    graph = notes_graph(MemtendSaver(ephemeral_memory))
    for user in ("alice", "bob"):
        graph.invoke({"notes": [user]}, thread("1"), context={"user_id": user})
    defaulted = MemtendSaver(ephemeral_memory, default_user="bob")  # a one-user application
    for config in (None, {}):
        values = [str(t.checkpoint["channel_values"]) for t in defaulted.list(config)]  # type: ignore[arg-type]
        assert any("bob" in v for v in values) and not any("alice" in v for v in values)  # bob's only

    def user_of_thread(config: Any) -> str | None:  # threads named "<user>:<id>": no thread, no user
        thread_id = str((config.get("configurable") or {}).get("thread_id") or "")
        return thread_id.split(":")[0] if ":" in thread_id else None

    resolved = MemtendSaver(ephemeral_memory, user_resolver=user_of_thread)
    resolved.put(thread("alice:2"), empty_checkpoint(), {"source": "input", "step": -1, "parents": {}}, {})
    for config in (None, {}):
        with pytest.raises(UserNotFoundError, match="admin=True"):  # never every user's checkpoints
            list(resolved.list(config))  # type: ignore[arg-type]
    assert {t.config["configurable"]["thread_id"] for t in resolved.list(thread("alice:2"))} == {"alice:2"}
    assert ephemeral_memory.document_owners(("langgraph_checkpoints", "alice:2")) == ["alice"]


# ---------------------------------------------------------------------------------------------------- the store
def memory_graph(store: MemtendStore):  # type: ignore[no-untyped-def]
    """LangGraph's memory how-to: a node writes ("memories", user_id), the user read from the runtime's context."""

    def remember(state: Notes, runtime: Runtime[Any], *, store: BaseStore) -> dict[str, Any]:
        user_id = runtime.context["user_id"]
        store.put(("memories", user_id), f"m{len(state['notes'])}", {"text": state["notes"][-1]})
        return {}

    builder = StateGraph(Notes)
    builder.add_node("remember", remember)
    builder.add_edge(START, "remember")
    builder.add_edge("remember", END)
    return builder.compile(store=store)


def test_the_how_to_layout_belongs_to_its_user_and_is_erased_with_them(lg_memory: Memory) -> None:
    store = MemtendStore(lg_memory)  # default template ("memories", "{user_id}")
    graph = memory_graph(store)
    graph.invoke({"notes": ["likes tea"]}, context={"user_id": "alice"})
    graph.invoke({"notes": ["likes jazz"]}, context={"user_id": "bob"})
    assert lg_memory.document_owners(("langgraph_store", "memories")) == ["alice", "bob"]  # not a user "memories"
    exported = lg_memory.user("alice").export()["documents"]
    assert "likes tea" in str(exported) and "likes jazz" not in str(exported)
    receipt = lg_memory.erase_user("alice")
    assert receipt.total > 0
    assert store.search(("memories", "alice")) == []
    assert [i.value["text"] for i in store.search(("memories", "bob"))] == ["likes jazz"]


def test_namespaces_no_template_matches_are_refused_unless_shared(ephemeral_memory: Memory) -> None:
    store = MemtendStore(ephemeral_memory)
    with pytest.raises(UserNotFoundError) as refused:
        store.put(("alice", "memories"), "k", {"text": "x"})  # the earlier layout is no longer guessed
    assert "alice" not in str(refused.value)  # the refused namespace is not repeated
    with pytest.raises(UserNotFoundError):
        store.put(("settings",), "theme", {"v": "dark"})
    assert ephemeral_memory.document_owners(("langgraph_store",)) == []

    layouts = MemtendStore(
        ephemeral_memory,
        namespaces=[("memories", "{user_id}"), ("tenants", "{tenant}", "users", "{user_id}")],
        shared_namespaces=[("settings",)],
    )
    layouts.put(("tenants", "acme", "users", "alice", "prefs"), "k", {"text": "short answers"})
    layouts.put(("settings",), "theme", {"v": "dark"})
    assert ephemeral_memory.document_owners(("langgraph_store", "tenants")) == ["alice"]
    assert ephemeral_memory.document_owners(("langgraph_store", "settings")) == [SHARED_OWNER]
    assert ephemeral_memory.user("alice").export()["shared_namespaces"] == [["langgraph_store", "settings"]]
    receipt = ephemeral_memory.erase_user("alice")
    assert receipt.shared == (("langgraph_store", "settings"),)  # what stays, being no one user's
    assert layouts.get(("tenants", "acme", "users", "alice", "prefs"), "k") is None
    assert layouts.get(("settings",), "theme").value == {"v": "dark"}  # type: ignore[union-attr]
    legacy = MemtendStore(ephemeral_memory, user_label=0)  # the earlier layout, named on purpose
    legacy.put(("alice", "memories"), "k", {"text": "x"})
    assert ephemeral_memory.document_owners(("langgraph_store", "alice")) == ["alice"]


def test_a_node_reaches_its_own_users_namespace_only(ephemeral_memory: Memory) -> None:
    store = MemtendStore(ephemeral_memory)

    def snoop(state: Notes, *, store: BaseStore) -> dict[str, Any]:
        store.put(("memories", "bob"), "planted", {"text": "from alice's run"})
        return {}

    builder = StateGraph(Notes)
    builder.add_node("snoop", snoop)
    builder.add_edge(START, "snoop")
    builder.add_edge("snoop", END)
    with pytest.raises(UserMismatchError):
        builder.compile(store=store).invoke({"notes": []}, context={"user_id": "alice"})
    assert store.get(("memories", "bob"), "planted") is None


def test_a_user_placeholder_is_filled_from_the_run(ephemeral_memory: Memory) -> None:
    store = MemtendStore(ephemeral_memory)

    def remember(state: Notes, *, store: BaseStore) -> dict[str, Any]:
        store.put(("memories", "{user_id}"), "k", {"text": state["notes"][-1]})  # LangMem's template, unfilled
        return {}

    builder = StateGraph(Notes)
    builder.add_node("remember", remember)
    builder.add_edge(START, "remember")
    builder.add_edge("remember", END)
    builder.compile(store=store).invoke({"notes": ["likes tea"]}, {"configurable": {"user_id": "carol"}})
    assert store.get(("memories", "carol"), "k").value == {"text": "likes tea"}  # type: ignore[union-attr]
    with pytest.raises(UserNotFoundError):
        store.put(("memories", "{user_id}"), "k", {"text": "outside a run"})


def test_a_listing_prefix_placeholder_is_filled_from_the_run(ephemeral_memory: Memory) -> None:
    store = MemtendStore(ephemeral_memory)
    for user in ("alice", "bob", "alice2"):  # alice2: a label that starts like alice's is not hers
        for topic in ("food", "music", "work", "travel", "alice"):  # bob's ("memories", "bob", "alice") is bob's
            store.put(("memories", user, topic), "k", {"text": f"{user} {topic}"})
    listed: dict[str, list[tuple[str, ...]]] = {}

    def list_mine(state: Notes, runtime: Runtime[Any], *, store: BaseStore) -> dict[str, Any]:
        user = runtime.context["user_id"]
        listed[user] = store.list_namespaces(prefix=("memories", "{user_id}"), limit=100)
        listed[user + " suffix"] = store.list_namespaces(prefix=("memories", "{user_id}"), suffix=("alice",))
        return {}

    builder = StateGraph(Notes)
    builder.add_node("list_mine", list_mine)
    builder.add_edge(START, "list_mine")
    builder.add_edge("list_mine", END)
    graph = builder.compile(store=store)
    graph.invoke({"notes": []}, context={"user_id": "alice"})
    graph.invoke({"notes": []}, context={"user_id": "bob"})
    topics = ["alice", "food", "music", "travel", "work"]
    assert listed["alice"] == [("memories", "alice", t) for t in topics]
    assert listed["bob"] == [("memories", "bob", t) for t in topics]
    assert listed["alice suffix"] == [("memories", "alice", "alice")]
    assert listed["bob suffix"] == [("memories", "bob", "alice")]
    with pytest.raises(UserNotFoundError):  # outside a run there is no user to fill it with
        store.list_namespaces(prefix=("memories", "{user_id}"))
