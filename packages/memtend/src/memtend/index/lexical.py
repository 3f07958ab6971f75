"""The word index: BM25 over stemmed words, kept incrementally for one user.

Adding or removing a document costs O(its length): postings, document frequencies, lengths and the
total length are maintained as documents come and go, and a removed document's slot is reused by
the next one added. A query reads the postings of its own terms only; nothing is rebuilt.

Scores come back as one array indexed by *slot*; ``add`` returns the slot it used and ``slot``
looks one up, so a caller can keep its own per-document arrays aligned with this index.
"""

from __future__ import annotations

import math
import re
import threading
from collections import Counter
from collections.abc import Iterable
from functools import lru_cache

import numpy as np
import snowballstemmer

__all__ = ["STOPWORDS", "BM25Index", "stem", "tokenize"]

# Common English function words: they carry no topic, and in BM25 they only add noise.
STOPWORDS: frozenset[str] = frozenset(
    """
    a about above after again against all am an and any are aren't as at be because been before being
    below between both but by can can't cannot could couldn't did didn't do does doesn't doing don't down
    during each few for from further had hadn't has hasn't have haven't having he he'd he'll he's her
    here here's hers herself him himself his how how's i i'd i'll i'm i've if in into is isn't it it's
    its itself let's me more most mustn't my myself no nor not of off on once only or other ought our
    ours ourselves out over own same shan't she she'd she'll she's should shouldn't so some such than
    that that's the their theirs them themselves then there there's these they they'd they'll they're
    they've this those through to too under until up very was wasn't we we'd we'll we're we've were
    weren't what what's when when's where where's which while who who's whom why why's will with won't
    would wouldn't you you'd you'll you're you've your yours yourself yourselves
    dont didnt doesnt isnt wasnt im ive id youre theyre thats whats s t d ll m re ve
    """.split()
)

_WORD = re.compile(r"[^\W_]+(?:'[^\W_]+)*")
_APOSTROPHES = str.maketrans({"\u2019": "'", "\u2018": "'", "`": "'"})
_local = threading.local()


def _stemmer() -> snowballstemmer.stemmer:
    # Snowball stemmers keep per-call state, so each thread gets its own.
    st = getattr(_local, "stemmer", None)
    if st is None:
        st = _local.stemmer = snowballstemmer.stemmer("english")
    return st


@lru_cache(maxsize=200_000)
def stem(word: str) -> str:
    """Snowball English stem of a lowercase word (cached: conversation vocabularies repeat a lot)."""
    return _stemmer().stemWord(word).replace("'", "")


def tokenize(text: str, *, stemming: bool = True, stopwords: frozenset[str] = STOPWORDS) -> list[str]:
    """Lowercase unicode words, stopwords dropped, stemmed; single letters are dropped, digits kept."""
    out: list[str] = []
    for word in _WORD.findall(text.translate(_APOSTROPHES).lower()):
        if word in stopwords or (len(word) == 1 and not word.isdigit()):
            continue
        if word.endswith("'s"):
            word = word[:-2]
            if word in stopwords:
                continue
        out.append(stem(word) if stemming else word.replace("'", ""))
    return out


class BM25Index:
    """Incremental Okapi BM25 with Lucene's always-positive idf, ``log(1 + (N - df + .5) / (df + .5))``.

    ``b`` near 0 suits short memories (a long turn is not less relevant for being long); ``k1``
    sets how fast repeated words saturate.
    """

    def __init__(self, *, k1: float = 1.2, b: float = 0.1, stemming: bool = True) -> None:
        if k1 < 0 or not 0.0 <= b <= 1.0:
            raise ValueError(f"BM25 needs k1 >= 0 and 0 <= b <= 1, got k1={k1}, b={b}")
        self.k1 = float(k1)
        self.b = float(b)
        self.stemming = stemming
        self._postings: dict[str, dict[int, int]] = {}  # term -> {slot: term frequency}
        self._doc_terms: list[dict[str, int] | None] = []  # slot -> its term frequencies
        self._lengths = np.zeros(0, dtype=np.float64)
        self._slot_of: dict[str, int] = {}
        self._free: list[int] = []
        self._total_length = 0

    # -- size and lookup -------------------------------------------------------------------
    def __len__(self) -> int:
        return len(self._slot_of)

    def __contains__(self, doc_id: object) -> bool:
        return doc_id in self._slot_of

    @property
    def capacity(self) -> int:
        """Number of slots (live or free); ``scores`` returns arrays of this length."""
        return len(self._doc_terms)

    def slot(self, doc_id: str) -> int:
        return self._slot_of[doc_id]

    def terms(self, doc_id: str) -> dict[str, int]:
        """The document's term frequencies (a copy)."""
        return dict(self._doc_terms[self._slot_of[doc_id]] or {})

    def document_frequency(self, term: str) -> int:
        return len(self._postings.get(term, ()))

    # -- writes ----------------------------------------------------------------------------
    def add(self, doc_id: str, text: str) -> int:
        """Index ``text`` under ``doc_id`` (replacing any earlier text) and return its slot."""
        if doc_id in self._slot_of:
            self._unindex(self._slot_of[doc_id])
            slot = self._slot_of[doc_id]
        else:
            slot = self._allocate()
            self._slot_of[doc_id] = slot
        counts = dict(Counter(tokenize(text, stemming=self.stemming)))
        self._doc_terms[slot] = counts
        length = sum(counts.values())
        self._lengths[slot] = length
        self._total_length += length
        for term, tf in counts.items():
            self._postings.setdefault(term, {})[slot] = tf
        return slot

    def remove(self, doc_id: str) -> bool:
        """Forget ``doc_id``; returns whether it was there. Its slot is reused by a later add."""
        slot = self._slot_of.pop(doc_id, None)
        if slot is None:
            return False
        self._unindex(slot)
        self._doc_terms[slot] = None
        self._free.append(slot)
        return True

    def _unindex(self, slot: int) -> None:
        counts = self._doc_terms[slot] or {}
        for term in counts:
            posting = self._postings[term]
            del posting[slot]
            if not posting:
                del self._postings[term]
        self._total_length -= int(self._lengths[slot])
        self._lengths[slot] = 0.0
        self._doc_terms[slot] = {}

    def _allocate(self) -> int:
        if self._free:
            return self._free.pop()
        slot = len(self._doc_terms)
        self._doc_terms.append({})
        if slot >= len(self._lengths):
            grown = np.zeros(max(16, 2 * len(self._lengths)), dtype=np.float64)
            grown[: len(self._lengths)] = self._lengths
            self._lengths = grown
        return slot

    # -- reads -----------------------------------------------------------------------------
    def idf(self, term: str) -> float:
        n = len(self._slot_of)
        df = len(self._postings.get(term, ()))
        return math.log(1.0 + (n - df + 0.5) / (df + 0.5))

    def scores(self, query: str | Iterable[str]) -> np.ndarray:
        """BM25 of every slot for ``query`` (text, or already tokenised terms); free slots score 0.

        A term repeated in the query counts once per repetition, as in Okapi BM25.
        """
        terms = tokenize(query, stemming=self.stemming) if isinstance(query, str) else list(query)
        out = np.zeros(self.capacity, dtype=np.float64)
        n = len(self._slot_of)
        if n == 0:
            return out
        avgdl = max(self._total_length / n, 1e-9)
        k1, b = self.k1, self.b
        for term, qtf in Counter(terms).items():
            posting = self._postings.get(term)
            if not posting:
                continue
            slots = np.fromiter(posting.keys(), dtype=np.intp, count=len(posting))
            tf = np.fromiter(posting.values(), dtype=np.float64, count=len(posting))
            norm = k1 * (1.0 - b + b * self._lengths[slots] / avgdl)
            out[slots] += qtf * self.idf(term) * tf * (k1 + 1.0) / (tf + norm)
        return out

    def term_frequencies(self, terms: Iterable[str]) -> tuple[np.ndarray, np.ndarray]:
        """``(weight, tf)`` for the known query ``terms``, so a caller can score BM25 itself (e.g. over
        windows of several documents): ``weight[t]`` is the term's idf times its count in ``terms``
        (shape (t,)); ``tf[t, slot]`` its frequency in each slot's document (shape (t, capacity)).
        """
        counts = Counter(term for term in terms if term in self._postings)
        tf = np.zeros((len(counts), self.capacity), dtype=np.float64)
        for row, term in enumerate(counts):
            posting = self._postings[term]
            slots = np.fromiter(posting.keys(), dtype=np.intp, count=len(posting))
            tf[row, slots] = np.fromiter(posting.values(), dtype=np.float64, count=len(posting))
        weight = np.array([self.idf(term) * qtf for term, qtf in counts.items()], dtype=np.float64)
        return weight, tf

    @property
    def lengths(self) -> np.ndarray:
        """Length in terms of the document in each slot (0 for a free slot); a read-only view."""
        view = self._lengths[: self.capacity]
        view.flags.writeable = False
        return view

    def nbytes(self) -> int:
        """Approximate memory held (postings entries dominate)."""
        entries = sum(len(p) for p in self._postings.values())
        return int(self._lengths.nbytes + 2 * entries * 80 + len(self._postings) * 120 + len(self._slot_of) * 150)
