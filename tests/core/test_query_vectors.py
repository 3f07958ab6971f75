"""Recall keeps the vectors of its recent query texts (``Applier.embed_query``): an agent turn that gathers its
context twice (LlamaIndex's FunctionAgent reads its memory before and after the answer) embeds its question once,
and a vector made by one model is never served to another."""

from __future__ import annotations

from typing import Any

from memtend import Memory


def test_a_repeated_query_is_embedded_once_per_model(ephemeral_memory: Memory) -> None:
    user = ephemeral_memory.user("alice")
    user.remember("Alice's orders ship on Fridays from the Leeds warehouse")
    user.remember("Alice prefers tea to coffee")
    real = ephemeral_memory.embedding_function
    calls: list[list[str]] = []

    def counting(texts: Any) -> Any:
        calls.append(list(texts))
        return real(texts)

    ephemeral_memory.embedding_function = counting
    first = user.recall("when do my orders ship?", k=1)
    second = user.recall("when do my orders ship?", k=1)
    assert [h.record.id for h in first] == [h.record.id for h in second] and "Fridays" in first[0].record.text
    assert calls == [["when do my orders ship?"]]
    user.recall("what do I drink?", k=1)
    assert calls[-1] == ["what do I drink?"]

    other: list[list[str]] = []

    def another_model(texts: Any) -> Any:
        other.append(list(texts))
        return real(texts)

    ephemeral_memory.embedding_function = another_model
    user.recall("when do my orders ship?", k=1)
    assert other == [["when do my orders ship?"]]  # the first model's vector is not reused
