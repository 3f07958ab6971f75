"""Log compaction: keep the newest events verbatim, fold older ones (and earlier summaries) into one summary.

Pure: takes records, returns a plan and summary text. Transcript compaction lives in
:mod:`memtend.transcripts.compaction`.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import datetime, timezone

from memtend.errors import InvalidInputError
from memtend.records import Kind, Record

LogSummarizer = Callable[[Sequence[Record]], str]
# folds one memory whose window ended into one line (an LLM, or the extractive default ``one_line``)
LineSummarizer = Callable[[Record], str]

SUMMARY_HEADER = "Summary of {n} earlier events ({start} to {end})"
MAX_SUMMARY_CHARS = 6_000
_LINE_CHARS = 160
_SENTENCE_END = re.compile(r"(?<=[.!?])\s")


@dataclass(frozen=True)
class CompactionPlan:
    replaced: list[Record]  # events and earlier summaries the new summary replaces (oldest first)
    kept: list[Record]  # newest events, kept verbatim

    @property
    def needed(self) -> bool:
        return bool(self.replaced) and any(r.kind is Kind.EVENT for r in self.replaced)


def plan_compaction(log: Sequence[Record], keep_recent: int) -> CompactionPlan:
    """Split a user's active log (events and summaries) into what a new summary replaces and what stays."""
    if keep_recent < 0:
        raise InvalidInputError("keep_recent must be >= 0")
    ordered = sorted(log, key=lambda r: (r.created_at, r.id))
    events = [r for r in ordered if r.kind is Kind.EVENT]
    kept = events[len(events) - keep_recent :] if keep_recent else []
    kept_ids = {r.id for r in kept}
    replaced = [r for r in ordered if r.id not in kept_ids and r.kind in (Kind.EVENT, Kind.SUMMARY)]
    return CompactionPlan(replaced=replaced, kept=kept)


def provenance(replaced: Sequence[Record]) -> list[str]:
    """Every original record id a new summary stands for: earlier summaries pass on their own sources."""
    ids: list[str] = []
    for record in replaced:
        ids.append(record.id)
        if record.kind is Kind.SUMMARY:
            ids.extend(record.derived_from)
    return list(dict.fromkeys(ids))


def _day(ts: float) -> str:
    return datetime.fromtimestamp(ts, tz=timezone.utc).strftime("%Y-%m-%d")


def _first_sentence(text: str) -> str:
    line = " ".join(text.split())
    line = _SENTENCE_END.split(line, maxsplit=1)[0]
    return line if len(line) <= _LINE_CHARS else line[: _LINE_CHARS - 1].rstrip() + "…"


def extractive_summary(records: Sequence[Record]) -> str:
    """Offline default: earlier summaries verbatim, then one dated line per event, newest kept if space runs out."""
    events = [r for r in records if r.kind is Kind.EVENT]
    earlier = [r for r in records if r.kind is Kind.SUMMARY]
    if not records:
        return ""
    start = _day(min(r.created_at for r in records))
    end = _day(max(r.created_at for r in records))
    n = len(events) + sum(int(r.extra.get("events", 0)) for r in earlier)
    lines = [SUMMARY_HEADER.format(n=n, start=start, end=end) + ":"]
    lines += [r.text for r in earlier]
    body = [f"- [{_day(r.created_at)}] {_first_sentence(r.text)}" for r in events]
    budget = MAX_SUMMARY_CHARS - sum(len(line) + 1 for line in lines)
    chosen: list[str] = []
    for line in reversed(body):  # keep the newest lines when over budget
        if budget - len(line) - 1 < 0:
            chosen.append(f"- ({len(body) - len(chosen)} older events omitted)")
            break
        chosen.append(line)
        budget -= len(line) + 1
    return "\n".join(lines + list(reversed(chosen)))


def summarise(records: Sequence[Record], summarizer: LogSummarizer | None) -> str:
    text = (summarizer or extractive_summary)(records)
    if not isinstance(text, str) or not text.strip():
        raise InvalidInputError(
            f"the summarizer returned {type(text).__name__} {str(text)[:40]!r}; it must return a non-empty str"
        )
    return text


MAX_LINE_CHARS = 300  # what a folded line may hold, whoever wrote it


def one_line(record: Record) -> str:
    """Offline default for folding a memory into one line: its first sentence, dated when it was said."""
    return f"[{_day(record.created_at)}] {_first_sentence(record.text)}"


def fold_line(record: Record, summarizer: LineSummarizer | None) -> str:
    """The one line ``record`` folds into: the summariser's answer made one line within ``MAX_LINE_CHARS``, or the
    extractive line when there is no summariser or it fails (raises, or answers with no text)."""
    if summarizer is not None:
        try:
            answer = summarizer(record)
        except Exception:
            answer = None
        if isinstance(answer, str) and answer.strip():
            line = " ".join(answer.split())
            return line if len(line) <= MAX_LINE_CHARS else line[: MAX_LINE_CHARS - 1].rstrip() + "…"
    return one_line(record)


def shortens(record: Record, line: str) -> bool:
    """Whether folding into ``line`` leaves out anything: a memory already one short line is archived as it is."""
    return len(line) < len(" ".join(record.text.split()))
