"""Folding summaries together: :func:`merge` two stretches of a conversation, :func:`fill_gaps` of a restatement."""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import replace

from memtend.transcripts.summary.constraints import mark_replaced
from memtend.transcripts.summary.schema import (
    FIELDS,
    MAX_FACTS,
    MAX_FILES,
    MAX_OPEN_QUESTIONS,
    MAX_PLAN,
    ORIGIN_EXTRACTIVE,
    SideEffect,
    StructuredSummary,
    dedupe,
    norm,
)

__all__ = ["CRITICAL_FIELDS", "fill_gaps", "merge"]


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
            twin.ids = dedupe([*twin.ids, *effect.ids], fold=False)
    return StructuredSummary(
        goal=earlier.goal or later.goal,
        plan=(later.plan or earlier.plan)[-MAX_PLAN:],
        facts=dedupe([*earlier.facts, *later.facts])[-MAX_FACTS:],
        side_effects=effects,
        constraints=mark_replaced(dedupe([*earlier.constraints, *later.constraints])),
        open_questions=dedupe([*earlier.open_questions, *later.open_questions])[-MAX_OPEN_QUESTIONS:],
        files=dedupe([*earlier.files, *later.files], fold=False)[-MAX_FILES:],
        origin=later.origin,
    )


def _same_effect(a: SideEffect, b: SideEffect) -> bool:
    return a.tool == b.tool and norm(a.what) == norm(b.what)


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
    summary: StructuredSummary, reference: StructuredSummary, fields: Iterable[str] = FIELDS
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
        said = norm("\n".join(out.constraints))
        added = dedupe([*out.constraints, *(c for c in reference.constraints if norm(c) not in said)])
        out.constraints = mark_replaced(added)
    if "side_effects" in wanted:
        for effect in reference.side_effects:
            mentioned = " ".join(f"{e.what} {' '.join(e.ids)}" for e in out.side_effects)
            missing = [i for i in effect.ids if not _mentions(mentioned, i)]
            if missing or (not effect.ids and all(e.tool != effect.tool for e in out.side_effects)):
                out.side_effects.append(SideEffect(effect.tool, effect.what, missing))
    for name, bound in (("facts", MAX_FACTS), ("open_questions", MAX_OPEN_QUESTIONS), ("files", MAX_FILES)):
        if name in wanted:
            setattr(out, name, dedupe([*getattr(reference, name), *getattr(out, name)])[-bound:])
    return out


def _mentions(text: str, token: str) -> bool:
    return re.search(rf"(?<![\w#-]){re.escape(token)}(?![\w-])", text) is not None
