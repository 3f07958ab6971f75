"""The framework-neutral message model: validation and the dict / OpenAI / Anthropic converters."""

from __future__ import annotations

import itertools
import json

import pytest
from conftest import scaled
from hypothesis import given, settings
from hypothesis import strategies as st
from memtend.errors import InvalidInputError
from memtend.transcripts.messages import (
    Message,
    ToolCall,
    from_anthropic,
    from_dicts,
    from_openai,
    to_anthropic,
    to_dicts,
    to_openai,
    transcript_problems,
    validate_transcript,
)

TEXT = st.text(max_size=40)
JSON_SCALARS = st.none() | st.booleans() | st.integers(-(10**9), 10**9) | st.text(max_size=10)
JSON_VALUES = st.recursive(
    JSON_SCALARS,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner, max_size=3),
    max_leaves=6,
)
ARGUMENTS = st.dictionaries(st.text(max_size=8), JSON_VALUES, max_size=3)


@st.composite
def transcripts(draw: st.DrawFn, *, with_extras: bool = False) -> list[Message]:
    """Valid transcripts: one optional leading system message, user turns, assistant turns with
    0-3 tool calls each answered (in any order) by tool messages. ``with_extras`` adds message ids,
    names, metadata and system messages in the middle (only the dict form keeps those)."""
    ids = itertools.count()
    extras = (
        {
            "id": draw(st.none() | st.text(min_size=1, max_size=8).filter(str.strip)),
            "metadata": draw(st.dictionaries(st.text(max_size=5), JSON_VALUES, max_size=2)),
        }
        if with_extras
        else {}
    )
    messages: list[Message] = []
    if draw(st.booleans()):
        messages.append(Message.system(draw(TEXT)))
    for _ in range(draw(st.integers(1, 5))):
        messages.append(Message.user(draw(TEXT), **extras))
        for _ in range(draw(st.integers(0, 3))):
            calls = [
                ToolCall(f"call_{next(ids)}", draw(st.sampled_from(["search", "create_order", "read"])), args)
                for args in draw(st.lists(ARGUMENTS, max_size=3))
            ]
            messages.append(Message.assistant(draw(TEXT), calls, **extras))
            for call in draw(st.permutations(calls)):
                messages.append(Message.tool(draw(TEXT), call.id, name=call.name))
        if with_extras and draw(st.booleans()):
            messages.append(Message.system(draw(TEXT), name="note", **extras))
    return messages


# --- the model -------------------------------------------------------------------------------------


def test_message_defaults_and_constructors() -> None:
    call = ToolCall("c1", "create_order", {"sku": "A1"})
    message = Message.assistant("ok", [call])
    assert message.tool_calls == [call] and message.metadata == {} and message.id is None
    assert Message.tool("{}", "c1").tool_call_id == "c1"
    assert Message("assistant", tool_calls=[{"id": "c2", "name": "x", "arguments": {}}]).tool_calls[0].id == "c2"


@pytest.mark.parametrize(
    ("build", "fragment"),
    [
        (lambda: Message("bot", "hi"), "unknown role"),
        (lambda: Message("tool", "result"), "tool_call_id"),
        (lambda: Message("user", "x", tool_call_id="c1"), "only tool messages"),
        (lambda: Message("user", "x", tool_calls=[ToolCall("c", "t")]), "only assistant"),
        (lambda: Message("assistant", "", [ToolCall("c", "t"), ToolCall("c", "u")]), "duplicate"),
        (lambda: Message("user", None), "content"),  # type: ignore[arg-type]
        (lambda: Message("user", "x", metadata=[]), "metadata"),  # type: ignore[arg-type]
        (lambda: Message("user", "x", name=""), "name"),
        (lambda: ToolCall("", "t"), "tool call id"),
        (lambda: ToolCall("c", "t", arguments="{}"), "arguments"),  # type: ignore[arg-type]
        (lambda: Message.from_dict({"role": "user", "contnet": "x"}), "unknown field"),
        (lambda: Message.from_dict({"content": "x"}), "missing 'role'"),
        (lambda: Message.from_dict("hi"), "expected a dict"),
    ],
)
def test_bad_messages_raise_invalid_input(build, fragment: str) -> None:
    with pytest.raises(InvalidInputError, match=fragment):
        build()


def test_structure_problems_are_listed() -> None:
    ok = [Message.user("hi"), Message.assistant("", [ToolCall("c1", "t")]), Message.tool("r", "c1")]
    assert transcript_problems(ok) == []
    assert validate_transcript(ok) == ok
    orphan = [Message.user("hi"), Message.tool("r", "nope")]
    assert "answers no pending call" in transcript_problems(orphan)[0]
    split = [Message.user("a"), Message.assistant("", [ToolCall("c1", "t")]), Message.user("b")]
    with pytest.raises(InvalidInputError, match="user turn before results"):
        validate_transcript([*split, Message.tool("r", "c1")])
    with pytest.raises(InvalidInputError, match="expected a memtend Message"):
        validate_transcript([{"role": "user", "content": "x"}])  # type: ignore[list-item]


# --- JSON --------------------------------------------------------------------------------------------


@settings(max_examples=scaled(150))
@given(transcripts(with_extras=True))
def test_dict_round_trip_through_json(messages: list[Message]) -> None:
    data = json.loads(json.dumps(to_dicts(messages)))
    assert from_dicts(data) == messages


def test_dict_form_rejects_unserialisable_metadata() -> None:
    with pytest.raises(InvalidInputError, match="not JSON-serialisable"):
        Message.user("x", metadata={"when": object()}).to_dict()


# --- OpenAI ------------------------------------------------------------------------------------------


@settings(max_examples=scaled(150))
@given(transcripts())
def test_openai_round_trip(messages: list[Message]) -> None:
    wire = json.loads(json.dumps(to_openai(messages)))
    assert from_openai(wire) == messages


def test_openai_shape() -> None:
    messages = [
        Message.system("be brief"),
        Message.user("order one"),
        Message.assistant("", [ToolCall("call_1", "create_order", {"sku": "A1", "qty": 2})]),
        Message.tool('{"id": "ord_1"}', "call_1", name="create_order"),
    ]
    wire = to_openai(messages)
    assert wire[2] == {
        "role": "assistant",
        "content": None,
        "tool_calls": [
            {
                "id": "call_1",
                "type": "function",
                "function": {"name": "create_order", "arguments": '{"sku": "A1", "qty": 2}'},
            }
        ],
    }
    assert wire[3] == {"role": "tool", "tool_call_id": "call_1", "content": '{"id": "ord_1"}'}


def test_from_openai_reads_parts_developer_and_empty_arguments() -> None:
    messages = from_openai(
        [
            {"role": "developer", "content": "rules"},
            {"role": "user", "content": [{"type": "text", "text": "look"}, {"type": "image_url"}]},
            {
                "role": "assistant",
                "content": None,
                "tool_calls": [{"id": "c", "type": "function", "function": {"name": "ping", "arguments": ""}}],
            },
        ]
    )
    assert messages[0].role == "system" and to_openai(messages)[0]["role"] == "developer"
    assert messages[1].content == "look\n[image_url]"
    assert messages[2].tool_calls == [ToolCall("c", "ping", {})]


@pytest.mark.parametrize(
    ("wire", "fragment"),
    [
        ([{"role": "robot", "content": "x"}], r"messages\[0\]: unknown role"),
        ([{"role": "tool", "content": "x"}], "tool_call_id"),
        ([{"role": "function", "name": "f", "content": "x"}], "legacy 'function'"),
        (
            [
                {
                    "role": "assistant",
                    "tool_calls": [{"id": "c", "function": {"name": "f", "arguments": "{oops"}}],
                }
            ],
            "not valid JSON",
        ),
        (
            [
                {
                    "role": "assistant",
                    "tool_calls": [{"id": "c", "function": {"name": "f", "arguments": "[1]"}}],
                }
            ],
            "JSON object",
        ),
        ([{"role": "assistant", "tool_calls": [{"id": "c"}]}], "function"),
        (["hello"], "expected a dict"),
        ({"role": "user"}, "expected a list"),
    ],
)
def test_from_openai_errors(wire, fragment: str) -> None:
    with pytest.raises(InvalidInputError, match=fragment):
        from_openai(wire)


# --- Anthropic ---------------------------------------------------------------------------------------


@settings(max_examples=scaled(150))
@given(transcripts())
def test_anthropic_round_trip(messages: list[Message]) -> None:
    system, wire = to_anthropic(messages)
    wire = json.loads(json.dumps(wire))
    assert from_anthropic(wire, system=system) == messages


def test_anthropic_shape_groups_tool_results_in_one_user_turn() -> None:
    messages = [
        Message.system("be brief"),
        Message.user("check both"),
        Message.assistant("Checking.", [ToolCall("t1", "get_a", {}), ToolCall("t2", "get_b", {"x": 1})]),
        Message.tool("A", "t1", name="get_a"),
        Message.tool("B", "t2", name="get_b", metadata={"is_error": True}),
        Message.assistant("Done."),
    ]
    system, wire = to_anthropic(messages)
    assert system == "be brief"
    assert wire[1]["content"][2] == {"type": "tool_use", "id": "t2", "name": "get_b", "input": {"x": 1}}
    assert wire[2] == {
        "role": "user",
        "content": [
            {"type": "tool_result", "tool_use_id": "t1", "content": "A"},
            {"type": "tool_result", "tool_use_id": "t2", "content": "B", "is_error": True},
        ],
    }
    assert from_anthropic(wire, system=system) == messages


def test_from_anthropic_reads_block_lists_and_mixed_user_turns() -> None:
    messages = from_anthropic(
        [
            {"role": "user", "content": [{"type": "text", "text": "hi"}, {"type": "image"}]},
            {
                "role": "assistant",
                "content": [
                    {"type": "thinking", "thinking": "..."},
                    {"type": "tool_use", "id": "u1", "name": "f"},
                ],
            },
            {
                "role": "user",
                "content": [
                    {"type": "tool_result", "tool_use_id": "u1", "content": [{"type": "text", "text": "42"}]},
                    {"type": "text", "text": "thanks"},
                ],
            },
        ],
        system=[{"type": "text", "text": "sys"}],
    )
    assert [m.role for m in messages] == ["system", "user", "assistant", "tool", "user"]
    assert messages[1].content == "hi\n[image]"
    assert messages[3] == Message.tool("42", "u1", name="f")
    assert messages[4].content == "thanks"


@pytest.mark.parametrize(
    ("wire", "fragment"),
    [
        ([{"role": "system", "content": "x"}], "system goes separately"),
        ([{"role": "user", "content": [{"type": "tool_result", "content": "x"}]}], "tool_use_id"),
        ([{"role": "assistant", "content": [{"type": "tool_use", "id": "u", "name": ""}]}], "name"),
        ([{"role": "user", "content": [42]}], "content block"),
    ],
)
def test_from_anthropic_errors(wire, fragment: str) -> None:
    with pytest.raises(InvalidInputError, match=fragment):
        from_anthropic(wire)


# --- anything else is refused cleanly ----------------------------------------------------------------

WIRE_KEYS = ("role", "content", "tool_calls", "tool_call_id", "name", "id", "function", "arguments", "type")
WIRE_KEYS += ("text", "input", "tool_use_id", "is_error", "metadata")
WIRE_VALUES = st.recursive(
    JSON_SCALARS | st.sampled_from(["user", "assistant", "tool", "system", "text", "tool_use", "tool_result"]),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.sampled_from(WIRE_KEYS), inner, max_size=5),
    max_leaves=12,
)
WIRE_MESSAGES = st.lists(
    st.fixed_dictionaries(
        {"role": st.sampled_from(["user", "assistant", "tool", "system", "developer", "bot"])},
        optional={key: WIRE_VALUES for key in WIRE_KEYS if key != "role"},
    ),
    max_size=4,
)


@settings(max_examples=scaled(400))
@given(WIRE_MESSAGES | WIRE_VALUES)
def test_converters_accept_or_raise_invalid_input(data: object) -> None:
    for read in (from_openai, from_anthropic, from_dicts):
        try:
            messages = read(data)  # type: ignore[arg-type]
        except InvalidInputError:
            continue
        assert all(isinstance(m, Message) for m in messages)
