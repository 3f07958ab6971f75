"""LlamaIndex: the constraints the user states are in the system message of every later turn, through
``MemtendMemory`` and through ``MemtendMemoryBlock`` in LlamaIndex's own ``Memory`` (also once the turn that set
them was flushed out of the short-term history); a revised one replaces it; a request is not a constraint."""

from __future__ import annotations

from llama_index.core.base.llms.types import ChatMessage, MessageRole
from llama_index.core.memory import Memory as LlamaMemory
from memtend import Memory
from memtend_llamaindex import MemtendMemory, MemtendMemoryBlock

TURNS = [
    "I need help planning the billing release. Keep every reply under 100 words.",
    "Tell me a joke.",
    "What is the weather like today?",
    "Change of plan: keep every reply under 50 words.",
    "How do we roll back if the release fails?",
]
FIRST, REVISED = "Keep every reply under 100 words.", "Change of plan: keep every reply under 50 words."


def check_turns(systems: list[str]) -> None:
    assert len(systems) == 5
    for text in systems[:3]:
        assert FIRST in text and REVISED not in text
    for text in systems[3:]:
        assert REVISED in text and FIRST not in text
    assert not any("Tell me a joke" in text or "weather" in text for text in systems)


def constraints_section(system: str) -> str:
    """The block's constraint lines (the recalled memories after them are dated: today every flushed turn is
    logged, so an old turn may come back as a memory, dated and marked as such)."""
    lines = system.split("\n")
    start = next(i for i, line in enumerate(lines) if line.startswith("Constraints the user set"))
    section = []
    for line in lines[start + 1 :]:
        if not line.startswith("- ") or line.startswith("- [20"):
            break
        section.append(line)
    return "\n".join(section)


def system_of(messages: list[ChatMessage]) -> str:
    assert messages[0].role == MessageRole.SYSTEM
    return messages[0].content or ""


def test_memtend_memory_every_turn(ephemeral_memory: Memory) -> None:
    memory = MemtendMemory.from_defaults(user_id="alice", session_id="s1", memory=ephemeral_memory)
    systems = []
    for text in TURNS:
        memory.put(ChatMessage(role="user", content=text))
        systems.append(system_of(memory.get()))
        memory.put(ChatMessage(role="assistant", content="OK."))
    check_turns(systems)
    other = MemtendMemory.from_defaults(user_id="alice", session_id="s2", memory=ephemeral_memory)
    other.put(ChatMessage(role="user", content="hello"))
    assert "words" not in str([m.content for m in other.get()])


async def test_memory_block_every_turn_and_after_a_flush(ephemeral_memory: Memory) -> None:
    block = MemtendMemoryBlock(user_id="alice", memory=ephemeral_memory)
    memory = LlamaMemory.from_defaults(
        session_id="s1", token_limit=200, chat_history_token_ratio=0.3, memory_blocks=[block]
    )
    systems, flushed = [], []
    for text in TURNS:
        await memory.aput(ChatMessage(role="user", content=text))
        shown = await memory.aget()
        systems.append(system_of(shown))
        flushed.append(TURNS[0] not in [m.content for m in shown if m.role == MessageRole.USER])
        await memory.aput(ChatMessage(role="assistant", content="OK, noted. " + "Here is some detail. " * 6))
    check_turns([constraints_section(s) for s in systems])
    assert flushed[2]  # on turn 3 the first turn was out of the short-term history, its constraint still shown

    bob = LlamaMemory.from_defaults(
        session_id="s1", memory_blocks=[MemtendMemoryBlock(user_id="bob", memory=ephemeral_memory)]
    )
    await bob.aput(ChatMessage(role="user", content="hello"))
    assert "words" not in str([m.content for m in await bob.aget()])
