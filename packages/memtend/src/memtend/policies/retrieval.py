"""The ranking policy: meaning, words and recency fused, read in context, newest wins on conflict.

Pure: numpy and the standard library only, no storage, no I/O. The caller (``memtend.index.user_index``)
keeps per-record arrays and hands them in; every function here takes arrays and returns arrays.

How a record's score is built, and why each part holds for any user's memory:

1. **Meaning and words, min-max normalised and summed.** Embedding cosine finds paraphrases; BM25
   finds the rare words (names, places, titles) a question repeats. Their raw scales differ and
   drift per query, so each is rescaled to 0..1 over the records being ranked before a weighted sum.
2. **Context window.** A memory is often only meaningful next to its neighbours: "yes, last Friday"
   answers the question asked in the turn before it. Records of the same session/thread, ordered by
   time, lend part of their score to the records around them. Events and notes written without a session form
   a timeline per kind, where records said close together (no gap over half an hour) are each other's window:
   the kind decides how long a memory lives, not whether its neighbours help find it.
3. **Recency.** Each kind has a half-life: events and notes fade, facts and rules do not (a fact is
   true until superseded). It is a small additive term: it breaks near-ties, it never buries relevance.
4. **Small bonuses.** A question that names a date favours records made on that date; a "when"
   question favours records that state a time; a question naming a person favours what that
   person said. Each is a hint the question gives about where its answer is. And a record that
   only asks a question is discounted a little: it rarely holds an answer (the record after it
   does, and the context window already lends it the question's words).
5. **Conflicts: the newest wins** (``memtend.policies.conflicts``). Two relevant records about the same subject
   stating different values (same fact key, or close in meaning with different numbers/names/dates): the older one
   is placed just below the newer one, so stale values never outrank their correction. A change said in other
   words is left to an optional judge (``memtend-conflicts``).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np

from memtend.arguments import check_retrieval
from memtend.errors import InvalidInputError
from memtend.records import DAY, Kind

__all__ = [
    "RankInputs",
    "RetrievalConfig",
    "bm25",
    "minmax_rows",
    "rank",
    "recency",
    "relevance",
    "window_sum",
]


def _default_half_lives() -> dict[Kind, float | None]:
    return {Kind.EVENT: 30.0, Kind.NOTE: 90.0, Kind.SUMMARY: 90.0, Kind.FACT: None, Kind.RULE: None}


@dataclass(frozen=True)
class RetrievalConfig:
    """Every knob of the ranking. Scores are on the scale of the fused relevance (0..1, see :func:`relevance`):
    a weight or bonus below is a number added to (or multiplied into) that score."""

    k1: float = 1.2  # BM25 term-frequency saturation (>= 0; at 0 a word counts once however often it occurs)
    b: float = 0.1  # BM25 length normalisation (0..1), mostly off: a long memory is not less relevant for being long
    meaning_weight: float = 1.0  # weight of the min-max normalised embedding cosine in the fused relevance
    words_weight: float = 1.0  # weight of the min-max normalised BM25 score in the fused relevance
    context_before: tuple[float, ...] = (1.0, 1.0)  # weights of the window's records before a record, nearest first
    context_after: tuple[float, ...] = (1.0,)  # weights of the window's records after a record, nearest first
    context_share: float = 0.67  # share (0..1) of a record's relevance that comes from its context window
    timeline_kinds: frozenset[Kind] = frozenset({Kind.EVENT, Kind.NOTE})  # kinds whose records without a session
    # form a timeline (one per kind)
    context_gap_seconds: float = 1800.0  # on a timeline, the longest step (seconds) between neighbours of one window
    half_life_days: Mapping[Kind, float | None] = field(default_factory=_default_half_lives)  # days; None: never fades
    recency_weight: float = 0.01  # weight of the recency (1 when new, halving every half-life) added to the score
    date_bonus: float = 0.33  # added for a record made on a date the query names (scaled down for month, year)
    date_slack_days: float = 3.0  # days after the named span in which a record still gets half the date bonus
    time_words_bonus: float = 0.13  # added, for a "when" question, to records that state a time
    name_bonus: float = 0.02  # added when the query names the record's speaker
    question_factor: float = 0.9  # share of its relevance kept by a record that only asks a question
    utc_offset_hours: float = 0.0  # the user's clock (hours from UTC), for dates named in queries
    conflict_pool: int = 30  # how many top records are checked against each other for conflicts (0: none)
    conflict_cosine: float = 0.85  # cosine at which near-duplicates in meaning stating different values conflict
    conflict_update_cosine: float = 0.55  # cosine enough when the newer announces a change of the subject
    conflict_relevance: float = 0.6  # both records of a conflict score at least this share (0..1) of the best score

    def __post_init__(self) -> None:
        check_retrieval(self)
        if self.k1 < 0 or not 0.0 <= self.b <= 1.0:
            raise InvalidInputError(f"BM25 needs k1 >= 0 and 0 <= b <= 1, got k1={self.k1}, b={self.b}")
        for name, days in self.half_life_days.items():
            if days is not None and days <= 0:
                raise InvalidInputError(f"half-life of {name} must be positive or None, got {days}")

    def half_life_seconds(self, kind: Kind) -> float:
        """Half-life of a kind in seconds; ``inf`` when it never fades (or is not configured)."""
        days = self.half_life_days.get(kind)
        return math.inf if days is None else days * DAY


# -- scores ---------------------------------------------------------------------------------------


def minmax_rows(rows: np.ndarray, mask: np.ndarray) -> np.ndarray:
    """Rescale each row of a (signals, records) array to 0..1 over the masked records; everything else (and a
    flat signal) is 0.

    The low end is the smallest value or 0, whichever is lower: zero means "no match" for both
    signals, so among a handful of all-similar records the weakest is not pushed down to nothing.
    """
    chosen = rows[:, mask]
    if chosen.shape[1] == 0:
        return np.zeros(rows.shape, dtype=np.float64)
    low = np.minimum(chosen.min(axis=1), 0.0)
    span = chosen.max(axis=1) - low
    scale = np.divide(1.0, span, out=np.zeros_like(span), where=span > 1e-12)
    out = (rows - low[:, None]) * scale[:, None]
    out[:, ~mask] = 0.0
    return out


def bm25(
    term_weights: np.ndarray, term_freqs: np.ndarray, lengths: np.ndarray, avg_length: float, k1: float, b: float
) -> np.ndarray:
    """Okapi BM25 per document from dense term frequencies ``(t, n)`` and per-term weights (idf) ``(t,)``."""
    if term_freqs.shape[0] == 0:
        return np.zeros(lengths.shape, dtype=np.float64)
    norm = k1 * (1.0 - b + b * lengths / max(avg_length, 1e-9))
    saturated = term_freqs * (k1 + 1.0) / (term_freqs + norm)
    return term_weights @ saturated


def window_sum(values: np.ndarray, neighbours: np.ndarray, weights: Sequence[float], mask: np.ndarray) -> np.ndarray:
    """Each record's value plus its neighbours' weighted values (last axis = records).

    ``neighbours[i, c]`` is the index of record i's c-th neighbour or -1; ``weights[c]`` its weight;
    neighbours outside ``mask`` lend nothing.
    """
    values = np.asarray(values, dtype=np.float64)
    n = values.shape[-1]
    # One zero column at index n stands for "no neighbour", so each offset is a single gather.
    lent = np.zeros((*values.shape[:-1], n + 1), dtype=np.float64)
    lent[..., :n] = values
    if not mask.all():
        lent[..., :n] *= mask
    out = values.copy()
    for column, weight in enumerate(weights):
        if weight:
            idx = np.where(neighbours[:, column] >= 0, neighbours[:, column], n)
            gathered = np.take(lent, idx, axis=-1)
            if weight != 1.0:
                gathered *= weight
            out += gathered
    return out


def recency(age_seconds: np.ndarray, half_life_seconds: np.ndarray) -> np.ndarray:
    """``0.5 ** (age / half_life)``: 1 for new (or future) records and for kinds that never fade."""
    age = np.maximum(age_seconds, 0.0)
    with np.errstate(divide="ignore", invalid="ignore"):
        ratio = np.where(np.isinf(half_life_seconds), 0.0, age / half_life_seconds)
    return np.exp2(-ratio)


@dataclass
class RankInputs:
    """Per-record arrays, all over the same n records (those not being ranked are masked out)."""

    cosine: np.ndarray  # (n,) query . record embedding
    term_weights: np.ndarray  # (t,) idf of each query term (times its count in the query)
    term_freqs: np.ndarray  # (t, n) frequency of each query term in each record
    lengths: np.ndarray  # (n,) record length in terms
    created_at: np.ndarray  # (n,) epoch seconds
    half_life: np.ndarray  # (n,) seconds; inf for kinds that never fade
    context_mask: np.ndarray  # (n,) records that may be ranked or lend context (live, allowed status)
    result_mask: np.ndarray  # (n,) records that may be returned (also of an allowed kind)
    neighbours: np.ndarray  # (n, before + after) indices of same-session neighbours, -1 for none
    date_match: np.ndarray | None = None  # (n,) 0..1: made on a date the query names
    time_words: np.ndarray | None = None  # (n,) bool: states a time
    name_match: np.ndarray | None = None  # (n,) bool: its speaker is named in the query
    questions: np.ndarray | None = None  # (n,) bool: the record asks a question
    when_question: bool = False


def relevance(inputs: RankInputs, config: RetrievalConfig) -> np.ndarray:
    """0..1 per record: meaning and words of the record itself, blended with those of its window.

    The window of a record is the record and its same-session neighbours, scored as one document:
    BM25 over their summed term frequencies and lengths (so query words spread over a question and
    its answer add up), and the mean cosine of its members.
    """
    mask = inputs.context_mask
    k1, b = config.k1, config.b
    lengths = np.asarray(inputs.lengths, dtype=np.float64)
    n = lengths.shape[0]
    weights = (*config.context_before, *config.context_after)
    share = config.context_share
    windowed = share > 0 and bool(weights) and inputs.neighbours.shape[1] > 0
    signals = np.empty((4 if windowed else 2, n), dtype=np.float64)  # cosine, words, window cos, window words
    signals[0] = inputs.cosine
    avg = float(lengths[mask].mean()) if mask.any() else 1.0
    signals[1] = bm25(inputs.term_weights, inputs.term_freqs, lengths, avg, k1, b)
    if windowed:
        # One pass over the window for every per-record signal: term frequencies, length, members, cosine.
        t = inputs.term_freqs.shape[0]
        stacked = np.empty((t + 3, n), dtype=np.float64)
        stacked[:t] = inputs.term_freqs
        stacked[t] = lengths
        stacked[t + 1] = 1.0
        stacked[t + 2] = inputs.cosine
        window = window_sum(stacked, inputs.neighbours[:, : len(weights)], weights, mask)
        window_avg = float(window[t][mask].mean()) if mask.any() else 1.0
        signals[2] = window[t + 2] / window[t + 1]
        signals[3] = bm25(inputs.term_weights, window[:t], window[t], window_avg, k1, b)
    total = config.meaning_weight + config.words_weight
    if total <= 0:
        return np.zeros(n, dtype=np.float64)
    normalised = minmax_rows(signals, mask)
    wm, ww = config.meaning_weight / total, config.words_weight / total
    own = wm * normalised[0] + ww * normalised[1]
    if not windowed:
        return own
    return (1.0 - share) * own + share * (wm * normalised[2] + ww * normalised[3])


def rank(inputs: RankInputs, now: float, config: RetrievalConfig) -> np.ndarray:
    """Final score of every record (relevance 0..1 plus small terms); ``-inf`` outside ``result_mask``."""
    score = relevance(inputs, config)
    if inputs.questions is not None and config.question_factor != 1.0:
        score = np.where(inputs.questions, config.question_factor * score, score)
    if config.recency_weight:
        score = score + config.recency_weight * recency(now - inputs.created_at, inputs.half_life)
    if inputs.date_match is not None and config.date_bonus:
        score = score + config.date_bonus * inputs.date_match
    if inputs.when_question and inputs.time_words is not None and config.time_words_bonus:
        score = score + config.time_words_bonus * inputs.time_words
    if inputs.name_match is not None and config.name_bonus:
        score = score + config.name_bonus * inputs.name_match
    return np.where(inputs.result_mask, score, -np.inf)
