"""Bad input to the LangGraph adapters gets a typed memtend error that never repeats the refused value, before
anything is read or written; and two behaviours LangGraph's SQLite store tests expect (infinite and NaN filter
bounds, an explicit ttl=None beside a default TTL)."""

from __future__ import annotations

import time
from typing import Any

import pytest
from langgraph.checkpoint.base import empty_checkpoint
from langgraph.store.base import GetOp, InvalidNamespaceError, PutOp, SearchOp
from lg_fixtures import lg_memory_fixture  # noqa: F401  (the lg_memory fixture)
from memtend import InvalidInputError, InvalidUserIdError, Memory
from memtend_langgraph import MemtendSaver, MemtendStore, UserNotFoundError

CANARY = "canary-7f3a9"


@pytest.mark.parametrize("value", [[CANARY, 1], CANARY, 12345, (CANARY,)], ids=["list", "str", "int", "tuple"])
def test_a_store_value_that_is_not_a_dict_is_a_typed_error(ephemeral_memory: Memory, value: Any) -> None:
    store = MemtendStore(ephemeral_memory, user_label=0)
    with pytest.raises(InvalidInputError) as refused:
        store.batch([PutOp(("alice",), "fine", {"v": 1}), PutOp(("alice",), "k", value)])
    assert CANARY not in str(refused.value) and "12345" not in str(refused.value)
    assert store.get(("alice",), "fine") is None  # nothing of the batch was written


@pytest.mark.parametrize(
    "op",
    [
        PutOp(("alice", f"{CANARY}.x"), "k", {"v": 1}),
        GetOp(("alice", f"{CANARY}.x"), "k"),
        SearchOp(("alice", f"{CANARY}.x")),
        PutOp(("alice", ""), "k", {"v": 1}),
        PutOp(("alice", 7), "k", {"v": 1}),  # type: ignore[arg-type]
    ],
    ids=["put-dotted", "get-dotted", "search-dotted", "empty", "not-a-str"],
)
def test_batch_refuses_the_labels_get_and_search_refuse(ephemeral_memory: Memory, op: Any) -> None:
    store = MemtendStore(ephemeral_memory, user_label=0)
    with pytest.raises(InvalidNamespaceError) as refused:  # LangGraph's own error type, and memtend's
        store.batch([PutOp(("alice",), "fine", {"v": 1}), op])
    assert isinstance(refused.value, InvalidInputError) and CANARY not in str(refused.value)
    assert store.get(("alice",), "fine") is None


def test_a_namespace_naming_no_user_is_not_repeated(ephemeral_memory: Memory) -> None:
    store = MemtendStore(ephemeral_memory, user_label=1)
    with pytest.raises(UserNotFoundError) as refused:
        store.put((CANARY,), "k", {"v": 1})
    with pytest.raises(UserNotFoundError) as listed:
        store.search((CANARY,))
    assert CANARY not in str(refused.value) and CANARY not in str(listed.value)


@pytest.mark.parametrize(
    ("thread", "user", "error"),
    [
        ("t\ud800", "alice", InvalidInputError),  # a lone surrogate
        (None, "alice", InvalidInputError),
        ({"id": CANARY}, "alice", InvalidInputError),
        ("t1", {"id": CANARY}, InvalidUserIdError),
        ("t1", [CANARY], InvalidUserIdError),
    ],
    ids=["surrogate-thread", "none-thread", "dict-thread", "dict-user", "list-user"],
)
def test_the_saver_refuses_odd_ids_with_a_typed_error(
    ephemeral_memory: Memory, thread: Any, user: Any, error: type
) -> None:
    saver = MemtendSaver(ephemeral_memory)
    config: Any = {"configurable": {"thread_id": thread, "checkpoint_ns": "", "user_id": user}}
    with pytest.raises(error) as refused:
        saver.put(config, empty_checkpoint(), {}, {})
    with pytest.raises(error):
        saver.get_tuple(config)
    assert CANARY not in str(refused.value)
    assert ephemeral_memory.document_owners(()) == []  # nothing was written, under no stringified name


def test_an_int_thread_id_is_its_decimal_text(ephemeral_memory: Memory) -> None:
    saver = MemtendSaver(ephemeral_memory)
    saver.put({"configurable": {"thread_id": 7, "checkpoint_ns": "", "user_id": "alice"}}, empty_checkpoint(), {}, {})
    assert saver.get_tuple({"configurable": {"thread_id": "7", "user_id": "alice"}}) is not None


def test_infinite_and_nan_filter_bounds(lg_memory: Memory) -> None:
    store = MemtendStore(lg_memory, user_label=0)
    for n, price in enumerate((10, 20, 30)):
        store.put(("alice", "items"), f"i{n}", {"price": price})
    assert len(store.search(("alice", "items"), filter={"price": {"$lt": float("inf")}})) == 3
    assert len(store.search(("alice", "items"), filter={"price": {"$gt": float("-inf")}})) == 3
    assert store.search(("alice", "items"), filter={"price": {"$eq": float("nan")}}) == []
    assert len(store.search(("alice", "items"), filter={"price": {"$ne": float("nan")}})) == 3
    assert store.search(("alice", "items"), filter={"price": {"$gt": float("inf")}}) == []


def test_an_explicit_ttl_none_is_permanent_beside_a_default_ttl(ephemeral_memory: Memory) -> None:
    store = MemtendStore(ephemeral_memory, user_label=0, ttl={"default_ttl": 5 / 60})  # five seconds
    store.put(("alice",), "short", {"v": 1}, ttl=1 / 60)
    store.put(("alice",), "default", {"v": 2})
    store.put(("alice",), "permanent", {"v": 3}, ttl=None)
    t = time.time()
    ephemeral_memory.sweep_documents(t + 2)
    assert [store.get(("alice",), k) is not None for k in ("short", "default", "permanent")] == [False, True, True]
    ephemeral_memory.sweep_documents(t + 6)  # the reads above did not refresh: the config does not ask for it
    assert [store.get(("alice",), k) is not None for k in ("short", "default", "permanent")] == [False, False, True]
