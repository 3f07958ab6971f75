"""MemtendChatMessageHistory against the real LangChain classes, on every Chroma backend."""

from __future__ import annotations

import warnings

import pytest
from langchain_core.chat_history import InMemoryChatMessageHistory
from langchain_core.language_models.fake_chat_models import FakeMessagesListChatModel, GenericFakeChatModel
from langchain_core.messages import (
    AIMessage,
    BaseMessage,
    ChatMessage,
    HumanMessage,
    SystemMessage,
    ToolMessage,
)
from langchain_core.prompts import ChatPromptTemplate, MessagesPlaceholder
from memtend import InvalidInputError, InvalidUserIdError, Memory, SensitiveDataError
from memtend_langchain import MemtendChatMessageHistory, with_memtend_history

# LangChain deprecates RunnableWithMessageHistory itself (its own warning, not ours); the adapter still serves it.
pytestmark = pytest.mark.filterwarnings("ignore:RunnableWithMessageHistory is deprecated")

AWS_KEY = "AKIAIOSFODNN7EXAMPLE"  # the documented example key id: the gate knows its shape
SECRET_TEXT = f"my key is {AWS_KEY} keep it safe"


def every_kind() -> list[BaseMessage]:
    """One of each message type, with the fields a round trip must keep."""
    return [
        SystemMessage(content="You are terse.", id="sys-1"),
        HumanMessage(content="Deploy the billing service", id="h-1", name="alice", additional_kwargs={"lang": "en"}),
        AIMessage(
            content="",
            id="a-1",
            tool_calls=[
                {"name": "deploy", "args": {"service": "billing", "env": "staging"}, "id": "call_1"},
                {"name": "notify", "args": {"channel": "#ops"}, "id": "call_2"},
            ],
            additional_kwargs={"reasoning": "two steps"},
            response_metadata={"model_name": "fake", "finish_reason": "tool_calls"},
        ),
        ToolMessage(content='{"deployment_id": "dep_7f3a9"}', tool_call_id="call_1", name="deploy", id="t-1"),
        ToolMessage(
            content="notify failed", tool_call_id="call_2", name="notify", status="error", artifact={"code": 503}
        ),
        HumanMessage(
            content=[
                {"type": "text", "text": "Here is the diagram"},
                {"type": "image_url", "image_url": {"url": "https://example.com/d.png"}},
            ],
            id="h-2",
        ),
        AIMessage(content=[{"type": "text", "text": "Deployed dep_7f3a9."}], id="a-2"),
        ChatMessage(role="critic", content="fine", id="c-1"),
    ]


def test_every_message_type_round_trips_in_order(memory: Memory) -> None:
    history = MemtendChatMessageHistory("alice", "s1", memory=memory)
    sent = every_kind()
    history.add_messages(sent[:3])
    history.add_messages(sent[3:])
    assert history.messages == sent
    again = MemtendChatMessageHistory("alice", "s1", memory=memory)  # a new handle reads the same store
    assert [m.id for m in again.messages] == [m.id for m in sent]
    assert again.messages[2].tool_calls == sent[2].tool_calls
    assert again.messages[4].artifact == {"code": 503}


async def test_async_twins_match_sync(memory: Memory) -> None:
    history = MemtendChatMessageHistory("alice", "async", memory=memory)
    await history.aadd_messages(every_kind())
    assert await history.aget_messages() == every_kind()
    assert history.messages == every_kind()
    await history.aclear()
    assert await history.aget_messages() == []


def test_add_message_and_helpers_append(ephemeral_memory: Memory) -> None:
    history = MemtendChatMessageHistory("alice", "s", memory=ephemeral_memory)
    history.add_user_message("one")
    history.add_ai_message("two")
    history.add_message(HumanMessage("three"))
    assert [m.text for m in history.messages] == ["one", "two", "three"]
    assert [m.type for m in history.messages] == ["human", "ai", "human"]


def test_clear_touches_only_its_session_and_user(memory: Memory) -> None:
    a1 = MemtendChatMessageHistory("alice", "one", memory=memory)
    a2 = MemtendChatMessageHistory("alice", "two", memory=memory)
    b1 = MemtendChatMessageHistory("bob", "one", memory=memory)
    for h, text in ((a1, "a1"), (a2, "a2"), (b1, "b1")):
        h.add_messages([HumanMessage(text), AIMessage(text + "!")])
    a1.clear()
    assert a1.messages == []
    assert [m.text for m in a2.messages] == ["a2", "a2!"]
    assert [m.text for m in b1.messages] == ["b1", "b1!"]


def test_a_long_session_is_read_whole_in_order(ephemeral_memory: Memory) -> None:
    history = MemtendChatMessageHistory("alice", "long", memory=ephemeral_memory)
    batch = [HumanMessage(f"m{i}") if i % 2 == 0 else AIMessage(f"m{i}") for i in range(1_203)]
    history.add_messages(batch[:600])
    history.add_messages(batch[600:])
    assert [m.text for m in history.messages] == [f"m{i}" for i in range(1_203)]


def test_a_turn_is_one_document_and_a_large_call_is_split(ephemeral_memory: Memory) -> None:
    """One add_messages is one document (Chroma's cost is per row); a call past 100 messages or 128,000 characters
    takes several, all read back in order."""
    history = MemtendChatMessageHistory("alice", "s", memory=ephemeral_memory)
    docs = ephemeral_memory.user("alice").documents()
    history.add_messages([HumanMessage("q"), AIMessage("a")])
    assert len(docs.search(history.namespace, limit=1000)) == 1
    history.add_messages([HumanMessage(f"m{i}") for i in range(250)])
    assert len(docs.search(history.namespace, limit=1000)) == 1 + 3
    history.add_messages([HumanMessage("x" * 100_000), AIMessage("y" * 100_000), AIMessage("z")])
    assert len(docs.search(history.namespace, limit=1000)) == 1 + 3 + 2
    texts = [m.text for m in history.messages]
    assert texts == ["q", "a", *(f"m{i}" for i in range(250)), "x" * 100_000, "y" * 100_000, "z"]


def test_a_history_written_a_message_per_document_still_reads(ephemeral_memory: Memory) -> None:
    """Documents of the earlier layout (one LangChain message dict each) read in order beside the new ones."""
    from langchain_core.messages import message_to_dict

    history = MemtendChatMessageHistory("alice", "s", memory=ephemeral_memory)
    docs = ephemeral_memory.user("alice").documents()
    for key, message in (
        ("00000000000000000001-000000-old-0", HumanMessage("old q")),
        ("00000000000000000001-000001-old-0", AIMessage("old a")),
    ):
        docs.put(history.namespace, key, message_to_dict(message))
    history.add_messages([HumanMessage("new q"), AIMessage("new a")])
    assert [(type(m).__name__, m.text) for m in history.messages] == [
        ("HumanMessage", "old q"),
        ("AIMessage", "old a"),
        ("HumanMessage", "new q"),
        ("AIMessage", "new a"),
    ]


def test_a_secret_is_refused_and_nothing_of_the_batch_is_stored(memory: Memory) -> None:
    """With redact=False (the default masks: see docs/secrets.md) a secret refuses the whole batch, the error
    naming the surface and the option."""
    history = MemtendChatMessageHistory("alice", "s", memory=memory, redact=False)
    history.add_messages([HumanMessage("hello"), AIMessage("hi")])
    with pytest.raises(SensitiveDataError) as refused:
        history.add_messages([HumanMessage("fine"), HumanMessage(SECRET_TEXT)])
    assert AWS_KEY not in str(refused.value)
    assert "MemtendChatMessageHistory" in str(refused.value) and "redact=True" in str(refused.value)
    assert [m.text for m in history.messages] == ["hello", "hi"]


def test_redact_masks_the_secret_and_keeps_the_turn(ephemeral_memory: Memory) -> None:
    history = MemtendChatMessageHistory("alice", "s", memory=ephemeral_memory)  # redact=True is the default
    history.add_messages([HumanMessage(SECRET_TEXT)])
    (stored,) = history.messages
    assert AWS_KEY not in stored.text
    assert "keep it safe" in stored.text


@pytest.mark.parametrize(
    "bad",
    [
        ["just a string"],
        "just a string",
        [{"role": "user", "content": "a dict"}],
        [HumanMessage("ok"), 42],
        HumanMessage("not in a list"),
    ],
    ids=["str-item", "str", "dict-item", "int-item", "bare-message"],
)
def test_wrong_message_types_get_a_clear_error_and_lose_nothing(ephemeral_memory: Memory, bad: object) -> None:
    history = MemtendChatMessageHistory("alice", "s", memory=ephemeral_memory)
    history.add_messages([HumanMessage("kept")])
    with pytest.raises(InvalidInputError, match="LangChain message"):
        history.add_messages(bad)  # type: ignore[arg-type]
    assert [m.text for m in history.messages] == ["kept"]


def test_unserialisable_extras_get_a_clear_error_and_lose_nothing(ephemeral_memory: Memory) -> None:
    history = MemtendChatMessageHistory("alice", "s", memory=ephemeral_memory)
    history.add_messages([HumanMessage("kept")])
    with pytest.raises(InvalidInputError):
        history.add_messages([HumanMessage("x", additional_kwargs={"weird": float("nan")})])
    assert [m.text for m in history.messages] == ["kept"]


@pytest.mark.slow
def test_oversized_content_gets_a_clear_error_and_loses_nothing(
    ephemeral_memory: Memory, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(ephemeral_memory, "max_document_bytes", 16 * 2**20)  # the default is 64 MB
    history = MemtendChatMessageHistory("alice", "s", memory=ephemeral_memory)
    history.add_messages([HumanMessage("kept")])
    with pytest.raises(InvalidInputError, match="16"):
        history.add_messages([HumanMessage("fine"), AIMessage("x" * 17_000_000)])
    assert [m.text for m in history.messages] == ["kept"]


@pytest.mark.parametrize("user_id", ["", None, 7, "a" * 10_000])
def test_a_missing_or_bad_user_is_refused_up_front(ephemeral_memory: Memory, user_id: object) -> None:
    with pytest.raises(InvalidUserIdError):
        MemtendChatMessageHistory(user_id, "s", memory=ephemeral_memory)  # type: ignore[arg-type]


@pytest.mark.parametrize("session_id", ["", "  ", None, 3])
def test_a_missing_session_is_refused_up_front(ephemeral_memory: Memory, session_id: object) -> None:
    with pytest.raises(InvalidInputError, match="session_id"):
        MemtendChatMessageHistory("alice", session_id, memory=ephemeral_memory)  # type: ignore[arg-type]


def test_memory_must_be_a_memtend_memory() -> None:
    with pytest.raises(InvalidInputError, match="Memory"):
        MemtendChatMessageHistory("alice", "s", memory=InMemoryChatMessageHistory())  # type: ignore[arg-type]


def test_the_history_warns_nothing_of_its_own(ephemeral_memory: Memory) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        history = MemtendChatMessageHistory("alice", "s", memory=ephemeral_memory)
        history.add_messages([HumanMessage("hi")])
        assert history.messages


# ---------------------------------------------------------------------- RunnableWithMessageHistory


def chat_chain(replies: list[str]):  # type: ignore[no-untyped-def]
    model = GenericFakeChatModel(messages=iter([AIMessage(r) for r in replies]))
    prompt = ChatPromptTemplate.from_messages(
        [("system", "You are helpful."), MessagesPlaceholder("history"), ("human", "{question}")]
    )
    return prompt | model


def config(user: str, session: str) -> dict:
    return {"configurable": {"user_id": user, "session_id": session}}


def test_runnable_with_message_history_keyed_by_user_and_session(memory: Memory) -> None:
    chain = with_memtend_history(
        chat_chain(["Hello Alice", "Hello Bob", "Yes, Alice"]),
        memory,
        input_messages_key="question",
        history_messages_key="history",
    )
    chain.invoke({"question": "I am Alice"}, config=config("alice", "s1"))
    chain.invoke({"question": "I am Bob"}, config=config("bob", "s1"))
    chain.invoke({"question": "Still me?"}, config=config("alice", "s1"))
    alice = MemtendChatMessageHistory("alice", "s1", memory=memory).messages
    bob = MemtendChatMessageHistory("bob", "s1", memory=memory).messages
    assert [m.text for m in alice] == ["I am Alice", "Hello Alice", "Still me?", "Yes, Alice"]
    assert [m.text for m in bob] == ["I am Bob", "Hello Bob"]


def test_runnable_with_message_history_without_history_key(ephemeral_memory: Memory) -> None:
    """Without a history key, LangChain re-reads ``messages`` and slices by its length: it must be whole."""
    model = FakeMessagesListChatModel(responses=[AIMessage("first"), AIMessage("second")])
    chain = with_memtend_history(model, ephemeral_memory)
    chain.invoke([HumanMessage("one")], config=config("alice", "x"))
    chain.invoke([HumanMessage("two")], config=config("alice", "x"))
    stored = MemtendChatMessageHistory("alice", "x", memory=ephemeral_memory).messages
    assert [m.text for m in stored] == ["one", "first", "two", "second"]


async def test_runnable_with_message_history_async(ephemeral_memory: Memory) -> None:
    chain = with_memtend_history(
        chat_chain(["a", "b"]), ephemeral_memory, input_messages_key="question", history_messages_key="history"
    )
    await chain.ainvoke({"question": "q1"}, config=config("alice", "s"))
    await chain.ainvoke({"question": "q2"}, config=config("alice", "s"))
    stored = await MemtendChatMessageHistory("alice", "s", memory=ephemeral_memory).aget_messages()
    assert [m.text for m in stored] == ["q1", "a", "q2", "b"]


def test_runnable_with_message_history_refuses_a_secret_and_keeps_the_rest(
    ephemeral_memory: Memory, caplog: pytest.LogCaptureFixture
) -> None:
    """RunnableWithMessageHistory writes in an end-of-run listener and only logs what a history raises there
    (for every history, SQL ones too): with redact=False the refused turn is not stored, the error is in the
    log, and the earlier turns stay."""
    chain = with_memtend_history(
        chat_chain(["ok", "noted"]),
        ephemeral_memory,
        redact=False,
        input_messages_key="question",
        history_messages_key="history",
    )
    chain.invoke({"question": "hello"}, config=config("alice", "s"))
    chain.invoke({"question": SECRET_TEXT}, config=config("alice", "s"))
    assert "SensitiveDataError" in caplog.text
    assert AWS_KEY not in caplog.text
    stored = MemtendChatMessageHistory("alice", "s", memory=ephemeral_memory).messages
    assert [m.text for m in stored] == ["hello", "ok"]
    assert AWS_KEY not in str(ephemeral_memory.user("alice").export())


def test_runnable_with_message_history_masks_by_default(
    ephemeral_memory: Memory, caplog: pytest.LogCaptureFixture
) -> None:
    """The default keeps the turn, masked, with nothing logged as dropped."""
    chain = with_memtend_history(
        chat_chain(["noted"]),
        ephemeral_memory,
        input_messages_key="question",
        history_messages_key="history",
    )
    chain.invoke({"question": SECRET_TEXT}, config=config("alice", "s"))
    stored = MemtendChatMessageHistory("alice", "s", memory=ephemeral_memory).messages
    assert [m.type for m in stored] == ["human", "ai"]
    assert AWS_KEY not in stored[0].text
    assert "SensitiveDataError" not in caplog.text


# ---------------------------------------------------------------------- the compacted view


def long_session() -> list[BaseMessage]:
    out: list[BaseMessage] = [HumanMessage("Goal: migrate the billing database. Never touch production on Fridays.")]
    for i in range(30):
        out.append(HumanMessage(f"Step {i}: check table t{i}"))
        out.append(AIMessage("", tool_calls=[{"name": "inspect", "args": {"table": f"t{i}"}, "id": f"c{i}"}]))
        out.append(ToolMessage(f"table t{i}: {i * 10} rows", tool_call_id=f"c{i}", name="inspect"))
        out.append(AIMessage(f"t{i} has {i * 10} rows"))
    return out


def test_compacted_view_summarises_keeps_tool_pairs_and_stores_nothing(ephemeral_memory: Memory) -> None:
    history = MemtendChatMessageHistory("alice", "long", memory=ephemeral_memory)
    history.add_messages(long_session())
    view = history.compacted_messages(max_turns=10, keep_recent_turns=3)
    assert len(view) < len(long_session())
    summary = view[0]
    assert isinstance(summary, HumanMessage)
    assert summary.additional_kwargs["lc_source"] == "memtend_summary"
    assert "migrate the billing database" in summary.text
    assert "Never touch production on Fridays" in summary.text
    # the kept tail is the original messages, every tool result right after its call
    assert view[1:] == long_session()[-len(view) + 1 :]
    calls = {c["id"] for m in view if isinstance(m, AIMessage) for c in m.tool_calls}
    results = {m.tool_call_id for m in view if isinstance(m, ToolMessage)}
    assert calls == results
    assert len(history.messages) == len(long_session())  # the stored history is untouched
    found = ephemeral_memory.user("alice").metrics("long")  # the compaction reached the core's metrics
    assert found["detail"]["compactions"] == 1 and 0 < found["context_utilisation_at_compaction"] < 1


async def test_compacted_view_async_and_under_budget(ephemeral_memory: Memory) -> None:
    history = MemtendChatMessageHistory("alice", "short", memory=ephemeral_memory)
    await history.aadd_messages(long_session()[:5])
    assert await history.acompacted_messages(max_turns=10) == long_session()[:5]
    await history.aadd_messages(long_session()[5:])
    view = await history.acompacted_messages(max_turns=5)
    assert view[0].additional_kwargs["lc_source"] == "memtend_summary"
    found = await ephemeral_memory.user("alice").ametrics("short")
    assert found["detail"]["compactions"] == 1, "the view under budget did not count"


@pytest.mark.parametrize(
    ("configurable", "error"),
    [
        ({"session_id": "s"}, ValueError),  # LangChain's own: "Missing keys ['user_id'] in config['configurable']"
        ({"user_id": "alice"}, ValueError),
        ({"user_id": "", "session_id": "s"}, InvalidUserIdError),
        ({"user_id": "alice", "session_id": ""}, InvalidInputError),
    ],
)
def test_runnable_with_message_history_without_user_or_session_fails_clearly(
    ephemeral_memory: Memory, configurable: dict, error: type[Exception]
) -> None:
    model = FakeMessagesListChatModel(responses=[AIMessage("never")])
    chain = with_memtend_history(model, ephemeral_memory)
    chain.invoke([HumanMessage("kept")], config=config("alice", "s"))
    with pytest.raises(error, match=r"user_id|session_id|user id"):
        chain.invoke([HumanMessage("lost?")], config={"configurable": configurable})
    assert [m.text for m in MemtendChatMessageHistory("alice", "s", memory=ephemeral_memory).messages] == [
        "kept",
        "never",
    ]
