"""Text features the ranking and the newest-wins rules read: dates a query names, "when" questions, speakers,
names, and what a statement asserts as values or announces as a change.

Pure: numpy and the standard library only. Each is computed once per record (kept by ``memtend.index.user_index``) or
once per query.
"""

from __future__ import annotations

import calendar
import datetime as dt
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from memtend.records import DAY

__all__ = [
    "NOT_NAMES",
    "DateSpan",
    "date_match",
    "has_time_words",
    "is_question",
    "is_when_question",
    "query_date_spans",
    "query_names",
    "speaker_name",
    "starts_sentence",
    "statement_body",
    "update_sentences",
    "value_tokens",
    "without_speaker",
]

_MONTHS = {name.lower(): i for i, name in enumerate(calendar.month_name) if name}
_MONTHS.update({name.lower(): i for i, name in enumerate(calendar.month_abbr) if name})
_MONTHS["sept"] = 9
_MONTH = r"(January|February|March|April|May|June|July|August|September|October|November|December|Jan|Feb|Mar|Apr|Jun|Jul|Aug|Sept|Sep|Oct|Nov|Dec)\.?"  # noqa: E501
_DAYNUM = r"(\d{1,2})(?:st|nd|rd|th)?"
_YEAR = r"((?:19|20)\d\d)"
_DATE_PATTERNS: tuple[tuple[str, re.Pattern[str]], ...] = (
    ("iso", re.compile(r"\b" + _YEAR + r"-(\d{1,2})-(\d{1,2})\b")),
    ("dmy", re.compile(r"\b" + _DAYNUM + r"\s+(?:of\s+)?" + _MONTH + r"(?:,?\s*" + _YEAR + r")?\b", re.I)),
    ("mdy", re.compile(r"\b" + _MONTH + r"\s+" + _DAYNUM + r"(?!\d)(?:\s*,\s*|\s+)?" + _YEAR + r"?\b", re.I)),
    ("my", re.compile(r"\b" + _MONTH + r",?\s+" + _YEAR + r"\b", re.I)),
    ("m", re.compile(r"\b" + _MONTH + r"(?![\w-])", re.I)),
    ("y", re.compile(r"\b" + _YEAR + r"\b")),
)
# A bare "May" is a month only after a preposition ("in May"), not as a verb ("May I ...").
_BARE_MAY = re.compile(r"\b(?:in|on|of|during|since|by|until|till|before|after|early|late|mid)\s+May\b", re.I)


@dataclass(frozen=True)
class DateSpan:
    """A stretch of time a query names, as epoch seconds ``[start, end)``, and how specific it is."""

    start: float
    end: float
    weight: float  # 1 for a day, less for a month, less again for a year


def query_date_spans(query: str, now: float, utc_offset_hours: float = 0.0) -> list[DateSpan]:
    """Days, months and years the query names ("on 8 May, 2023", "in June", "2022", "yesterday").

    A month or day without a year means the most recent one that has started by ``now``.
    """
    tz = dt.timezone(dt.timedelta(hours=utc_offset_hours))
    today = dt.datetime.fromtimestamp(now, tz).date()
    spans: list[DateSpan] = []
    taken: list[tuple[int, int]] = []

    def free(m: re.Match[str]) -> bool:
        return all(m.end() <= s or m.start() >= e for s, e in taken)

    for form, pattern in _DATE_PATTERNS:
        for m in pattern.finditer(query):
            if not free(m):
                continue
            span = _span(form, m.groups(), today, tz)
            bare_may = form == "m" and m.group(1).lower() == "may"
            if bare_may and not _BARE_MAY.search(query[max(0, m.start() - 12) : m.end()]):
                continue
            if span is not None:
                taken.append((m.start(), m.end()))
                spans.append(span)
    lowered = query.lower()
    for word, days_back in (("today", 0), ("yesterday", 1)):
        if re.search(rf"\b{word}\b", lowered):
            day = today - dt.timedelta(days=days_back)
            spans.append(_day_span(day, tz))
    return spans


def _span(form: str, groups: tuple[str | None, ...], today: dt.date, tz: dt.tzinfo) -> DateSpan | None:
    try:
        if form == "iso":
            return _day_span(dt.date(int(groups[0] or 0), int(groups[1] or 0), int(groups[2] or 0)), tz)
        if form in ("dmy", "mdy"):
            day_text, month_text = (groups[0], groups[1]) if form == "dmy" else (groups[1], groups[0])
            month = _MONTHS[(month_text or "").lower()]
            day = int(day_text or 0)
            if groups[2]:
                return _day_span(dt.date(int(groups[2]), month, day), tz)
            candidate = dt.date(today.year, month, day)
            if candidate > today:
                candidate = dt.date(today.year - 1, month, day)
            return _day_span(candidate, tz)
        if form in ("my", "m"):
            month = _MONTHS[(groups[0] or "").lower()]
            # a month without a year: the most recent one that has started
            latest = today.year if month <= today.month else today.year - 1
            year = int(groups[1] or 0) if form == "my" else latest
            start = dt.datetime(year, month, 1, tzinfo=tz)
            end = dt.datetime(year + (month == 12), month % 12 + 1, 1, tzinfo=tz)
            return DateSpan(start.timestamp(), end.timestamp(), 0.5)
        if form == "y":
            year = int(groups[0] or 0)
            start = dt.datetime(year, 1, 1, tzinfo=tz)
            return DateSpan(start.timestamp(), dt.datetime(year + 1, 1, 1, tzinfo=tz).timestamp(), 0.2)
    except (ValueError, KeyError, OverflowError):
        return None
    return None


def _day_span(day: dt.date, tz: dt.tzinfo) -> DateSpan:
    start = dt.datetime(day.year, day.month, day.day, tzinfo=tz).timestamp()
    return DateSpan(start, start + DAY, 1.0)


def date_match(created_at: np.ndarray, spans: Sequence[DateSpan], slack_days: float) -> np.ndarray:
    """0..1 per record: the weight of the most specific named span it was made in (half weight when
    made up to ``slack_days`` after it: memories are often written down a little after the fact)."""
    out = np.zeros(created_at.shape, dtype=np.float64)
    slack = slack_days * DAY
    for span in spans:
        inside = (created_at >= span.start) & (created_at < span.end)
        after = (created_at >= span.end) & (created_at < span.end + slack)
        out = np.maximum(out, np.where(inside, span.weight, np.where(after, 0.5 * span.weight, 0.0)))
    return out


_WHEN = re.compile(
    r"^\s*(?:when|since when|until when|how long|what (?:time|date|day|year|month|week))\b"
    r"|\bwhen (?:is|was|did|do|does|will|are|were|has|have|had)\b",
    re.I,
)
_TIME_WORDS = re.compile(
    r"\b(?:yesterday|today|tonight|tomorrow|ago|recently|lately|earlier|soon|weekend|"
    r"(?:last|next|this|past|coming)\s+(?:week|month|year|night|time|summer|winter|spring|fall|autumn|"
    r"monday|tuesday|wednesday|thursday|friday|saturday|sunday)|"
    r"monday|tuesday|wednesday|thursday|friday|saturday|sunday|"
    r"january|february|march|april|june|july|august|september|october|november|december|"
    r"(?:19|20)\d\d|\d{1,2}(?::\d\d)?\s*(?:am|pm)|\d{1,2}/\d{1,2}(?:/\d{2,4})?|"
    r"(?:\d+|a|an|one|two|three|four|five|six|seven|eight|nine|ten|few|several|couple of)\s+"
    r"(?:years?|months?|weeks?|days?|hours?))\b",
    re.I,
)


def is_when_question(query: str) -> bool:
    """Does the query ask for a time ("When did ...", "what date ...", "how long ago ...")?"""
    return bool(_WHEN.search(query))


def is_question(text: str) -> bool:
    """Does the text end in a question (ignoring a trailing bracketed attachment like "[shares ...]")?"""
    stripped = text.rstrip()
    if not stripped.endswith("]"):  # no attachment to strip
        return stripped.endswith("?")
    return _TRAILER.sub("", text).rstrip().endswith("?")


_TRAILER = re.compile(r"(?:\s*\[[^\]]*\])+\s*$")


def has_time_words(text: str) -> bool:
    """Does the text state a time (a relative day, weekday, month, year, clock time or date)?"""
    return bool(_TIME_WORDS.search(text))


_SPEAKER = re.compile(r"^\s*([A-Z][\w'.-]*(?:\s+[A-Z][\w'.-]*){0,2})\s*:\s")
_CAPITALISED = re.compile(r"\b([A-Z][a-z][\w'-]*)")
# capitalised words that are no name (question words, pronouns, articles): a query's, or a sentence's first word
NOT_NAMES = frozenset(
    """what when where which who whom whose why how is are was were did do does can could would should
    will has have had the a an in on at of for and or but if i my me we our you your he she his her they
    their it its this that these those there here did does yes no not""".split()
)


def speaker_name(text: str, extra: Mapping[str, object] | None = None) -> str:
    """Who a memory is from, lowercased: ``extra["speaker"]``, else a "Name: ..." prefix, else ''."""
    if extra and isinstance(extra.get("speaker"), str):
        return str(extra["speaker"]).strip().lower()
    m = _SPEAKER.match(text)
    return m.group(1).lower() if m else ""


def query_names(query: str) -> set[str]:
    """Capitalised words of the query that could be names, lowercased (possessive 's dropped)."""
    names: set[str] = set()
    for word in _CAPITALISED.findall(query.replace("\u2019", "'")):
        word = word.removesuffix("'s").lower()
        if word not in NOT_NAMES:
            names.add(word)
    return names


_VALUE = re.compile(r"\d+(?:[.,:/]\d+)*|[A-Z][\w-]*")
_SENTENCE_ENDS = frozenset(".!?:;\"'([")
_DATE_WORDS = frozenset(
    """yesterday today tonight tomorrow monday tuesday wednesday thursday friday saturday sunday""".split()
)
_UPDATE_CUES = re.compile(
    r"\b(?:moved (?:to|from)|changed|instead|no longer|not any ?more|updated?|correction|corrected|"
    r"rescheduled|postponed|pushed (?:back|to)|delayed|brought forward|switched|cancell?ed|replaced|revised|"
    r"is now|are now|now (?:is|are))\b",
    re.I,
)


def without_speaker(text: str) -> str:
    """The text without a leading "Name: " speaker label (nothing else touched)."""
    return _SPEAKER.sub("", text, count=1)


def statement_body(text: str) -> str:
    """The text without a leading "Name: " speaker label, stripped."""
    return without_speaker(text).strip()


def value_tokens(text: str) -> frozenset[str]:
    """What a statement asserts as values, lowercased: numbers, day words, and capitalised words that
    do not start a sentence (names, places, months; not "I"). Two statements on one subject whose values
    differ disagree ("deadline is 3 June" / "deadline moved to 10 June")."""
    body = statement_body(text)
    out = {w for w in re.findall(r"[a-z]+", body.lower()) if w in _DATE_WORDS}
    for m in _VALUE.finditer(body):
        token = m.group(0)
        if token[0].isdigit():
            out.add(token)
        elif token != "I" and not starts_sentence(body, m.start()):
            out.add(token.lower())
    return frozenset(out)


def starts_sentence(text: str, position: int, marks: frozenset[str] = _SENTENCE_ENDS) -> bool:
    """Does ``text[position:]`` open a sentence: nothing but spaces before it, or one of ``marks``?"""
    while position > 0 and text[position - 1].isspace():
        position -= 1
    return position == 0 or text[position - 1] in marks


def update_sentences(text: str) -> list[str]:
    """The sentences of a statement that say something changed ("moved to", "instead", "no longer", ...)."""
    body = statement_body(text)
    if not _UPDATE_CUES.search(body):
        return []
    return [sentence for sentence in _SENTENCES.split(body) if _UPDATE_CUES.search(sentence)]


_SENTENCES = re.compile(r"(?<=[.!?;])\s+|\n+")
