"""Conflicts among the top of a recall: the newest wins.

Two relevant records that disagree about one subject: the older is placed just below the newer, so a stale value
never outranks its correction. The core's rules (:func:`conflicts`) are plain: the same fact key; near-duplicates
in meaning stating different values; or a newer record announcing a change of the subject they share. A change
said in other words ("I live in Paris" / "I moved to Berlin last month": no word shared) is left to a
:class:`ConflictJudge`, an optional distribution (``memtend-conflicts``) plugged in with
``Memory(conflict_judge=...)``; without one, only the plain rules apply.

Pure: numpy and the standard library only.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol, runtime_checkable

import numpy as np

from memtend.errors import InvalidInputError

if TYPE_CHECKING:
    from memtend.policies.retrieval import RetrievalConfig
    from memtend.records import Record

__all__ = ["Claim", "ConflictJudge", "Pool", "candidates", "check_judge", "conflicts", "demote_conflicts"]

PairTest = Callable[[int, int], bool]


@dataclass(frozen=True)
class Claim:
    """What a record asserts, for the newest-wins rules."""

    key: str = ""  # a fact's key: one value per key
    subject: frozenset[str] = frozenset()  # the query's words it contains (its speaker label left out)
    values: frozenset[str] = frozenset()  # numbers, names, days it states (see text_features.value_tokens)
    update_terms: frozenset[str] = frozenset()  # words of its sentences that announce a change


@dataclass(frozen=True)
class Pool:
    """The top records of one recall, as a :class:`ConflictJudge` is given them (every array indexed like
    ``records``, best first)."""

    records: Sequence[Record]  # the records, best first
    vectors: np.ndarray  # (m, d) their unit embeddings
    similarity: np.ndarray  # (m, m) cosine between each two of them
    query_cosine: np.ndarray  # (m,) each one's cosine to the query
    scores: np.ndarray  # (m,) their ranking scores, before any conflict is resolved
    created_at: np.ndarray  # (m,) epoch seconds
    # (m, m) [a, b]: b is older than a and scores enough for the core to put it below a (the only pairs asked)
    candidates: np.ndarray
    speakers: Collection[str]  # speakers' names the user's index knows (lowercased): names, not values
    reading: Callable[[int], object]  # the judge's ``read`` of record i, made once per record version and kept
    encode: Callable[[list[str]], np.ndarray] | None = None  # the embedding model, when the recall has it


@runtime_checkable
class ConflictJudge(Protocol):
    """Finds changes said in other words among the top of a recall, beside the plain rules of :func:`conflicts`.

    The index calls :meth:`read` once per record version (the result is kept with the record until it changes),
    then :meth:`judge` once per recall; the core asks the test it returns about the candidate pairs, newest first,
    and for each pair it answers True the newer record takes the older's place (its score, when higher) and the
    older is put just below it."""

    @property
    def change_relevance(self) -> float:
        """The share of the best score the older record of a change in other words needs (0..1)."""
        ...

    def read(self, record: Record, vector: np.ndarray) -> object:
        """What the judge needs of one record and its unit embedding (anything; None for nothing)."""
        ...

    def judge(self, pool: Pool) -> PairTest:
        """A test ``(newer, older) -> bool`` over positions of ``pool``: does the newer replace the older?"""
        ...


def check_judge(judge: object) -> ConflictJudge | None:
    """``judge`` when it is None or a :class:`ConflictJudge` with a ``change_relevance`` in 0..1, else an error."""
    if judge is None:
        return None
    if not isinstance(judge, ConflictJudge):
        raise InvalidInputError(
            "conflict_judge must be AUTO (the installed memtend-conflicts, if any), None (the newest-wins rules "
            f"only) or a ConflictJudge (change_relevance, read, judge), got {type(judge).__name__}"
        )
    share = judge.change_relevance
    if not isinstance(share, int | float) or isinstance(share, bool) or not 0.0 <= share <= 1.0:
        raise InvalidInputError(f"conflict_judge.change_relevance must be a number in 0..1, got {share!r}")
    return judge


def conflicts(newer: Claim, older: Claim, similarity: float, config: RetrievalConfig) -> bool:
    """Do two relevant records disagree, so that the older one is stale? Either:

    - they hold the same fact key (one value per key); or
    - they speak of the same subject (share a query word) and are near-duplicates in meaning
      (``conflict_cosine``) stating different values ("phone is 555-1234" / "phone is 555-9876"); or
    - they speak of the same subject, are close in meaning (``conflict_update_cosine``), and the newer
      announces a change of that subject (in the same sentence) and states a value the older does not
      ("deadline is 3 June" / "deadline moved to 10 June"; "office in Paris" / "office moved to Berlin").
    """
    if newer.key and newer.key == older.key:
        return True
    if not newer.subject & older.subject:
        return False
    if similarity >= config.conflict_cosine and newer.values and older.values and newer.values != older.values:
        return True
    return (
        similarity >= config.conflict_update_cosine
        and bool(newer.update_terms & newer.subject & older.subject)
        and bool(newer.values - older.values)
    )


def candidates(
    scores: np.ndarray, created_at: np.ndarray, config: RetrievalConfig, change_relevance: float
) -> np.ndarray:
    """(m, m) [a, b]: b is older than a and scores at least the least share of the best score any rule needs."""
    best = float(scores.max()) if len(scores) else 0.0
    floor = best * min(config.conflict_relevance, change_relevance) if best > 0 else -np.inf
    return (created_at[:, None] > created_at[None, :]) & (scores >= floor)[None, :]


def demote_conflicts(
    order: Sequence[int],
    scores: np.ndarray,
    created_at: np.ndarray,
    similarity: np.ndarray,
    claims: Sequence[Claim],
    config: RetrievalConfig,
    changed: PairTest | None = None,
    change_relevance: float = 1.0,
) -> np.ndarray:
    """Scores of the top records (``order``: indices, best first) with stale conflicting ones demoted.

    ``similarity`` is the (m, m) cosine matrix and ``claims`` what each record asserts, both indexed like
    ``order``; ``scores`` and ``created_at`` are indexed by record. When a record and an older one are both
    relevant (at least ``conflict_relevance`` of the best score) and conflict (see :func:`conflicts`), the
    older is scored just below the newer; a newer record holding the same fact key needs no relevance of
    its own (it is the current value of what the older says). ``changed`` (a judge's test over positions of
    ``order``, see :class:`ConflictJudge`) finds changes said in other words: the older then needs only
    ``change_relevance`` of the best score, the newer none, and the newer, unless found stale itself, takes the
    older's place (its score, when higher) before the older is put just below it: the query asked about the
    older's words, and the current value is the answer (and a stale record placed low does not drag the records
    between down with it). Returns the new scores of ``order``.
    """
    m = len(order)
    out = np.array([scores[i] for i in order], dtype=np.float64)
    if m < 2:
        return out
    best = float(out.max())
    floor = best * config.conflict_relevance if best > 0 else -math.inf
    change_floor = best * change_relevance if best > 0 and changed is not None else floor
    when = np.array([created_at[i] for i in order], dtype=np.float64)
    # Only pairs close enough in meaning, sharing a fact key, or asked of the judge can conflict: found in one go.
    close = np.asarray(similarity) >= min(config.conflict_cosine, config.conflict_update_cosine)
    if changed is not None:
        close |= candidates(out, when, config, change_relevance)
    keyed = [i for i in range(m) if claims[i].key]
    for i in keyed:
        for j in keyed:
            close[i, j] |= claims[i].key == claims[j].key
    # Records pushed below the same newer one keep their order: each lands a rank-sized step below it.
    step = [1e-9 * (1 + position) for position in np.argsort(np.argsort(-out, kind="stable")).tolist()]
    stale = np.zeros(m, dtype=bool)
    # Newest first: a record is only ever pushed below newer ones, so one pass settles every pair.
    for a in np.argsort(-when, kind="stable").tolist():
        relevant = out[a] >= floor
        for b in np.flatnonzero(close[a] & (when < when[a])).tolist():
            if out[b] < min(floor, change_floor) or out[b] < out[a]:
                continue  # not relevant, or already below the newer record
            # the newer must be relevant too, unless it holds the same key: then it is the current value
            same_key = bool(claims[a].key) and claims[a].key == claims[b].key
            in_other_words = changed is not None and changed(a, b)
            if out[b] < (change_floor if in_other_words else floor):
                continue  # not relevant for this rule
            if in_other_words or (
                (relevant or same_key) and conflicts(claims[a], claims[b], float(similarity[a, b]), config)
            ):
                if in_other_words and not stale[a]:
                    out[a] = max(out[a], out[b])  # the current value takes the place of the one it replaces
                out[b] = out[a] - step[b] * max(1.0, abs(out[a]))
                stale[b] = True
    return out
