"""Issue 34: a restated constraint replaces the version it restates, a request is not a constraint, and a plan
keeps its steps in order."""

from __future__ import annotations

from memtend.transcripts.messages import Message
from memtend.transcripts.summary import extractive_summarize
from memtend.transcripts.summary.constraints import REPLACED, is_instruction, mark_replaced


def test_a_restatement_with_another_value_replaces_the_earlier_version() -> None:
    assert mark_replaced(["Recording happens on Tuesdays.", "Recording happens on Thursdays."]) == [
        "Recording happens on Tuesdays." + REPLACED,
        "Recording happens on Thursdays.",
    ]
    assert mark_replaced(["Spend no more than 300 pounds per booking.", "Per booking the spend can reach 450 pounds."])[
        0
    ].endswith(REPLACED)
    # another subject with the same kind of value is not a restatement; nor is the same rule said twice
    kept = ["Keep each order under 500 dollars.", "Keep each refund under 50 dollars."]
    assert mark_replaced(kept) == kept
    same = ["Each episode runs 40 minutes at most.", "Remember: each episode runs 40 minutes at most."]
    assert mark_replaced(same) == same


def test_the_summary_shows_only_the_restated_version_as_current() -> None:
    summary = extractive_summarize(
        [
            Message.user("Plan the coach trip."),
            Message.user("Invoices must go to accounts@school.example."),
            Message.assistant("Noted."),
            Message.user("Invoices must go to finance@school.example."),
        ]
    )
    current = [c for c in summary.constraints if not c.endswith(REPLACED)]
    assert current == ["Invoices must go to finance@school.example."]
    assert "Invoices must go to accounts@school.example." + REPLACED in summary.render()


def test_a_one_off_request_is_not_a_constraint() -> None:
    for request in ("Tell me a joke.", "Please tell me a joke while that runs.", "Give me a quick status update."):
        assert not is_instruction(request), request
    for rule in (
        "Tell me before you merge anything.",
        "Keep me posted after each step.",
        "Send me every report as CSV.",
    ):
        assert is_instruction(rule), rule
    summary = extractive_summarize(
        [Message.user("Sort the invoices."), Message.user("Tell me a joke."), Message.assistant("Why did...")]
    )
    assert summary.constraints == []


def test_a_numbered_plan_is_kept_whole_and_in_order_not_filed_as_constraints() -> None:
    steps = ["Book the coach.", "Reserve the hostel rooms.", "Send the permission slips.", "Collect the deposits."]
    text = "Here is the order I want:\n" + "\n".join(f"{n}. {s}" for n, s in enumerate(steps, 1))
    summary = extractive_summarize([Message.user("Organise the school trip."), Message.user(text)])
    assert summary.plan == steps
    assert summary.constraints == []
    # a step that carries a rule of its own is a constraint as well
    ruled = extractive_summarize(
        [Message.user("Organise the trip."), Message.user("1. Book the coach.\n2. Never pay more than 300 pounds.")]
    )
    assert ruled.plan == ["Book the coach.", "Never pay more than 300 pounds."]
    assert ruled.constraints == ["Never pay more than 300 pounds."]


def test_an_llm_answer_says_what_a_constraint_replaces_and_the_older_version_stops_being_current() -> None:
    import json

    import pytest
    from memtend.transcripts.summary import StructuredSummary, SummaryValidationError, summarize_with_llm

    earlier = StructuredSummary(goal="Run the kitchen refit.", constraints=["Keep each order under 500 dollars."])
    answer = {
        "goal": "Run the kitchen refit.",
        "constraints": [
            {"text": "Each order can go up to 800 dollars.", "replaces": "Keep each order under 500 dollars."}
        ],
    }
    messages = [Message.user("Each order can go up to 800 dollars."), Message.assistant("Noted.")]
    summary = summarize_with_llm(messages, lambda prompt: json.dumps(answer), earlier)
    assert summary.origin == "llm"
    assert [c for c in summary.constraints if not c.endswith(REPLACED)] == ["Each order can go up to 800 dollars."]
    assert "Keep each order under 500 dollars." + REPLACED in summary.constraints  # the earlier summary's copy too
    assert "replaces" in summary_prompt()
    # the older version listed as well, as a plain string: it is marked, not presented as current
    both = StructuredSummary.validate({"constraints": ["Cap at 5.", {"text": "Cap at 7.", "replaces": "Cap at 5."}]})
    assert both.constraints == ["Cap at 5." + REPLACED, "Cap at 7."]
    assert StructuredSummary.parse(both.render()) == both
    with pytest.raises(SummaryValidationError, match=r"constraints\[0\].replaces"):
        StructuredSummary.validate({"constraints": [{"text": "Cap at 7.", "replaces": ["Cap at 5."]}]})
    with pytest.raises(SummaryValidationError, match="cannot replace itself"):
        StructuredSummary.validate({"constraints": [{"text": "Cap at 7.", "replaces": "cap at 7"}]})


def summary_prompt() -> str:
    from memtend.transcripts.summary.llm import PROMPT

    return PROMPT
