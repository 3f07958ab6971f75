"""MemtendMemory, the classic chain memory (langchain-classic), in a real classic chain: the turns go to the
session's transcript (MemtendChatMessageHistory's documents), long-term memory gets only what capture keeps."""

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
from memtend_langchain import MemtendChatMessageHistory, MemtendMemory

AWS_KEY = "AKIAIOSFODNN7EXAMPLE"
REVISED = "Change of plan: keep every reply under 50 words."
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


def transcript(memory: Memory, session: str, user: str = "alice") -> list[tuple[str, str]]:
    """The session's transcript as MemtendChatMessageHistory reads it: (type, text) per message."""
    return [(m.type, m.text) for m in MemtendChatMessageHistory(user, session, memory=memory).messages]


def long_term(memory: Memory, user: str = "alice") -> list[str]:
    """Every long-term memory of the user's, as text."""
    return [r.text for r in memory.user(user).list()]


def test_in_a_classic_chain_the_turn_goes_to_the_transcript_and_only_the_fact_to_memory(
    ephemeral_memory: Memory,
) -> None:
    memory = MemtendMemory(memory=ephemeral_memory, user_id="alice", session_id="chat-1")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # LLMChain itself is deprecated upstream
        chain = LLMChain(llm=FakeListLLM(responses=["Why did the chicken...", "Nice!"]), prompt=PROMPT, memory=memory)
    chain.invoke({"question": "tell me a joke"})
    chain.invoke({"question": "I adopted a beagle called Pixel"})
    assert transcript(ephemeral_memory, "chat-1") == [
        ("human", "tell me a joke"),
        ("ai", "Why did the chicken..."),
        ("human", "I adopted a beagle called Pixel"),
        ("ai", "Nice!"),
    ]
    kept = long_term(ephemeral_memory)
    assert kept == ["I adopted a beagle called Pixel"]  # the stated fact; not the joke, not the answers
    assert not any("joke" in text or "chicken" in text for text in kept)
    (note,) = ephemeral_memory.user("alice").list()
    assert note.session == "chat-1" and note.extra["capture_turn"] == 2 and note.extra["capture_turn_id"]
    assert ephemeral_memory.user("alice").list(kinds=[Kind.EVENT]) == []
    loaded = MemtendMemory(memory=ephemeral_memory, user_id="alice", session_id="chat-2").load_memory_variables(
        {"question": "what is my dog called?"}
    )
    assert "Pixel" in loaded["memories"] and "joke" not in loaded["memories"]


async def test_async_twins(ephemeral_memory: Memory) -> None:
    memory = MemtendMemory(memory=ephemeral_memory, user_id="alice", session_id="s")
    await memory.asave_context({"question": "I play the cello in an orchestra"}, {"text": "Lovely"})
    await memory.asave_context({"question": "Tell me a joke"}, {"text": "No."})
    loaded = await memory.aload_memory_variables({"question": "which instrument do I play?"})
    assert "cello" in loaded["memories"]
    assert long_term(ephemeral_memory) == ["I play the cello in an orchestra"]
    await memory.aclear()
    assert transcript(ephemeral_memory, "s") == []
    assert long_term(ephemeral_memory) == ["I play the cello in an orchestra"]  # a memory, not the transcript


def test_a_secret_is_refused_and_nothing_of_the_turn_is_stored(ephemeral_memory: Memory) -> None:
    memory = MemtendMemory(memory=ephemeral_memory, user_id="alice", session_id="s", redact=False)
    memory.save_context({"question": "hello"}, {"text": "hi"})
    with pytest.raises(SensitiveDataError, match=r"MemtendMemory \(langchain classic\) refused"):
        memory.save_context({"question": f"my key is {AWS_KEY}. I use it for the staging account."}, {"text": "ok"})
    assert transcript(ephemeral_memory, "s") == [("human", "hello"), ("ai", "hi")]
    assert long_term(ephemeral_memory) == []


def test_a_secret_is_masked_by_default_and_the_turn_kept(ephemeral_memory: Memory) -> None:
    memory = MemtendMemory(memory=ephemeral_memory, user_id="alice", session_id="s")
    memory.save_context({"question": f"my key is {AWS_KEY}. I use the key {AWS_KEY} for staging."}, {"text": "ok"})
    texts = [text for _, text in transcript(ephemeral_memory, "s")]
    assert len(texts) == 2 and AWS_KEY not in str(texts) and "[REDACTED:" in texts[0]
    kept = long_term(ephemeral_memory)
    assert AWS_KEY not in str(kept) and kept and all("[REDACTED:" in text for text in kept)


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
    assert len(transcript(ephemeral_memory, "s")) == 2


def test_oversized_text_gets_a_clear_error_and_loses_nothing(
    ephemeral_memory: Memory, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(ephemeral_memory, "max_document_bytes", 2**20)  # the store's limit (64 MB by default)
    memory = MemtendMemory(memory=ephemeral_memory, user_id="alice", session_id="s")
    memory.save_context({"question": "kept"}, {"text": "also kept"})
    with pytest.raises(InvalidInputError):
        memory.save_context({"question": "x" * 5_000_000}, {"text": "ok"})
    assert len(transcript(ephemeral_memory, "s")) == 2 and long_term(ephemeral_memory) == []


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
    assert transcript(ephemeral_memory, "one") == [] and transcript(ephemeral_memory, "two") == [
        ("human", "second"),
        ("ai", "2"),
    ]
    assert [n.text for n in alice.list(kinds=[Kind.NOTE])] == ["Keeps bees"]
    with pytest.raises(InvalidInputError, match="session_id"):
        MemtendMemory(memory=ephemeral_memory, user_id="alice").clear()


def test_without_a_session_the_turn_is_captured_and_the_history_needs_one(ephemeral_memory: Memory) -> None:
    memory = MemtendMemory(memory=ephemeral_memory, user_id="alice")
    memory.save_context({"question": "tell me a joke"}, {"text": "No."})
    memory.save_context({"question": "I moved to Porto."}, {"text": "Nice."})
    assert ephemeral_memory.user("alice").facts() == {"home.city": "Porto"} and len(long_term(ephemeral_memory)) == 1
    with pytest.raises(InvalidInputError, match="session_id"):
        MemtendMemory(memory=ephemeral_memory, user_id="alice", memory_key="history")
    with pytest.raises(InvalidInputError, match="session_id"):
        memory.end_session()


def test_session_mode_captures_at_end_session_and_keeps_the_latest_instruction(ephemeral_memory: Memory) -> None:
    memory = MemtendMemory(memory=ephemeral_memory, user_id="alice", session_id="s", capture="session")
    said = ["Keep every reply under 100 words.", "tell me a joke", "I moved to Porto.", REVISED]
    for text in said:
        memory.save_context({"input": text}, {"output": "OK."})
    assert long_term(ephemeral_memory) == []  # nothing before the conversation ends
    memory.end_session()
    alice = ephemeral_memory.user("alice")
    assert alice.facts() == {"home.city": "Porto"}
    assert [n.text for n in alice.list(kinds=[Kind.NOTE])] == [REVISED]  # the revision, not the first version
    memory.end_session()  # again: refreshed, never a second row
    assert len(long_term(ephemeral_memory)) == 2
    off = MemtendMemory(memory=ephemeral_memory, user_id="bob", session_id="s", capture=None)
    off.save_context({"input": "I moved to Lisbon."}, {"output": "OK."})
    off.end_session()
    assert long_term(ephemeral_memory, "bob") == [] and len(transcript(ephemeral_memory, "s", "bob")) == 2
    with pytest.raises(ValueError, match="capture must be"):
        MemtendMemory(memory=ephemeral_memory, user_id="alice", capture="always")


async def test_aend_session_in_turn_mode_keeps_what_the_session_left_in_force(ephemeral_memory: Memory) -> None:
    memory = MemtendMemory(memory=ephemeral_memory, user_id="alice", session_id="s")
    for text in ("Keep every reply under 100 words.", REVISED):
        await memory.asave_context({"input": text}, {"output": "OK."})
    assert long_term(ephemeral_memory) == []  # during the conversation its constraints hold them
    await memory.aend_session()
    assert long_term(ephemeral_memory) == [REVISED]


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
    memory = MemtendMemory(memory=ephemeral_memory, user_id="alice", session_id="s", memory_key="history")
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
    assert "My dog needs a new vet" in prompt  # captured in another session, recalled with its date
    assert prompt.count("I adopted a beagle called Pixel") == 1  # a turn shown is not recalled beside it
    assert "Rex" not in prompt
    assert transcript(ephemeral_memory, "chat-2") == [
        ("human", "I adopted a beagle called Pixel"),
        ("ai", "What a lovely name!"),
        ("human", "Which vet should my dog see, and what is my dog called?"),
        ("ai", "Your dog is called Pixel."),
    ]
    kept = long_term(ephemeral_memory)
    assert "I adopted a beagle called Pixel" in kept and "What a lovely name!" not in kept
    assert not any("Which vet" in text for text in kept)  # a question is not kept


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


# ---------------------------------------------------------------------- propose mode
def extracting_memory(embedding_function: object, **options: Any) -> Memory:
    """A Memory whose capture runs a scripted structured-output model (a model writes the candidates' words)."""
    import json
    import re
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

    return Memory(
        client=chromadb.EphemeralClient(),
        embedding_function=embedding_function,
        collection_prefix=f"t{uuid.uuid4().hex[:8]}",
        extractor=llm_extractor(model),
        **options,
    )


@pytest.mark.parametrize("where", ["memory", "adapter"])
def test_in_propose_mode_what_capture_keeps_is_a_proposal_until_accepted(
    embedding_function: object, where: str
) -> None:
    mem = extracting_memory(embedding_function, **({"write_mode": "propose"} if where == "memory" else {}))
    try:
        options: dict[str, Any] = {"write_mode": "propose"} if where == "adapter" else {}
        memory = MemtendMemory(memory=mem, user_id="alice", session_id="s1", **options)
        memory.save_context({"question": "tell me a joke"}, {"text": "No."})
        memory.save_context({"question": "I keep bees on the roof."}, {"text": "Lovely."})
        alice = mem.user("alice")
        (proposal,) = alice.proposals()
        assert proposal.text == "The user keeps bees on the roof" and alice.list() == []
        later = MemtendMemory(memory=mem, user_id="alice", session_id="s2")
        assert "bees" not in later.load_memory_variables({"question": "what do I keep on the roof?"})["memories"]
        alice.accept(proposal.id)
        assert "bees" in later.load_memory_variables({"question": "what do I keep on the roof?"})["memories"]
        assert len(transcript(mem, "s1")) == 4  # the transcript is the turns, whatever the mode
    finally:
        mem.close()
