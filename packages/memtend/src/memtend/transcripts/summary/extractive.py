"""The extractive summariser: works offline with no model (rules described on :func:`extractive_summarize`)."""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping
from typing import Any

from memtend.transcripts.messages import Message, ensure_messages
from memtend.transcripts.summary.constraints import (
    PER_MESSAGE,
    is_instruction,
    list_items,
    mark_replaced,
    user_instructions,
)
from memtend.transcripts.summary.ids import SECRET_KEY_RE, URL_RE, extract_ids
from memtend.transcripts.summary.merging import merge
from memtend.transcripts.summary.quoting import guard_summary, tool_result_fact
from memtend.transcripts.summary.schema import (
    MAX_FILES,
    MAX_OPEN_QUESTIONS,
    MAX_PLAN,
    ORIGIN_EXTRACTIVE,
    SideEffect,
    StructuredSummary,
    dedupe,
    is_summary_message,
    norm,
    read_summary_message,
)

__all__ = ["extract_constraints", "extractive_summarize", "is_side_effecting"]

FACTS_PER_PASS = 12
# A pasted document full of "must" is not a list of instructions: at most this many per message.
CONSTRAINTS_PER_MESSAGE = PER_MESSAGE

_SENTENCE_RE = re.compile(r"(?<=[.!?])\s+|\n+")

_WRITE_WORDS = """
create add insert post put patch update edit modify set write save upload append delete remove drop destroy
purge cancel send email mail notify message reply publish deploy release rollback merge push commit charge
pay refund transfer book reserve schedule place purchase buy submit approve reject close assign invite
register provision launch start stop restart terminate kill revoke grant archive rename move copy apply
enable disable upsert import sync transition comment label tag subscribe unsubscribe generate issue enqueue
queue trigger order allocate renew lodge initiate mint execute invoke
"""
_READ_WORDS = """
get list search fetch read find query lookup look describe show check view count download inspect preview
estimate validate calculate compute summarize summarise browse retrieve
"""
_WRITE_VERBS = frozenset(_WRITE_WORDS.split())
_OPENED_WORDS = "file files url link page tab browser document doc image folder dir directory path"
_OPENED_TO_READ = frozenset(_OPENED_WORDS.split())
_READ_VERBS = frozenset(_READ_WORDS.split())
_WRITE_SQL_RE = re.compile(r"^\s*(insert|update|delete|create|drop|alter|truncate|merge|upsert)\b", re.I)
_WRITE_HTTP = frozenset({"POST", "PUT", "PATCH", "DELETE"})
_MADE_RE = re.compile(
    r"\b(?:created|queued|enqueued|accepted|placed|booked|generated|issued|scheduled|submitted|confirmed|filed"
    r"|registered|tagged|published|provisioned|reserved|sent|deleted|cancell?ed|is ready|are ready|succeeded"
    r"|completed)\b|\"(?:ok|success)\":\s*true",
    re.IGNORECASE,
)


_PATH_RE = re.compile(
    r"(?<![\w/.:@-])((?:~|\.{1,2})?/?(?:[\w.-]+/)*[\w-][\w.-]*\.(?:py|pyi|js|mjs|cjs|ts|tsx|jsx|md|rst|txt|"
    r"json|jsonl|ya?ml|toml|cfg|ini|conf|env|csv|tsv|sql|sh|bash|html|css|scss|go|rs|java|kt|rb|php|c|h|"
    r"cc|cpp|hpp|cs|swift|log|lock|xml|ipynb|pdf|png|jpe?g|gif|svg|docx?|xlsx?|pptx?|zip|gz|tar|parquet|"
    r"proto|tf|dockerfile))\b|(?<![\w.:@-])((?:~|\.{1,2})?/(?:[\w.-]+/)+[\w.-]+)"
)
_FILLER_RE = re.compile(
    r"^(sure|ok|okay|great|thanks|thank you|got it|let me|i'll|i will|i'm going to|now i|next i|"
    r"here is|here's|alright|perfect|done|sounds good|no problem|understood)\b",
    re.IGNORECASE,
)
_LIST_ITEM_RE = re.compile(r"^\s*(?:\d+[.)]|[-*•])\s+(.+)$")
_ERROR_RE = re.compile(r"\b(error|failed|failure|exception|denied|forbidden|not found|invalid)\b", re.I)


def _sentences(text: str) -> list[str]:
    return [s.strip() for s in _SENTENCE_RE.split(text) if s and s.strip()]


def _words(name: str) -> list[str]:
    spaced = re.sub(r"([a-z0-9])([A-Z])", r"\1 \2", name)
    return [w for w in re.split(r"[^A-Za-z0-9]+", spaced.lower()) if w]


def is_side_effecting(name: str, arguments: Mapping[str, Any], result: str | None = None) -> bool:
    """Whether a tool call looks like it changes the world, from its name, its arguments or its result.

    The first verb in the name decides (``create_order`` yes, ``get_created_orders`` no); with no
    known verb, an HTTP method of POST/PUT/PATCH/DELETE or a writing SQL statement in the
    arguments does, or a result that reports something made ("created", "queued", "accepted",
    ``"ok": true``...).
    """
    words = _words(name)
    for i, word in enumerate(words):
        if word == "open":  # open_pull_request, open_ticket write; open_file, open_url read
            return words[i + 1 : i + 2] != [] and words[i + 1] not in _OPENED_TO_READ
        if word == "file" and i == 0:  # file_claim, file_report write; file_search, file_list read
            return words[1:2] != [] and words[1] not in _READ_VERBS and words[1] not in _OPENED_TO_READ
        if word in _WRITE_VERBS:
            return True
        if word in _READ_VERBS:
            return False
    for key, value in arguments.items():
        if not isinstance(value, str):
            continue
        if key.lower() == "method" and value.upper() in _WRITE_HTTP:
            return True
        if _WRITE_SQL_RE.match(value):
            return True
    return result is not None and _MADE_RE.search(result[:400]) is not None


def _short(text: str, limit: int) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1].rstrip() + "…"


def _describe_call(name: str, arguments: Mapping[str, Any], result: Message | None) -> str:
    parts = []
    for key, value in arguments.items():
        if SECRET_KEY_RE.search(key):
            continue
        shown = value if isinstance(value, (str, int, float, bool)) else json.dumps(value, default=str)
        parts.append(f"{key}={_short(str(shown), 40)}")
    what = _short(f"{name}({', '.join(parts)})", 160)
    if result is None:
        return f"{what}; no result seen"
    failed = result.metadata.get("is_error") or _ERROR_RE.search(result.content[:300])
    return f"{what}; {'FAILED' if failed else 'done'}"


def _result_fact(name: str, content: str) -> str | None:
    try:
        data = json.loads(content)
    except ValueError:
        data = None
    if isinstance(data, dict):
        scalars = [
            f"{k}={_short(str(v), 40)}"
            for k, v in data.items()
            if isinstance(v, (str, int, float, bool)) and not SECRET_KEY_RE.search(str(k))
        ]
        sizes = [f"{k}: {len(v)} items" for k, v in data.items() if isinstance(v, list)]
        body = ", ".join(scalars[:6] + sizes[:2])
    elif isinstance(data, list):
        body = f"{len(data)} items"
    else:
        lines = [line for line in content.splitlines() if line.strip()]
        body = lines[0] if lines else ""
    # quoted and attributed to the tool (a summary is read as a user turn, and a tool's words are not the user's),
    # gated, instruction-like sentences left out
    return tool_result_fact(name, body) if body else None


def _assistant_facts(content: str) -> list[str]:
    out = []
    for sentence in _sentences(content):
        if (
            15 <= len(sentence) <= 200
            and not sentence.endswith("?")
            and not _FILLER_RE.match(sentence)
            and not _LIST_ITEM_RE.match(sentence)
        ):
            out.append(sentence)
    return out[:2]


def _files(text: str) -> list[str]:
    text = URL_RE.sub(" ", text)
    return [a or b for a, b in _PATH_RE.findall(text)]


def extract_constraints(messages: Iterable[Message]) -> list[str]:
    """The user's instructions, verbatim and in order (see :mod:`memtend.transcripts.summary.constraints`); the
    constraints of summary messages among ``messages`` come first; earlier versions of revised ones are marked
    as replaced."""
    found: list[str] = []
    goal = ""
    for message in ensure_messages(messages):
        summary = read_summary_message(message)
        if summary is not None:
            found.extend(summary[1].constraints)
            goal = goal or summary[1].goal
        elif message.role == "user":
            found.extend(user_instructions(message.content))
            goal = goal or message.content
    # The goal's own imperatives are the task, carried as the goal: not repeated here as constraints.
    task = {norm(s) for s in _sentences(goal)[:1] if not is_instruction(s, goal=True)}
    return mark_replaced(dedupe(c for c in found if norm(c) not in task))


def extractive_summarize(messages: Iterable[Message], earlier: StructuredSummary | None = None) -> StructuredSummary:
    """Summarise offline, with no model. Summary messages found in ``messages`` are folded in.

    * goal: the first user message, verbatim (the earlier summary's goal when there is one);
    * constraints: the user's instructions, verbatim, at most ``CONSTRAINTS_PER_MESSAGE`` per message
      (marker words, limits, prohibitions, asking first, preferences, imperatives; see
      :mod:`memtend.transcripts.summary.constraints`); earlier versions of revised ones marked as replaced;
    * side effects: tool calls whose name or arguments look side-effecting (:func:`is_side_effecting`)
      with the ids of :func:`extract_ids` from their arguments and result;
    * facts: short declarative sentences of assistant turns and a one-line digest of each other
      tool result, quoted and attributed to the tool, the newest ``FACTS_PER_PASS``;
    * plan: the items of the last numbered or bulleted list the assistant or the user wrote, whole and in order;
    * files: paths mentioned anywhere (URLs excluded);
    * open questions: user questions no assistant text followed before the next user turn.

    Then :func:`~memtend.transcripts.summary.quoting.guard_summary`: secrets masked, and text that reads like an
    instruction to the agent and is not the user's own left out (tool output is data, never the user speaking).
    """
    items = ensure_messages(messages)
    for message in items:
        found = read_summary_message(message)
        if found is not None:
            earlier = merge(earlier, found[1])
    results = {m.tool_call_id: m for m in items if m.role == "tool"}
    call_names = {call.id: call.name for m in items for call in m.tool_calls}
    goal = ""
    constraints: list[str] = []
    facts: list[str] = []
    effects: list[SideEffect] = []
    plan: list[str] = []
    files: list[str] = []
    questions: list[str] = []
    pending_questions: list[str] = []
    side_effect_calls: set[str] = set()
    for message in items:
        if is_summary_message(message):
            continue
        files.extend(_files(message.content) if message.role != "tool" else [])
        if message.role == "user":
            questions.extend(pending_questions)
            # the first user message states the task: its imperatives are the goal, not constraints on it
            is_goal = not goal and not (earlier is not None and earlier.goal)
            goal = goal or message.content.strip()
            sentences = _sentences(message.content)
            constraints.extend(user_instructions(message.content, goal=is_goal))
            plan = list_items(message.content) or plan  # a list the user gives is the plan, steps in order
            pending_questions = [s for s in sentences if s.endswith("?") and not is_instruction(s)]
        elif message.role == "assistant":
            if message.content.strip():
                pending_questions = []
                facts.extend(_assistant_facts(message.content))
                listed = [m.group(1).strip() for m in map(_LIST_ITEM_RE.match, message.content.splitlines()) if m]
                plan = listed if len(listed) >= 2 else plan
            for call in message.tool_calls:
                files.extend(_files(json.dumps(call.arguments, default=str)))
                result = results.get(call.id)
                if not is_side_effecting(call.name, call.arguments, result.content if result else None):
                    continue
                side_effect_calls.add(call.id)
                ids = extract_ids(result.content if result else "", call.arguments)
                effects.append(SideEffect(call.name, _describe_call(call.name, call.arguments, result), ids))
        elif message.role == "tool" and message.tool_call_id not in side_effect_calls:
            name = message.name or call_names.get(message.tool_call_id or "", "tool")
            fact = _result_fact(name, message.content)
            if fact:
                facts.append(fact)
    questions.extend(pending_questions)
    current = StructuredSummary(
        goal=goal,
        plan=dedupe(plan)[:MAX_PLAN],
        facts=dedupe(facts)[-FACTS_PER_PASS:],
        side_effects=effects,
        constraints=mark_replaced(dedupe(constraints)),
        open_questions=dedupe(questions)[-MAX_OPEN_QUESTIONS:],
        files=dedupe(files, fold=False)[-MAX_FILES:],
    )
    summary = guard_summary(merge(earlier, current), items, earlier)
    summary.origin = ORIGIN_EXTRACTIVE
    return summary
