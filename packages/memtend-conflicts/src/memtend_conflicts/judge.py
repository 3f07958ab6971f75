"""The judge of a change said in other words: "I live in Paris." / "I moved to Berlin last month." share no word,
yet the newer replaces the older. Two rules, both between notes or facts (a logged event stays true of its time):

- :func:`paraphrased_change`: the newer announces a change, states a value the older does not, is somewhat close
  in meaning and about as close to the query, and names nobody new;
- :func:`subject_change`: a change of the same subject, judged by how close the two are (closer still required
  unless each is the other's closest), what the newer's words say of it (a change cue, an act, how things stand)
  and how the newer reads as a change (the learned reading of :mod:`memtend_conflicts.reading`).

Each record is read once (:meth:`ParaphraseJudge.read`: its cues from :mod:`memtend_conflicts.subject` and
:mod:`memtend_conflicts.words`, its reading from its embedding) and kept by the core's index with the record.
The knobs are :class:`~memtend_conflicts.config.ConflictConfig`. Pure: numpy and the standard library only.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from memtend.policies.conflicts import Pool
from memtend.policies.text_features import statement_body, value_tokens
from memtend.records import Kind, Record

from memtend_conflicts import subject, words
from memtend_conflicts.config import ConflictConfig
from memtend_conflicts.reading import ChangeReading, reads_english

__all__ = [
    "Claim",
    "ParaphraseJudge",
    "Reading",
    "closest_to_each_other",
    "default_judge",
    "judged",
    "may_replace",
    "paraphrased_change",
    "subject_change",
]


@dataclass(frozen=True)
class Claim:
    """What a record asserts, for telling a change in other words from a look-alike."""

    values: frozenset[str] = frozenset()  # numbers, names, days it states (text_features.value_tokens), no speaker
    changes: bool = False  # it announces a change in any words ("moved to", "switched", "now", "these days")
    people: frozenset[str] = frozenset()  # whom it is about besides the user ("sister", "sarah's"; words.people)
    query_cosine: float = 0.0  # its closeness in meaning to the query
    names: frozenset[str] = frozenset()  # capitalised words opening its sentences that may be names ("Tom took")
    state: bool = False  # it describes how things are (a note or a fact), not something that happened (an event)
    first_person: bool = False  # it speaks in the first person ("I", "my", "we")
    current: bool = True  # no plan or wish, nothing long past (see subject.not_yet_or_long_ago)
    own_thing: bool = True  # does not open on another thing of its own (see subject.about_another_thing)
    acts: bool = False  # reports an act that ends or replaces a state (see subject.reports_an_act)
    adds: bool = False  # adds a value beside what holds ("as well", "too"; see subject.adds_to)
    occasion: bool = True  # tells of one occasion, not how things stand (see subject.tells_an_occasion)
    own_voice: bool = False  # speaks of the user or refers back (see subject.speaks_of_the_user)
    kinds: frozenset[str] = frozenset()  # kinds of value it holds: name, number, time (subject.value_kinds)
    asks: bool = False  # it asks a question ("Would a day shift suit me better?")
    begins: bool = False  # its only change cue begins something (see subject.only_begins)
    reads_as_change: float = math.nan  # learned probability that it replaces how things stood (reading)


class Reading:
    """What the judge reads of one note or fact, once: its values, its cues (Claim's fields), its learned reading,
    and, the first time a recall compares it on value-masked forms, the embedding of its masked form."""

    __slots__ = ("cues", "masked", "reads_as_change", "text", "values")

    def __init__(self, record: Record, vector: np.ndarray, reading: ChangeReading | None) -> None:
        text = record.text
        self.text = text
        self.values = value_tokens(text)
        self.cues: dict[str, Any] = {
            "changes": words.announces_change(text),
            "people": words.people(text),
            "names": words.leading_names(text),
            "first_person": words.first_person(text),
            "current": not subject.not_yet_or_long_ago(text),
            "own_thing": not subject.about_another_thing(text),
            "acts": subject.reports_an_act(text),
            "adds": subject.adds_to(text),
            "occasion": subject.tells_an_occasion(text),
            "own_voice": subject.speaks_of_the_user(text),
            "kinds": subject.value_kinds(text),
            "asks": "?" in statement_body(text),
            "begins": subject.only_begins(text),
        }
        # English only: the reading is at chance on other languages (their cues are read by subject and words)
        read = reading is not None and reads_english(text)
        self.reads_as_change = reading.probability(vector) if read and reading is not None else math.nan
        self.masked: np.ndarray | None = None


def paraphrased_change(newer: Claim, older: Claim, similarity: float, config: ConflictConfig) -> bool:
    """A change said in other words, between two records that describe how
    things are (notes, facts: a logged event stays true of its time). Its closeness to the query is checked in
    meaning, so the newer record need not score as high as the older on the query's words; when both speak of
    the user (first person, nobody else named) it may be half as far again below the older. A plan or something
    long past, a value added beside the older ("Added magnesium at night", "... on Wednesdays too"), a question and
    a newer statement that reads as a change less than ``conflict_reading_floor`` replace nothing."""
    about_self = newer.first_person and older.first_person and not newer.people and not older.people
    return (
        not newer.reads_as_change < config.conflict_reading_floor  # NaN (not read) passes
        and newer.state
        and older.state
        and newer.changes
        and newer.current
        and not newer.adds
        and not newer.asks
        and not newer.begins
        and similarity >= config.conflict_paraphrase_cosine
        and newer.query_cosine >= older.query_cosine - config.conflict_paraphrase_drop * (1.5 if about_self else 1.0)
        and not newer.people - older.people
        and bool(older.values | older.names)
        and bool((newer.values | newer.names) - older.values - older.names)
    )


def may_replace(newer: Claim, older: Claim) -> bool:
    """Could the newer statement replace the older at all, whatever its words? Both describe how things are (notes,
    facts), the newer is current (no plan, nothing long past), about the user's own thing (not opening on another
    thing that never refers back), does not add a value beside the older ("as well", "too") and names nobody the
    older does not."""
    return (
        newer.state
        and older.state
        and newer.current
        and newer.own_thing
        and not newer.adds
        and not newer.asks
        and not newer.people - older.people
    )


def subject_change(
    newer: Claim,
    older: Claim,
    similarity: float,
    subject_similarity: float,
    config: ConflictConfig,
    *,
    nearest: bool = False,
) -> bool:
    """A change of the same subject in other words: the two statements are at least ``conflict_subject_floor`` close
    as they are and, as judged (a ``conflict_subject_masked_weight`` share of it the cosine of their value-masked
    forms, ``subject_similarity``, the rest ``similarity``), either

    - ``conflict_subject_cosine`` close, or ``conflict_subject_near_cosine`` when they are ``nearest`` (each is the
      other's closest, see :func:`closest_to_each_other`) and the newer speaks of the user or refers back, does
      more than begin something (``subject.only_begins``: "Opened an ISA" may add an account beside the
      older) and reads as a change at least ``conflict_near_reading`` ("Bought a new pair of shoes" does not
      replace a gym membership), or, not in the user's voice, does more than begin something and reads as a change
      at least ``conflict_near_other_reading``; and the newer announces a change or reports an act; or
    - ``conflict_state_cosine`` close, ``nearest``, and the newer, with no change cue, tells how things stand (no
      single occasion: "Credentials live in Bitwarden"), does not open on a name the older holds as its value and
      holds a value of a kind the older holds (see ``subject.value_kinds``: a name for a name, a time for
      a time); or, when neither holds a value of any kind, ``conflict_state_plain_cosine`` close;

    - ``conflict_reading_cosine`` close, ``nearest``, and the newer reads as replacing how things stood
      (``reads_as_change``, the learned reading of ``reading``, at least ``conflict_reading_accept``),
      with or without a cue, unless it names a value the older holds or holds a value where the older holds none
      ("Hot-desking at the Sheffield hub" does not replace "Uses a standing desk at work");

    and the newer may replace the older (:func:`may_replace`), reads as a change at least
    ``conflict_reading_floor`` (or was not read) and is at most ``conflict_subject_drop`` less close to the query.
    A NaN masked cosine (not compared) is never a change, unless the masked share is 0."""
    if newer.reads_as_change < config.conflict_reading_floor:  # NaN (not read) passes
        return False
    weight = config.conflict_subject_masked_weight
    judged = similarity if weight == 0 else weight * subject_similarity + (1.0 - weight) * similarity
    needed = math.inf
    if newer.changes or newer.acts:
        needed = config.conflict_subject_cosine
        if newer.own_voice:
            sure = not newer.reads_as_change < config.conflict_near_reading  # NaN (not read) passes
        else:
            sure = newer.reads_as_change >= config.conflict_near_other_reading
        if nearest and not newer.begins and sure:
            needed = min(needed, config.conflict_subject_near_cosine)
    elif nearest and not newer.occasion and not newer.names & older.values:
        # how things stand now, said without a change cue, and not of the older's value ("Gemma recommended a
        # broker" is about the accountant Gemma, not a new one); holding a value of a kind the older holds (a name
        # for a name, a time for a time: "Credentials live in Bitwarden" / "My password manager is LastPass"), or,
        # closer, neither holding any ("I commute by train" / "I commute by bike every day")
        if newer.kinds & older.kinds:
            needed = config.conflict_state_cosine
        elif not (newer.kinds or older.kinds):
            needed = config.conflict_state_plain_cosine
    if (
        nearest
        and newer.reads_as_change >= config.conflict_reading_accept
        and not newer.names & older.values
        and (older.kinds or not newer.kinds)  # a value replaces a value (or neither states one)
    ):
        needed = min(needed, config.conflict_reading_cosine)  # it reads as replacing how things stood
    if not judged >= needed:  # NaN too
        return False
    return (
        similarity >= config.conflict_subject_floor
        and may_replace(newer, older)
        and newer.query_cosine >= older.query_cosine - config.conflict_subject_drop
    )


def closest_to_each_other(
    similarity: np.ndarray, when: np.ndarray, lean: np.ndarray | None = None
) -> tuple[list[int], list[int]]:
    """For each record, the closest in meaning of the records older than it, and of those newer than it (-1: none),
    indexed like ``when``: ``b`` and a newer ``a`` are closest to each other when ``older[a] == b and newer[b] == a``.
    ``lean`` (one number per record, when given) is added to every closeness to that record: with each record's
    closeness to the query in it, the closest is the record close in meaning that also answers the query.
    """
    is_older = when[None, :] < when[:, None]  # [a, b]: b is older than a
    sim = np.asarray(similarity, dtype=np.float64)
    if lean is not None:
        sim = sim + lean[None, :]
    older = np.where(is_older.any(axis=1), np.where(is_older, sim, -np.inf).argmax(axis=1), -1)
    newer = np.where(is_older.T.any(axis=1), np.where(is_older.T, sim, -np.inf).argmax(axis=1), -1)
    return older.tolist(), newer.tolist()


class ParaphraseJudge:
    """The :class:`~memtend.policies.conflicts.ConflictJudge` of this distribution: :func:`paraphrased_change` or
    :func:`subject_change` between two of the top records of a recall. ``reading``: the learned reading of a newer
    statement (default: the shipped weights; None: the rules alone)."""

    def __init__(self, config: ConflictConfig | None = None, reading: ChangeReading | str | None = "shipped") -> None:
        from memtend_conflicts.weights import shipped

        self.config = config or ConflictConfig()
        self.reading: ChangeReading | None = shipped() if isinstance(reading, str) else reading

    @property
    def change_relevance(self) -> float:
        return self.config.conflict_change_relevance

    def read(self, record: Record, vector: np.ndarray) -> Reading | None:
        """The record's reading; None for records that do not describe how things are (only notes and facts change
        in other words)."""
        if record.kind not in (Kind.NOTE, Kind.FACT):
            return None
        return Reading(record, vector, self.reading)

    def judge(self, pool: Pool) -> Callable[[int, int], bool]:
        """The test for one recall's top records: each record is turned into a :class:`Claim` when first asked
        about, and only records close enough to another to be judged (or holding a fact key) count at all."""
        cfg = self.config
        similarity = np.asarray(pool.similarity)
        masking = pool.encode is not None or cfg.conflict_subject_masked_weight == 0
        threshold = (
            min(cfg.conflict_paraphrase_cosine, cfg.conflict_subject_floor)
            if masking
            else cfg.conflict_paraphrase_cosine
        )
        keyed = np.array([r.kind is Kind.FACT and bool(r.key) for r in pool.records], dtype=bool)
        considered = keyed | ((similarity >= threshold).sum(axis=1) > 1)  # the diagonal counts once
        query_cosine = np.asarray(pool.query_cosine, dtype=np.float64)
        # closest in meaning, leaning toward the records that answer the query
        lean = cfg.conflict_nearest_query_weight * np.where(considered, query_cosine, 0.0)
        closest_older, closest_newer = closest_to_each_other(similarity, np.asarray(pool.created_at), lean)
        claims: dict[int, Claim | None] = {}

        def claim(i: int) -> Claim | None:
            if i not in claims:
                said = pool.reading(i) if considered[i] else None
                claims[i] = (
                    Claim(
                        values=said.values.difference(pool.speakers),
                        state=True,
                        query_cosine=float(query_cosine[i]),
                        reads_as_change=said.reads_as_change,
                        **said.cues,
                    )
                    if isinstance(said, Reading)
                    else None
                )
            return claims[i]

        masked = self._masked(pool, claim) if masking and cfg.conflict_subject_masked_weight != 0 else None
        return _pair_test(claim, similarity, closest_older, closest_newer, cfg, masked)

    def _masked(self, pool: Pool, claim: Callable[[int], Claim | None]) -> np.ndarray | None:
        """Cosines of the value-masked forms of the pool's records, for the pairs that may be a change of one subject
        in other words (NaN elsewhere; None when no pair may be). Only those pairs' records are encoded, each once:
        the vector is kept with the record's reading until the record changes."""
        cfg = self.config
        m = len(pool.records)
        claims = [claim(i) for i in range(m)]
        state = np.array([c is not None for c in claims], dtype=bool)
        may_be_newer = state & np.array([c is not None and c.current and c.own_thing and not c.adds for c in claims])
        query_cosine = np.array([0.0 if c is None else c.query_cosine for c in claims])
        similarity = np.asarray(pool.similarity)
        candidates = (
            may_be_newer[:, None]
            & state[None, :]
            & np.asarray(pool.candidates, dtype=bool)
            & (similarity >= cfg.conflict_subject_floor)
            & (query_cosine[:, None] >= query_cosine[None, :] - cfg.conflict_subject_drop)
        )
        pairs = []
        for a, b in np.argwhere(candidates).tolist():
            newer, older = claims[a], claims[b]
            if newer is not None and older is not None and may_replace(newer, older):
                pairs.append((a, b))
        if not pairs or pool.encode is None:
            return None
        readings = {p: pool.reading(p) for pair in pairs for p in pair}
        needed = sorted(p for p, r in readings.items() if isinstance(r, Reading) and r.masked is None)
        if needed:
            texts = []
            for p in needed:
                said = readings[p]
                assert isinstance(said, Reading)
                texts.append(subject.masked_subject(said.text))
            vectors = np.asarray(pool.encode(texts), dtype=np.float32)
            norms = np.linalg.norm(vectors, axis=1, keepdims=True)
            for p, vector in zip(needed, vectors / np.where(norms > 0, norms, 1.0), strict=True):
                said = readings[p]
                assert isinstance(said, Reading)
                said.masked = vector
        out = np.full(similarity.shape, np.nan, dtype=np.float64)
        for a, b in pairs:
            va, vb = readings[a], readings[b]
            assert isinstance(va, Reading) and isinstance(vb, Reading)
            assert va.masked is not None and vb.masked is not None
            out[a, b] = float(va.masked @ vb.masked)
        return out


def judged(
    claims: Sequence[Claim],
    similarity: np.ndarray,
    when: np.ndarray,
    config: ConflictConfig | None = None,
    masked: np.ndarray | None = None,
) -> Callable[[int, int], bool]:
    """The judge's test over claims already made (one per record, indexed like ``similarity`` and ``when``), as
    :meth:`ParaphraseJudge.judge` makes it from a recall's pool: for studies and tests of the rules in the core's
    ``demote_conflicts``. ``masked``: the cosines of value-masked forms, when judged on them."""
    cfg = config or ConflictConfig()
    lean = cfg.conflict_nearest_query_weight * np.array([c.query_cosine for c in claims], dtype=np.float64)
    closest_older, closest_newer = closest_to_each_other(similarity, when, lean)
    return _pair_test(claims.__getitem__, np.asarray(similarity), closest_older, closest_newer, cfg, masked)


def _pair_test(
    claim: Callable[[int], Claim | None],
    similarity: np.ndarray,
    closest_older: list[int],
    closest_newer: list[int],
    config: ConflictConfig,
    masked: np.ndarray | None,
) -> Callable[[int, int], bool]:
    def changed(a: int, b: int) -> bool:
        newer, older = claim(a), claim(b)
        if newer is None or older is None:
            return False
        sim = float(similarity[a, b])
        subject_sim = math.nan if masked is None else float(masked[a, b])
        nearest = closest_older[a] == b and closest_newer[b] == a
        return paraphrased_change(newer, older, sim, config) or subject_change(
            newer, older, sim, subject_sim, config, nearest=nearest
        )

    return changed


def default_judge() -> ParaphraseJudge:
    """The entry point ``memtend.conflict_judge`` names: the judge with its default knobs and the shipped reading."""
    return ParaphraseJudge()
