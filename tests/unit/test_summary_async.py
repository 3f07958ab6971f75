"""Async summarisers: an async LLM loop and acompact_transcript behave exactly as their sync forms."""

from __future__ import annotations

import asyncio
import json

import pytest
from memtend import acompact_transcript, allm_summarizer, compact_transcript, llm_summarizer
from memtend.errors import InvalidInputError
from memtend.transcripts.messages import Message
from memtend.transcripts.summary import (
    ORIGIN_FALLBACK,
    ORIGIN_LLM,
    ORIGIN_LLM_RETRY,
    StructuredSummary,
    asummarize_with_llm,
    extractive_summarize,
    summarize_with_llm,
)

VALID = json.dumps({"goal": "g", "facts": ["searched the docs"], "constraints": ["Never use the v1 API."]})


def session(turns: int = 8) -> list[Message]:
    out = [Message.system("You are a helpful agent.")]
    for i in range(turns):
        out.append(Message.user(f"Step {i}: please check item {i}. Always answer in French."))
        out.append(Message.assistant(f"Item {i} is checked and fine."))
    return out


class Scripted:
    """A fake model answering from a script; the same answers for its sync and async forms."""

    def __init__(self, *answers: object) -> None:
        self.answers = list(answers)
        self.prompts: list[str] = []

    def _next(self, prompt: str) -> str | dict[str, object]:
        self.prompts.append(prompt)
        answer = self.answers.pop(0)
        if isinstance(answer, Exception):
            raise answer
        return answer  # type: ignore[return-value]

    def __call__(self, prompt: str) -> str | dict[str, object]:
        return self._next(prompt)

    async def acall(self, prompt: str) -> str | dict[str, object]:
        await asyncio.sleep(0)  # a real await point
        return self._next(prompt)


@pytest.mark.parametrize(
    ("answers", "origin"),
    [
        ((VALID,), ORIGIN_LLM),
        (("garbage", VALID), ORIGIN_LLM_RETRY),
        (("garbage", "more garbage"), ORIGIN_FALLBACK),
        ((TimeoutError("model down"),), ORIGIN_FALLBACK),
    ],
)
def test_async_llm_loop_matches_the_sync_one(answers: tuple[object, ...], origin: str) -> None:
    sync_model, async_model = Scripted(*answers), Scripted(*answers)
    expected = summarize_with_llm(session(), sync_model)
    got = asyncio.run(asummarize_with_llm(session(), async_model.acall))
    assert (got, got.origin) == (expected, expected.origin)
    assert got.origin == origin
    assert async_model.prompts == sync_model.prompts
    if origin == ORIGIN_FALLBACK:
        assert got == extractive_summarize(session())


def test_acompact_transcript_with_an_async_summarizer_matches_compact() -> None:
    expected = compact_transcript(session(), max_turns=4, summarizer=llm_summarizer(Scripted(VALID)))
    got = asyncio.run(acompact_transcript(session(), max_turns=4, summarizer=allm_summarizer(Scripted(VALID).acall)))
    assert got == expected
    assert got.compacted and got.summary is not None and got.summary.origin == ORIGIN_LLM
    assert got.summary.facts[-1] == "searched the docs"


def test_acompact_transcript_takes_sync_summarizers_and_none() -> None:
    for summarizer in (None, llm_summarizer(Scripted(VALID))):
        expected = compact_transcript(session(), max_turns=4, summarizer=summarizer)
        replay = None if summarizer is None else llm_summarizer(Scripted(VALID))
        assert asyncio.run(acompact_transcript(session(), max_turns=4, summarizer=replay)) == expected


def test_acompact_transcript_under_the_limits_never_calls_the_summarizer() -> None:
    model = Scripted()
    result = asyncio.run(acompact_transcript(session(2), max_turns=4, summarizer=allm_summarizer(model.acall)))
    assert not result.compacted and model.prompts == []


def test_sync_compaction_refuses_an_async_summarizer_clearly() -> None:
    async def summarizer(messages: list[Message], earlier: StructuredSummary | None) -> StructuredSummary:
        return StructuredSummary(goal="never used")

    with pytest.raises(InvalidInputError, match="acompact_transcript"):
        compact_transcript(session(), max_turns=4, summarizer=summarizer)  # type: ignore[arg-type]
    with pytest.raises(InvalidInputError, match="asummarize_with_llm"):
        summarize_with_llm(session(), Scripted(VALID).acall)  # type: ignore[arg-type]


def test_async_validation_errors_come_before_any_model_call() -> None:
    model = Scripted(VALID)
    with pytest.raises(InvalidInputError):
        asyncio.run(acompact_transcript(session(), summarizer=allm_summarizer(model.acall)))
    assert model.prompts == []
