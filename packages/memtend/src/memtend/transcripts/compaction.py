"""Transcript compaction: cut at a safe point, summarise the older part, clear old tool results.

Pure functions over ``list[Message]`` (see :mod:`memtend.transcripts.messages`); nothing here stores anything.

* :func:`count_tokens` — the default, offline token estimate.
* :func:`safe_cut_points` — where a kept tail may start.
* :func:`compact_transcript` — replaces the older part with ONE user turn holding a structured
  summary, and reports the user's constraints separately; :func:`acompact_transcript` is the same with a
  summariser that may be async.
* :func:`clear_tool_results` — replaces bulky old tool results by a short placeholder.

The original goal (the first user message) is kept **in the summary's goal field, verbatim**
rather than as a separate message: the compacted transcript is then ``system messages, one summary
turn, the kept tail``, which every chat format accepts, and a very long first message does not
defeat compaction. The goal travels from summary to summary, so it survives any number of
compactions, whatever the summariser wrote in that field.
"""

from __future__ import annotations

import json
import math
from collections.abc import Awaitable, Callable, Generator, Iterable
from dataclasses import dataclass, field, replace
from typing import Any

from memtend.arguments import check_callable, describe
from memtend.errors import InvalidInputError
from memtend.transcripts.messages import Message, ensure_messages
from memtend.transcripts.summary import (
    CRITICAL_FIELDS,
    AsyncSummarizer,
    StructuredSummary,
    Summarizer,
    coerce_summary,
    extract_constraints,
    extract_ids,
    extractive_summarize,
    fill_gaps,
    guard_summary,
    is_side_effecting,
    is_summary_message,
    merge,
    read_summary_message,
    summary_message,
)

TokenCounter = Callable[[list[Message]], int]

CHARS_PER_TOKEN = 4
MESSAGE_OVERHEAD_TOKENS = 4
TOOL_CALL_OVERHEAD_TOKENS = 3
DEFAULT_KEEP_RECENT_TURNS = 3

DEFAULT_PLACEHOLDER = "[tool result cleared to save space: {name} ({tool_call_id}), {chars} chars{ids_note}]"


def count_tokens(messages: Iterable[Message]) -> int:
    """Estimate the tokens of ``messages`` without a tokenizer.

    Each message costs ``MESSAGE_OVERHEAD_TOKENS`` (role and framing) plus ``ceil(chars / 4)`` of
    its content and name; each tool call adds ``TOOL_CALL_OVERHEAD_TOKENS`` plus ``ceil(chars / 4)``
    of its name and JSON arguments. Four characters a token is about right for English prose and
    JSON with GPT- and Claude-style tokenizers (within roughly ±30%); pass a ``token_counter`` to
    :func:`compact_transcript` when an exact count matters.
    """
    total = 0
    for message in ensure_messages(messages):
        chars = len(message.content) + len(message.name or "")
        total += MESSAGE_OVERHEAD_TOKENS + math.ceil(chars / CHARS_PER_TOKEN)
        for call in message.tool_calls:
            call_chars = len(call.name) + len(json.dumps(call.arguments, default=str))
            total += TOOL_CALL_OVERHEAD_TOKENS + math.ceil(call_chars / CHARS_PER_TOKEN)
    return total


def count_turns(messages: Iterable[Message]) -> int:
    """User turns, not counting summary messages."""
    return sum(1 for m in messages if m.role == "user" and not is_summary_message(m))


def safe_cut_points(messages: Iterable[Message]) -> list[int]:
    """Indices where a kept tail may start, ascending.

    ``i`` is safe when ``messages[i]`` is a user turn and no assistant tool call before ``i`` has a
    result at ``i`` or later: an assistant turn and all the results of its calls end up on the same
    side. Results answering no call (orphans) do not block anything.
    """
    items = ensure_messages(messages)
    issued: dict[str, int] = {}
    blocked = [0] * (len(items) + 1)  # difference array over the indices a call/result span covers
    for i, message in enumerate(items):
        if message.role == "assistant":
            for call in message.tool_calls:
                issued[call.id] = i
        elif message.role == "tool" and message.tool_call_id in issued:
            start = issued[message.tool_call_id]
            blocked[start + 1] += 1
            blocked[i + 1] -= 1
    points: list[int] = []
    depth = 0
    for i, message in enumerate(items):
        depth += blocked[i]
        if message.role == "user" and depth == 0:
            points.append(i)
    return points


@dataclass
class CompactionResult:
    """What :func:`compact_transcript` did.

    ``messages`` is the new transcript (the input, copied, when nothing was compacted); ``summary``
    the summary now standing for the removed part (``None`` when not compacted); ``constraints`` every
    user constraint known (from summaries and from the kept messages), for an adapter to put in
    the system prompt on every turn; ``removed`` how many messages the summary replaced; ``reason``
    why it compacted (``turns``, ``tokens``, ``forced``) or why not; ``max_tokens`` the token budget it was given
    (None without one), so ``utilisation`` (tokens before / the budget) tells how full the context was when it ran.
    """

    messages: list[Message]
    summary: StructuredSummary | None
    constraints: list[str] = field(default_factory=list)
    compacted: bool = False
    removed: int = 0
    tokens_before: int = 0
    tokens_after: int = 0
    reason: str = ""
    max_tokens: int | None = None

    @property
    def utilisation(self) -> float | None:
        """The share of the token budget the transcript used before compaction (None without a budget)."""
        return self.tokens_before / self.max_tokens if self.max_tokens else None


def _positive(name: str, value: int | None) -> None:
    if value is not None and (isinstance(value, bool) or not isinstance(value, int) or value < 1):
        raise InvalidInputError(f"{name} must be a positive integer or None, got {describe(value)}")


def compact_transcript(
    messages: Iterable[Message],
    *,
    max_turns: int | None = None,
    max_tokens: int | None = None,
    keep_recent_turns: int | None = None,
    keep_tokens: int | None = None,
    summarizer: Summarizer | None = None,
    token_counter: TokenCounter | None = None,
    force: bool = False,
    ensure_extracted: bool = True,
) -> CompactionResult:
    """Compact ``messages`` when they exceed ``max_turns`` user turns or ``max_tokens`` tokens.

    The cut is the earliest safe point (:func:`safe_cut_points`) whose tail holds at most
    ``keep_recent_turns`` turns (default ``min(3, max_turns)``) and at most ``keep_tokens`` tokens
    (default half of ``max_tokens``); when no safe point meets both, the latest one is used. Leading
    system messages stay first, system messages of the removed part follow them verbatim, then ONE
    user turn ``[Conversation summary so far, N turns]`` with the rendered summary, then the tail.
    The result may still exceed ``max_tokens`` when the last turn alone does; use
    :func:`clear_tool_results` on it then.

    ``summarizer(messages, earlier)`` gets the removed messages (summary messages and system messages
    left out) and the earlier summary found among them, and returns a StructuredSummary, a dict, or
    text (see :func:`coerce_summary`); the default is :func:`extractive_summarize`. What it
    returns leads, and the earlier summary fills what it left out (:func:`fill_gaps`: goal,
    constraints, side-effect ids, and within bounds facts, questions, files); with
    ``ensure_extracted`` the user constraints and side-effect ids the extractive pass finds in the
    removed messages are added too when missing, so no summariser can lose them. The goal is then
    set to the original one.

    Raises ``InvalidInputError`` when no trigger is given (pass ``max_turns``, ``max_tokens`` or
    ``force=True``), a limit is not a positive integer, or a keep limit would re-trigger at once
    (``keep_recent_turns > max_turns``, ``keep_tokens >= max_tokens``), or ``summarizer`` is async (use
    :func:`acompact_transcript`).
    """
    if summarizer is not None:
        check_callable(summarizer, "summarizer")
    flow = _compaction(
        messages, max_turns, max_tokens, keep_recent_turns, keep_tokens, summarizer is not None,
        token_counter, force, ensure_extracted,
    )  # fmt: skip
    try:
        fresh, earlier = next(flow)
        assert summarizer is not None  # the flow asks only when there is one
        produced = summarizer(fresh, earlier)
        if isinstance(produced, Awaitable):
            close = getattr(produced, "close", None)
            if callable(close):
                close()  # no "never awaited" warning
            raise InvalidInputError(
                "summarizer is async: call acompact_transcript (and await it) to use an async summarizer"
            )
        flow.send(produced)
    except StopIteration as done:
        return done.value  # type: ignore[no-any-return]
    raise AssertionError("the compaction flow asks for one summary at most")


async def acompact_transcript(
    messages: Iterable[Message],
    *,
    max_turns: int | None = None,
    max_tokens: int | None = None,
    keep_recent_turns: int | None = None,
    keep_tokens: int | None = None,
    summarizer: Summarizer | AsyncSummarizer | None = None,
    token_counter: TokenCounter | None = None,
    force: bool = False,
    ensure_extracted: bool = True,
) -> CompactionResult:
    """:func:`compact_transcript` with a summariser that may be async (an :data:`AsyncSummarizer` such as
    :func:`allm_summarizer` gives, or a sync one); the same rules, limits and result."""
    if summarizer is not None:
        check_callable(summarizer, "summarizer")
    flow = _compaction(
        messages, max_turns, max_tokens, keep_recent_turns, keep_tokens, summarizer is not None,
        token_counter, force, ensure_extracted,
    )  # fmt: skip
    try:
        fresh, earlier = next(flow)
        assert summarizer is not None  # the flow asks only when there is one
        produced = summarizer(fresh, earlier)
        if isinstance(produced, Awaitable):
            produced = await produced
        flow.send(produced)
    except StopIteration as done:
        return done.value  # type: ignore[no-any-return]
    raise AssertionError("the compaction flow asks for one summary at most")


_SummaryRequest = tuple[list[Message], StructuredSummary | None]


def _checked_counter(token_counter: object) -> TokenCounter:
    """The caller's token counter, answering with an int >= 0 or raising InvalidInputError."""
    count = check_callable(token_counter, "token_counter")

    def counter(messages: list[Message]) -> int:
        n = count(messages)
        if not isinstance(n, int) or isinstance(n, bool) or n < 0:
            raise InvalidInputError(f"token_counter must return an int >= 0, got {describe(n)}")
        return n

    return counter


def _compaction(
    messages: Iterable[Message],
    max_turns: int | None,
    max_tokens: int | None,
    keep_recent_turns: int | None,
    keep_tokens: int | None,
    custom: bool,
    token_counter: TokenCounter | None,
    force: bool,
    ensure_extracted: bool,
) -> Generator[_SummaryRequest, Any, CompactionResult]:
    """The compaction, without the summariser call: yields ``(fresh, earlier)`` when a custom summariser must
    summarise (``custom``), is sent what it returned, and returns the result. One flow for sync and async."""
    items = ensure_messages(messages)
    for name, value in (
        ("max_turns", max_turns),
        ("max_tokens", max_tokens),
        ("keep_recent_turns", keep_recent_turns),
        ("keep_tokens", keep_tokens),
    ):
        _positive(name, value)
    if max_turns is None and max_tokens is None and not force:
        raise InvalidInputError("compact_transcript needs max_turns, max_tokens, or force=True")
    if max_turns is not None and keep_recent_turns is not None and keep_recent_turns > max_turns:
        raise InvalidInputError("keep_recent_turns must not exceed max_turns (it would compact every call)")
    if max_tokens is not None and keep_tokens is not None and keep_tokens >= max_tokens:
        raise InvalidInputError("keep_tokens must be below max_tokens (it would compact every call)")
    counter = _checked_counter(token_counter) if token_counter is not None else count_tokens
    tokens_before = counter(items)
    reason = ""
    if force:
        reason = "forced"
    elif max_turns is not None and count_turns(items) > max_turns:
        reason = "turns"
    elif max_tokens is not None and tokens_before > max_tokens:
        reason = "tokens"
    if not reason:
        return _unchanged(items, tokens_before, "under the limits", max_tokens)

    keep_turns = keep_recent_turns or min(DEFAULT_KEEP_RECENT_TURNS, max_turns or DEFAULT_KEEP_RECENT_TURNS)
    if keep_tokens is None and max_tokens is not None:
        keep_tokens = max(1, max_tokens // 2)
    start = next((i for i, m in enumerate(items) if m.role != "system"), len(items))
    cut = _choose_cut(items, start, keep_turns, keep_tokens, counter)
    if cut is None:
        return _unchanged(items, tokens_before, "no safe cut point", max_tokens)

    removed_part, tail = items[start:cut], items[cut:]
    earlier: StructuredSummary | None = None
    turns = 0
    for message in removed_part:
        found = read_summary_message(message)
        if found is not None:
            turns += found[0]
            earlier = merge(earlier, found[1])
    fresh = [m for m in removed_part if m.role != "system" and not is_summary_message(m)]
    turns += count_turns(fresh)

    if not custom:
        summary = extractive_summarize(fresh, earlier)
    else:
        produced = coerce_summary((yield fresh, earlier))
        summary = fill_gaps(produced, earlier) if earlier is not None else produced
        if ensure_extracted:
            # with the earlier summary, so the first message of ``fresh`` is not taken for the goal
            summary = fill_gaps(summary, extractive_summarize(fresh, earlier), CRITICAL_FIELDS)
        summary.origin = produced.origin
    goal = (earlier.goal if earlier else "") or next(
        (m.content.strip() for m in fresh if m.role == "user" and m.content.strip()), ""
    )
    summary.goal = goal or summary.goal
    # whatever summarised: secrets masked, tool output's instructions left out (the summary is a user turn)
    origin = summary.origin
    summary = guard_summary(summary, removed_part, earlier)
    summary.origin = origin

    kept_systems = [m for m in removed_part if m.role == "system"]
    new_messages = [*items[:start], *kept_systems, summary_message(summary, turns), *tail]
    return CompactionResult(
        messages=new_messages,
        summary=summary,
        constraints=extract_constraints(new_messages),
        compacted=True,
        removed=len(removed_part) - len(kept_systems),
        tokens_before=tokens_before,
        tokens_after=counter(new_messages),
        reason=reason,
        max_tokens=max_tokens,
    )


def _unchanged(items: list[Message], tokens: int, reason: str, max_tokens: int | None) -> CompactionResult:
    return CompactionResult(
        messages=list(items),
        summary=None,
        constraints=extract_constraints(items),
        compacted=False,
        tokens_before=tokens,
        tokens_after=tokens,
        reason=reason,
        max_tokens=max_tokens,
    )


def _choose_cut(
    items: list[Message], start: int, keep_turns: int, keep_tokens: int | None, counter: TokenCounter
) -> int | None:
    """The earliest safe cut whose tail fits the keep limits, else the latest one; None if none.

    A cut must leave something besides system and summary messages to summarise.
    """
    first = next(
        (i for i in range(start, len(items)) if items[i].role != "system" and not is_summary_message(items[i])),
        len(items),
    )
    candidates = [i for i in safe_cut_points(items) if i > first]
    if not candidates:
        return None
    # tail turns for each index, counted once from the end
    tail_turns = [0] * (len(items) + 1)
    for i in range(len(items) - 1, -1, -1):
        counts = items[i].role == "user" and not is_summary_message(items[i])
        tail_turns[i] = tail_turns[i + 1] + counts
    for i in candidates:
        if tail_turns[i] > keep_turns:
            continue
        if keep_tokens is None or counter(items[i:]) <= keep_tokens:
            return i
    return candidates[-1]


def clear_tool_results(
    messages: Iterable[Message],
    keep_last: int,
    placeholder: str | Callable[[Message], str] = DEFAULT_PLACEHOLDER,
) -> list[Message]:
    """Replace the content of all but the last ``keep_last`` tool results with a placeholder.

    The tool message itself stays (role, ``tool_call_id``, name, id), so every call still has its
    result and the transcript stays valid. ``placeholder`` is a template with ``{name}``,
    ``{tool_call_id}``, ``{chars}``, ``{ids}`` and ``{ids_note}`` (the ids a side-effecting call
    returned, so they are not lost with the result), or a callable taking the message. A result is
    only replaced when the placeholder is shorter; cleared results get ``metadata["memtend_cleared"]``.
    Returns a new list; the input and its messages are not changed (unchanged messages are shared).
    """
    items = ensure_messages(messages)
    if isinstance(keep_last, bool) or not isinstance(keep_last, int) or keep_last < 0:
        raise InvalidInputError(f"keep_last must be a non-negative integer, got {describe(keep_last)}")
    if isinstance(placeholder, str):
        try:
            placeholder.format(name="", tool_call_id="", chars=0, ids="", ids_note="")
        except (KeyError, IndexError, ValueError) as exc:
            raise InvalidInputError(
                f"placeholder template ({describe(placeholder)}) is invalid ({type(exc).__name__}); it may use "
                "{name}, {tool_call_id}, {chars}, {ids} and {ids_note}"
            ) from None
    elif not callable(placeholder):
        raise InvalidInputError("placeholder must be a template string or a callable")
    calls = {call.id: call for m in items for call in m.tool_calls}
    positions = [i for i, m in enumerate(items) if m.role == "tool"]
    out = list(items)
    for i in positions[: max(0, len(positions) - keep_last)]:
        message = items[i]
        if message.metadata.get("memtend_cleared"):
            continue
        call = calls.get(message.tool_call_id or "")
        name = message.name or (call.name if call else "tool")
        ids: list[str] = []
        if call is not None and is_side_effecting(call.name, call.arguments):
            ids = extract_ids(message.content, call.arguments)
        if callable(placeholder):
            text = placeholder(message)
        else:
            text = placeholder.format(
                name=name,
                tool_call_id=message.tool_call_id,
                chars=len(message.content),
                ids=", ".join(ids),
                ids_note=f"; ids: {', '.join(ids)}" if ids else "",
            )
        if len(text) < len(message.content):
            metadata = {**message.metadata, "memtend_cleared": True, "original_chars": len(message.content)}
            out[i] = replace(message, content=text, metadata=metadata)
    return out
