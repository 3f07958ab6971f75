"""Write or merge: a new note or event that says what an active memory of the user already says refreshes that
memory (:func:`memtend.policies.changes.refresh`) instead of adding a second row.

"Says the same" is read off the retrieval index recall ranks by, not a new heuristic: an exact duplicate (the
same text once case and spacing are set aside), or a near-duplicate in meaning at the cosine recall itself calls
one (``RetrievalConfig.conflict_cosine``, 0.85 by default: at that cosine two statements that state different
values conflict and the newer wins, see :func:`memtend.policies.conflicts.conflicts`) whose index terms (the word
index's own tokens: stemmed, stopwords dropped) contain all of the other's, and that states the same values
(:func:`memtend.policies.text_features.value_tokens`) and the same negations. So "The user prefers answers that
are short" refreshes "Prefers short answers", while "likes apples" never merges into "likes pears" however close
the vectors are. A near-duplicate stating another value is no duplicate: it is a change, stored as its own row,
and recall's newest-wins rule handles it.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import TYPE_CHECKING

import numpy as np

from memtend.index.lexical import tokenize
from memtend.policies import changes, text_features
from memtend.policies.precedence import normalise_value
from memtend.records import Kind, Record, Source, Status, now

if TYPE_CHECKING:
    from memtend.handle import FacadeHandle

__all__ = ["ADDED", "DUPLICATE", "REFRESHED", "same_as", "write_or_merge"]

ADDED = "added"
DUPLICATE = "duplicate"  # the same text stored already: refreshed, nothing added
REFRESHED = "refreshed"  # the same said in other words: refreshed, nothing added
_NEAREST = 5  # records read closest first: an exact duplicate is among them whatever the ties
_NEGATION = re.compile(r"\b(?:not|no|never|none|nothing|nobody|neither|nor|without)\b|n't\b", re.IGNORECASE)


def _negations(text: str) -> int:
    return len(_NEGATION.findall(text))


def same_as(memory: FacadeHandle, user_id: str, record: Record, vector: np.ndarray) -> tuple[Record, str] | None:
    """The user's active memory of the same kind that says what ``record`` says, and how (duplicate or refreshed),
    or None. Hold ``memory.lock``."""
    index = memory.user_index(user_id)
    found = index.nearest(vector, k=_NEAREST, kinds={record.kind})
    if not found:
        return None
    text = normalise_value(record.text)
    for id, _ in found:
        other = index.record(id)
        if normalise_value(other.text) == text and _mergeable(other):
            return other, DUPLICATE
    id, cosine = found[0]
    other = index.record(id)
    if (
        cosine >= memory.retrieval.conflict_cosine
        and _mergeable(other)
        and _terms_within(other.text, record.text)
        and text_features.value_tokens(other.text) == text_features.value_tokens(record.text)
        and _negations(other.text) == _negations(record.text)
    ):
        return other, REFRESHED
    return None


def _terms_within(a: str, b: str) -> bool:
    """Are the index terms of the shorter text all among the longer one's?"""
    ta, tb = set(tokenize(a)), set(tokenize(b))
    small, large = (ta, tb) if len(ta) <= len(tb) else (tb, ta)
    return bool(small) and small <= large


def _mergeable(record: Record) -> bool:
    """Untrusted content is never vouched for by being said again, nor a record someone else owns."""
    return record.status is Status.ACTIVE and record.source is not Source.EXTERNAL


def write_or_merge(
    memory: FacadeHandle,
    user_id: str,
    record: Record,
    vector: np.ndarray | None,
    add: Callable[[np.ndarray | None], Record],
) -> tuple[Record, str]:
    """Store ``record`` (a checked new note or event) with ``add``, unless an active memory says the same: that
    one is refreshed instead. Returns the record stored or refreshed and what happened (added, duplicate,
    refreshed). A record held for review, or from an external source, is always added (review decides it).
    ``add`` is given the record's vector when this made one, so the text is embedded once."""
    if record.kind not in (Kind.NOTE, Kind.EVENT) or not _mergeable(record):
        return add(vector), ADDED
    if vector is None:
        vector = memory.embed([record.text])[0]
    with memory.lock:
        match = same_as(memory, user_id, record, vector)
        if match is None:
            return add(vector), ADDED
        existing, how = match
        index = memory.user_index(user_id)
        stored_vector = index.vector(existing.id)
        refreshed, change = changes.refresh(user_id, existing, record, stored_vector, now())
        memory.apply(change)
        return refreshed, how
