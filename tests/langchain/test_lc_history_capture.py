"""with_memtend_history captures (issue 31): a real RunnableWithMessageHistory run over langchain_core's fake chat
model stores the transcript in the chat history and keeps in long-term memory only what the core's capture keeps."""

from __future__ import annotations

import warnings
from typing import Any

import pytest
from langchain_core.language_models.fake_chat_models import FakeListChatModel
from langchain_core.prompts import ChatPromptTemplate, MessagesPlaceholder
from langchain_core.runnables import RunnableLambda
from memtend import InvalidInputError, Kind, Memory
from memtend_langchain import MemtendChatMessageHistory, with_memtend_history

pytestmark = pytest.mark.filterwarnings("ignore:RunnableWithMessageHistory is deprecated")

FIRST, REVISED = "Keep every reply under 100 words.", "Change of plan: keep every reply under 50 words."


def chain(memory: Memory, answers: list[str], **options: Any) -> tuple[Any, list[str]]:
    """The runnable, and the system text (memtend's context) of each prompt the model got."""
    prompts: list[str] = []

    def spy(value: Any) -> Any:
        prompts.append("\n".join(str(m.content) for m in value.to_messages() if m.type == "system"))
        return value

    prompt = ChatPromptTemplate.from_messages([MessagesPlaceholder("history"), ("human", "{question}")])
    model = FakeListChatModel(responses=answers)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        runnable = with_memtend_history(
            prompt | RunnableLambda(spy) | model,
            memory,
            input_messages_key="question",
            history_messages_key="history",
            **options,
        )
    return runnable, prompts


def config(user: str, session: str) -> dict[str, Any]:
    return {"configurable": {"user_id": user, "session_id": session}}


def test_a_run_keeps_the_fact_not_the_joke_and_the_transcript_reads_back(ephemeral_memory: Memory) -> None:
    runnable, prompts = chain(ephemeral_memory, ["Why did the chicken...", "Porto is lovely.", "In Porto."])
    runnable.invoke({"question": "Tell me a joke."}, config=config("alice", "s1"))
    runnable.invoke({"question": "I moved to Porto."}, config=config("alice", "s1"))
    alice = ephemeral_memory.user("alice")
    assert alice.facts() == {"home.city": "Porto"}
    assert alice.list(kinds=[Kind.NOTE, Kind.EVENT]) == []  # the joke, the answers: transcript only
    fact = alice.get_fact("home.city")
    assert fact is not None and fact.session == "s1" and fact.extra["capture_turn"] == 2
    history = runnable.get_session_history("alice", "s1")
    assert [m.content for m in history.messages] == [
        "Tell me a joke.",
        "Why did the chicken...",
        "I moved to Porto.",
        "Porto is lovely.",
    ]
    runnable.invoke({"question": "Where do I live?"}, config=config("alice", "s2"))  # a later conversation
    assert "home.city: Porto" in prompts[-1] and "joke" not in prompts[-1]
    assert ephemeral_memory.user("bob").list() == []


async def test_end_session_keeps_the_latest_instruction_and_session_mode_waits(ephemeral_memory: Memory) -> None:
    runnable, prompts = chain(ephemeral_memory, ["OK."] * 4, capture="session")
    for text in (FIRST, "My favourite tea is sencha.", REVISED):
        await runnable.ainvoke({"question": text}, config=config("alice", "s1"))
    assert REVISED in prompts[-1] and FIRST not in prompts[-1]  # the conversation's constraint, latest version
    alice = ephemeral_memory.user("alice")
    assert alice.list() == []  # session mode: nothing before the conversation ends
    history = runnable.get_session_history("alice", "s1")
    assert isinstance(history, MemtendChatMessageHistory)
    await history.aend_session()
    assert alice.facts() == {"favourite_tea": "sencha"}
    assert [n.text for n in alice.list(kinds=[Kind.NOTE])] == [REVISED]
    history.end_session()  # again: refreshed, never a second row
    assert len(alice.list()) == 2


def test_capture_off_and_a_bad_mode(ephemeral_memory: Memory) -> None:
    runnable, _ = chain(ephemeral_memory, ["OK."], capture=None)
    runnable.invoke({"question": "I moved to Porto."}, config=config("alice", "s1"))
    runnable.get_session_history("alice", "s1").end_session()
    assert ephemeral_memory.user("alice").list() == []
    assert len(runnable.get_session_history("alice", "s1").messages) == 2
    with pytest.raises(InvalidInputError, match="capture must be"):
        chain(ephemeral_memory, ["OK."], capture="always")
    with pytest.raises(InvalidInputError, match="write_mode"):
        MemtendChatMessageHistory("alice", "s1", memory=ephemeral_memory, write_mode="later")  # type: ignore[arg-type]
