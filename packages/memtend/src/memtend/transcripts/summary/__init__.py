"""Structured summaries of a transcript: the schema, its text form, and two summarisers.

A :class:`StructuredSummary` keeps what an agent needs to carry on after the older part of a
conversation is dropped: the goal, the plan, facts learned, side effects done (with the ids they
returned, so nothing is repeated unknowingly), the user's constraints, open questions and files.

* ``schema``: ``StructuredSummary.validate(obj)`` reads a dict or JSON text (an LLM's answer) and raises
  :class:`SummaryValidationError` listing every problem; ``render()`` gives the text put in the
  transcript and ``StructuredSummary.parse`` reads it back (``parse(s.render()) == s`` for any
  validated summary); the summary message and :func:`coerce_summary`.
* ``merging``: :func:`merge` and :func:`fill_gaps`.
* ``quoting``: :func:`guard_summary` (every summary: secrets masked, instructions from tool output left out) and
  :func:`tool_result_fact` (a tool result quoted and attributed).
* ``extractive``: :func:`extractive_summarize` works offline with no model (rules described on the function);
  ``ids``: :func:`extract_ids`.
* ``llm``: :func:`summarize_with_llm` (and :func:`asummarize_with_llm` for an async model) asks a text model
  for the JSON, retries once with the validation error, then falls back to the extractive summariser;
  ``summary.origin`` records which path was taken.

Pure: no storage, no I/O besides calling the model callable it is given.
"""

from memtend.transcripts.summary.extractive import (
    CONSTRAINTS_PER_MESSAGE,
    FACTS_PER_PASS,
    extract_constraints,
    extractive_summarize,
    is_side_effecting,
)
from memtend.transcripts.summary.ids import extract_ids
from memtend.transcripts.summary.llm import (
    LLM,
    PROMPT,
    AsyncLLM,
    AsyncSummarizer,
    Summarizer,
    allm_summarizer,
    asummarize_with_llm,
    build_prompt,
    llm_summarizer,
    render_for_prompt,
    summarize_with_llm,
)
from memtend.transcripts.summary.merging import CRITICAL_FIELDS, fill_gaps, merge
from memtend.transcripts.summary.quoting import guard_summary, tool_result_fact
from memtend.transcripts.summary.schema import (
    MAX_FACTS,
    MAX_FILES,
    MAX_OPEN_QUESTIONS,
    MAX_PLAN,
    ORIGIN_CUSTOM,
    ORIGIN_EXTRACTIVE,
    ORIGIN_FALLBACK,
    ORIGIN_LLM,
    ORIGIN_LLM_RETRY,
    ORIGIN_PARSED,
    SUMMARY_HEADER,
    SideEffect,
    StructuredSummary,
    SummaryValidationError,
    coerce_summary,
    is_summary_message,
    read_summary_message,
    summary_message,
)

__all__ = [
    "CONSTRAINTS_PER_MESSAGE",
    "CRITICAL_FIELDS",
    "FACTS_PER_PASS",
    "LLM",
    "MAX_FACTS",
    "MAX_FILES",
    "MAX_OPEN_QUESTIONS",
    "MAX_PLAN",
    "ORIGIN_CUSTOM",
    "ORIGIN_EXTRACTIVE",
    "ORIGIN_FALLBACK",
    "ORIGIN_LLM",
    "ORIGIN_LLM_RETRY",
    "ORIGIN_PARSED",
    "PROMPT",
    "SUMMARY_HEADER",
    "AsyncLLM",
    "AsyncSummarizer",
    "SideEffect",
    "StructuredSummary",
    "Summarizer",
    "SummaryValidationError",
    "allm_summarizer",
    "asummarize_with_llm",
    "build_prompt",
    "coerce_summary",
    "extract_constraints",
    "extract_ids",
    "extractive_summarize",
    "fill_gaps",
    "guard_summary",
    "is_side_effecting",
    "is_summary_message",
    "llm_summarizer",
    "merge",
    "read_summary_message",
    "render_for_prompt",
    "summarize_with_llm",
    "summary_message",
    "tool_result_fact",
]
