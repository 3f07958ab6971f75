"""Isolation across users: a state machine drives MemtendMemory and both chat stores for several users and checks
every read against a model (what each user put, nothing of another user's, nothing after erasure)."""

from __future__ import annotations

import asyncio
import uuid

import chromadb
import pytest
from hypothesis import HealthCheck, settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, invariant, rule
from llama_index.core.base.llms.types import ChatMessage
from memtend import Memory
from memtend_llamaindex import MemtendChatStore, MemtendLegacyChatStore, MemtendMemory

USERS = ("alice", "bob", "carol")
SESSIONS = ("s1", "s2")
words = st.text(alphabet="abcdefghij klmnop", min_size=1, max_size=20).filter(str.strip)


@pytest.fixture(scope="module")
def shared_memory(embedding_function):  # type: ignore[no-untyped-def]
    mem = Memory(
        client=chromadb.EphemeralClient(),
        embedding_function=embedding_function,
        collection_prefix="iso" + uuid.uuid4().hex[:8],
    )
    yield mem
    mem.close()


def test_isolation_state_machine(shared_memory: Memory) -> None:
    class Isolation(RuleBasedStateMachine):
        def __init__(self) -> None:
            super().__init__()
            self.run_id = uuid.uuid4().hex[:6]
            self.model: dict[tuple[str, str], list[str]] = {}

        def uid(self, user: str) -> str:
            return f"{user}-{self.run_id}"

        def memory(self, user: str, session: str) -> MemtendMemory:
            return MemtendMemory.from_defaults(user_id=self.uid(user), session_id=session, memory=shared_memory)

        @rule(user=st.sampled_from(USERS), session=st.sampled_from(SESSIONS), text=words)
        def put_through_memory(self, user: str, session: str, text: str) -> None:
            self.memory(user, session).put(ChatMessage(role="user", content=text))
            self.model.setdefault((user, session), []).append(text)

        @rule(user=st.sampled_from(USERS), session=st.sampled_from(SESSIONS), text=words)
        def put_through_chat_store(self, user: str, session: str, text: str) -> None:
            store = MemtendChatStore(user_id=self.uid(user), memory=shared_memory)
            asyncio.run(store.add_message(session, ChatMessage(role="assistant", content=text)))
            self.model.setdefault((user, session), []).append(text)

        @rule(user=st.sampled_from(USERS), session=st.sampled_from(SESSIONS), texts=st.lists(words, max_size=3))
        def set_through_legacy_store(self, user: str, session: str, texts: list[str]) -> None:
            store = MemtendLegacyChatStore(user_id=self.uid(user), memory=shared_memory)
            store.set_messages(session, [ChatMessage(role="user", content=t) for t in texts])
            self.model[(user, session)] = list(texts)

        @rule(user=st.sampled_from(USERS), session=st.sampled_from(SESSIONS))
        def reset(self, user: str, session: str) -> None:
            self.memory(user, session).reset()
            self.model.pop((user, session), None)

        @rule(user=st.sampled_from(USERS))
        def erase(self, user: str) -> None:
            shared_memory.erase_user(self.uid(user))
            for session in SESSIONS:
                self.model.pop((user, session), None)

        @invariant()
        def every_user_sees_exactly_their_own(self) -> None:
            for user in USERS:
                store = MemtendLegacyChatStore(user_id=self.uid(user), memory=shared_memory)
                keys = {s for s in SESSIONS if self.model.get((user, s))}
                assert {k for k in store.get_keys() if store.get_messages(k)} == keys
                for session in SESSIONS:
                    got = [m.content for m in self.memory(user, session).get_all()]
                    assert got == self.model.get((user, session), [])

    Isolation.TestCase.settings = settings(
        max_examples=8, stateful_step_count=12, deadline=None, suppress_health_check=list(HealthCheck)
    )
    Isolation.TestCase().runTest()
