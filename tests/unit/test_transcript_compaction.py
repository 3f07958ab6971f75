"""Transcript compaction: safe cut points, the summary turn, repeated compaction, tool-result clearing,
and the structured summary (schema, text form, extractive and LLM summarisers)."""

from __future__ import annotations

import copy
import itertools
import json
import re

import pytest
from conftest import scaled
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from memtend.errors import InvalidInputError
from memtend.transcripts.compaction import (
    clear_tool_results,
    compact_transcript,
    count_tokens,
    count_turns,
    safe_cut_points,
)
from memtend.transcripts.messages import Message, ToolCall, from_openai, to_openai, transcript_problems
from memtend.transcripts.summary import (
    CRITICAL_FIELDS,
    ORIGIN_FALLBACK,
    ORIGIN_LLM,
    ORIGIN_LLM_RETRY,
    SideEffect,
    StructuredSummary,
    SummaryValidationError,
    extract_ids,
    extractive_summarize,
    fill_gaps,
    is_side_effecting,
    is_summary_message,
    llm_summarizer,
    merge,
    read_summary_message,
    summarize_with_llm,
)

USER_LINES = [
    "Can you look at the billing service?",
    "Thanks, that helps.",
    "Never touch the production database.",
    "Make sure every amount is in EUR.",
    "ok",
    "What did the last query return?",
    "Please don't email the customer directly.",
]
TOOLS = ["search_docs", "create_ticket", "get_order", "send_email", "run_query"]
FIRST_GOAL = "Migrate the billing service to the new payments API."


@st.composite
def transcripts(draw: st.DrawFn, max_turns: int = 12) -> list[Message]:
    """Valid, varied transcripts: leading system messages, user turns, assistant turns with several
    tool calls answered in any order (now and then a system message among the results), chit-chat,
    and sometimes an unfinished tool round at the end."""
    ids = itertools.count()
    messages = [Message.system(f"system {i}") for i in range(draw(st.integers(0, 2)))]

    def tool_round(answer: int | None = None) -> None:
        calls = [
            ToolCall(f"call_{next(ids)}", draw(st.sampled_from(TOOLS)), {"q": draw(st.sampled_from(USER_LINES))})
            for _ in range(draw(st.integers(1, 3)))
        ]
        messages.append(Message.assistant(draw(st.sampled_from(["", "Checking."])), calls))
        answered = draw(st.permutations(calls))[: len(calls) if answer is None else answer]
        for call in answered:
            size = draw(st.integers(0, 400))
            messages.append(Message.tool(json.dumps({"id": call.id, "rows": "x" * size}), call.id, name=call.name))
            if draw(st.integers(0, 9)) == 0:
                messages.append(Message.system("a note among the results"))

    for turn in range(draw(st.integers(1, max_turns))):
        messages.append(Message.user(FIRST_GOAL if turn == 0 else draw(st.sampled_from(USER_LINES))))
        for _ in range(draw(st.integers(0, 3))):
            if draw(st.booleans()):
                tool_round()
            else:
                messages.append(Message.assistant(draw(st.sampled_from(["Done.", "The order shipped on May 2."]))))
        if draw(st.integers(0, 7)) == 0:
            messages.append(Message.system("a mid-conversation system note"))
    if draw(st.integers(0, 4)) == 0:  # an agent loop caught mid-flight
        tool_round(answer=draw(st.integers(0, 1)))
    return messages


def issuer_of(messages: list[Message]) -> dict[int, int]:
    issued, out = {}, {}
    for i, message in enumerate(messages):
        for call in message.tool_calls:
            issued[call.id] = i
        if message.role == "tool":
            out[i] = issued[message.tool_call_id]
    return out


# --- safe cut points -------------------------------------------------------------------------------


@settings(max_examples=scaled(300))
@given(transcripts())
def test_safe_cut_points_never_split_a_call_from_its_results(messages: list[Message]) -> None:
    spans = issuer_of(messages).items()
    expected = [
        i for i, m in enumerate(messages) if m.role == "user" and not any(call < i <= result for result, call in spans)
    ]
    assert safe_cut_points(messages) == expected
    for i in expected:
        assert messages[i].role == "user"


def test_safe_cut_points_of_a_hand_made_transcript() -> None:
    messages = [
        Message.system("s"),
        Message.user("a"),
        Message.assistant("", [ToolCall("c1", "t"), ToolCall("c2", "t")]),
        Message.tool("r1", "c1"),
        Message.user("interrupting"),  # invalid position, but must not be offered as a cut
        Message.tool("r2", "c2"),
        Message.user("b"),
    ]
    assert safe_cut_points(messages) == [1, 6]


# --- compaction --------------------------------------------------------------------------------------


@settings(max_examples=scaled(250), suppress_health_check=[HealthCheck.too_slow])
@given(
    transcripts(),
    st.integers(1, 6),
    st.integers(1, 4),
    st.none() | st.integers(50, 3000),
)
def test_compaction_cuts_safely_and_keeps_the_goal(
    messages: list[Message], max_turns: int, keep: int, max_tokens: int | None
) -> None:
    before = copy.deepcopy(messages)
    result = compact_transcript(
        messages, max_turns=max_turns, max_tokens=max_tokens, keep_recent_turns=min(keep, max_turns)
    )
    assert messages == before  # the input is not mutated
    assert transcript_problems(result.messages) == transcript_problems(messages) == []
    if not result.compacted:
        assert result.messages == messages
        return
    at = next(i for i, m in enumerate(result.messages) if is_summary_message(m))
    assert all(m.role == "system" for m in result.messages[:at])
    tail = result.messages[at + 1 :]
    assert tail and tail[0].role == "user"  # the kept part starts with a user turn
    cut = len(messages) - len(tail)
    assert messages[cut:] == tail
    assert cut in safe_cut_points(messages)
    assert result.summary is not None and result.summary.goal == FIRST_GOAL
    assert result.removed == sum(1 for m in messages[:cut] if m.role != "system")
    turns, parsed = read_summary_message(result.messages[at]) or (None, None)
    assert turns == count_turns(messages[:cut]) and parsed == result.summary
    assert count_turns(tail) <= min(keep, max_turns) or cut == safe_cut_points(messages)[-1]


@settings(max_examples=scaled(100), suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(transcripts(max_turns=6), min_size=3, max_size=3))
def test_repeated_compaction_folds_the_earlier_summary(chunks: list[list[Message]]) -> None:
    planted = "Always answer in French."
    effect = [
        Message.user(f"Open the ticket. {planted}"),
        Message.assistant("", [ToolCall("open_1", "create_ticket", {"title": "outage"})]),
        Message.tool('{"ticket": {"id": "TCK-4411"}, "status": "open"}', "open_1"),
    ]
    messages = [*chunks[0], *effect]
    total_turns = count_turns(messages)
    compactions = 0
    for round_no, chunk in enumerate([*chunks[1:], []], start=1):
        renamed = [_rename_calls(m, f"r{round_no}_") for m in chunk if m.role != "system"]
        messages = [*messages, *renamed, Message.user(f"and now? ({round_no})"), Message.user("go on")]
        total_turns += count_turns(renamed) + 2
        result = compact_transcript(messages, max_turns=2, keep_recent_turns=1)
        assert result.compacted
        compactions += 1
        messages = result.messages
    assert compactions == 3 and result.summary is not None
    assert planted in result.summary.constraints and planted in result.constraints
    assert any("TCK-4411" in e.ids for e in result.summary.side_effects)
    assert result.summary.goal == FIRST_GOAL
    summaries = [m for m in messages if is_summary_message(m)]
    assert len(summaries) == 1
    assert read_summary_message(summaries[0])[0] + count_turns(messages) == total_turns


def _rename_calls(message: Message, prefix: str) -> Message:
    calls = [ToolCall(prefix + c.id, c.name, c.arguments) for c in message.tool_calls]
    call_id = prefix + message.tool_call_id if message.tool_call_id else None
    return Message(message.role, message.content, calls, call_id, message.name)


def long_session(turns: int = 12) -> list[Message]:
    messages = [
        Message.system("You are a billing agent."),
        Message.user(FIRST_GOAL + " Never use the v1 API."),
    ]
    for t in range(turns):
        messages.append(Message.assistant("", [ToolCall(f"s{t}", "search_docs", {"q": f"page {t}"})]))
        messages.append(
            Message.tool(json.dumps({"hits": [{"id": i, "text": "lorem " * 40} for i in range(5)]}), f"s{t}")
        )
        messages.append(Message.assistant(f"Page {t} describes the refund flow."))
        messages.append(Message.user(f"Next page please ({t})."))
    return messages


def test_summary_turn_format_and_constraints_returned_separately() -> None:
    result = compact_transcript(long_session(), max_turns=5)
    assert result.compacted and result.reason == "turns"
    assert result.messages[0] == Message.system("You are a billing agent.")
    summary_turn = result.messages[1]
    assert summary_turn.role == "user"
    assert summary_turn.content.startswith("[Conversation summary so far, 10 turns]\n## Goal\n- " + FIRST_GOAL)
    assert result.constraints == ["Never use the v1 API."]
    assert result.tokens_after < result.tokens_before / 2
    assert count_turns(result.messages) == 3


def test_summary_is_recognised_after_a_trip_through_a_framework() -> None:
    first = compact_transcript(long_session(), max_turns=5)
    wire = to_openai([*first.messages, Message.user("Must keep the audit log."), Message.assistant("ok")])
    second = compact_transcript([*from_openai(wire), Message.user("x"), Message.user("y")], max_turns=2)
    assert second.summary is not None
    assert second.summary.constraints == ["Never use the v1 API.", "Must keep the audit log."]
    assert second.messages[1].content.startswith("[Conversation summary so far, 14 turns]")


def test_token_trigger_and_keep_tokens() -> None:
    messages = long_session(8)
    tokens = count_tokens(messages)
    assert not compact_transcript(messages, max_tokens=tokens).compacted
    result = compact_transcript(messages, max_tokens=tokens - 1, keep_recent_turns=50, keep_tokens=400)
    assert result.compacted and result.reason == "tokens"
    tail = result.messages[2:]
    assert count_tokens(tail) <= 400 and tail[0].role == "user"


def test_custom_token_counter_is_used() -> None:
    calls: list[int] = []

    def counter(messages: list[Message]) -> int:
        calls.append(len(messages))
        return 10 * len(messages)

    result = compact_transcript(long_session(3), max_tokens=50, token_counter=counter)
    assert result.compacted and calls and result.tokens_after == 10 * len(result.messages)


def test_no_safe_cut_leaves_the_transcript_alone() -> None:
    messages = [Message.user(FIRST_GOAL)]
    for i in range(20):
        messages += [
            Message.assistant("", [ToolCall(f"c{i}", "read", {})]),
            Message.tool("x" * 2000, f"c{i}"),
        ]
    result = compact_transcript(messages, max_tokens=100)
    assert not result.compacted and result.reason == "no safe cut point" and result.messages == messages
    cleared = clear_tool_results(messages, keep_last=2)
    assert count_tokens(cleared) < count_tokens(messages) / 5


def test_under_limits_reports_constraints_without_compacting() -> None:
    messages = [Message.user("Fix the bug. Do not push to main."), Message.assistant("On it.")]
    result = compact_transcript(messages, max_turns=5)
    assert not result.compacted and result.summary is None and result.removed == 0
    assert result.constraints == ["Do not push to main."]


@pytest.mark.parametrize(
    "kwargs",
    [
        {},
        {"max_turns": 0},
        {"max_tokens": -1},
        {"max_turns": 3, "keep_recent_turns": 0},
        {"max_turns": True},
        {"max_turns": 3, "keep_recent_turns": 4},
        {"max_tokens": 100, "keep_tokens": 100},
    ],
)
def test_bad_compaction_arguments(kwargs: dict) -> None:
    with pytest.raises(InvalidInputError):
        compact_transcript(long_session(2), **kwargs)


def test_compaction_rejects_non_messages() -> None:
    with pytest.raises(InvalidInputError, match="expected a memtend Message"):
        compact_transcript([{"role": "user", "content": "x"}], max_turns=1)  # type: ignore[list-item]


def test_custom_summarizer_results_are_coerced_and_backfilled() -> None:
    seen: list[tuple[int, StructuredSummary | None]] = []

    def summarizer(messages: list[Message], earlier: StructuredSummary | None) -> dict:
        seen.append((len(messages), earlier))
        return {"goal": "paraphrased goal", "facts": ["pages read"]}

    result = compact_transcript(long_session(), max_turns=5, summarizer=summarizer)
    assert seen and seen[0][1] is None
    assert result.summary is not None and result.summary.goal.startswith(FIRST_GOAL)
    assert "pages read" in result.summary.facts
    assert "Never use the v1 API." in result.summary.constraints  # added back by the extractive pass
    prose = compact_transcript(long_session(), max_turns=5, summarizer=lambda m, e: "We read docs.")
    assert prose.summary is not None and "We read docs." in prose.summary.facts
    with pytest.raises(InvalidInputError, match="must return"):
        compact_transcript(long_session(), max_turns=5, summarizer=lambda m, e: 42)


# --- clearing tool results ----------------------------------------------------------------------------


@settings(max_examples=scaled(200))
@given(transcripts(), st.integers(0, 5))
def test_clear_tool_results_keeps_structure(messages: list[Message], keep_last: int) -> None:
    before = copy.deepcopy(messages)
    cleared = clear_tool_results(messages, keep_last=keep_last)
    assert messages == before
    assert len(cleared) == len(messages)
    assert transcript_problems(cleared) == transcript_problems(messages) == []
    for old, new in zip(messages, cleared, strict=True):
        assert (old.role, old.tool_call_id, old.name, old.tool_calls) == (
            new.role,
            new.tool_call_id,
            new.name,
            new.tool_calls,
        )
        if new.content != old.content:
            assert old.role == "tool" and len(new.content) < len(old.content)
            assert old.tool_call_id in new.content and new.metadata["memtend_cleared"]
    tool_positions = [i for i, m in enumerate(messages) if m.role == "tool"]
    for i in tool_positions[len(tool_positions) - keep_last :] if keep_last else []:
        assert cleared[i] == messages[i]


def test_cleared_side_effect_results_keep_their_ids() -> None:
    messages = [
        Message.user("refund it"),
        Message.assistant("", [ToolCall("c1", "issue_refund", {"order_id": "ord_77"})]),
        Message.tool(json.dumps({"refund": {"id": "re_3KxT9"}, "log": "y" * 300}), "c1"),
        Message.assistant("", [ToolCall("c2", "get_order", {"order_id": "ord_77"})]),
        Message.tool("z" * 300, "c2"),
    ]
    cleared = clear_tool_results(messages, keep_last=0)
    assert "issue_refund" in cleared[2].content and "re_3KxT9" in cleared[2].content
    assert "ord_77" in cleared[2].content and "ids" not in cleared[4].content
    assert clear_tool_results(cleared, keep_last=0) == cleared  # already cleared: left alone
    custom = clear_tool_results(messages, keep_last=1, placeholder=lambda m: f"<gone {m.tool_call_id}>")
    assert custom[2].content == "<gone c1>" and custom[4] == messages[4]
    with pytest.raises(InvalidInputError):
        clear_tool_results(messages, keep_last=-1)
    with pytest.raises(InvalidInputError, match="placeholder template"):
        clear_tool_results(messages, keep_last=0, placeholder="[{tool}]")


# --- the summary schema ------------------------------------------------------------------------------

ITEM = st.text(max_size=30)
TOKEN = st.text(st.characters(blacklist_categories=["Zs", "Cc", "Zl", "Zp"]), min_size=1, max_size=8).filter(
    lambda s: s.strip() == s and "," not in s and not re.search(r"\s", s)
)


@st.composite
def summaries(draw: st.DrawFn) -> StructuredSummary:
    tool = draw(st.text(min_size=1, max_size=12).filter(lambda s: s.strip() and "\n" not in s and ": " not in s))
    data = {
        "goal": draw(ITEM),
        "plan": draw(st.lists(ITEM, max_size=3)),
        "facts": draw(st.lists(ITEM, max_size=3)),
        "side_effects": [
            {"tool": tool, "what": draw(ITEM), "ids": draw(st.lists(TOKEN, max_size=3))}
            for _ in range(draw(st.integers(0, 2)))
        ],
        "constraints": draw(st.lists(ITEM, max_size=3)),
        "open_questions": draw(st.lists(ITEM, max_size=2)),
        "files": draw(st.lists(ITEM, max_size=2)),
    }
    return StructuredSummary.validate(data)


@settings(max_examples=scaled(300))
@given(summaries())
def test_render_parse_round_trip(summary: StructuredSummary) -> None:
    assert StructuredSummary.parse(summary.render()) == summary
    assert StructuredSummary.validate(json.dumps(summary.to_dict())) == summary


def test_render_survives_tricky_text() -> None:
    summary = StructuredSummary.validate(
        {
            "goal": "line one\n## not a heading\n- not an item\n\n  indented",
            "side_effects": [
                {"tool": "t", "what": "ends like (ids: x)", "ids": []},
                {"tool": "u:", "what": "", "ids": ["a)", "#1"]},
            ],
        }
    )
    assert StructuredSummary.parse(summary.render()) == summary
    trimmed = "\n".join(line.rstrip() for line in summary.render().split("\n"))
    assert StructuredSummary.parse(trimmed) == summary


def test_validate_lists_every_problem() -> None:
    with pytest.raises(SummaryValidationError) as caught:
        StructuredSummary.validate(
            {
                "goal": 3,
                "facts": "one fact",
                "constraint": ["typo"],
                "side_effects": [{"what": "x"}, {"tool": "t", "ids": ["has space"]}],
            }
        )
    problems = caught.value.problems
    assert len(problems) == 5 and isinstance(caught.value, InvalidInputError)
    assert any("constraint" in p for p in problems) and any("goal" in p for p in problems)
    for garbage in ["I summarised it for you!", "{not json}", "[1, 2]"]:
        with pytest.raises(SummaryValidationError):
            StructuredSummary.validate(garbage)
    fenced = '```json\n{"goal": "g", "facts": ["f", "f", " "]}\n```'
    assert StructuredSummary.validate(fenced) == StructuredSummary(goal="g", facts=["f"])
    with pytest.raises(SummaryValidationError, match="unknown section"):
        StructuredSummary.parse("## Mood\n- fine")


def test_merge_keeps_goal_constraints_and_pools_ids() -> None:
    earlier = StructuredSummary(
        goal="original",
        constraints=["Never X."],
        side_effects=[SideEffect("deploy", "v1", ["#1"])],
        plan=["a"],
    )
    later = StructuredSummary(
        goal="restated",
        constraints=["never x"],
        side_effects=[SideEffect("deploy", "v1", ["#2"])],
        facts=["f"],
    )
    merged = merge(earlier, later)
    assert merged.goal == "original" and merged.constraints == ["Never X."] and merged.plan == ["a"]
    assert merged.side_effects == [SideEffect("deploy", "v1", ["#1", "#2"])] and merged.facts == ["f"]
    assert merge(None, later) == later and merge(earlier, None) == earlier
    close = StructuredSummary(constraints=["Never refund more than 500 EUR."])
    assert len(merge(StructuredSummary(constraints=["Never refund more than 200 EUR."]), close).constraints) == 2


def test_fill_gaps_adds_only_what_a_restatement_left_out() -> None:
    earlier = StructuredSummary(
        goal="original",
        constraints=["Never X.", "Always Y."],
        side_effects=[SideEffect("deploy", "v1", ["#1", "#2"]), SideEffect("notify", "pinged", [])],
        facts=["old fact"],
        files=["a.py"],
    )
    restated = StructuredSummary(
        constraints=["never x", "Do not do X ever."],
        side_effects=[SideEffect("deploy", "deployed version one (#1)", ["#2"])],
        facts=["new fact"],
    )
    filled = fill_gaps(restated, earlier)
    assert filled.goal == "original" and filled.constraints == ["never x", "Do not do X ever.", "Always Y."]
    assert filled.side_effects == [*restated.side_effects, SideEffect("notify", "pinged", [])]
    assert filled.facts == ["old fact", "new fact"] and filled.files == ["a.py"]
    assert fill_gaps(filled, earlier) == filled  # folding again adds nothing
    critical = fill_gaps(StructuredSummary(), earlier, CRITICAL_FIELDS)
    assert critical.facts == [] and critical.constraints == earlier.constraints


# --- the extractive summariser -----------------------------------------------------------------------


def test_extractive_summary_finds_constraints_side_effects_files_and_questions() -> None:
    messages = [
        Message.user("Set up the release for app v2. Can you also check config/settings.yaml?"),
        Message.assistant("Sure. I will:\n1. build\n2. deploy to staging"),
        Message.user(
            "Make sure tests pass first! Avoid Friday deploys; I prefer small PRs.\nCould you use only staging?"
        ),
        Message.assistant(
            "",
            [
                ToolCall("a", "github.create_pull_request", {"branch": "rel-2"}),
                ToolCall("b", "deployService", {"env": "staging"}),
                ToolCall("c", "http_request", {"method": "POST", "url": "/hooks"}),
                ToolCall("d", "list_deployments", {}),
                ToolCall("e", "run_sql", {"sql": "INSERT INTO audit VALUES (1)"}),
            ],
        ),
        Message.tool('{"number": 45, "html_url": "https://git.example/pr/45", "title": "PR-45"}', "a"),
        Message.tool("Deployed. deployment id: 4c1f2a9e-2b1d-4f7e-9a43-0c5d2e8b7f61", "b"),
        Message.tool("ok, hook_id=hk_9921", "c"),
        Message.tool(json.dumps([{"id": f"dep_{i}"} for i in range(50)]), "d"),
        Message.tool("1 row inserted, ref #881", "e"),
        Message.assistant("Staging is green. Edited src/release.py as well."),
        Message.user("What about production?"),
    ]
    summary = extractive_summarize(messages)
    assert summary.goal == messages[0].content
    assert summary.constraints == [
        "Make sure tests pass first!",
        "Avoid Friday deploys; I prefer small PRs.",
        "Could you use only staging?",
    ]
    ids = {e.tool: e.ids for e in summary.side_effects}
    assert set(ids) == {"github.create_pull_request", "deployService", "http_request", "run_sql"}
    assert {"45", "https://git.example/pr/45", "PR-45"} <= set(ids["github.create_pull_request"])
    assert ids["deployService"] == ["4c1f2a9e-2b1d-4f7e-9a43-0c5d2e8b7f61"]
    assert "hk_9921" in ids["http_request"] and "#881" in ids["run_sql"]
    assert summary.plan == ["build", "deploy to staging"]
    assert summary.files == ["config/settings.yaml", "src/release.py"]
    assert summary.open_questions == ["What about production?"]
    assert "Staging is green." in summary.facts and any("50 items" in f for f in summary.facts)


@pytest.mark.parametrize(
    ("name", "args", "expected"),
    [
        ("create_order", {}, True),
        ("get_created_orders", {}, False),
        ("sendEmail", {}, True),
        ("mcp__stripe__refund_charge", {}, True),
        ("search", {}, False),
        ("open_pull_request", {}, True),
        ("openFile", {}, False),
        ("http", {"method": "delete"}, True),
        ("db", {"query": "select 1"}, False),
    ],
)
def test_side_effect_detection(name: str, args: dict, expected: bool) -> None:
    assert is_side_effecting(name, args) is expected


def test_extract_ids_formats_and_secrets() -> None:
    text = "Booked: order_id=7781, ref #123, PR-45, ord_abc, 123e4567-e89b-12d3-a456-426614174000, code is XK7"
    assert extract_ids(text) == [
        "123e4567-e89b-12d3-a456-426614174000",
        "#123",
        "PR-45",
        "ord_abc",
        "7781",
        "XK7",
    ]
    assert extract_ids('{"id": "cus_1", "api_key": "sk_live_abc123"}') == ["cus_1"]


# --- the LLM summariser ------------------------------------------------------------------------------


class ScriptedLLM:
    def __init__(self, *answers: str | dict | Exception) -> None:
        self.answers = list(answers)
        self.prompts: list[str] = []

    def __call__(self, prompt: str) -> str | dict:
        self.prompts.append(prompt)
        answer = self.answers.pop(0)
        if isinstance(answer, Exception):
            raise answer
        return answer


VALID = json.dumps({"goal": "g", "facts": ["searched the docs"], "constraints": ["Never use the v1 API."]})


@pytest.mark.parametrize(
    ("answers", "origin", "calls"),
    [
        ((VALID,), ORIGIN_LLM, 1),
        (("garbage", VALID), ORIGIN_LLM_RETRY, 2),
        (({"goal": 1}, json.loads(VALID)), ORIGIN_LLM_RETRY, 2),
        (("garbage", "more garbage"), ORIGIN_FALLBACK, 2),
        ((TimeoutError("model down"),), ORIGIN_FALLBACK, 1),
    ],
)
def test_llm_summary_retries_once_then_falls_back(answers: tuple, origin: str, calls: int) -> None:
    llm = ScriptedLLM(*answers)
    summary = summarize_with_llm(long_session(2), llm)
    assert summary.origin == origin and len(llm.prompts) == calls
    if calls == 2:
        assert "rejected" in llm.prompts[1] and llm.prompts[1].startswith(llm.prompts[0])
    if origin == ORIGIN_FALLBACK:
        assert summary == extractive_summarize(long_session(2))
    else:
        assert summary.facts == ["searched the docs"]


def test_llm_summary_through_compaction_keeps_the_earlier_summary() -> None:
    first = compact_transcript(long_session(), max_turns=5)
    forgetful = ScriptedLLM(json.dumps({"goal": "?", "facts": ["new fact"]}))
    more = [*first.messages, Message.user("one"), Message.user("two"), Message.user("three")]
    second = compact_transcript(more, max_turns=2, summarizer=llm_summarizer(forgetful))
    assert second.summary is not None and second.summary.origin == ORIGIN_LLM
    assert "Earlier summary:" in forgetful.prompts[0]
    assert second.summary.goal == first.summary.goal
    assert second.summary.constraints == ["Never use the v1 API."] and "new fact" in second.summary.facts


def test_llm_prompt_cuts_bulky_results() -> None:
    llm = ScriptedLLM(VALID)
    messages = [
        Message.user("go"),
        Message.assistant("", [ToolCall("c", "read", {})]),
        Message.tool("x" * 9000, "c"),
    ]
    summarize_with_llm(messages, llm)
    assert len(llm.prompts[0]) < 5000 and "chars cut" in llm.prompts[0]
