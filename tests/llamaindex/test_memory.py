"""MemtendMemory as a LlamaIndex BaseMemory: history, compaction, the user's context, bad input, serialisation."""

from __future__ import annotations

import asyncio
import json
import pickle
import re

import pytest
from llama_index.core.base.llms.types import ChatMessage, MessageRole, ToolCallBlock
from llama_index.core.memory.types import BaseMemory
from memtend import InvalidInputError, InvalidUserIdError, Memory, SensitiveDataError
from memtend_llamaindex import MemtendMemory


def user(text: str) -> ChatMessage:
    return ChatMessage(role="user", content=text)


def assistant(text: str) -> ChatMessage:
    return ChatMessage(role="assistant", content=text)


def tool_pair(n: int, payload: str = "") -> list[ChatMessage]:
    call = ChatMessage(
        role="assistant", blocks=[ToolCallBlock(tool_call_id=f"call{n}", tool_name="lookup", tool_kwargs={"n": n})]
    )
    result = ChatMessage(role="tool", content=f"result {n} {payload}", additional_kwargs={"tool_call_id": f"call{n}"})
    return [call, result]


@pytest.fixture
def mem(memory: Memory) -> MemtendMemory:
    """Alice's session s1 on each backend: in-process, on-disk and server Chroma."""
    return MemtendMemory.from_defaults(user_id="alice", session_id="s1", memory=memory)


def test_is_a_base_memory_with_native_async(mem: MemtendMemory) -> None:
    assert isinstance(mem, BaseMemory)
    for name in ("aget", "aget_all", "aput", "aput_messages", "aset", "areset"):
        assert getattr(type(mem), name) is not getattr(BaseMemory, name), f"{name} must not be the thread default"


def test_sync_put_get_set_reset(mem: MemtendMemory) -> None:
    mem.put(user("hi"))
    mem.put_messages([assistant("hello"), user("how are you?")])
    assert [m.content for m in mem.get()] == ["hi", "hello", "how are you?"]
    assert [m.content for m in mem.get_all()] == ["hi", "hello", "how are you?"]
    mem.set([user("only this")])
    assert [m.content for m in mem.get_all()] == ["only this"]
    mem.reset()
    assert mem.get_all() == []
    assert mem.get() == []


async def test_async_twins(mem: MemtendMemory) -> None:
    await mem.aput(user("hi"))
    await mem.aput_messages([assistant("hello")])
    assert [m.content for m in await mem.aget()] == ["hi", "hello"]
    await mem.aset([user("replaced")])
    assert [m.content for m in await mem.aget_all()] == ["replaced"]
    await mem.areset()
    assert await mem.aget_all() == []


def test_history_survives_a_new_handle_and_sessions_are_separate(ephemeral_memory: Memory) -> None:
    first = MemtendMemory.from_defaults(user_id="alice", session_id="s1", memory=ephemeral_memory)
    first.put(user("in s1"))
    MemtendMemory.from_defaults(user_id="alice", session_id="s2", memory=ephemeral_memory).put(user("in s2"))
    again = MemtendMemory.from_defaults(user_id="alice", session_id="s1", memory=ephemeral_memory)
    assert [m.content for m in again.get_all()] == ["in s1"]
    seeded = MemtendMemory.from_defaults(
        user_id="alice", session_id="s3", memory=ephemeral_memory, chat_history=[user("seed")]
    )
    assert [m.content for m in seeded.get_all()] == ["seed"]


def test_system_message_holds_profile_rules_and_dated_memories(memory: Memory) -> None:
    alice = memory.user("alice")
    alice.set_fact("contact.method", "email")
    alice.add_rule("Never deploy on Fridays")
    alice.remember("Alice's cat is called Miso")
    alice.remember("The quarterly report is due in March")
    mem = MemtendMemory.from_defaults(user_id="alice", session_id="s1", memory=memory, recall_k=1)
    mem.put(user("What is my cat called?"))
    shown = mem.get()
    assert shown[0].role == MessageRole.SYSTEM
    system = shown[0].content or ""
    assert "contact.method: email" in system
    assert "Never deploy on Fridays" in system
    assert re.search(r"- \[\d{4}-\d{2}-\d{2}\] Alice's cat is called Miso", system)
    assert "quarterly report" not in system  # recall_k=1: only the best match
    assert [m.content for m in shown[1:]] == ["What is my cat called?"]
    assert [m.content for m in mem.get(input="When is the quarterly report due?")][1:] == ["What is my cat called?"]
    assert "quarterly report" in (mem.get(input="When is the quarterly report due?")[0].content or "")


def test_an_existing_system_message_is_kept_and_extended(mem: MemtendMemory, memory: Memory) -> None:
    memory.user("alice").add_rule("Answer in French")
    mem.set([ChatMessage(role="system", content="You are a helpful bot."), user("hi")])
    shown = mem.get()
    assert len(shown) == 2 and shown[0].role == MessageRole.SYSTEM
    assert "Answer in French" in (shown[0].content or "") and "You are a helpful bot." in (shown[0].content or "")
    assert mem.get_all()[0].content == "You are a helpful bot."  # the stored one is untouched


def test_nothing_known_adds_no_system_message(mem: MemtendMemory) -> None:
    mem.put(user("hello"))
    assert [m.role for m in mem.get()] == [MessageRole.USER]


def test_long_history_is_compacted_with_tool_pairs_intact(ephemeral_memory: Memory) -> None:
    mem = MemtendMemory.from_defaults(user_id="alice", session_id="long", memory=ephemeral_memory, token_limit=600)
    history: list[ChatMessage] = [user("Goal: migrate the billing database. Never touch production.")]
    for turn in range(12):
        history += [*tool_pair(turn, "x" * 200), assistant(f"step {turn} done"), user(f"continue with step {turn + 1}")]
    mem.set(history)
    shown = mem.get()
    assert len(shown) < len(history)
    assert "Conversation summary so far" in (shown[0].content or "") or "Conversation summary so far" in (
        shown[1].content or ""
    )
    assert shown[-1].content == "continue with step 12"
    calls = {b.tool_call_id for m in shown for b in m.blocks if isinstance(b, ToolCallBlock)}
    results = {m.additional_kwargs["tool_call_id"] for m in shown if m.role == MessageRole.TOOL}
    assert calls == results  # no call without its result, no result without its call
    assert "Never touch production" in (shown[0].content or "")  # the user's constraint, kept in the system message
    assert len(mem.get_all()) == len(history)  # compaction is a view: nothing stored is removed
    # how full the context was when compaction fired reached the core's metrics, for this session
    found = ephemeral_memory.user("alice").metrics("long")
    assert found["detail"]["compactions"] >= 1
    assert found["context_utilisation_at_compaction"] is not None and found["context_utilisation_at_compaction"] > 1


def test_keep_recent_turns_goes_to_the_core(ephemeral_memory: Memory) -> None:
    history = [m for turn in range(10) for m in (user(f"question {turn} " + "w " * 10), assistant(f"answer {turn}"))]
    shown = {}
    for keep in (None, 4):
        mem = MemtendMemory.from_defaults(
            user_id="alice", session_id="k", memory=ephemeral_memory, token_limit=170, keep_recent_turns=keep
        )
        mem.set(history)
        shown[keep] = [m.content for m in mem.get() if (m.content or "").startswith("question")]
    assert len(shown[None]) == 3 and shown[None][-1].startswith("question 9")  # the core's default
    assert len(shown[4]) == 4 and shown[4][-1].startswith("question 9")


async def test_compaction_stays_right_as_the_session_grows_and_is_rewritten(ephemeral_memory: Memory) -> None:
    from memtend_llamaindex import MemtendChatStore

    mem = MemtendMemory.from_defaults(user_id="alice", session_id="grow", memory=ephemeral_memory, token_limit=500)
    mem.put(user("Goal: ship the report. Always cite sources."))
    for turn in range(15):  # a get after every turn, as an agent does: each compacts on top of the last view
        await mem.aput_messages([*tool_pair(turn, "y" * 150), assistant(f"done {turn}"), user(f"next {turn}")])
        shown = await mem.aget()
        assert shown[-1].content == f"next {turn}"
        calls = {b.tool_call_id for m in shown for b in m.blocks if isinstance(b, ToolCallBlock)}
        assert calls == {m.additional_kwargs["tool_call_id"] for m in shown if m.role == MessageRole.TOOL}
    summary = next(m.content or "" for m in shown if "Conversation summary so far" in (m.content or ""))
    assert "ship the report" in summary  # the goal survives summaries of summaries
    assert "Always cite sources" in (shown[0].content or "")
    await mem.aset([user("a fresh start")])
    assert [m.content for m in await mem.aget()] == ["a fresh start"]
    await MemtendChatStore(user_id="alice", memory=ephemeral_memory).set_messages("grow", [user("rewritten elsewhere")])
    assert [m.content for m in await mem.aget()] == ["rewritten elsewhere"]


async def test_get_sees_other_writers_and_callers_cannot_change_what_it_returns(memory: Memory) -> None:
    from memtend_llamaindex import MemtendChatStore

    mem = MemtendMemory.from_defaults(user_id="alice", session_id="w", memory=memory)
    await mem.aput(user("first"))
    shown = await mem.aget()
    shown[0].content = "changed by the caller"
    await MemtendChatStore(user_id="alice", memory=memory).add_message("w", assistant("from another writer"))
    assert [m.content for m in await mem.aget()] == ["first", "from another writer"]
    assert [m.content for m in await mem.aget()] == ["first", "from another writer"]
    await mem.aset([user("ok"), assistant("ok"), user("ok")])
    assert len(await mem.aget()) == 3
    await MemtendChatStore(user_id="alice", memory=memory).delete_message("w", 1)  # same text either side of it
    assert [m.role for m in await mem.aget()] == [MessageRole.USER, MessageRole.USER]


async def test_concurrent_aput_keeps_every_message(mem: MemtendMemory) -> None:
    await asyncio.gather(*(mem.aput(user(f"m{i}")) for i in range(40)))
    stored = [m.content for m in await mem.aget_all()]
    assert sorted(stored) == sorted(f"m{i}" for i in range(40))


def test_missing_user_or_session_is_a_clear_error(ephemeral_memory: Memory) -> None:
    with pytest.raises(InvalidUserIdError, match="user_id"):
        MemtendMemory.from_defaults(session_id="s1", memory=ephemeral_memory)
    with pytest.raises(InvalidUserIdError):
        MemtendMemory.from_defaults(user_id=" ", session_id="s1", memory=ephemeral_memory)
    with pytest.raises(InvalidInputError, match="session_id"):
        MemtendMemory.from_defaults(user_id="alice", memory=ephemeral_memory)


@pytest.mark.parametrize(
    "bad",
    [
        ChatMessage(role="tool", content="a result naming no call"),
        ChatMessage(role="function", content="same, old style"),
        ChatMessage(role="user", blocks=[ToolCallBlock(tool_call_id="c1", tool_name="x")]),
    ],
    ids=["tool-without-call-id", "function-without-call-id", "user-with-tool-call"],
)
async def test_wrong_roles_are_refused_and_nothing_is_lost(mem: MemtendMemory, bad: ChatMessage) -> None:
    mem.put(user("kept"))
    with pytest.raises(InvalidInputError, match="message 1"):
        await mem.aput_messages([assistant("fine"), bad])
    with pytest.raises(InvalidInputError):
        await mem.aput(bad)
    with pytest.raises(InvalidInputError):
        mem.set([bad])
    assert [m.content for m in mem.get_all()] == ["kept"]


async def test_not_a_chat_message_and_secrets_are_refused(mem: MemtendMemory) -> None:
    mem.put(user("kept"))
    with pytest.raises(InvalidInputError, match="ChatMessage"):
        await mem.aput("just text")  # type: ignore[arg-type]
    refusing = mem.model_copy(update={"redact": False})  # the default masks (docs/secrets.md)
    with pytest.raises(SensitiveDataError, match="MemtendMemory refused"):
        await refusing.aput(user("my key is AKIAIOSFODNN7EXAMPLE and secret wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"))
    assert [m.content for m in mem.get_all()] == ["kept"]


def test_redact_masks_secrets_by_default(memory: Memory) -> None:
    masked = MemtendMemory.from_defaults(user_id="alice", session_id="r", memory=memory)
    masked.put(user("my card is 4111 1111 1111 1111, book it"))
    (stored,) = masked.get_all()
    assert "4111 1111 1111 1111" not in (stored.content or "") and "book it" in (stored.content or "")


def test_ids_survive_serialisation(mem: MemtendMemory, memory: Memory) -> None:
    mem.put(user("before"))
    data = json.loads(json.dumps(mem.to_dict()))
    assert data["user_id"] == "alice" and data["session_id"] == "s1" and data["store_id"] == memory.store_id
    restored = MemtendMemory.from_dict(data)
    assert [m.content for m in restored.get_all()] == ["before"]  # its own store, found by id: nothing registered
    unpickled = pickle.loads(pickle.dumps(mem))
    assert unpickled.session_id == "s1" and [m.content for m in unpickled.get_all()] == ["before"]
    memory.close()
    with pytest.raises(InvalidInputError, match="no open Memory"):
        MemtendMemory.from_dict(data).get_all()  # its store is not open: refused, not pointed at another


async def test_sync_calls_work_inside_a_running_loop(mem: MemtendMemory) -> None:
    mem.put(user("from sync code on a running loop"))
    assert [m.content for m in mem.get()] == ["from sync code on a running loop"]


def _count_upserts(memory: Memory) -> list[int]:
    """A list that grows by one per Chroma write of the document store (the real call still runs)."""
    rows = memory.storage.documents
    real, calls = rows.collection.upsert, []

    def upsert(**kwargs):  # type: ignore[no-untyped-def]
        calls.append(len(kwargs["ids"]))
        return real(**kwargs)

    rows.collection.upsert = upsert  # type: ignore[method-assign]
    return calls


async def test_write_once_holds_the_question_and_writes_it_with_the_answer(ephemeral_memory: Memory) -> None:
    mem = MemtendMemory.from_defaults(user_id="alice", session_id="s1", memory=ephemeral_memory, write_once=True)
    other = MemtendMemory.from_defaults(user_id="alice", session_id="s1", memory=ephemeral_memory)
    calls = _count_upserts(ephemeral_memory)
    await mem.aput(user("Which order shipped? I never want email updates."))
    assert calls == [] and await other.aget_all() == []  # held, not stored
    seen = await mem.aget()
    assert seen[-1].content == "Which order shipped? I never want email updates."
    assert "I never want email updates" in (seen[0].content or "")  # the held turn's constraint is in the context
    assert [m.content for m in await mem.aget_all()] == ["Which order shipped? I never want email updates."]
    await mem.aput_messages([assistant("Order 7.")])
    assert len(calls) == 1  # question and answer in one write
    assert [m.content for m in await other.aget_all()] == [
        "Which order shipped? I never want email updates.",
        "Order 7.",
    ]
    assert [m.content for m in await mem.aget_all()] == [m.content for m in await other.aget_all()]
    mem.put(user("and now?"))
    mem.put(assistant("Nothing new."))  # any other message is written at once, with what is held
    assert [m.content for m in other.get_all()][-2:] == ["and now?", "Nothing new."]
    mem.put(user("dropped"))
    mem.reset()
    assert mem.get_all() == [] and other.get_all() == []


async def test_write_once_gates_the_held_question_at_once(ephemeral_memory: Memory) -> None:
    secret = "my key is AKIAIOSFODNN7EXAMPLE and secret wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"
    refusing = MemtendMemory.from_defaults(
        user_id="alice", session_id="r", memory=ephemeral_memory, write_once=True, redact=False
    )
    with pytest.raises(SensitiveDataError, match="MemtendMemory refused"):
        await refusing.aput(user(secret))
    assert await refusing.aget_all() == []  # nothing held
    masking = MemtendMemory.from_defaults(user_id="alice", session_id="m", memory=ephemeral_memory, write_once=True)
    await masking.aput(user(secret))
    (held,) = await masking.aget_all()
    assert "AKIAIOSFODNN7EXAMPLE" not in (held.content or "")  # shown as it will be stored
    await masking.aput_messages([assistant("ok")])
    fresh = MemtendMemory.from_defaults(user_id="alice", session_id="m", memory=ephemeral_memory)
    assert [m.content for m in await fresh.aget_all()] == [held.content, "ok"]


async def test_write_once_stores_a_held_question_once_under_concurrent_writes(ephemeral_memory: Memory) -> None:
    mem = MemtendMemory.from_defaults(user_id="alice", session_id="c", memory=ephemeral_memory, write_once=True)
    await mem.aput(user("q"))
    await asyncio.gather(*(mem.aput_messages([assistant(f"a{i}")]) for i in range(4)))
    fresh = MemtendMemory.from_defaults(user_id="alice", session_id="c", memory=ephemeral_memory)
    stored = [m.content for m in await fresh.aget_all()]
    assert stored.count("q") == 1 and sorted(stored) == ["a0", "a1", "a2", "a3", "q"]
    assert [m.content for m in await mem.aget_all()] == stored  # nothing left held


async def test_write_once_keeps_the_question_held_when_the_write_fails(ephemeral_memory: Memory) -> None:
    mem = MemtendMemory.from_defaults(
        user_id="alice", session_id="f", memory=ephemeral_memory, write_once=True, redact=False
    )
    await mem.aput(user("q"))
    with pytest.raises(SensitiveDataError):  # the answer is refused, so the whole write is
        await mem.aput_messages([assistant("your key is AKIAIOSFODNN7EXAMPLE")])
    assert [m.content for m in await mem.aget_all()] == ["q"]  # still held, shown
    await mem.aput_messages([assistant("a")])
    fresh = MemtendMemory.from_defaults(user_id="alice", session_id="f", memory=ephemeral_memory)
    assert [m.content for m in await fresh.aget_all()] == ["q", "a"]
