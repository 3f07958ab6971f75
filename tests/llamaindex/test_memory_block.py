"""MemtendMemoryBlock inside LlamaIndex's own Memory: capture on flush, recall on get, token budget, priority."""

from __future__ import annotations

import re

import pytest
from llama_index.core.base.llms.types import ChatMessage
from llama_index.core.memory import Memory as LlamaMemory
from llama_index.core.memory import StaticMemoryBlock
from llama_index.core.memory.memory import BaseMemoryBlock
from memtend import Kind, Memory, SensitiveDataError
from memtend_llamaindex import MemtendChatStore, MemtendMemoryBlock


def turn(i: int, extra: str = "") -> list[ChatMessage]:
    return [
        ChatMessage(role="user", content=f"Question {i}: tell me about topic {i}. {extra}"),
        ChatMessage(role="assistant", content=f"Answer {i}: topic {i} is covered. " + "detail " * 30),
    ]


def test_is_a_memory_block(ephemeral_memory: Memory) -> None:
    block = MemtendMemoryBlock(user_id="alice", memory=ephemeral_memory)
    assert isinstance(block, BaseMemoryBlock) and block.name == "memtend"


async def test_flushed_messages_are_captured_not_logged_turn_by_turn(ephemeral_memory: Memory) -> None:
    # issue 31: a flush no longer logs every turn; what is worth keeping is captured, with its session
    block = MemtendMemoryBlock(user_id="alice", memory=ephemeral_memory)
    memory = LlamaMemory.from_defaults(
        session_id="s1",
        token_limit=300,
        chat_history_token_ratio=0.5,
        token_flush_size=100,
        memory_blocks=[block],
        chat_store=MemtendChatStore(user_id="alice", memory=ephemeral_memory),
    )
    await memory.aput_messages([*turn(1, "I moved to Porto."), *turn(2, "Understood.")])
    await memory.aput_messages(turn(3))
    archived = await memory.sql_store.count_messages("s1", status="archived")  # type: ignore[arg-type]
    assert archived >= 2  # turns were flushed
    alice = ephemeral_memory.user("alice")
    assert alice.list(kinds=[Kind.EVENT]) == []  # the one-off questions, answers and "Understood." are not kept
    assert alice.facts() == {"home.city": "Porto"}
    fact = alice.get_fact("home.city")
    assert fact is not None and fact.session == "s1" and fact.extra["capture_kind"] == "fact"
    assert ephemeral_memory.user("bob").list() == []
    # at the end of the conversation the turns still in the window are captured too, nothing twice
    await block.aend_session([ChatMessage(role="user", content="I moved to Porto.")], session_id="s1")
    await block.aend_session([ChatMessage(role="user", content="My favourite tea is sencha.")], session_id="s1")
    assert alice.facts() == {"home.city": "Porto", "favourite_tea": "sencha"} and len(alice.list()) == 2


async def test_captured_text_passes_the_write_gate(ephemeral_memory: Memory) -> None:
    block = MemtendMemoryBlock(user_id="alice", memory=ephemeral_memory)
    flushed = [
        ChatMessage(
            role="user",
            content="My card is 4111 1111 1111 1111, book the flight. I pay the gym with 4111 1111 1111 1111 monthly.",
        ),
        ChatMessage(role="assistant", content="Booked."),
        ChatMessage(role="tool", content="raw tool output", additional_kwargs={"tool_call_id": "c1"}),
    ]
    await block.aput(flushed, from_short_term_memory=True, session_id="s7")
    notes = ephemeral_memory.user("alice").list()
    assert len(notes) == 1 and notes[0].session == "s7"  # the reply and the tool result are not captured
    # the statement is kept masked by the gate; the card as a keyed fact would be nothing but the mask: dropped
    assert "4111 1111 1111 1111" not in notes[0].text and "[REDACTED:card]" in notes[0].text
    assert notes[0].text.startswith("I pay the gym") and ephemeral_memory.user("alice").facts() == {}
    refusing = MemtendMemoryBlock(user_id="bob", memory=ephemeral_memory, redact=False)
    with pytest.raises(SensitiveDataError):
        await refusing.aput(flushed[:1])
    assert ephemeral_memory.user("bob").list() == []


async def test_get_recalls_dated_memories_for_the_conversation(ephemeral_memory: Memory) -> None:
    alice = ephemeral_memory.user("alice")
    alice.remember("Alice is allergic to peanuts")
    alice.remember("Alice's favourite colour is green")
    block = MemtendMemoryBlock(user_id="alice", memory=ephemeral_memory, k=1)
    text = await block.aget([ChatMessage(role="user", content="Can I eat this peanut butter?")])
    assert re.fullmatch(r"- \[\d{4}-\d{2}-\d{2}\] Alice is allergic to peanuts", text)
    assert await block.aget([]) == ""


async def test_block_text_respects_its_token_budget(ephemeral_memory: Memory) -> None:
    alice = ephemeral_memory.user("alice")
    for i in range(6):
        alice.remember(f"Project {i} uses the deploy pipeline with stage gates and manual approval step {i}")
    query = [ChatMessage(role="user", content="how does the deploy pipeline work?")]
    full = await MemtendMemoryBlock(user_id="alice", memory=ephemeral_memory, k=6).aget(query)
    capped = await MemtendMemoryBlock(user_id="alice", memory=ephemeral_memory, k=6, max_tokens=40).aget(query)
    assert len(full.splitlines()) == 6
    assert 1 <= len(capped.splitlines()) < 6
    assert full.startswith(capped)  # the best-ranked lines are the ones kept


async def test_truncation_follows_priority(ephemeral_memory: Memory) -> None:
    alice = ephemeral_memory.user("alice")
    for i in range(8):
        alice.remember(f"Fact {i} about the billing migration: step {i} needs a backup first and a dry run")
    static = StaticMemoryBlock(name="persona", static_content="You are a careful assistant.", priority=0)
    block = MemtendMemoryBlock(user_id="alice", memory=ephemeral_memory, k=8, priority=1)
    untrimmed = LlamaMemory.from_defaults(
        session_id="s1", token_limit=5000, memory_blocks=[static, block],
        chat_store=MemtendChatStore(user_id="alice", memory=ephemeral_memory),
    )  # fmt: skip
    await untrimmed.aput(ChatMessage(role="user", content="What do I need before the billing migration?"))
    roomy = (await untrimmed.aget())[0].content or ""
    tight = LlamaMemory.from_defaults(
        session_id="s1", token_limit=120, memory_blocks=[static, block],
        chat_store=MemtendChatStore(user_id="alice", memory=ephemeral_memory),
    )  # fmt: skip
    trimmed = (await tight.aget())[0].content or ""
    assert "You are a careful assistant." in trimmed  # priority 0 is never truncated
    assert roomy.count("Fact ") == 8
    assert 0 < trimmed.count("Fact ") < 8  # our block shrank line by line instead of vanishing


async def test_atruncate_drops_the_least_relevant_lines(ephemeral_memory: Memory) -> None:
    block = MemtendMemoryBlock(user_id="alice", memory=ephemeral_memory)
    content = "\n".join(f"- [2026-01-0{i}] memory number {i} with several words" for i in range(1, 6))
    shorter = await block.atruncate(content, 15)
    assert shorter is not None and content.startswith(shorter) and len(shorter) < len(content)
    assert await block.atruncate(content, 10_000) is None


@pytest.mark.parametrize("where", ["memory", "block"])
async def test_in_propose_mode_what_capture_keeps_is_a_proposal_until_accepted(
    embedding_function: object, where: str
) -> None:
    # issue 31: what capture keeps in a model's words waits as a proposal, never recalled before acceptance
    import json
    import uuid

    import chromadb
    from memtend import llm_extractor

    def model(prompt: str) -> str:
        lines = re.findall(r"^\[(\d+)\] user: (.*)$", prompt, re.MULTILINE)
        items = [
            {"kind": "statement", "text": "The user keeps bees on the roof", "reason": "about the user", "turn": int(n)}
            for n, text in lines
            if "bees" in text
        ]
        return json.dumps({"memories": items})

    mem = Memory(
        client=chromadb.EphemeralClient(),
        embedding_function=embedding_function,
        collection_prefix=f"t{uuid.uuid4().hex[:8]}",
        extractor=llm_extractor(model),
        **({"write_mode": "propose"} if where == "memory" else {}),
    )
    try:
        block = MemtendMemoryBlock(
            user_id="alice", memory=mem, **({"write_mode": "propose"} if where == "block" else {})
        )
        said = [
            ChatMessage(role="user", content="Tell me a joke."),
            ChatMessage(role="assistant", content="No."),
            ChatMessage(role="user", content="I keep bees on the roof."),
            ChatMessage(role="assistant", content="Lovely."),
        ]
        await block.aput(said, from_short_term_memory=True, session_id="s1")
        alice = mem.user("alice")
        (proposal,) = alice.proposals()
        assert proposal.text == "The user keeps bees on the roof" and alice.list() == []
        question = [ChatMessage(role="user", content="What do I keep on the roof?")]
        assert "bees" not in await block.aget(question)
        await alice.aaccept(proposal.id)
        assert "bees" in await block.aget(question)
        assert mem.user("bob").proposals() == []
        with pytest.raises(ValueError, match="write_mode"):
            MemtendMemoryBlock(user_id="alice", memory=mem, write_mode="later")
    finally:
        mem.close()


async def test_instructions_wait_for_the_end_of_the_conversation_in_their_latest_version(
    ephemeral_memory: Memory,
) -> None:
    # issue 31: a flush leaves the user's instructions to the session's constraints; the end keeps the revision only
    block = MemtendMemoryBlock(user_id="alice", memory=ephemeral_memory)
    first, revised = "Keep every reply under 100 words.", "Change of plan: keep every reply under 50 words."
    flushed = [ChatMessage(role="user", content=first), ChatMessage(role="assistant", content="OK.")]
    await block.aget(flushed, session_id="s1")  # the block notes the session's constraints as it reads
    await block.aput(flushed, from_short_term_memory=True, session_id="s1")
    alice = ephemeral_memory.user("alice")
    assert alice.list() == []
    window = [ChatMessage(role="user", content=revised), ChatMessage(role="assistant", content="OK.")]
    text = await block.aget([*flushed, *window], session_id="s1")
    assert revised in text and first not in text
    await block.aend_session(window, session_id="s1")
    assert [r.text for r in alice.list()] == [revised]
