"""Random store and checkpoint operations for several users (hostile ids and labels): no cross-user read or loss.

A hypothesis state machine drives ``MemtendStore`` and ``MemtendSaver`` on one Memory and keeps an independent
model; after every step each user's items, namespaces and threads equal that user's model and carry only that
user's marker, and an erased user has nothing left.
"""

from __future__ import annotations

from typing import Any

import chromadb
import pytest
from hypothesis import HealthCheck, settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, invariant, rule
from langgraph.checkpoint.base import empty_checkpoint
from memtend import Memory
from memtend_langgraph import MemtendSaver, MemtendStore

USERS = ("alice", "$or", "' OR '1'='1", "user_id", "ali", "ALICE")
LABELS = ("notes", "*", "%", "_", "a b", "new\nline", "$ne", "ü", "langgraph_store")
KEYS = ("k", "K", "*", "k%", "1")
Model = dict[tuple[tuple[str, ...], str], dict[str, Any]]


class AdapterIsolation(RuleBasedStateMachine):
    memory: Memory
    embedding_function: Any = None

    def __init__(self) -> None:
        super().__init__()
        import uuid

        self.memory = Memory(
            client=chromadb.EphemeralClient(),
            embedding_function=type(self).embedding_function,
            collection_prefix="iso" + uuid.uuid4().hex[:10],
        )
        self.store = MemtendStore(self.memory)
        self.saver = MemtendSaver(self.memory)
        self.items: dict[str, Model] = {u: {} for u in USERS}
        self.threads: dict[str, dict[str, int]] = {u: {} for u in USERS}
        self.counter = 0

    def teardown(self) -> None:
        self.memory.close()

    @rule(user=st.sampled_from(USERS), labels=st.lists(st.sampled_from(LABELS), max_size=2), key=st.sampled_from(KEYS))
    def put(self, user: str, labels: list[str], key: str) -> None:
        self.counter += 1
        namespace = (user, *labels)
        value = {"owner": user, "n": self.counter}
        self.store.put(namespace, key, value)
        self.items[user][(namespace, key)] = value

    @rule(user=st.sampled_from(USERS), data=st.data())
    def delete(self, user: str, data: st.DataObject) -> None:
        if not self.items[user]:
            return
        namespace, key = data.draw(st.sampled_from(sorted(self.items[user])))
        self.store.delete(namespace, key)
        del self.items[user][(namespace, key)]

    @rule(user=st.sampled_from(USERS), thread=st.sampled_from(("t1", "t2", "*")))
    def checkpoint(self, user: str, thread: str) -> None:
        config = {"configurable": {"thread_id": thread, "checkpoint_ns": "", "user_id": user}}
        latest = self.saver.get_tuple(config)
        if latest is not None:
            config["configurable"]["checkpoint_id"] = latest.checkpoint["id"]
        checkpoint = empty_checkpoint()
        checkpoint["channel_values"] = {"owner": user}
        self.saver.put(config, checkpoint, {"source": "loop", "step": 0, "parents": {}}, {})
        self.threads[user][thread] = self.threads[user].get(thread, 0) + 1

    @rule(user=st.sampled_from(USERS))
    def erase(self, user: str) -> None:
        self.memory.erase_user(user)
        self.items[user] = {}
        self.threads[user] = {}

    @invariant()
    def each_user_sees_exactly_their_own(self) -> None:
        for user in USERS:
            found = self.store.search((user,), limit=1000)
            assert {(i.namespace, i.key): i.value for i in found} == self.items[user]
            assert {ns for ns, _ in self.items[user]} == set(self.store.list_namespaces(prefix=(user,), limit=1000))
            for thread in ("t1", "t2", "*"):
                config = {"configurable": {"thread_id": thread, "user_id": user}}
                listed = list(self.saver.list(config))
                assert len(listed) == self.threads[user].get(thread, 0)
                assert all(t.checkpoint["channel_values"] == {"owner": user} for t in listed)


@pytest.mark.slow
def test_no_cross_user_read_under_random_operations(embedding_function) -> None:  # type: ignore[no-untyped-def]
    AdapterIsolation.embedding_function = embedding_function
    runner = AdapterIsolation.TestCase
    runner.settings = settings(
        max_examples=12,
        stateful_step_count=12,
        deadline=None,
        suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
    )
    runner().runTest()
