"""The summary schema: :class:`StructuredSummary`, its validation, its text form, and the summary message.

* ``StructuredSummary.validate(obj)`` reads a dict or JSON text (an LLM's answer) and raises
  :class:`SummaryValidationError` listing every problem; ``render()`` gives the text put in the
  transcript and ``StructuredSummary.parse`` reads it back (``parse(s.render()) == s`` for any
  validated summary).
* :func:`summary_message` is the one user turn standing for a compacted part of a transcript;
  :func:`read_summary_message` reads it back.
* :func:`coerce_summary` turns what any summariser returned into a summary.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from memtend.errors import InvalidInputError
from memtend.transcripts.messages import Message

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
FIELDS = ("goal", "plan", "facts", "side_effects", "constraints", "open_questions", "files")
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
        for name in FIELDS[1:]:
            value = getattr(self, name)
            out[name] = [item.to_dict() for item in value] if name == "side_effects" else list(value)
        return out

    def is_empty(self) -> bool:
        return not any(getattr(self, name) for name in FIELDS)

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
        unknown = sorted(str(key) for key in obj if key not in FIELDS)
        if unknown:
            problems.append(f"unknown field(s) {unknown}; the fields are {list(FIELDS)}")
        goal = obj.get("goal", "")
        if not isinstance(goal, str):
            problems.append(f"goal: expected a string, got {type(goal).__name__}")
            goal = ""
        lists = {
            name: _string_list(obj.get(name, []), name, problems) for name in _LIST_FIELDS if name != "constraints"
        }
        lists["constraints"] = _constraints(obj.get("constraints", []), problems)
        effects = _side_effects(obj.get("side_effects", []), problems)
        if problems:
            raise SummaryValidationError(problems)
        return cls(
            goal=goal.strip(),
            plan=lists["plan"],
            facts=lists["facts"],
            side_effects=effects,
            constraints=lists["constraints"],
            open_questions=lists["open_questions"],
            files=lists["files"],
        )


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
    return dedupe(out)


def _constraints(value: Any, problems: list[str]) -> list[str]:
    """Constraints: strings, or ``{"text": ..., "replaces": ...}`` for one that revises an earlier constraint.

    The constraint a revision replaces is no longer in force: any copy of it in the list gives way to one copy
    marked replaced (:data:`~memtend.transcripts.summary.constraints.REPLACED`), put where it stood, or before
    its revision when the answer did not list it; so it is never presented as current, and an earlier summary
    holding it cannot bring it back as current.
    """
    from memtend.transcripts.summary.constraints import REPLACED

    if not isinstance(value, list):
        problems.append(f"constraints: expected a list, got {type(value).__name__}")
        return []
    items: list[tuple[str, str]] = []  # (text, what it replaces or "")
    for i, item in enumerate(value):
        where = f"constraints[{i}]"
        if isinstance(item, str):
            items.append((item.strip(), ""))
            continue
        if not isinstance(item, Mapping):
            problems.append(f"{where}: expected a string or an object with text and replaces")
            continue
        unknown = sorted(str(key) for key in item if key not in ("text", "replaces"))
        if unknown:
            problems.append(f"{where}: unknown field(s) {unknown}; the fields are ['text', 'replaces']")
        text, replaces = item.get("text"), item.get("replaces", "")
        if not isinstance(text, str) or not text.strip():
            problems.append(f"{where}.text: expected a non-empty string")
            continue
        if not isinstance(replaces, str):
            problems.append(f"{where}.replaces: expected the text of the constraint it replaces")
            continue
        if replaces.strip() and norm(replaces) == norm(text):
            problems.append(f"{where}.replaces: a constraint cannot replace itself")
            continue
        items.append((text.strip(), replaces.strip().removesuffix(REPLACED)))
    gone = {norm(old) for _, old in items if old}
    out: list[str] = []
    for text, old in items:
        if not text:
            continue
        if norm(text.removesuffix(REPLACED)) in gone:
            out.append(text.removesuffix(REPLACED) + REPLACED)
            continue
        if old and not any(norm(t.removesuffix(REPLACED)) == norm(old) for t, _ in items):
            out.append(old + REPLACED)
        out.append(text)
    return dedupe(out)


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
        out.append(SideEffect(tool=tool, what=what.strip(), ids=dedupe(clean_ids, fold=False)))
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


def norm(text: str) -> str:
    return " ".join(text.casefold().replace("’", "'").split()).rstrip(".!;")


def dedupe(items: Iterable[str], *, fold: bool = True) -> list[str]:
    seen: set[str] = set()
    out: list[str] = []
    for item in items:
        key = norm(item) if fold else item
        if key not in seen:
            seen.add(key)
            out.append(item)
    return out


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
