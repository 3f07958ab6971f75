"""MemtendMemory, the classic chain memory (langchain-classic), in a real classic chain."""

from __future__ import annotations

import warnings
from typing import Any

import pytest
from langchain_classic.base_memory import BaseMemory
from langchain_classic.chains import LLMChain
from langchain_core.language_models.fake import FakeListLLM
from langchain_core.messages import AIMessage
from langchain_core.prompts import PromptTemplate
from lc_fakes import ScriptedChatModel
from memtend import InvalidInputError, InvalidUserIdError, Kind, Memory, SensitiveDataError
from memtend_langchain import MemtendMemory

AWS_KEY = "AKIAIOSFODNN7EXAMPLE"
PROMPT = PromptTemplate.from_template(
    "Profile:\n{profile}\nRules:\n{rules}\nMemories:\n{memories}\nUser: {question}\nAssistant:"
)


def test_it_is_a_classic_memory_and_warns_nothing_of_its_own(ephemeral_memory: Memory) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        memory = MemtendMemory(memory=ephemeral_memory, user_id="alice")
    assert isinstance(memory, BaseMemory)
    assert memory.memory_variables == ["profile", "rules", "memories"]


def test_load_returns_profile_rules_and_dated_memories(ephemeral_memory: Memory) -> None:
    alice = ephemeral_memory.user("alice")
    alice.set_fact("city", "Lisbon")
    alice.add_rule("Always answer in one sentence")
    alice.remember("Alice is training for the Lisbon marathon in March")
    ephemeral_memory.user("bob").remember("Bob is training for the Berlin marathon")
    loaded = MemtendMemory(memory=ephemeral_memory, user_id="alice").load_memory_variables(
        {"question": "how is the marathon training going?"}
    )
    assert loaded["profile"] == "- city: Lisbon"
    assert loaded["rules"] == "- Always answer in one sentence"
    assert "Lisbon marathon" in loaded["memories"] and "Berlin" not in loaded["memories"]
    assert loaded["memories"].startswith("- [20")


def test_in_a_classic_chain_the_turn_is_saved_and_used_next_time(ephemeral_memory: Memory) -> None:
    memory = MemtendMemory(memory=ephemeral_memory, user_id="alice", session_id="chat-1")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # LLMChain itself is deprecated upstream
        chain = LLMChain(llm=FakeListLLM(responses=["Nice!", "Yes."]), prompt=PROMPT, memory=memory)
    chain.invoke({"question": "I adopted a beagle called Pixel"})
    events = ephemeral_memory.user("alice").list(kinds=[Kind.EVENT])
    assert [(e.text, e.source.value, e.session) for e in events] == [
        ("I adopted a beagle called Pixel", "user", "chat-1"),
        ("Nice!", "agent", "chat-1"),
    ]
    loaded = memory.load_memory_variables({"question": "what is my dog called?"})
    assert "Pixel" in loaded["memories"]


async def test_async_twins(ephemeral_memory: Memory) -> None:
    memory = MemtendMemory(memory=ephemeral_memory, user_id="alice", session_id="s")
    await memory.asave_context({"question": "I play the cello"}, {"text": "Lovely"})
    loaded = await memory.aload_memory_variables({"question": "which instrument do I play?"})
    assert "cello" in loaded["memories"]
    await memory.aclear()
    assert ephemeral_memory.user("alice").list(kinds=[Kind.EVENT]) == []


def test_a_secret_is_refused_and_nothing_of_the_turn_is_stored(ephemeral_memory: Memory) -> None:
    memory = MemtendMemory(memory=ephemeral_memory, user_id="alice", session_id="s", redact=False)
    memory.save_context({"question": "hello"}, {"text": "hi"})
    with pytest.raises(SensitiveDataError, match=r"MemtendMemory \(langchain classic\) refused"):
        memory.save_context({"question": f"my key is {AWS_KEY}"}, {"text": "ok"})
    assert [e.text for e in ephemeral_memory.user("alice").list(kinds=[Kind.EVENT])] == ["hello", "hi"]


def test_a_secret_is_masked_by_default_and_the_turn_kept(ephemeral_memory: Memory) -> None:
    memory = MemtendMemory(memory=ephemeral_memory, user_id="alice", session_id="s")
    memory.save_context({"question": f"my key is {AWS_KEY}"}, {"text": "ok"})
    texts = [e.text for e in ephemeral_memory.user("alice").list(kinds=[Kind.EVENT])]
    assert len(texts) == 2 and AWS_KEY not in str(texts) and "[REDACTED:" in texts[0]


@pytest.mark.parametrize(
    ("inputs", "outputs"),
    [
        ({"question": 42}, {"text": "x"}),
        ({"a": "x", "b": "y"}, {"text": "x"}),
        ({"question": "x"}, {"text": 3}),
        ({"question": "x"}, {"a": "1", "b": "2"}),
        ({"question": "x"}, "not a dict"),
    ],
)
def test_bad_inputs_get_clear_errors_and_lose_nothing(ephemeral_memory: Memory, inputs: dict, outputs: dict) -> None:
    memory = MemtendMemory(memory=ephemeral_memory, user_id="alice", session_id="s")
    memory.save_context({"question": "kept"}, {"text": "also kept"})
    with pytest.raises(InvalidInputError):
        memory.save_context(inputs, outputs)
    assert len(ephemeral_memory.user("alice").list(kinds=[Kind.EVENT])) == 2


def test_oversized_text_gets_a_clear_error_and_loses_nothing(ephemeral_memory: Memory) -> None:
    memory = MemtendMemory(memory=ephemeral_memory, user_id="alice", session_id="s")
    memory.save_context({"question": "kept"}, {"text": "also kept"})
    with pytest.raises(InvalidInputError):
        memory.save_context({"question": "x" * 5_000_000}, {"text": "ok"})
    assert len(ephemeral_memory.user("alice").list(kinds=[Kind.EVENT])) == 2


@pytest.mark.parametrize("user_id", ["", None, 12])
def test_a_missing_user_is_refused_up_front(ephemeral_memory: Memory, user_id: object) -> None:
    with pytest.raises((InvalidUserIdError, ValueError)):
        MemtendMemory(memory=ephemeral_memory, user_id=user_id)  # type: ignore[arg-type]


def test_clear_needs_a_session_and_keeps_other_memories(ephemeral_memory: Memory) -> None:
    alice = ephemeral_memory.user("alice")
    alice.remember("Keeps bees")
    one = MemtendMemory(memory=ephemeral_memory, user_id="alice", session_id="one")
    two = MemtendMemory(memory=ephemeral_memory, user_id="alice", session_id="two")
    one.save_context({"q": "first"}, {"a": "1"})
    two.save_context({"q": "second"}, {"a": "2"})
    one.clear()
    assert [e.text for e in alice.list(kinds=[Kind.EVENT])] == ["second", "2"]
    assert [n.text for n in alice.list(kinds=[Kind.NOTE])] == ["Keeps bees"]
    with pytest.raises(InvalidInputError, match="session_id"):
        MemtendMemory(memory=ephemeral_memory, user_id="alice").clear()


# ---------------------------------------------------------------------- ConversationChain: the one-variable history
def conversation(memory: MemtendMemory, *answers: str, **chain_options: Any) -> tuple[Any, ScriptedChatModel]:
    from langchain_classic.chains import ConversationChain

    model = ScriptedChatModel(responses=[AIMessage(content=a) for a in answers])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # ConversationChain itself is deprecated upstream
        return ConversationChain(llm=model, memory=memory, **chain_options), model


def test_conversation_chain_needs_the_history_variable(ephemeral_memory: Memory) -> None:
    with pytest.raises(ValueError, match="prompt input variables"):  # ConversationChain's own check
        conversation(MemtendMemory(memory=ephemeral_memory, user_id="alice"), "hi")
    memory = MemtendMemory(memory=ephemeral_memory, user_id="alice", memory_key="history")
    assert memory.memory_variables == ["history"]
    conversation(memory, "hi")


def test_conversation_chain_sees_the_profile_the_memories_and_the_session_so_far(ephemeral_memory: Memory) -> None:
    alice = ephemeral_memory.user("alice")
    alice.set_fact("city", "Lisbon")
    alice.add_rule("Always answer in one sentence")
    alice.remember("Alice is allergic to cats")
    MemtendMemory(memory=ephemeral_memory, user_id="alice", session_id="older").save_context(
        {"input": "My dog needs a new vet"}, {"response": "I can help you look"}
    )
    ephemeral_memory.user("bob").remember("Bob's dog is called Rex")
    memory = MemtendMemory(memory=ephemeral_memory, user_id="alice", session_id="chat-2", memory_key="history")
    chain, model = conversation(memory, "What a lovely name!", "Your dog is called Pixel.")
    chain.invoke({"input": "I adopted a beagle called Pixel"})
    answer = chain.invoke({"input": "Which vet should my dog see, and what is my dog called?"})
    assert answer["response"] == "Your dog is called Pixel."
    prompt = model.calls[1][0].text
    assert "- city: Lisbon" in prompt and "Always answer in one sentence" in prompt
    assert "Human: I adopted a beagle called Pixel\nAI: What a lovely name!" in prompt  # the session, verbatim
    assert "My dog needs a new vet" in prompt  # recalled from another session, with its date
    assert prompt.count("I adopted a beagle called Pixel") == 1  # a turn shown is not recalled again
    assert "Rex" not in prompt
    events = [(e.text, e.source.value, e.session) for e in alice.list(kinds=[Kind.EVENT]) if e.session == "chat-2"]
    assert events == [
        ("I adopted a beagle called Pixel", "user", "chat-2"),
        ("What a lovely name!", "agent", "chat-2"),
        ("Which vet should my dog see, and what is my dog called?", "user", "chat-2"),
        ("Your dog is called Pixel.", "agent", "chat-2"),
    ]


def test_recent_turns_bounds_the_verbatim_part(ephemeral_memory: Memory) -> None:
    memory = MemtendMemory(memory=ephemeral_memory, user_id="alice", session_id="s", memory_key="history",
                           recent_turns=2)  # fmt: skip
    for i in range(3):
        memory.save_context({"input": f"question {i}"}, {"response": f"answer {i}"})
    history = memory.load_memory_variables({})["history"]
    assert history.endswith("Human: question 2\nAI: answer 2")
    assert "Human: question 1" not in history


async def test_a_chat_prompt_gets_messages_and_the_async_chain_works(ephemeral_memory: Memory) -> None:
    from langchain_core.prompts import ChatPromptTemplate, MessagesPlaceholder

    ephemeral_memory.user("alice").set_fact("city", "Lisbon")
    prompt = ChatPromptTemplate.from_messages([MessagesPlaceholder("history"), ("human", "{input}")])
    memory = MemtendMemory(memory=ephemeral_memory, user_id="alice", session_id="s", memory_key="history",
                           return_messages=True)  # fmt: skip
    chain, model = conversation(memory, "Hello Alice", "Lisbon", prompt=prompt)
    await chain.ainvoke({"input": "hi, I am Alice"})
    await chain.ainvoke({"input": "where do I live?"})
    sent = model.calls[1]
    assert [m.type for m in sent] == ["system", "human", "ai", "human"]
    assert "- city: Lisbon" in sent[0].text
    assert [m.text for m in sent[1:]] == ["hi, I am Alice", "Hello Alice", "where do I live?"]


def test_a_blank_memory_key_is_refused(ephemeral_memory: Memory) -> None:
    with pytest.raises(ValueError, match="memory_key"):  # pydantic wraps the InvalidInputError, as for user_id
        MemtendMemory(memory=ephemeral_memory, user_id="alice", memory_key=" ")
