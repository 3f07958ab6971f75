"""The ranking policy: meaning, words and recency fused, read in context, newest wins on conflict.

Pure: numpy and the standard library only, no storage, no I/O. The caller (``memtend.user_index``)
keeps per-record arrays and hands them in; every function here takes arrays and returns arrays.

How a record's score is built, and why each part holds for any user's memory:

1. **Meaning and words, min-max normalised and summed.** Embedding cosine finds paraphrases; BM25
   finds the rare words (names, places, titles) a question repeats. Their raw scales differ and
   drift per query, so each is rescaled to 0..1 over the records being ranked before a weighted sum.
2. **Context window.** A memory is often only meaningful next to its neighbours: "yes, last Friday"
   answers the question asked in the turn before it. Records of the same session/thread, ordered by
   time, lend part of their score to the records around them.
3. **Recency.** Each kind has a half-life: events and notes fade, facts and rules do not (a fact is
   true until superseded). It is a small additive term: it breaks near-ties, it never buries relevance.
4. **Small bonuses.** A question that names a date favours records made on that date; a "when"
   question favours records that state a time; a question naming a person favours what that
   person said. Each is a hint the question gives about where its answer is.
5. **Conflicts: the newest wins.** Two relevant records about the same subject stating different
   values (same fact key, or close in meaning with different numbers/names/dates): the older one is
   placed just below the newer one, so stale values never outrank their correction.
"""

from __future__ import annotations

import calendar
import datetime as dt
import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np

from memtend.records import Kind

__all__ = [
    "DateSpan",
    "RankInputs",
    "RetrievalConfig",
    "context_scores",
    "date_match",
    "demote_conflicts",
    "fuse",
    "has_time_words",
    "is_when_question",
    "minmax",
    "query_date_spans",
    "query_names",
    "rank",
    "recency",
    "speaker_name",
    "value_tokens",
]

DAY = 86_400.0


def _default_half_lives() -> dict[Kind, float | None]:
    return {Kind.EVENT: 30.0, Kind.NOTE: 90.0, Kind.SUMMARY: 90.0, Kind.FACT: None, Kind.RULE: None}


@dataclass(frozen=True)
class RetrievalConfig:
    """Every knob of the ranking. Defaults were tuned on part of LoCoMo and checked on the rest."""

    # words: BM25 (length normalisation mostly off: a long memory is not less relevant for being long)
    k1: float = 1.2
    b: float = 0.1
    # fusion of min-max normalised scores
    meaning_weight: float = 1.0
    words_weight: float = 1.0
    # context window over the same session, ordered by time: weights of the records before and after
    context_before: tuple[float, ...] = (0.5, 0.5)  # nearest first
    context_after: tuple[float, ...] = (0.5,)
    context_weight: float = 0.5
    # recency: half-life in days per kind (None: never fades), added with this weight
    half_life_days: Mapping[Kind, float | None] = field(default_factory=_default_half_lives)
    recency_weight: float = 0.05
    # bonuses, on the same scale as one fully matching signal (1.0)
    date_bonus: float = 0.3  # record made on a date the query names (scaled down for month, year)
    date_slack_days: float = 7.0  # records made this soon after the named span get half the bonus
    time_words_bonus: float = 0.1  # "when" questions: records that state a time
    name_bonus: float = 0.1  # query names the record's speaker
    utc_offset_hours: float = 0.0  # the user's clock, for dates named in queries
    # conflicts among the top of the ranking
    conflict_pool: int = 30  # how many top records are checked against each other
    conflict_cosine: float = 0.55  # "close in meaning"
    conflict_relevance: float = 0.5  # both must score at least this share of the best score

    def __post_init__(self) -> None:
        if self.k1 < 0 or not 0.0 <= self.b <= 1.0:
            raise ValueError(f"BM25 needs k1 >= 0 and 0 <= b <= 1, got k1={self.k1}, b={self.b}")
        for name, days in self.half_life_days.items():
            if days is not None and days <= 0:
                raise ValueError(f"half-life of {name} must be positive or None, got {days}")

    def half_life_seconds(self, kind: Kind) -> float:
        """Half-life of a kind in seconds; ``inf`` when it never fades (or is not configured)."""
        days = self.half_life_days.get(kind)
        return math.inf if days is None else days * DAY


# -- scores ---------------------------------------------------------------------------------------


def minmax(values: np.ndarray, mask: np.ndarray) -> np.ndarray:
    """Rescale ``values`` to 0..1 over the masked entries; everything else (and a flat signal) is 0."""
    out = np.zeros(values.shape, dtype=np.float64)
    if not mask.any():
        return out
    chosen = values[mask].astype(np.float64)
    low, high = float(chosen.min()), float(chosen.max())
    if high - low <= 1e-12:
        return out
    out[mask] = (chosen - low) / (high - low)
    return out


def fuse(cosine: np.ndarray, words: np.ndarray, mask: np.ndarray, config: RetrievalConfig) -> np.ndarray:
    """Weighted sum of the two min-max normalised relevance signals (0 outside ``mask``)."""
    return config.meaning_weight * minmax(cosine, mask) + config.words_weight * minmax(words, mask)


def context_scores(scores: np.ndarray, neighbours: np.ndarray, weights: Sequence[float]) -> np.ndarray:
    """Weighted sum of each record's neighbours' scores.

    ``neighbours[i, c]`` is the index of record i's c-th neighbour, or -1 when there is none;
    ``weights[c]`` is that neighbour's weight. Scores of records outside the ranking should be 0.
    """
    out = np.zeros(scores.shape, dtype=np.float64)
    for column, weight in enumerate(weights):
        if weight == 0.0:
            continue
        idx = neighbours[:, column]
        present = idx >= 0
        out[present] += weight * scores[idx[present]]
    return out


def recency(age_seconds: np.ndarray, half_life_seconds: np.ndarray) -> np.ndarray:
    """``0.5 ** (age / half_life)``: 1 for new (or future) records and for kinds that never fade."""
    age = np.maximum(age_seconds, 0.0)
    with np.errstate(divide="ignore", invalid="ignore"):
        ratio = np.where(np.isinf(half_life_seconds), 0.0, age / half_life_seconds)
    return np.exp2(-ratio)


@dataclass
class RankInputs:
    """Per-record arrays, all the same length (records not being ranked are masked out)."""

    cosine: np.ndarray  # query . record embedding
    words: np.ndarray  # BM25 of the query against the record
    created_at: np.ndarray  # epoch seconds
    half_life: np.ndarray  # seconds; inf for kinds that never fade
    context_mask: np.ndarray  # records that may lend context (live, allowed status)
    result_mask: np.ndarray  # records that may be returned (also of an allowed kind)
    neighbours: np.ndarray  # (n, before + after) indices into these arrays, -1 for none
    date_match: np.ndarray | None = None  # 0..1 per record: made on a date the query names
    time_words: np.ndarray | None = None  # bool per record: states a time
    name_match: np.ndarray | None = None  # bool per record: its speaker is named in the query
    when_question: bool = False


def rank(inputs: RankInputs, now: float, config: RetrievalConfig) -> np.ndarray:
    """Final score of every record; ``-inf`` for records outside ``result_mask``."""
    relevance = fuse(inputs.cosine, inputs.words, inputs.context_mask, config)
    weights = (*config.context_before, *config.context_after)
    if config.context_weight and inputs.neighbours.shape[1]:
        relevance = relevance + config.context_weight * context_scores(relevance, inputs.neighbours, weights)
    score = relevance
    if config.recency_weight:
        score = score + config.recency_weight * recency(now - inputs.created_at, inputs.half_life)
    if inputs.date_match is not None and config.date_bonus:
        score = score + config.date_bonus * inputs.date_match
    if inputs.when_question and inputs.time_words is not None and config.time_words_bonus:
        score = score + config.time_words_bonus * inputs.time_words
    if inputs.name_match is not None and config.name_bonus:
        score = score + config.name_bonus * inputs.name_match
    return np.where(inputs.result_mask, score, -np.inf)


# -- conflicts ------------------------------------------------------------------------------------


def demote_conflicts(
    order: Sequence[int],
    scores: np.ndarray,
    created_at: np.ndarray,
    similarity: np.ndarray,
    keys: Sequence[str],
    subjects: Sequence[frozenset[str]],
    values: Sequence[frozenset[str]],
    config: RetrievalConfig,
) -> np.ndarray:
    """Scores of the top records (``order``: indices, best first) with stale conflicting ones demoted.

    For each pair of top records where the newer one is relevant (at least ``conflict_relevance`` of
    the best score), they conflict when they share a non-empty ``key`` (one value per key), or when
    they are close in meaning (``similarity`` >= ``conflict_cosine``), share a ``subjects`` term (a query
    word both contain) and state different ``values`` (numbers, dates, names). The older one is then
    scored just below the newer one. Returns the new scores of ``order``, in the order given.

    ``similarity`` is the (m, m) cosine matrix of the records in ``order``; the other sequences are
    indexed like ``order`` too; ``scores`` and ``created_at`` are indexed by record.
    """
    m = len(order)
    out = np.array([scores[i] for i in order], dtype=np.float64)
    if m < 2:
        return out
    best = float(out.max())
    floor = best * config.conflict_relevance if best > 0 else -math.inf
    when = [float(created_at[i]) for i in order]
    # Newest first: a demoted record can only fall below a record newer than itself, so one pass works.
    for a in sorted(range(m), key=lambda x: -when[x]):
        if out[a] < floor:
            continue
        for b in range(m):
            if when[b] >= when[a] or out[b] < floor or out[b] < out[a]:
                continue  # not older, not relevant, or already below the newer record
            if _conflict(a, b, similarity, keys, subjects, values, config):
                out[b] = np.nextafter(out[a], -np.inf) - 1e-9 * abs(out[a])
    return out


def _conflict(
    a: int,
    b: int,
    similarity: np.ndarray,
    keys: Sequence[str],
    subjects: Sequence[frozenset[str]],
    values: Sequence[frozenset[str]],
    config: RetrievalConfig,
) -> bool:
    if keys[a] and keys[a] == keys[b]:
        return True
    return (
        float(similarity[a, b]) >= config.conflict_cosine
        and bool(subjects[a] & subjects[b])
        and bool(values[a])
        and bool(values[b])
        and values[a] != values[b]
    )


# -- text features (computed once per record, or once per query) ----------------------------------

_MONTHS = {name.lower(): i for i, name in enumerate(calendar.month_name) if name}
_MONTHS.update({name.lower(): i for i, name in enumerate(calendar.month_abbr) if name})
_MONTHS["sept"] = 9
_MONTH = r"(January|February|March|April|May|June|July|August|September|October|November|December|Jan|Feb|Mar|Apr|Jun|Jul|Aug|Sept|Sep|Oct|Nov|Dec)\.?"  # noqa: E501
_DAYNUM = r"(\d{1,2})(?:st|nd|rd|th)?"
_YEAR = r"((?:19|20)\d\d)"
_DATE_PATTERNS: tuple[tuple[str, re.Pattern[str]], ...] = (
    ("iso", re.compile(r"\b" + _YEAR + r"-(\d{1,2})-(\d{1,2})\b")),
    ("dmy", re.compile(r"\b" + _DAYNUM + r"\s+(?:of\s+)?" + _MONTH + r"(?:,?\s*" + _YEAR + r")?\b")),
    ("mdy", re.compile(r"\b" + _MONTH + r"\s+" + _DAYNUM + r"(?!\d)(?:\s*,\s*|\s+)?" + _YEAR + r"?\b")),
    ("my", re.compile(r"\b" + _MONTH + r",?\s+" + _YEAR + r"\b")),
    ("m", re.compile(r"\b" + _MONTH + r"(?![\w-])")),
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
            if form == "m" and m.group(1) == "May" and not _BARE_MAY.search(query[max(0, m.start() - 12) : m.end()]):
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
            if form == "my":
                year = int(groups[1] or 0)
            else:
                year = today.year if month <= today.month else today.year - 1
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
    r"^\s*(?:when|since when|until when|how long ago|what (?:time|date|day|year|month|week))\b"
    r"|\bwhen (?:is|was|did|do|does|will|are|were|has|have|had)\b",
    re.I,
)
_TIME_WORDS = re.compile(
    r"\b(?:yesterday|today|tonight|tomorrow|ago|recently|lately|earlier|soon|weekend|"
    r"(?:last|next|this|past|coming)\s+(?:week|month|year|night|time|summer|winter|spring|fall|autumn|"
    r"monday|tuesday|wednesday|thursday|friday|saturday|sunday)|"
    r"monday|tuesday|wednesday|thursday|friday|saturday|sunday|"
    r"january|february|march|april|june|july|august|september|october|november|december|"
    r"(?:19|20)\d\d|\d{1,2}(?::\d\d)?\s*(?:am|pm)|\d{1,2}/\d{1,2}(?:/\d{2,4})?)\b",
    re.I,
)


def is_when_question(query: str) -> bool:
    """Does the query ask for a time ("When did ...", "what date ...", "how long ago ...")?"""
    return bool(_WHEN.search(query))


def has_time_words(text: str) -> bool:
    """Does the text state a time (a relative day, weekday, month, year, clock time or date)?"""
    return bool(_TIME_WORDS.search(text))


_SPEAKER = re.compile(r"^\s*([A-Z][\w'.-]*(?:\s+[A-Z][\w'.-]*){0,2})\s*:\s")
_CAPITALISED = re.compile(r"\b([A-Z][a-z][\w'-]*)")
_NOT_NAMES = frozenset(
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
        if word not in _NOT_NAMES:
            names.add(word)
    return names


_VALUE = re.compile(r"\d+(?:[.,:/]\d+)*|(?<![.!?]\s)(?<!^)\b[A-Z][\w'-]+")


def value_tokens(text: str) -> frozenset[str]:
    """What a statement asserts as values: numbers, and capitalised words past the first (names,
    places, months). Two statements on one subject with different values disagree."""
    body = _SPEAKER.sub("", text, count=1)
    return frozenset(v.lower() for v in _VALUE.findall(body.strip()))
