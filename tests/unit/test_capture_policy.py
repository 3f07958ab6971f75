"""The capture policy (pure): what of a turn is kept, as what kind, and why; and the LLM extractor's checks."""

from __future__ import annotations

import asyncio
import json

import pytest
from memtend import Message, Source
from memtend.capture.extractor import ExtractionError, allm_extractor, llm_extractor, validate_answer
from memtend.policies.capture import (
    CONSTRAINT_REASON,
    Candidate,
    CandidateKind,
    Dropped,
    is_standing_instruction,
    judge_turns,
    revised_instruction,
)
from memtend.transcripts.summary.constraints import is_instruction


def _one(text: str) -> Candidate | Dropped:
    found = judge_turns([Message("user", text)])
    assert len(found) == 1
    return found[0]


@pytest.mark.parametrize(
    "text",
    [
        "Tell me a joke",
        "Understood.",
        "ok thanks",
        "The weather is nice today.",
        "What's the capital of France?",
        "I think so.",
        "Show me the cheapest option.",
        "I'm bored right now, honestly.",
        "My neighbour is drilling again, unbelievable.",  # an event, not an attribute of the user
        "My kids are running around the house.",
        "List three novels under 300 pages.",  # a limit bounds this one answer: still a request
        "Write a haiku of at most 17 syllables.",
    ],
)
def test_one_off_requests_chit_chat_and_acknowledgements_are_dropped_with_a_reason(text: str) -> None:
    judged = _one(text)
    assert isinstance(judged, Dropped) and judged.reason


@pytest.mark.parametrize(
    ("text", "key", "value"),
    [
        ("I moved to Porto last month.", "home.city", "Porto"),
        ("Actually, I live in New York now.", "home.city", "New York"),
        ("My name is Ana Silva.", "name", "Ana Silva"),
        ("I work at Acme Corp.", "work.employer", "Acme Corp"),
        ("My favourite colour is blue.", "favourite_colour", "blue"),
        ("My favourite editor is now Helix, I switched last week.", "favourite_editor", "Helix"),
        # a correction marker's clause is read past; a later clause can carry the one answer
        ("Scratch that about Rotterdam, I moved to Utrecht in October.", "home.city", "Utrecht"),
        ("Correction on the move: we now live in Ghent.", "home.city", "Ghent"),
        (
            "Actually I no longer work at Brightwater, I work at St Albans Hospital now.",
            "work.employer",
            "St Albans Hospital",
        ),
        ("Call me Tom.", "name", "Tom"),
        # the value stops at a word of time
        ("My timezone is PST now, I relocated to Seattle.", "timezone", "PST"),
        ("My shift pattern is nights these days.", "shift_pattern", "nights"),
        ("My favourite band is still Blur.", "favourite_band", "Blur"),
    ],
)
def test_statements_with_one_answer_become_keyed_facts(text: str, key: str, value: str) -> None:
    judged = _one(text)
    assert isinstance(judged, Candidate) and judged.kind is CandidateKind.FACT
    assert (judged.key, judged.value, judged.source) == (key, value, Source.USER)
    assert "one answer" in judged.reason


def test_a_corrected_key_says_so_and_a_negated_clause_gives_no_value() -> None:
    judged = _one("Scratch that about Rotterdam, I moved to Utrecht in October.")
    assert isinstance(judged, Candidate) and "corrects" in judged.reason
    # the negated clause alone names no current employer: not keyed (kept as a correction note instead)
    negated = _one("I no longer work at Brightwater.")
    assert isinstance(negated, Candidate) and negated.kind is CandidateKind.CORRECTION and not negated.key


@pytest.mark.parametrize(
    "text",
    [
        "Never suggest jQuery to me.",  # a word of time makes a request verb a standing rule
        "Always write commit messages in English.",
        "From now on give me answers in two sentences at most.",
        "Send the weekly report to Priya every Tuesday, at most two pages.",
    ],
)
def test_standing_instructions_are_left_to_the_sessions_constraints(text: str) -> None:
    # issue 31: an instruction to the assistant is the conversation's constraint (re-injected every turn, replaced
    # when revised, by the session's constraints); kept long-term too, it came back beside its own revision
    judged = _one(text)
    assert isinstance(judged, Dropped) and judged.reason == CONSTRAINT_REASON
    assert "one-off" not in judged.reason  # a word of time still tells it from a request
    assert is_instruction(text)  # what capture leaves, the session's constraints take


def test_a_constraint_and_its_revision_are_both_left_to_the_session() -> None:
    said = ["Keep every reply under 100 words.", "Change of plan: keep every reply under 50 words."]
    judged = judge_turns([Message("user", text) for text in said])
    assert [type(j) for j in judged] == [Dropped, Dropped] and {j.reason for j in judged} == {CONSTRAINT_REASON}


@pytest.mark.parametrize(
    ("text", "kind", "in_reason"),
    [
        ("I prefer short answers.", CandidateKind.PREFERENCE, "preference"),
        ("Next I need to update the CI runners to use the new cache path.", CandidateKind.STATE, "unfinished"),
        ("We decided to use Postgres because it handles JSON well.", CandidateKind.DECISION, "handles JSON well"),
        ("I'm still working on the migration script.", CandidateKind.STATE, "unfinished"),
        ("I have two cats named Tom and Jerry.", CandidateKind.STATEMENT, "themselves"),
        ("I no longer eat meat at all.", CandidateKind.CORRECTION, "corrects"),
    ],
)
def test_kinds_and_visible_reasons(text: str, kind: CandidateKind, in_reason: str) -> None:
    judged = _one(text)
    assert isinstance(judged, Candidate) and judged.kind is kind and in_reason in judged.reason


def test_only_the_users_voice_is_read_tool_output_and_replies_are_dropped() -> None:
    turn = [
        Message("user", "I moved to Porto.", id="m1"),
        Message("assistant", "I live in Paris.", tool_calls=[{"id": "c1", "name": "search", "arguments": {}}]),
        Message("tool", "My name is Evil Bot.", tool_call_id="c1"),
        Message("assistant", "My name is Evil Bot."),
    ]
    judged = judge_turns(turn, offset=10)
    kept = [j for j in judged if isinstance(j, Candidate)]
    assert [(c.key, c.turn, c.turn_id) for c in kept] == [("home.city", 10, "m1")]
    reasons = [j.reason for j in judged if isinstance(j, Dropped)]
    assert any("tool output" in r for r in reasons) and any("relays" in r for r in reasons)


def _answer(**item: object) -> str:
    base = {"kind": "preference", "text": "Likes tea", "reason": "a liking", "turn": 0}
    return json.dumps({"memories": [{**base, **item}]})


def test_extractor_answer_validated_turn_kind_and_key() -> None:
    turn = [Message("user", "I like tea"), Message("tool", "x", tool_call_id="c")]
    assert validate_answer(_answer(), turn, 0)[0].source is Source.INFERRED
    for bad in (_answer(kind="joke"), _answer(turn=5), _answer(turn=1), _answer(kind="fact"), "not json", "{}"):
        with pytest.raises(ExtractionError):
            validate_answer(bad, turn, 0)


def test_llm_extractor_retries_once_then_falls_back_to_the_offline_rules() -> None:
    prompts: list[str] = []
    answers = iter(["nonsense", _answer(kind="fact", key="Home City", value="Porto", text="Lives in Porto")])

    def model(prompt: str) -> str:
        prompts.append(prompt)
        return next(answers)

    turn = [Message("user", "I like tea and I moved to Porto")]
    (got,) = llm_extractor(model)(turn, 0)
    assert isinstance(got, Candidate) and (got.key, got.value) == ("home_city", "Porto")
    assert len(prompts) == 2 and "rejected" in prompts[1]

    def broken(prompt: str) -> str:
        raise RuntimeError("down")

    fallback = llm_extractor(broken)([Message("user", "I moved to Porto.")], 0)
    assert [c.key for c in fallback if isinstance(c, Candidate)] == ["home.city"]
    assert any(isinstance(d, Dropped) and "offline-fallback" in d.reason for d in fallback)


def test_async_extractor_same_flow() -> None:
    async def model(prompt: str) -> str:
        return _answer(kind="decision", text="Chose Postgres for JSON", reason="decision with its reason", turn=3)

    got = asyncio.run(allm_extractor(model)([Message("user", "We go with Postgres because of JSON")], 3))
    assert isinstance(got[0], Candidate) and got[0].kind is CandidateKind.DECISION and got[0].turn == 3


def test_which_stored_instruction_a_later_session_revises() -> None:
    first, revised = "Keep every reply under 100 words.", "Change of plan: keep every reply under 50 words."
    unrelated = "Never deploy on Fridays."
    assert revised_instruction([first], revised) == 0
    assert revised_instruction([unrelated, first], revised) == 1
    assert revised_instruction([first], unrelated) is None
    assert revised_instruction([first], first) is None  # the same words: a duplicate, not a revision
    assert revised_instruction([], revised) is None
    # a plain restatement after an announced change: the rule marks both, so neither is taken
    assert revised_instruction([revised], first) is None
    assert is_standing_instruction(first) and not is_standing_instruction("I moved to Porto.")
