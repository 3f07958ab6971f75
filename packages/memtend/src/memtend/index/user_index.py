"""One user's in-memory retrieval index: embeddings, BM25 postings and per-record features.

Everything is kept in slot-aligned arrays that grow by doubling; a removed record's slot is reused.
Upserting or removing a record costs O(its length) (plus a sorted insert into its session), never a
rebuild, and a query is one matrix-vector product, one BM25 pass over the query's postings and a few
vectorised array operations, handed to the pure ranking policy in ``memtend.policies.retrieval``; conflicts
among the top are settled by ``memtend.policies.conflicts`` (and a ``ConflictJudge``, when the index has one).

Records of one session are ordered by ``(created_at, order of first insertion)``; when the index is
rebuilt from storage, feed records in that order so same-timestamp records keep their sequence. Records
written without a session (of the kinds in ``RetrievalConfig.timeline_kinds``: events and notes) share one
timeline per kind, where neighbours count only while each step between them is at most ``context_gap_seconds``:
turns said close together form the context windows a session would. A turn of a dialogue (a speaker, with another
speaker's turn in its window) is read as what was said then whatever its kind: the conflict judge is not asked
whether a later turn replaces it.
"""

from __future__ import annotations

import bisect
import sys
from collections.abc import Callable, Iterable
from typing import Any

import numpy as np

from memtend.errors import InvalidInputError, RecordNotFoundError
from memtend.index.lexical import BM25Index, tokenize
from memtend.policies import conflicts, retrieval, text_features
from memtend.policies.conflicts import Claim, ConflictJudge, Pool
from memtend.policies.retrieval import RankInputs, RetrievalConfig
from memtend.records import Kind, Record, Status

__all__ = ["UserIndex"]

_KINDS = list(Kind)
_STATUSES = list(Status)
_KIND_CODE = {kind: i for i, kind in enumerate(_KINDS)}
_STATUS_CODE = {status: i for i, status in enumerate(_STATUSES)}
_ACTIVE = frozenset({Status.ACTIVE})
_UNREAD: Any = object()  # a slot the judge has not read yet
Encoder = Callable[[list[str]], np.ndarray]


class _Assertions:
    """What a record asserts, for telling conflicts apart: read from its text the first time the record is among
    the top of a ranking (most records never are, so a cold index load does not pay for it)."""

    __slots__ = ("body_terms", "update_terms", "values")

    def __init__(self, record: Record) -> None:
        text = record.text
        self.values = text_features.value_tokens(text)
        self.body_terms = frozenset(tokenize(text_features.statement_body(text)))  # speaker label left out
        changed = text_features.update_sentences(text)  # terms of its sentences announcing a change
        self.update_terms = frozenset(tokenize(" ".join(changed))) if changed else frozenset()


class UserIndex:
    """Retrieval index of one user's records (not thread-safe: guard it with the user's lock). ``judge``: finds
    changes said in other words among the top of a ranking (None: the newest-wins rules only)."""

    def __init__(self, config: RetrievalConfig | None = None, judge: ConflictJudge | None = None) -> None:
        self.config = config or RetrievalConfig()
        self.judge = judge
        self._lex = BM25Index(k1=self.config.k1, b=self.config.b)  # also the slot allocator
        self._before = len(self.config.context_before)
        self._after = len(self.config.context_after)
        self._capacity = 0
        self._dim = 0
        self._emb = np.zeros((0, 0), dtype=np.float32)
        self._created = np.zeros(0, dtype=np.float64)
        self._half_life = np.zeros(0, dtype=np.float64)
        self._kind = np.zeros(0, dtype=np.int8)
        self._status = np.zeros(0, dtype=np.int8)
        self._alive = np.zeros(0, dtype=bool)
        self._time_words = np.zeros(0, dtype=np.int8)  # states a time: 1 yes, 0 no, -1 not read yet
        self._question = np.zeros(0, dtype=bool)
        self._speaker = np.zeros(0, dtype=np.int32)
        self._nbr = np.zeros((0, self._before + self._after), dtype=np.int32)
        self._records: list[Record | None] = []
        self._assertions: list[_Assertions | None] = []  # per slot, once a ranking needed it (for conflicts)
        self._readings: list[Any] = []  # per slot: the judge's reading of the record, once a ranking needed it
        self._seq: dict[str, int] = {}  # id -> order of first insertion (ties within a session)
        self._next_seq = 0
        # ("session", name) or ("timeline", kind) -> its members, sorted (time, seq, slot)
        self._sessions: dict[tuple[str, str], list[tuple[float, int, int]]] = {}
        self._speakers: dict[str, int] = {}  # speaker name -> code
        self._text_bytes = 0  # size of the texts held (for nbytes)

    # -- container protocol ----------------------------------------------------------------
    def __len__(self) -> int:
        return len(self._lex)

    def __contains__(self, id: object) -> bool:
        return id in self._lex

    def record(self, id: str) -> Record:
        if id not in self._lex:
            raise RecordNotFoundError(f"no record {id!r} in this user's index")
        record = self._records[self._lex.slot(id)]
        assert record is not None
        return record

    def ids(self) -> list[str]:
        return [r.id for r in self._records if r is not None]

    def neighbours(self, id: str) -> tuple[list[str], list[str]]:
        """The ids of a record's context window: those before it (nearest first) and after it."""
        row = self._nbr[self._lex.slot(self.record(id).id)]
        before = [self._id(int(s)) for s in row[: self._before] if s >= 0]
        after = [self._id(int(s)) for s in row[self._before :] if s >= 0]
        return before, after

    # -- writes ----------------------------------------------------------------------------
    def upsert(self, records: list[Record], embeddings: np.ndarray) -> None:
        """Add records, or replace the ones whose id is already indexed. O(total text length)."""
        vectors = np.asarray(embeddings, dtype=np.float32)
        if vectors.ndim != 2 or vectors.shape[0] != len(records):
            raise InvalidInputError(
                f"upsert needs one embedding row per record: got {len(records)} records and an array of "
                f"shape {vectors.shape}"
            )
        if not records:
            return
        if self._dim == 0:
            self._dim = vectors.shape[1]
            self._emb = np.zeros((self._capacity, self._dim), dtype=np.float32)
        elif vectors.shape[1] != self._dim:
            raise InvalidInputError(
                f"embeddings have {vectors.shape[1]} dimensions but this index holds {self._dim}-d vectors; "
                "use one embedding model per user"
            )
        norms = np.linalg.norm(vectors, axis=1)
        unit = vectors / np.where(norms > 0, norms, 1.0)[:, None]
        if len(self._lex) == 0 and len({r.id for r in records}) == len(records) > 1:
            self._load(records, unit)
            return
        for record, vector in zip(records, unit, strict=True):
            self._upsert_one(record, vector)

    def _load(self, records: list[Record], unit: np.ndarray) -> None:
        """Fill an empty index with distinct records: every record added first, then each session's sequence
        ordered and linked once (the same neighbours as adding them one by one, without re-linking a sequence at
        every insert)."""
        for record, vector in zip(records, unit, strict=True):
            self._upsert_one(record, vector, join=False)
        for members in self._sessions.values():
            members.sort()
        for group, members in self._sessions.items():
            gap = float("inf") if group[0] == "session" else self.config.context_gap_seconds
            self._refresh(members, 0, len(members) - 1, gap)

    def remove(self, ids: Iterable[str]) -> None:
        """Forget records by id; unknown ids are ignored."""
        for id in ids:
            if id not in self._lex:
                continue
            slot = self._lex.slot(id)
            self._leave_session(slot)
            self._lex.remove(id)
            self._text_bytes -= self._text_size(slot)
            self._records[slot] = None
            self._assertions[slot] = None
            self._readings[slot] = _UNREAD
            self._alive[slot] = False
            self._emb[slot] = 0.0
            self._seq.pop(id, None)

    def _upsert_one(self, record: Record, vector: np.ndarray, *, join: bool = True) -> None:
        """Index one record (``vector`` of unit length); ``join=False`` only appends it to its session's
        sequence, for the caller to order and link (see ``_load``)."""
        if record.id in self._lex:
            old = self._lex.slot(record.id)
            self._leave_session(old)
            self._text_bytes -= self._text_size(old)
        slot = self._lex.add(record.id, _index_text(record))
        self._grow(slot + 1)
        if record.id not in self._seq:
            self._seq[record.id] = self._next_seq
            self._next_seq += 1
        self._emb[slot] = vector
        self._created[slot] = record.created_at
        self._half_life[slot] = self.config.half_life_seconds(record.kind)
        self._kind[slot] = _KIND_CODE[record.kind]
        self._status[slot] = _STATUS_CODE[record.status]
        self._alive[slot] = True
        self._time_words[slot] = -1  # read on the first "when" question (see _stating_times)
        self._question[slot] = text_features.is_question(record.text)
        # A "Name: ..." label names a speaker in logs and notes; in a fact it is the key in words.
        speaker = "" if record.kind in (Kind.FACT, Kind.RULE) else text_features.speaker_name(record.text, record.extra)
        self._speaker[slot] = self._speakers.setdefault(speaker, len(self._speakers)) if speaker else -1
        self._records[slot] = record
        self._assertions[slot] = None
        self._readings[slot] = _UNREAD
        self._text_bytes += self._text_size(slot)
        if join:
            self._join_session(slot, record)
        else:
            group, _ = self._group(record)
            if group is not None:
                self._sessions.setdefault(group, []).append(self._session_key(slot))
                self._nbr[slot] = -1

    def _grow(self, needed: int) -> None:
        if needed <= self._capacity:
            return
        capacity = max(16, self._capacity * 2, needed)

        def grown(array: np.ndarray, fill: float | int | bool = 0) -> np.ndarray:
            out = np.full((capacity, *array.shape[1:]), fill, dtype=array.dtype)
            out[: self._capacity] = array[: self._capacity]
            return out

        self._emb = grown(self._emb) if self._dim else np.zeros((capacity, 0), dtype=np.float32)
        self._created = grown(self._created)
        self._half_life = grown(self._half_life)
        self._kind = grown(self._kind)
        self._status = grown(self._status)
        self._alive = grown(self._alive)
        self._time_words = grown(self._time_words, -1)
        self._question = grown(self._question)
        self._speaker = grown(self._speaker, -1)
        self._nbr = grown(self._nbr, -1)
        self._records.extend([None] * (capacity - self._capacity))
        self._assertions.extend([None] * (capacity - self._capacity))
        self._readings.extend([_UNREAD] * (capacity - self._capacity))
        self._capacity = capacity

    # -- sessions: each record's neighbours in time, kept as a (slot, before+after) matrix ----
    def _session_key(self, slot: int) -> tuple[float, int, int]:
        record = self._records[slot]
        assert record is not None
        return (float(self._created[slot]), self._seq[record.id], slot)

    def _group(self, record: Record) -> tuple[tuple[str, str] | None, float]:
        """The sequence a record's neighbours come from, and the largest time step allowed between them:
        its session (any step), else its kind's timeline (steps up to ``context_gap_seconds``), else none."""
        if record.session:
            return ("session", record.session), float("inf")
        if record.kind in self.config.timeline_kinds:
            return ("timeline", record.kind.value), self.config.context_gap_seconds
        return None, 0.0

    def _join_session(self, slot: int, record: Record) -> None:
        self._nbr[slot] = -1
        group, gap = self._group(record)
        if group is None:
            return
        members = self._sessions.setdefault(group, [])
        key = self._session_key(slot)
        position = bisect.bisect_left(members, key)
        members.insert(position, key)
        self._refresh(members, position - self._after, position + self._before, gap)

    def _leave_session(self, slot: int) -> None:
        record = self._records[slot]
        if record is None:
            return
        group, gap = self._group(record)
        if group is None:
            return
        members = self._sessions[group]
        position = bisect.bisect_left(members, self._session_key(slot))
        del members[position]
        self._nbr[slot] = -1
        if not members:
            del self._sessions[group]
            return
        self._refresh(members, position - self._after, position + self._before - 1, gap)

    def _refresh(self, members: list[tuple[float, int, int]], low: int, high: int, gap: float) -> None:
        """Recompute the neighbour rows of positions ``low..high`` (clipped) of one sequence; a neighbour
        counts only if no step on the way to it is longer than ``gap`` seconds."""
        before, after = self._before, self._after
        for position in range(max(low, 0), min(high, len(members) - 1) + 1):
            row = self._nbr[members[position][2]]
            row[:] = -1
            for c in range(before):  # nearest first
                p = position - 1 - c
                if p < 0 or members[p + 1][0] - members[p][0] > gap:
                    break
                row[c] = members[p][2]
            for c in range(after):
                p = position + 1 + c
                if p >= len(members) or members[p][0] - members[p - 1][0] > gap:
                    break
                row[before + c] = members[p][2]

    # -- reads -----------------------------------------------------------------------------
    def search(
        self,
        query: str,
        query_vec: np.ndarray,
        *,
        k: int,
        now: float,
        kinds: set[Kind] | None = None,
        statuses: set[Status] | frozenset[Status] = _ACTIVE,
        only: Callable[[Record], bool] | None = None,
        encode: Encoder | None = None,
    ) -> list[tuple[str, float]]:
        """The ``k`` best records for ``query`` as ``(id, score)``, best first; ``only``: a test a returned record
        must pass (records failing it still lend their words to their neighbours' context). ``encode`` (the
        embedding model, texts -> vectors) is handed to the judge, which may encode more of a record (once)."""
        if k <= 0 or len(self._lex) == 0:
            return []
        n = self._lex.capacity
        allowed_status = np.zeros(len(_STATUSES), dtype=bool)
        allowed_status[[_STATUS_CODE[Status(s)] for s in statuses]] = True
        context_mask = self._alive[:n] & allowed_status[self._status[:n]]
        result_mask = context_mask
        if kinds is not None:
            allowed_kind = np.zeros(len(_KINDS), dtype=bool)
            allowed_kind[[_KIND_CODE[Kind(x)] for x in kinds]] = True
            result_mask = context_mask & allowed_kind[self._kind[:n]]
        if only is not None:
            passing = np.zeros(n, dtype=bool)
            for slot in np.flatnonzero(result_mask):
                record = self._records[slot]
                passing[slot] = record is not None and only(record)
            result_mask = result_mask & passing
        if not result_mask.any():
            return []
        cfg = self.config
        vector = np.asarray(query_vec, dtype=np.float32).reshape(-1)
        if vector.shape[0] != self._dim:
            raise InvalidInputError(f"query vector has {vector.shape[0]} dimensions; this index holds {self._dim}")
        # einsum keeps this on one thread: a threaded BLAS gemv stalls when the cores are busy (it waits for
        # threads that cannot run), and the query encoder already holds a core.
        cosine = np.einsum("ij,j->i", self._emb[:n], vector)
        terms = tokenize(query)
        term_weights, term_freqs = self._lex.term_frequencies(terms)
        created = self._created[:n]
        spans = text_features.query_date_spans(query, now, cfg.utc_offset_hours)
        names = text_features.query_names(query)
        when = text_features.is_when_question(query)
        codes = [self._speakers[name] for name in names if name in self._speakers]
        inputs = RankInputs(
            cosine=cosine,
            term_weights=term_weights,
            term_freqs=term_freqs,
            lengths=self._lex.lengths,
            created_at=created,
            half_life=self._half_life[:n],
            context_mask=context_mask,
            result_mask=result_mask,
            neighbours=self._nbr[:n],
            date_match=text_features.date_match(created, spans, cfg.date_slack_days) if spans else None,
            time_words=self._stating_times(n) if when else None,
            name_match=np.isin(self._speaker[:n], codes) if codes else None,
            questions=self._question[:n],
            when_question=when,
        )
        scores = retrieval.rank(inputs, now, cfg)
        return self._top(scores, k, int(result_mask.sum()), set(terms), cosine, encode)

    def nearest(
        self, vector: np.ndarray, *, k: int, kinds: set[Kind], statuses: frozenset[Status] = _ACTIVE
    ) -> list[tuple[str, float]]:
        """The ``k`` indexed records of ``kinds`` closest in meaning to ``vector``, as ``(id, cosine)``, closest
        first: the near-duplicate check of a write (the same unit vectors recall ranks by)."""
        n = self._lex.capacity
        if k <= 0 or n == 0 or self._dim == 0:
            return []
        allowed_status = np.zeros(len(_STATUSES), dtype=bool)
        allowed_status[[_STATUS_CODE[Status(s)] for s in statuses]] = True
        allowed_kind = np.zeros(len(_KINDS), dtype=bool)
        allowed_kind[[_KIND_CODE[Kind(x)] for x in kinds]] = True
        mask = self._alive[:n] & allowed_status[self._status[:n]] & allowed_kind[self._kind[:n]]
        if not mask.any():
            return []
        unit = np.asarray(vector, dtype=np.float32).reshape(-1)
        if unit.shape[0] != self._dim:
            return []
        unit = unit / (float(np.linalg.norm(unit)) or 1.0)
        cosine = np.where(mask, np.einsum("ij,j->i", self._emb[:n], unit), -np.inf)
        top = np.argsort(-cosine, kind="stable")[: min(k, int(mask.sum()))]
        return [(self._id(int(slot)), float(cosine[slot])) for slot in top]

    def vector(self, id: str) -> np.ndarray:
        """The indexed (unit) vector of a record."""
        return np.array(self._emb[self._lex.slot(self.record(id).id)])

    def _stating_times(self, n: int) -> np.ndarray:
        """Which of the first ``n`` slots state a time, reading the texts not read yet (only "when" questions
        ask, so a cold load does not read every text for it)."""
        flags = self._time_words[:n]
        for slot in np.flatnonzero(flags < 0):
            record = self._records[slot]
            flags[slot] = record is not None and text_features.has_time_words(record.text)
        return flags == 1

    def _top(
        self,
        scores: np.ndarray,
        k: int,
        eligible: int,
        subject: set[str],
        cosine: np.ndarray,
        encode: Encoder | None = None,
    ) -> list[tuple[str, float]]:
        pool = min(max(k, self.config.conflict_pool), eligible)
        picked = np.argpartition(-scores, pool - 1)[:pool] if pool < len(scores) else np.arange(len(scores))
        top = [int(i) for i in picked if np.isfinite(scores[i])]
        top.sort(key=lambda i: (-scores[i], self._id(i)))
        if len(top) > 1 and self.config.conflict_pool > 1:
            vectors = self._emb[top]
            similarity = np.einsum("ij,kj->ik", vectors, vectors)
            claims = self._claims(top, similarity, subject)
            judge = self.judge
            changed = None if judge is None else judge.judge(self._pool(top, scores, similarity, cosine, encode))
            share = 1.0 if judge is None else judge.change_relevance
            new = conflicts.demote_conflicts(
                top, scores, self._created, similarity, claims, self.config, changed, share
            )
            rescored = dict(zip(top, new.tolist(), strict=True))
            top.sort(key=lambda i: (-rescored[i], self._id(i)))
        else:
            rescored = {i: float(scores[i]) for i in top}
        return [(self._id(i), float(rescored[i])) for i in top[:k]]

    def _claims(self, top: list[int], similarity: np.ndarray, subject: set[str]) -> list[Claim]:
        """What each top record asserts; built only for those that could conflict (a close partner or a key)."""
        threshold = min(self.config.conflict_cosine, self.config.conflict_update_cosine)
        has_partner = (similarity >= threshold).sum(axis=1) > 1  # the diagonal counts once
        claims = []
        for position, slot in enumerate(top):
            key = self._key(slot)
            if not (key or has_partner[position]):
                claims.append(Claim())
                continue
            record = self._records[slot]
            assert record is not None
            said = self._assertions[slot]
            if said is None:
                said = self._assertions[slot] = _Assertions(record)
            claims.append(
                Claim(
                    key=key,
                    subject=frozenset(subject.intersection(said.body_terms)),
                    values=said.values.difference(self._speakers),
                    update_terms=said.update_terms,
                )
            )
        return claims

    def _pool(
        self, top: list[int], scores: np.ndarray, similarity: np.ndarray, cosine: np.ndarray, encode: Encoder | None
    ) -> Pool:
        """The top records as the judge is given them; its reading of each is made on first asking and kept."""
        judge = self.judge
        assert judge is not None
        records: list[Record] = []
        for slot in top:
            record = self._records[slot]
            assert record is not None
            records.append(record)

        def reading(position: int) -> object:
            slot = top[position]
            if self._dialogue_turn(slot):
                return None  # what was said then, as an event is: only the plain rules replace it
            said = self._readings[slot]
            if said is _UNREAD:
                said = self._readings[slot] = judge.read(records[position], self._emb[slot])
            return said

        picked, created = scores[top], self._created[top]
        return Pool(
            records=records,
            vectors=self._emb[top],
            similarity=similarity,
            query_cosine=cosine[top],
            scores=picked,
            created_at=created,
            candidates=conflicts.candidates(picked, created, self.config, judge.change_relevance),
            speakers=self._speakers.keys(),
            reading=reading,
            encode=encode,
        )

    def _dialogue_turn(self, slot: int) -> bool:
        """Whether a record is a turn of a dialogue: it has a speaker and its context window (session or timeline)
        holds another speaker's turn. Whatever kind it was stored as, it is what someone said at that time, as a
        logged event is, so a later turn says what came next rather than replacing it in other words."""
        own = int(self._speaker[slot])
        if own < 0:
            return False
        around = self._speaker[self._nbr[slot][self._nbr[slot] >= 0]]
        return bool(((around >= 0) & (around != own)).any())

    def _text_size(self, slot: int) -> int:
        record = self._records[slot]
        return sys.getsizeof(record.text) + 100 * len(record.extra) if record is not None else 0

    def _id(self, slot: int) -> str:
        record = self._records[slot]
        return record.id if record is not None else ""

    def _key(self, slot: int) -> str:
        record = self._records[slot]
        return record.key if record is not None and record.kind is Kind.FACT else ""

    def nbytes(self) -> int:
        """Approximate memory held by this index, in bytes."""
        arrays = (
            self._emb,
            self._created,
            self._half_life,
            self._kind,
            self._status,
            self._alive,
            self._time_words,
            self._question,
            self._speaker,
            self._nbr,
        )
        per_record = 600 + 120  # the Record, its id, session entry and feature sets (rough)
        held = self._text_bytes + per_record * len(self)
        return int(sum(a.nbytes for a in arrays) + held + self._lex.nbytes())


def _index_text(record: Record) -> str:
    """What the word index reads: the text, plus a fact's key in words (``contact.method``)."""
    if record.kind is Kind.FACT and record.key:
        return f"{record.text} {record.key.replace('.', ' ').replace('_', ' ')}"
    return record.text
