"""Structured summaries of a transcript: the schema, its text form, and two summarisers.

A :class:`StructuredSummary` keeps what an agent needs to carry on after the older part of a
conversation is dropped: the goal, the plan, facts learned, side effects done (with the ids they
returned, so nothing is repeated unknowingly), the user's constraints, open questions and files.

* ``StructuredSummary.validate(obj)`` reads a dict or JSON text (an LLM's answer) and raises
  :class:`SummaryValidationError` listing every problem; ``render()`` gives the text put in the
  transcript and ``StructuredSummary.parse`` reads it back (``parse(s.render()) == s`` for any
  validated summary).
* :func:`extractive_summarize` works offline with no model: rules described on the function.
* :func:`summarize_with_llm` asks a text model for the JSON, retries once with the validation error,
  then falls back to the extractive summariser; ``summary.origin`` records which path was taken.

Pure: no storage, no I/O besides calling the model callable it is given.
"""

from __future__ import annotations

import json
import logging
import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field, replace
from typing import Any

from memtend.errors import InvalidInputError
from memtend.transcript import Message, ensure_messages

log = logging.getLogger(__name__)

# Where a summary came from (StructuredSummary.origin).
ORIGIN_EXTRACTIVE = "extractive"
ORIGIN_LLM = "llm"
ORIGIN_LLM_RETRY = "llm-retry"
ORIGIN_FALLBACK = "extractive-fallback"
ORIGIN_PARSED = "parsed"
ORIGIN_CUSTOM = "custom"

# Bounds on the parts of a summary that may be shortened; constraints, side effects and the goal
# are never cut.
MAX_FACTS = 30
MAX_PLAN = 15
MAX_OPEN_QUESTIONS = 10
MAX_FILES = 40
FACTS_PER_PASS = 12
# A pasted document full of "must" is not a list of instructions: at most this many per message.
CONSTRAINTS_PER_MESSAGE = 10

SUMMARY_HEADER = "[Conversation summary so far, {turns} turns]"
_HEADER_RE = re.compile(r"^\[Conversation summary so far, (\d+) turns?\]\s*(?:\n|$)")


class SummaryValidationError(InvalidInputError):
    """A summary (an LLM's answer, a dict, or rendered text) does not fit the schema.

    ``problems`` lists every problem found, each naming the field.
    """

    def __init__(self, problems: list[str]) -> None:
        self.problems = list(problems)
        super().__init__("invalid summary: " + "; ".join(self.problems))


@dataclass
class SideEffect:
    """A tool call that changed something outside the conversation."""

    tool: str
    what: str = ""
    ids: list[str] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return {"tool": self.tool, "what": self.what, "ids": list(self.ids)}


_LIST_FIELDS = ("plan", "facts", "constraints", "open_questions", "files")
_FIELDS = ("goal", "plan", "facts", "side_effects", "constraints", "open_questions", "files")
_SECTIONS = {  # render order
    "goal": "Goal",
    "constraints": "User constraints (always follow)",
    "side_effects": "Side effects already done (do not repeat)",
    "plan": "Plan",
    "facts": "Facts",
    "open_questions": "Open questions",
    "files": "Files",
}
_SECTION_FIELDS = {title: name for name, title in _SECTIONS.items()}
_NO_IDS = " (no ids)"
_IDS = " (ids: "


@dataclass
class StructuredSummary:
    """What the compacted part of a conversation leaves behind.

    ``goal`` the user's original request; ``plan`` remaining steps; ``facts`` results and decisions;
    ``side_effects`` what tools changed, with ids; ``constraints`` the user's instructions, in their
    words; ``open_questions`` user questions not answered yet; ``files`` paths mentioned. ``origin``
    (not compared, not rendered) says which summariser produced it (``ORIGIN_*``).
    """

    goal: str = ""
    plan: list[str] = field(default_factory=list)
    facts: list[str] = field(default_factory=list)
    side_effects: list[SideEffect] = field(default_factory=list)
    constraints: list[str] = field(default_factory=list)
    open_questions: list[str] = field(default_factory=list)
    files: list[str] = field(default_factory=list)
    origin: str = field(default="", compare=False)

    def to_dict(self) -> dict[str, Any]:
        """The JSON schema's shape (``origin`` is not part of it)."""
        out: dict[str, Any] = {"goal": self.goal}
        for name in _FIELDS[1:]:
            value = getattr(self, name)
            out[name] = [item.to_dict() for item in value] if name == "side_effects" else list(value)
        return out

    def is_empty(self) -> bool:
        return not any(getattr(self, name) for name in _FIELDS)

    def render(self) -> str:
        """Text for the transcript: ``## Section`` headings, ``- item`` lines, two-space continuations."""
        lines: list[str] = []
        for name, title in _SECTIONS.items():
            if name == "goal":
                items = [self.goal] if self.goal else []
            elif name == "side_effects":
                items = [_render_side_effect(effect) for effect in self.side_effects]
            else:
                items = getattr(self, name)
            if not items:
                continue
            lines.append(f"## {title}")
            for item in items:
                first, *rest = item.split("\n")
                lines.append(f"- {first}")
                lines.extend(f"  {line}" for line in rest)
        return "\n".join(lines)

    @classmethod
    def parse(cls, text: str) -> StructuredSummary:
        """Read what :meth:`render` wrote. Raises :class:`SummaryValidationError`."""
        if not isinstance(text, str):
            raise SummaryValidationError([f"expected rendered text, got {type(text).__name__}"])
        sections: dict[str, list[list[str]]] = {}
        current: list[list[str]] | None = None
        blanks = 0
        problems: list[str] = []
        for number, line in enumerate(text.split("\n"), start=1):
            if line.startswith("## "):
                title = line[3:].strip()
                if title not in _SECTION_FIELDS:
                    problems.append(f"line {number}: unknown section {title!r}")
                    current = None
                    continue
                current = sections.setdefault(_SECTION_FIELDS[title], [])
                blanks = 0
            elif line.startswith("- ") or line == "-":
                if current is None:
                    problems.append(f"line {number}: item outside a section")
                    continue
                current.append([line[2:]])
                blanks = 0
            elif line.startswith("  ") and current:
                current[-1].extend([""] * blanks + [line[2:]])
                blanks = 0
            elif not line.strip():
                blanks += 1
            else:
                problems.append(f"line {number}: expected '## Section', '- item' or an indented line")
        if problems:
            raise SummaryValidationError(problems)
        items = {name: ["\n".join(lines) for lines in found] for name, found in sections.items()}
        data: dict[str, Any] = {name: items.get(name, []) for name in _LIST_FIELDS}
        data["goal"] = "\n".join(items.get("goal", []))
        data["side_effects"] = [_parse_side_effect(item) for item in items.get("side_effects", [])]
        summary = cls.validate(data)
        summary.origin = ORIGIN_PARSED
        return summary

    @classmethod
    def validate(cls, obj: Any) -> StructuredSummary:
        """Build a summary from a StructuredSummary, a dict, or JSON text (code fences and prose
        around the object are tolerated). Strings are stripped, empty items dropped, duplicates
        removed. Raises :class:`SummaryValidationError` listing every problem."""
        if isinstance(obj, StructuredSummary):
            obj = obj.to_dict()
        if isinstance(obj, str):
            obj = _json_object(obj)
        if not isinstance(obj, Mapping):
            raise SummaryValidationError([f"expected a JSON object, got {type(obj).__name__}"])
        problems: list[str] = []
        unknown = sorted(str(key) for key in obj if key not in _FIELDS)
        if unknown:
            problems.append(f"unknown field(s) {unknown}; the fields are {list(_FIELDS)}")
        goal = obj.get("goal", "")
        if not isinstance(goal, str):
            problems.append(f"goal: expected a string, got {type(goal).__name__}")
            goal = ""
        lists = {name: _string_list(obj.get(name, []), name, problems) for name in _LIST_FIELDS}
        effects = _side_effects(obj.get("side_effects", []), problems)
        if problems:
            raise SummaryValidationError(problems)
        return cls(goal=goal.strip(), side_effects=effects, **lists)


def _json_object(text: str) -> Any:
    """The JSON in a model's answer: the whole text, else a fenced block, else the outermost braces."""
    body = text.strip()
    candidates = [body]
    fenced = re.search(r"```(?:json)?\s*(.*?)```", body, re.DOTALL)
    if fenced:
        candidates.append(fenced.group(1).strip())
    start, end = body.find("{"), body.rfind("}")
    if 0 <= start < end:
        candidates.append(body[start : end + 1])
    first_error = ""
    for candidate in candidates:
        try:
            return json.loads(candidate)
        except ValueError as exc:
            first_error = first_error or str(exc)
    if start < 0:
        raise SummaryValidationError(["the answer holds no JSON object"])
    raise SummaryValidationError([f"the answer is not valid JSON ({first_error})"])


def _string_list(value: Any, name: str, problems: list[str]) -> list[str]:
    if not isinstance(value, list):
        problems.append(f"{name}: expected a list of strings, got {type(value).__name__}")
        return []
    out: list[str] = []
    for i, item in enumerate(value):
        if not isinstance(item, str):
            problems.append(f"{name}[{i}]: expected a string, got {type(item).__name__}")
        elif item.strip():
            out.append(item.strip())
    return _dedupe(out)


def _side_effects(value: Any, problems: list[str]) -> list[SideEffect]:
    if not isinstance(value, list):
        problems.append(f"side_effects: expected a list of objects, got {type(value).__name__}")
        return []
    out: list[SideEffect] = []
    for i, item in enumerate(value):
        where = f"side_effects[{i}]"
        if not isinstance(item, Mapping):
            problems.append(f"{where}: expected an object with tool, what, ids")
            continue
        unknown = sorted(str(key) for key in item if key not in ("tool", "what", "ids"))
        if unknown:
            problems.append(f"{where}: unknown field(s) {unknown}; the fields are ['tool', 'what', 'ids']")
        tool, what, ids = item.get("tool"), item.get("what", ""), item.get("ids", [])
        if not isinstance(tool, str) or not tool.strip():
            problems.append(f"{where}.tool: expected a non-empty string")
            continue
        tool = tool.strip()
        if "\n" in tool or ": " in tool:
            problems.append(f"{where}.tool: must be one line without ': '")
        if not isinstance(what, str):
            problems.append(f"{where}.what: expected a string, got {type(what).__name__}")
            what = ""
        clean_ids: list[str] = []
        if not isinstance(ids, list):
            problems.append(f"{where}.ids: expected a list of strings, got {type(ids).__name__}")
            ids = []
        for j, raw in enumerate(ids):
            if isinstance(raw, bool) or not isinstance(raw, (str, int)):
                problems.append(f"{where}.ids[{j}]: expected a string, got {type(raw).__name__}")
                continue
            text = str(raw).strip()
            if not text or re.search(r"[\s,]", text):
                problems.append(f"{where}.ids[{j}]: an id is one non-empty token without spaces or commas")
                continue
            clean_ids.append(text)
        out.append(SideEffect(tool=tool, what=what.strip(), ids=_dedupe(clean_ids, fold=False)))
    return out


def _render_side_effect(effect: SideEffect) -> str:
    suffix = f"{_IDS}{', '.join(effect.ids)})" if effect.ids else _NO_IDS
    return f"{effect.tool}: {effect.what}{suffix}"


def _parse_side_effect(item: str) -> dict[str, Any]:
    tool, sep, rest = item.partition(": ")
    if not sep:
        return {"tool": tool, "what": "", "ids": []}
    if rest.endswith(_NO_IDS):
        return {"tool": tool, "what": rest[: -len(_NO_IDS)], "ids": []}
    what, sep, ids = rest.rpartition(_IDS)
    if sep and ids.endswith(")"):
        return {"tool": tool, "what": what, "ids": ids[:-1].split(", ")}
    return {"tool": tool, "what": rest, "ids": []}


def _norm(text: str) -> str:
    return " ".join(text.casefold().replace("’", "'").split()).rstrip(".!;")


def _dedupe(items: Iterable[str], *, fold: bool = True) -> list[str]:
    seen: set[str] = set()
    out: list[str] = []
    for item in items:
        key = _norm(item) if fold else item
        if key not in seen:
            seen.add(key)
            out.append(item)
    return out


# --- merging ---------------------------------------------------------------------------------------


def merge(earlier: StructuredSummary | None, later: StructuredSummary | None) -> StructuredSummary:
    """Fold ``later`` into ``earlier``: nothing of the earlier summary is lost except by the bounds.

    For two summaries of different stretches of a conversation (to fold a model's restatement of
    an earlier summary, use :func:`fill_gaps`). The goal stays the earlier one (the original
    request) unless it is empty. Constraints, side effects and files are unions; side effects of
    the same tool and description pool their ids. Constraints are deduplicated only when equal up
    to case, spacing and final punctuation: close wordings may differ in what matters (an amount,
    a day), so neither is dropped. The plan is the later one when it has one. Facts and open
    questions are unions keeping the newest within ``MAX_FACTS`` / ``MAX_OPEN_QUESTIONS``.
    """
    if earlier is None or later is None:
        found = later if earlier is None else earlier
        return _copy(found) if found is not None else StructuredSummary(origin=ORIGIN_EXTRACTIVE)
    effects: list[SideEffect] = []
    for effect in [*earlier.side_effects, *later.side_effects]:
        twin = next((e for e in effects if _same_effect(e, effect)), None)
        if twin is None:
            effects.append(SideEffect(effect.tool, effect.what, list(effect.ids)))
        else:
            twin.ids = _dedupe([*twin.ids, *effect.ids], fold=False)
    return StructuredSummary(
        goal=earlier.goal or later.goal,
        plan=(later.plan or earlier.plan)[-MAX_PLAN:],
        facts=_dedupe([*earlier.facts, *later.facts])[-MAX_FACTS:],
        side_effects=effects,
        constraints=_dedupe([*earlier.constraints, *later.constraints]),
        open_questions=_dedupe([*earlier.open_questions, *later.open_questions])[-MAX_OPEN_QUESTIONS:],
        files=_dedupe([*earlier.files, *later.files], fold=False)[-MAX_FILES:],
        origin=later.origin,
    )


def _same_effect(a: SideEffect, b: SideEffect) -> bool:
    return a.tool == b.tool and _norm(a.what) == _norm(b.what)


def _copy(summary: StructuredSummary) -> StructuredSummary:
    return replace(
        summary,
        plan=list(summary.plan),
        facts=list(summary.facts),
        side_effects=[SideEffect(e.tool, e.what, list(e.ids)) for e in summary.side_effects],
        constraints=list(summary.constraints),
        open_questions=list(summary.open_questions),
        files=list(summary.files),
    )


CRITICAL_FIELDS = ("goal", "constraints", "side_effects")


def fill_gaps(
    summary: StructuredSummary, reference: StructuredSummary, fields: Iterable[str] = _FIELDS
) -> StructuredSummary:
    """Add to ``summary`` what ``reference`` holds and ``summary`` leaves out; ``summary`` leads.

    Unlike :func:`merge` this expects ``summary`` to restate ``reference`` in its own words (a model
    that was shown the earlier summary), so it adds only what is missing and never doubles up:

    * goal and plan: the reference's when the summary has none;
    * constraints: each one not found word for word (up to case and spacing) is added, so the
      user's own wording is always there even beside a paraphrase;
    * side effects: ids not mentioned by any side effect are added back (with the reference's
      description); an id-less side effect is added when no side effect of that tool is there;
    * facts, open questions, files: missing ones are put first (they are older), within the bounds.

    ``fields`` limits which of these are filled (``CRITICAL_FIELDS``: goal, constraints, side effects).
    """
    wanted = set(fields)
    out = _copy(summary)
    if "goal" in wanted:
        out.goal = out.goal or reference.goal
    if "plan" in wanted:
        out.plan = out.plan or list(reference.plan)
    if "constraints" in wanted:
        said = _norm("\n".join(out.constraints))
        out.constraints = _dedupe([*out.constraints, *(c for c in reference.constraints if _norm(c) not in said)])
    if "side_effects" in wanted:
        for effect in reference.side_effects:
            mentioned = " ".join(f"{e.what} {' '.join(e.ids)}" for e in out.side_effects)
            missing = [i for i in effect.ids if not _mentions(mentioned, i)]
            if missing or (not effect.ids and all(e.tool != effect.tool for e in out.side_effects)):
                out.side_effects.append(SideEffect(effect.tool, effect.what, missing))
    for name, bound in (("facts", MAX_FACTS), ("open_questions", MAX_OPEN_QUESTIONS), ("files", MAX_FILES)):
        if name in wanted:
            setattr(out, name, _dedupe([*getattr(reference, name), *getattr(out, name)])[-bound:])
    return out


def _mentions(text: str, token: str) -> bool:
    return re.search(rf"(?<![\w#-]){re.escape(token)}(?![\w-])", text) is not None


# --- the summary message ----------------------------------------------------------------------------


def summary_message(summary: StructuredSummary, turns: int) -> Message:
    """The one user turn that stands for the compacted part of a transcript."""
    header = SUMMARY_HEADER.format(turns=turns)
    return Message.user(f"{header}\n{summary.render()}", metadata={"memtend": "summary", "turns": turns})


def read_summary_message(message: Message) -> tuple[int, StructuredSummary] | None:
    """``(turns, summary)`` when ``message`` is a summary message, else ``None``.

    Recognised by its header, so it survives frameworks that drop metadata. A body that no longer
    parses (edited by hand) is kept whole as one fact rather than lost.
    """
    if message.role != "user":
        return None
    match = _HEADER_RE.match(message.content)
    if match is None:
        return None
    body = message.content[match.end() :]
    try:
        summary = StructuredSummary.parse(body)
    except SummaryValidationError:
        summary = StructuredSummary(facts=[body.strip()] if body.strip() else [], origin=ORIGIN_PARSED)
    return int(match.group(1)), summary


def is_summary_message(message: Message) -> bool:
    return message.role == "user" and _HEADER_RE.match(message.content) is not None


# --- extractive summariser --------------------------------------------------------------------------

_CONSTRAINT_RE = re.compile(
    r"\b(must|mustn't|never|always|don't|do not|dont|only|without|avoid|prefer|preferably|rather than|"
    r"instead of|make sure|ensure|be sure|remember to|no more than|not more than|at most|at least|"
    r"under no circumstances|not allowed|forbidden|should|shouldn't|should not|need to|needs to|"
    r"have to|has to|required|stick to|keep it|keep them|keep all|keep every|limit|from now on|"
    r"going forward|refrain|no later than|before you|ask me before|check with me)\b",
    re.IGNORECASE,
)
_REQUEST_RE = re.compile(r"^(please|can you|could you|would you|will you)\b", re.IGNORECASE)
_SENTENCE_RE = re.compile(r"(?<=[.!?])\s+|\n+")

_WRITE_WORDS = """
create add insert post put patch update edit modify set write save upload append delete remove drop destroy
purge cancel send email mail notify message reply publish deploy release rollback merge push commit charge
pay refund transfer book reserve schedule place purchase buy submit approve reject close assign invite
register provision launch start stop restart terminate kill revoke grant archive rename move copy apply
enable disable upsert import sync transition comment label tag subscribe unsubscribe
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

_ID_KEY_RE = re.compile(
    r"(^|_)(id|ids|uuid|number|no|ref|reference|confirmation|confirmation_code|booking_code|"
    r"sha|commit|url|html_url|permalink)$|[a-z](Id|ID|Ids|IDs|Number|Ref|Url)$"
)
_ID_PATTERNS = [
    re.compile(r"\b[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}\b"),
    re.compile(r"(?<![\w#&])#\d{1,10}\b"),
    re.compile(r"\b[A-Z][A-Z0-9]{1,9}-\d{1,9}\b"),
    re.compile(r"\b[a-z][a-z0-9]{1,5}_(?=[A-Za-z0-9]*[\dA-Z])[A-Za-z0-9]{3,40}\b"),
    re.compile(r"\b[a-z]{2,3}_[a-z0-9]{3,40}\b"),
]
_KEYED_ID_RE = re.compile(
    r"\b(?:[A-Za-z]+[ _-])?(?:id|ID|Id|number|no|ref|reference|code|confirmation)(?:\s*[=:]\s*|\s+is\s+)"
    r"[\"']?([A-Za-z0-9][\w\-./#]{1,63})"
)
_SECRET_KEY_RE = re.compile(r"(secret|token|password|passwd|api_?key|private|credential)", re.I)
_PATH_RE = re.compile(
    r"(?<![\w/.:@-])((?:~|\.{1,2})?/?(?:[\w.-]+/)*[\w-][\w.-]*\.(?:py|pyi|js|mjs|cjs|ts|tsx|jsx|md|rst|txt|"
    r"json|jsonl|ya?ml|toml|cfg|ini|conf|env|csv|tsv|sql|sh|bash|html|css|scss|go|rs|java|kt|rb|php|c|h|"
    r"cc|cpp|hpp|cs|swift|log|lock|xml|ipynb|pdf|png|jpe?g|gif|svg|docx?|xlsx?|pptx?|zip|gz|tar|parquet|"
    r"proto|tf|dockerfile))\b|(?<![\w.:@-])((?:~|\.{1,2})?/(?:[\w.-]+/)+[\w.-]+)"
)
_URL_RE = re.compile(r"\b[a-z][a-z0-9+.-]*://\S+", re.I)
_FILLER_RE = re.compile(
    r"^(sure|ok|okay|great|thanks|thank you|got it|let me|i'll|i will|i'm going to|now i|next i|"
    r"here is|here's|alright|perfect|done|sounds good|no problem|understood)\b",
    re.IGNORECASE,
)
_LIST_ITEM_RE = re.compile(r"^\s*(?:\d+[.)]|[-*•])\s+(.+)$")
_ERROR_RE = re.compile(r"\b(error|failed|failure|exception|denied|forbidden|not found|invalid)\b", re.I)


def _sentences(text: str) -> list[str]:
    return [s.strip() for s in _SENTENCE_RE.split(text) if s and s.strip()]


def _is_constraint(sentence: str) -> bool:
    normal = sentence.replace("’", "'")
    if not _CONSTRAINT_RE.search(normal):
        return False
    return not normal.rstrip().endswith("?") or bool(_REQUEST_RE.match(normal))


def _user_constraints(text: str) -> list[str]:
    return [s for s in _sentences(text) if _is_constraint(s)][:CONSTRAINTS_PER_MESSAGE]


def _words(name: str) -> list[str]:
    spaced = re.sub(r"([a-z0-9])([A-Z])", r"\1 \2", name)
    return [w for w in re.split(r"[^A-Za-z0-9]+", spaced.lower()) if w]


def is_side_effecting(name: str, arguments: Mapping[str, Any]) -> bool:
    """Whether a tool call looks like it changes the world, from its name or its arguments.

    The first verb in the name decides (``create_order`` yes, ``get_created_orders`` no); with no
    known verb, an HTTP method of POST/PUT/PATCH/DELETE or a writing SQL statement in the
    arguments does.
    """
    words = _words(name)
    for i, word in enumerate(words):
        if word == "open":  # open_pull_request, open_ticket write; open_file, open_url read
            return words[i + 1 : i + 2] != [] and words[i + 1] not in _OPENED_TO_READ
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
    return False


def extract_ids(text: str, arguments: Mapping[str, Any] | None = None, limit: int = 12) -> list[str]:
    """Ids found in a tool result (and the id-like arguments of its call).

    Looked for: id-named JSON fields (``id``, ``order_id``, ``ticketNumber``, ``url``...), uuids,
    ``#123``, ``PR-45``-style keys, prefixed ids (``ord_abc``, ``ch_3Nx9``), and ``key=value`` /
    ``reference: X`` / ``id is X`` in text. Values under secret-looking keys are skipped.
    """
    found: list[str] = []
    if arguments:
        _ids_from_json(arguments, found, depth=0)
    try:
        data = json.loads(text)
    except ValueError:
        data = None
    if isinstance(data, (dict, list)):
        _ids_from_json(data, found, depth=0)
    plain = _URL_RE.sub(" ", "\n".join(_json_strings(data)) if isinstance(data, (dict, list)) else text)
    for pattern in _ID_PATTERNS:
        found.extend(pattern.findall(plain))
    found.extend(match.group(1) for match in _KEYED_ID_RE.finditer(plain))
    cleaned = [i.strip().rstrip(".,;:)]}'\"") for i in found]
    return _dedupe([i for i in cleaned if i and not re.search(r"[\s,]", i)], fold=False)[:limit]


def _ids_from_json(data: Any, found: list[str], depth: int) -> None:
    if depth > 3 or len(found) > 40:
        return
    if isinstance(data, list):
        for item in data[:10]:
            _ids_from_json(item, found, depth + 1)
        return
    if not isinstance(data, Mapping):
        return
    for key, value in data.items():
        if _SECRET_KEY_RE.search(str(key)):
            continue
        if _ID_KEY_RE.search(str(key)):
            values = value if isinstance(value, list) else [value]
            for item in values[:10]:
                if isinstance(item, (str, int)) and not isinstance(item, bool) and len(str(item)) <= 200:
                    found.append(str(item))
        elif isinstance(value, (dict, list)):
            _ids_from_json(value, found, depth + 1)


def _json_strings(data: Any, depth: int = 0) -> list[str]:
    """String values of a JSON document (not its keys), bounded."""
    if depth > 4:
        return []
    if isinstance(data, str):
        return [data]
    if isinstance(data, list):
        return [s for item in data[:20] for s in _json_strings(item, depth + 1)]
    if isinstance(data, Mapping):
        return [
            s
            for key, value in data.items()
            if not _SECRET_KEY_RE.search(str(key))
            for s in _json_strings(value, depth + 1)
        ]
    return []


def _short(text: str, limit: int) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1].rstrip() + "…"


def _describe_call(name: str, arguments: Mapping[str, Any], result: Message | None) -> str:
    parts = []
    for key, value in arguments.items():
        if _SECRET_KEY_RE.search(key):
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
            if isinstance(v, (str, int, float, bool)) and not _SECRET_KEY_RE.search(str(k))
        ]
        sizes = [f"{k}: {len(v)} items" for k, v in data.items() if isinstance(v, list)]
        body = ", ".join(scalars[:6] + sizes[:2])
    elif isinstance(data, list):
        body = f"{len(data)} items"
    else:
        lines = [line for line in content.splitlines() if line.strip()]
        body = lines[0] if lines else ""
    return _short(f"{name} → {body}", 160) if body else None


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
    text = _URL_RE.sub(" ", text)
    return [a or b for a, b in _PATH_RE.findall(text)]


def extract_constraints(messages: Iterable[Message]) -> list[str]:
    """The user's constraint sentences, verbatim and in order (see :func:`extractive_summarize`);
    the constraints of summary messages among ``messages`` come first."""
    found: list[str] = []
    for message in ensure_messages(messages):
        summary = read_summary_message(message)
        if summary is not None:
            found.extend(summary[1].constraints)
        elif message.role == "user":
            found.extend(_user_constraints(message.content))
    return _dedupe(found)


def extractive_summarize(messages: Iterable[Message], earlier: StructuredSummary | None = None) -> StructuredSummary:
    """Summarise offline, with no model. Summary messages found in ``messages`` are folded in.

    * goal: the first user message, verbatim (the earlier summary's goal when there is one);
    * constraints: user sentences with a constraint marker (must, never, always, don't, only,
      without, avoid, prefer, make sure, should, at most...), verbatim, at most
      ``CONSTRAINTS_PER_MESSAGE`` per message; questions only when they are requests ("Could you
      make sure...?");
    * side effects: tool calls whose name or arguments look side-effecting (:func:`is_side_effecting`)
      with the ids of :func:`extract_ids` from their arguments and result;
    * facts: short declarative sentences of assistant turns and a one-line digest of each other
      tool result, the newest ``FACTS_PER_PASS``;
    * plan: the items of the last numbered or bulleted list the assistant wrote;
    * files: paths mentioned anywhere (URLs excluded);
    * open questions: user questions no assistant text followed before the next user turn.
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
            goal = goal or message.content.strip()
            sentences = _sentences(message.content)
            constraints.extend(_user_constraints(message.content))
            pending_questions = [s for s in sentences if s.endswith("?") and not _is_constraint(s)]
        elif message.role == "assistant":
            if message.content.strip():
                pending_questions = []
                facts.extend(_assistant_facts(message.content))
                listed = [m.group(1).strip() for m in map(_LIST_ITEM_RE.match, message.content.splitlines()) if m]
                plan = listed if len(listed) >= 2 else plan
            for call in message.tool_calls:
                files.extend(_files(json.dumps(call.arguments, default=str)))
                if not is_side_effecting(call.name, call.arguments):
                    continue
                side_effect_calls.add(call.id)
                result = results.get(call.id)
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
        plan=_dedupe(plan)[:MAX_PLAN],
        facts=_dedupe(facts)[-FACTS_PER_PASS:],
        side_effects=effects,
        constraints=_dedupe(constraints),
        open_questions=_dedupe(questions)[-MAX_OPEN_QUESTIONS:],
        files=_dedupe(files, fold=False)[-MAX_FILES:],
    )
    summary = merge(earlier, current)
    summary.origin = ORIGIN_EXTRACTIVE
    return summary


# --- LLM summariser ----------------------------------------------------------------------------------

LLM = Callable[[str], str | Mapping[str, Any]]
Summarizer = Callable[[list[Message], StructuredSummary | None], StructuredSummary | Mapping[str, Any] | str]

PROMPT = """You are compacting the older part of a conversation between a user and an AI agent, so the
agent can go on with the task without it. Answer with ONLY a JSON object of exactly this shape:
{"goal": "...", "plan": ["..."], "facts": ["..."],
 "side_effects": [{"tool": "...", "what": "...", "ids": ["..."]}],
 "constraints": ["..."], "open_questions": ["..."], "files": ["..."]}
Rules:
- goal: the user's original request.
- constraints: EVERY instruction or preference the user gave (must, never, always, only, avoid,
  prefer, ...), in the user's own words. Never drop one.
- side_effects: every tool call that changed something outside the conversation (created, sent,
  deleted, charged, deployed, ...), with EVERY id it returned (order ids, ticket and PR numbers,
  uuids, references) copied exactly. An id is one token without spaces or commas.
- plan: the remaining steps. facts: results and decisions still needed later, short.
- open_questions: user questions not answered yet. files: file paths mentioned or touched.
- Fold the earlier summary in: keep all of its constraints and side effects.
"""


def render_for_prompt(messages: Iterable[Message], max_result_chars: int = 2000) -> str:
    """The transcript as plain lines for a model prompt; long tool results are cut."""
    lines = []
    for message in ensure_messages(messages):
        if message.role == "tool":
            content = message.content
            if len(content) > max_result_chars:
                content = content[:max_result_chars] + f" …[{len(message.content) - max_result_chars} chars cut]"
            lines.append(f"[tool result {message.name or ''} {message.tool_call_id}] {content}")
            continue
        if message.content:
            lines.append(f"[{message.role}] {message.content}")
        lines.extend(
            f"[assistant calls {call.name} {call.id}] {json.dumps(call.arguments, default=str)}"
            for call in message.tool_calls
        )
    return "\n".join(lines)


def build_prompt(messages: Iterable[Message], earlier: StructuredSummary | None) -> str:
    parts = [PROMPT]
    if earlier is not None and not earlier.is_empty():
        parts.append("Earlier summary:\n" + earlier.render())
    parts.append("Conversation to compact:\n" + render_for_prompt(messages))
    return "\n\n".join(parts)


def summarize_with_llm(
    messages: Iterable[Message], llm: LLM, earlier: StructuredSummary | None = None
) -> StructuredSummary:
    """Ask ``llm`` (prompt text in, JSON text or a dict out) for a summary.

    An answer that fails :meth:`StructuredSummary.validate` is retried once with the problems
    appended to the prompt; a second failure, or the model raising, falls back to
    :func:`extractive_summarize`. ``origin`` is ``llm``, ``llm-retry`` or ``extractive-fallback``.
    The earlier summary fills what the answer left out (:func:`fill_gaps`), so its goal, constraints
    and side-effect ids survive whatever the model did.
    """
    items = ensure_messages(messages)
    for message in items:
        found = read_summary_message(message)
        if found is not None:
            earlier = merge(earlier, found[1])
    fresh = [m for m in items if not is_summary_message(m)]
    prompt = build_prompt(fresh, earlier)
    for origin in (ORIGIN_LLM, ORIGIN_LLM_RETRY):
        try:
            answer = llm(prompt)
        except Exception as exc:  # a failing model must not break compaction
            log.warning("summary model raised %s: %s; using the extractive summary", type(exc).__name__, exc)
            break
        try:
            summary = StructuredSummary.validate(answer)
        except SummaryValidationError as exc:
            log.info("summary model answer rejected (%s)", exc)
            prompt = (
                f"{prompt}\n\nYour previous answer was rejected: {'; '.join(exc.problems)}.\n"
                "Answer again with only the JSON object, fixing these problems."
            )
            continue
        folded = fill_gaps(summary, earlier) if earlier is not None else summary
        folded.origin = origin
        return folded
    summary = extractive_summarize(fresh, earlier)
    summary.origin = ORIGIN_FALLBACK
    return summary


def llm_summarizer(llm: LLM) -> Summarizer:
    """Adapt a text model callable into a summariser for ``compact_transcript``."""

    def summarize(messages: list[Message], earlier: StructuredSummary | None) -> StructuredSummary:
        return summarize_with_llm(messages, llm, earlier)

    return summarize


def coerce_summary(result: Any) -> StructuredSummary:
    """Turn what a summariser returned into a summary.

    A StructuredSummary or dict is validated; text is read as JSON, else as rendered summary text,
    else (prose from a plain text summariser) kept whole as one fact.
    """
    if isinstance(result, StructuredSummary):
        summary = StructuredSummary.validate(result)
        summary.origin = result.origin or ORIGIN_CUSTOM
        return summary
    if isinstance(result, str):
        stripped = result.strip()
        if stripped.startswith(("{", "```")):
            summary = StructuredSummary.validate(stripped)
        elif stripped.startswith("## "):
            summary = StructuredSummary.parse(stripped)
        else:
            summary = StructuredSummary(facts=[stripped] if stripped else [])
        summary.origin = ORIGIN_CUSTOM
        return summary
    if isinstance(result, Mapping):
        summary = StructuredSummary.validate(result)
        summary.origin = ORIGIN_CUSTOM
        return summary
    raise InvalidInputError(f"a summarizer must return a StructuredSummary, dict or str, not {type(result).__name__}")
