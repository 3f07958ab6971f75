"""Isolation under random operations: the chat history and the memory tools never let one user see, change or
keep another user's data (hostile user ids and session ids included).

A hypothesis state machine drives MemtendChatMessageHistory (add, clear), the session ``memory`` tool (set,
forget) and ``remember`` for several users, and after every step checks each user's history and working memory
against an independent model, and that nothing a user wrote shows up in another user's export. Erasing a user
leaves that user nothing and the others untouched.
"""

from __future__ import annotations

from typing import Any

import chromadb
from conftest import unique_prefix
from hypothesis import HealthCheck, settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, initialize, invariant, rule
from langchain_core.messages import AIMessage, HumanMessage, ToolMessage
from memtend import Memory
from memtend_langchain import MemtendChatMessageHistory, memtend_tools

USER_IDS = ["alice", "Alice", "alice ", "$ne", '{"$ne": ""}', "用户💥", "kv:0000", "../x", "*"]
SESSIONS = ["s1", "s2", "s1 ", "$or", "a/b", "ñ"]
WORDS = ["apple", "river", "cobalt", "meadow", "quartz", "lantern"]


class Runtime:
    """The shape of LangChain's ToolRuntime that the tools read (context, config, state, execution info)."""

    def __init__(self, user_id: str, thread: str) -> None:
        self.context = {"user_id": user_id}
        self.config = {"configurable": {"thread_id": thread}}
        self.execution_info = None
        self.state: dict[str, Any] = {"messages": []}


def make_machine(embedding_function: Any) -> type[RuleBasedStateMachine]:
    class ChatIsolation(RuleBasedStateMachine):
        def __init__(self) -> None:
            super().__init__()
            self.memory = Memory(
                client=chromadb.EphemeralClient(),
                embedding_function=embedding_function,
                collection_prefix=unique_prefix(),
            )
            tools = {t.name: t for t in memtend_tools(self.memory)}
            self.memory_tool = tools["memory"].func
            self.remember_tool = tools["remember"].func
            self.histories: dict[tuple[str, str], list[str]] = {}
            self.state: dict[tuple[str, str], dict[str, str]] = {}
            self.notes: dict[str, list[str]] = {}
            self.users: list[str] = []

        def teardown(self) -> None:
            self.memory.close()

        @initialize(users=st.lists(st.sampled_from(USER_IDS), min_size=2, max_size=4, unique=True))
        def start(self, users: list[str]) -> None:
            self.users = users

        def marker(self, user: str) -> str:
            return f"m{self.users.index(user)}x"

        @rule(
            n=st.integers(0, 3),
            session=st.sampled_from(SESSIONS),
            words=st.lists(st.sampled_from(WORDS), min_size=1, max_size=3),
        )
        def add(self, n: int, session: str, words: list[str]) -> None:
            user = self.users[n % len(self.users)]
            text = f"{self.marker(user)} {' '.join(words)}"
            turn = [
                HumanMessage(text),
                AIMessage("", tool_calls=[{"name": "t", "args": {"q": text}, "id": f"c{len(text)}"}]),
                ToolMessage(text, tool_call_id=f"c{len(text)}", name="t"),
                AIMessage(text),
            ]
            MemtendChatMessageHistory(user, session, memory=self.memory).add_messages(turn)
            self.histories.setdefault((user, session), []).extend([text, "", text, text])

        @rule(n=st.integers(0, 3), session=st.sampled_from(SESSIONS))
        def clear(self, n: int, session: str) -> None:
            user = self.users[n % len(self.users)]
            MemtendChatMessageHistory(user, session, memory=self.memory).clear()
            self.histories.pop((user, session), None)

        @rule(
            n=st.integers(0, 3),
            thread=st.sampled_from(SESSIONS),
            key=st.sampled_from(["goal", "step"]),
            word=st.sampled_from(WORDS),
            remove=st.booleans(),
        )
        def working_memory(self, n: int, thread: str, key: str, word: str, remove: bool) -> None:
            user = self.users[n % len(self.users)]
            runtime = Runtime(user, thread)
            slot = self.state.setdefault((user, thread), {})
            if remove:
                self.memory_tool(op="delete", key=key, runtime=runtime)
                slot.pop(key, None)
            else:
                value = f"{self.marker(user)} {word}"
                answer = self.memory_tool(op="set", key=key, value=value, runtime=runtime)
                assert answer.startswith("ok"), answer
                slot[key] = value

        @rule(n=st.integers(0, 3), word=st.sampled_from(WORDS))
        def remember(self, n: int, word: str) -> None:
            user = self.users[n % len(self.users)]
            text = f"{self.marker(user)} likes {word}"
            assert self.remember_tool(text=text, runtime=Runtime(user, "s1")) == "remembered"
            notes = self.notes.setdefault(user, [])
            if text not in notes:  # an exact duplicate refreshes the stored note, never a second one (issue 31)
                notes.append(text)

        @rule(n=st.integers(0, 3))
        def erase(self, n: int) -> None:
            user = self.users[n % len(self.users)]
            self.memory.erase_user(user)
            for table in (self.histories, self.state):
                for slot in [s for s in table if s[0] == user]:
                    del table[slot]
            self.notes.pop(user, None)

        @invariant()
        def every_user_sees_exactly_their_own(self) -> None:
            for user in self.users:
                for session in SESSIONS:
                    stored = MemtendChatMessageHistory(user, session, memory=self.memory).messages
                    assert [m.text for m in stored] == self.histories.get((user, session), []), (user, session)
                    state = self.memory.user(user).session(session).list()
                    assert state == self.state.get((user, session), {}), (user, session)
                exported = str(self.memory.user(user).export())
                for other in self.users:
                    if other != user:
                        assert self.marker(other) not in exported, (user, other)
                notes = [n.text for n in self.memory.user(user).list(kinds=["note"])]
                assert notes == self.notes.get(user, [])

    return ChatIsolation


def test_chat_history_and_tools_keep_users_apart(embedding_function: Any) -> None:
    machine = make_machine(embedding_function)
    machine.TestCase.settings = settings(
        max_examples=6,
        stateful_step_count=12,
        deadline=None,
        suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much],
    )
    machine.TestCase().runTest()
