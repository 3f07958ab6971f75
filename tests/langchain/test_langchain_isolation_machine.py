"""memtend.testing's isolation state machine, driven through the LangChain surfaces: the chat history, the
memory tools (``remember``, ``recall``, the session ``memory`` tool) and the classic chain memory, for several
users with hostile ids. After every step no user sees, changes or keeps another user's data, working memory
equals the machine's model, and an erased user has nothing left."""

from __future__ import annotations

import re
from types import SimpleNamespace
from typing import Any

import chromadb
import pytest
from conftest import unique_prefix
from hypothesis import HealthCheck, settings
from langchain.tools import ToolRuntime
from langchain_core.messages import AIMessage, HumanMessage
from memtend import InvalidInputError, Memory, Source
from memtend.testing import VOLATILE, Driver, Seen, make_isolation_machine, strip_keys
from memtend_langchain import MemtendChatMessageHistory, MemtendMemory, memtend_tools

CHAT_SESSION = "chat-1"
_SET = re.compile(r"^ok: set (?P<key>.+?) \((?P<outcome>added|updated|unchanged)\)")


def runtime(user_id: str, thread: str) -> ToolRuntime[Any, Any]:
    return ToolRuntime(
        state={"messages": []},
        context={"user_id": user_id},
        config={"configurable": {"thread_id": thread}},
        stream_writer=lambda _: None,
        tool_call_id="call-1",
        store=None,
    )


class LangChainDriver(Driver):
    """Writes and reads through memtend_langchain's public classes and tools; lists and exports through the core."""

    name = "langchain"

    def __init__(self, memory: Memory) -> None:
        self.memory = memory
        tools = {t.name: t for t in memtend_tools(memory, k=10)}
        self.remember, self.recall_tool, self.memory_tool = (tools[n].func for n in ("remember", "recall", "memory"))

    def _history(self, user_id: str) -> MemtendChatMessageHistory:
        return MemtendChatMessageHistory(user_id, CHAT_SESSION, memory=self.memory)

    def write(self, user_id: str, text: str, *, kind: str, source: Source = Source.USER) -> None:
        if kind == "note":  # the model's remember tool
            answer = self.remember(text=text, runtime=runtime(user_id, "t"))
            assert answer == "remembered", answer
        elif kind == "event":  # a chat turn
            self._history(user_id).add_messages([HumanMessage(text), AIMessage(f"noted: {text}")])
        else:  # a classic chain turn
            MemtendMemory(memory=self.memory, user_id=user_id, session_id="classic").save_context(
                {"input": text}, {"output": f"noted: {text}"}
            )

    def recall(self, user_id: str, query: str) -> list[Seen]:
        answer = self.recall_tool(query=query, runtime=runtime(user_id, "t"))
        lines = [] if answer == "nothing remembered matches" else answer.splitlines()
        loaded = MemtendMemory(memory=self.memory, user_id=user_id).load_memory_variables({"input": query})
        lines += [line for line in loaded["memories"].splitlines() if line]
        return [Seen(None, line) for line in lines]

    def list(self, user_id: str) -> list[Seen]:
        history = [Seen(None, m.text) for m in self._history(user_id).messages]
        records = [Seen(r.user_id, r.text) for r in self.memory.user(user_id).list(status=None)]
        return history + records

    def export(self, user_id: str) -> Any:
        return strip_keys(self.memory.user(user_id).export(), VOLATILE)

    def erase(self, user_id: str) -> None:
        self.memory.erase_user(user_id)

    def validate_user(self, user_id: object) -> None:
        MemtendChatMessageHistory(user_id, CHAT_SESSION, memory=self.memory)  # type: ignore[arg-type]

    def supports(self, op: str) -> bool:
        return op in ("session_set", "session_get", "session_forget", "session_list")

    def operate(self, user_id: str, op: str, **p: Any) -> Any:
        session = p["session"]
        if op == "session_set":
            answer = self.memory_tool(op="set", key=p["key"], value=p["value"], runtime=runtime(user_id, session))
            found = _SET.match(answer)
            if found is None:
                raise InvalidInputError(answer)
            return SimpleNamespace(key=found["key"], outcome=SimpleNamespace(value=found["outcome"]))
        if op == "session_forget":
            answer = self.memory_tool(op="delete", key=p["key"], runtime=runtime(user_id, session))
            if answer.startswith("error:"):
                raise InvalidInputError(answer)
            return answer.startswith("ok: deleted")
        if op == "session_get":
            return self.memory.user(user_id).session(session).get(p["key"])
        if op == "session_list":
            return self.memory.user(user_id).session(session).list()
        raise NotImplementedError(op)

    def close(self) -> None:
        self.memory.close()


_EMBEDDING_FUNCTION: Any = None


def langchain_driver() -> Driver:
    global _EMBEDDING_FUNCTION
    if _EMBEDDING_FUNCTION is None:
        from memtend.storage.embeddings import default_embedding_function

        _EMBEDDING_FUNCTION = default_embedding_function()
    return LangChainDriver(
        Memory(
            client=chromadb.EphemeralClient(), embedding_function=_EMBEDDING_FUNCTION, collection_prefix=unique_prefix()
        )
    )


LangChainIsolation = make_isolation_machine(langchain_driver)
TestLangChainIsolation = LangChainIsolation.TestCase
TestLangChainIsolation.settings = settings(
    max_examples=10,
    stateful_step_count=12,
    deadline=None,
    database=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much, HealthCheck.data_too_large],
)
TestLangChainIsolation = pytest.mark.slow(TestLangChainIsolation)
