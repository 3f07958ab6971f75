"""Conflicts between an old statement and a newer one that changes it, in other words.

Four corpora of ``{"old", "new", "query", "change": bool}`` pairs (``tests/benchmarks/data/``):
``conflicts_tune.jsonl`` (tuned on), ``conflicts_tune2.jsonl`` (tuned on: 70 changes that share no content word
with the value they replace and 82 look-alikes, each with its ``domain``; thresholds were chosen by
cross-validation over the tuning sets split by domain), ``conflicts_heldout.jsonl`` (written apart, not tuned
on in the session that wrote it; tuned on in the next) and ``conflicts_fresh.jsonl`` (25 changes and 25 look-alikes
with other subjects and wording, written and committed before the next round of changes, measured once before and
once after each round of changes, its errors never looked at). In a
*change* pair the newer statement replaces the older one, often sharing no word with it ("I live in Paris." /
"I moved to Berlin last month."); in an *unrelated* pair the newer one is about something else that looks alike
("My sister moved to Berlin"). Each pair is stored as two notes of one user, 40 and 5 days old, among 30 filler
notes, and the pair's question is recalled (top 10):

- detected (newer wins): the newer note of a change pair ranks above the older one, beside the same figure by
  ranking alone (no conflict handling);
- false merges: the older note of an unrelated pair is demoted by conflict handling (placed just below the newer
  one), with how many ranks it fell on average;
- fillers demoted: filler notes among the top 10 by ranking alone that conflict handling demoted (each is a false
  merge of unrelated records too), summed over all pairs. Demoted means scored lower: the scores of the whole pool
  conflict handling compares are read, so a note pushed out of the top 10 by a newer one taking an older one's place
  (its own score unchanged) is not counted (before that rule nothing could push a note out without demoting it).

With ``--round3`` it also measures ``round3/conflicts.jsonl``: changes that share no content word with the value
they replace and look-alike controls, written by another hand and measured once before and once after a round of
changes; tuning data since (its errors may be shown). ``conflicts_tune3.jsonl`` (39 changes, 39 look-alikes, by
domain) was written for the next round, before its changes. ``conflicts_tune4.jsonl``: one change and one look-alike
about a relative ("Meine Schwester ist nach Berlin gezogen") in each of 16 languages (de, fr, es, it, nl, sv, pl, tr
first, as a probe of ``memtend_conflicts/relations.py``; pt, ru, fi, cs, hu, id, ja, el written after it).
``conflicts_tune5.jsonl``: 44 changes and 44 look-alikes in 22 languages, written by hand for the lexicon of
``memtend_conflicts/cues.py`` (look-alikes of the same subject: additions, plans, one occasion, another person).
``conflicts_tune7.jsonl``: 70 changes and 70 look-alikes by a new hand (English changes far in meaning, hard
look-alikes), a fold of its own in ``conflicts_cv.py``, measured there first before its errors were read.
With ``--round5`` it also measures
``round5/conflicts.jsonl``: the same kinds of pairs from everyday user memory, written by another hand apart from the
tuning and measured only before and after a round of changes; tuning data since (a fold of its own in
``conflicts_cv.py``), like the fresh set, which had been measured many times. With ``--round6`` it also measures
``round6/conflicts.jsonl``: a further such set by another hand, measured only before and after a round of changes;
tuning data since (a fold of its own in ``conflicts_cv.py``, measured there before its errors were read).
With ``--round7`` it also measures ``round7/conflicts.jsonl``: another such set by another hand, written apart from
the detector and every earlier set, for the next session to measure before and after its tuning. With ``--round8`` it
also measures ``round8/conflicts.jsonl``: one more such set by another hand, written apart from the detector and
every earlier set (round 7's included), for the session after that. With ``--round9`` it also measures
``round9/conflicts.jsonl``: a further such set by another hand (56 changes and 55 look-alikes, each look-alike with an
older statement of its own), written apart from the detector and every earlier set, for the next session. With
``--round10`` it also measures ``round10/conflicts.jsonl``: one more such set by another hand (changes and as many
look-alikes, some said indirectly, some in other languages), written apart from the detector and every earlier set
(round 9's included), for the session after that. With ``--round11`` it also measures ``round11/conflicts.jsonl``:
a further such set by another hand (changes and as many look-alikes, each look-alike with an older statement of its
own, some said indirectly, some in other languages), written apart from the detector and every earlier set (round
10's included), for the next session. With ``--round12`` it also measures ``round12/conflicts.jsonl``: one more such
set by another hand (changes and as many look-alikes, each look-alike with an older statement of its own, some said
indirectly, some about the very same subject without replacing it, some in other languages), written apart from the
detector and every earlier set (round 11's included), for the session after this one.

``--cost`` also times recall through the public API with and without the value-masked comparison, and without the
judge. ``--no-judge`` measures without ``memtend-conflicts`` (``conflict_judge=None``: the newest-wins rules alone).

    uv run python tests/benchmarks/conflicts.py [--round3] [--round5] [--round6] [--round7] [--round8] [--round9]
        [--round10] [--round11] [--round12] [--cost] [--no-judge]
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np

HERE = Path(__file__).resolve().parent
SPLITS = {
    "tune": HERE / "data" / "conflicts_tune.jsonl",
    "tune2": HERE / "data" / "conflicts_tune2.jsonl",
    "tune3": HERE / "data" / "conflicts_tune3.jsonl",
    "tune4": HERE / "data" / "conflicts_tune4.jsonl",
    "tune5": HERE / "data" / "conflicts_tune5.jsonl",
    "tune6": HERE / "data" / "conflicts_tune6.jsonl",
    "tune7": HERE / "data" / "conflicts_tune7.jsonl",
    "heldout": HERE / "data" / "conflicts_heldout.jsonl",
    "fresh": HERE / "data" / "conflicts_fresh.jsonl",
    "round3": HERE / "data" / "round3" / "conflicts.jsonl",
    "round5": HERE / "data" / "round5" / "conflicts.jsonl",
    "round6": HERE / "data" / "round6" / "conflicts.jsonl",
    "round7": HERE / "data" / "round7" / "conflicts.jsonl",
    "round8": HERE / "data" / "round8" / "conflicts.jsonl",
    "round9": HERE / "data" / "round9" / "conflicts.jsonl",
    "round10": HERE / "data" / "round10" / "conflicts.jsonl",
    "round11": HERE / "data" / "round11" / "conflicts.jsonl",
    "round12": HERE / "data" / "round12" / "conflicts.jsonl",
}
LABELS = {
    "tune": "tuning",
    "tune2": "tuning 2 (by domain)",
    "tune3": "tuning 3 (by domain)",
    "tune4": "tuning 4 (16 languages)",
    "tune5": "tuning 5 (22 languages)",
    "tune6": "tuning 6 (new hands)",
    "tune7": "tuning 7 (a new hand)",
    "heldout": "held-apart 1 (tuned on since)",
    "fresh": "HELD-APART 2 (fresh)",
    "round3": "tuned on since (round 3)",
    "round5": "HELD-APART 4 (round 5)",
    "round6": "HELD-APART 5 (round 6)",
    "round7": "HELD-APART 6 (round 7)",
    "round8": "HELD-APART 7 (round 8)",
    "round9": "HELD-APART 8 (round 9)",
    "round10": "HELD-APART 9 (round 10)",
    "round11": "HELD-APART 10 (round 11)",
    "round12": "HELD-APART 11 (round 12)",
}
# the sets conflicts_cv.py folds over and conflicts_reading_train.py trains the reading on (the fresh set and the
# held-apart rounds not yet measured after their round are never among them)
TUNING = (
    "tune",
    "tune2",
    "tune3",
    "tune4",
    "tune5",
    "tune6",
    "tune7",
    "heldout",
    "round3",
    "round5",
    "round6",
    "round7",
    "round8",
    "round9",
    "round10",
    "round11",
)
DAY = 86_400.0
NOW = 1_767_225_600.0  # 2026-01-01
TOP = 10  # the top of a recall: the newer note must rank here, above the older
POOL = 30  # RetrievalConfig.conflict_pool: the records conflict handling compares
DEFAULT = object()  # score()'s judge: the paraphrased-change judge with the given knobs
FILLERS = [
    "Prefers short answers without bullet points.",
    "The garage door code was changed by the installer.",
    "Likes hiking in the Alps in autumn.",
    "Allergic to cats, fine with dogs.",
    "Wants the monthly report on the first Monday.",
    "The printer on floor 2 jams with thick paper.",
    "Reads mostly science fiction.",
    "Birthday is on 14 February.",
    "Grandmother lives in Porto.",
    "Plays five-a-side football on Thursdays.",
    "Keeps the spare key with the neighbour at number 12.",
    "The car insurance renews in November.",
    "Coffee: flat white, no sugar.",
    "Started a pottery class in the spring.",
    "The kids' dentist is on Baker Street.",
    "Uses a standing desk at work.",
    "Saving for a trip to Japan.",
    "The boiler was serviced in October.",
    "Prefers window seats on flights.",
    "Is learning to play the piano.",
    "Their project codename is Falcon.",
    "Wants reminders the evening before appointments.",
    "The team lunch is every second Friday.",
    "Doesn't like video calls before 10.",
    "Has a sister who is a pilot.",
    "Runs 5k on Sunday mornings.",
    "The sofa delivery is expected in spring.",
    "Volunteers at the food bank once a month.",
    "Bought a bread machine last year.",
    "The laptop is a 2021 model.",
]


def load(path: Path) -> list[dict[str, Any]]:
    with path.open(encoding="utf-8") as fh:
        return [json.loads(line) for line in fh if line.strip()]


def judge_of(config: Any = None, reading: Any = "shipped") -> Any:
    """The paraphrased-change judge with these knobs (a ConflictConfig; None: its defaults) and learned reading of
    the newer statement ("shipped"; None: the rules alone)."""
    from memtend_conflicts import ParaphraseJudge

    return ParaphraseJudge(config, reading)


def _ranked(
    pair: dict[str, Any], judge: Any, vectors: dict[str, np.ndarray], encode: Any = None, retrieval: Any = None
) -> dict[str, tuple[int, float]]:
    """The pair's notes among the fillers, ranked for its question with this judge (None: none) and ranking."""
    from memtend.index.user_index import UserIndex
    from memtend.records import Kind, Record

    def note(id: str, text: str, days_ago: float) -> Record:
        at = NOW - days_ago * DAY
        return Record(id=id, user_id="u", kind=Kind.NOTE, text=text, created_at=at, updated_at=at)

    records = [note(f"f{i}", text, 60 + i) for i, text in enumerate(FILLERS)]
    records += [note("old", pair["old"], 40), note("new", pair["new"], 5)]
    index = UserIndex(retrieval, judge)
    index.upsert(records, np.stack([vectors[r.text] for r in records]))
    # as many as the conflict pool holds (the same pool as a top 10 would check), so a note that leaves the top 10
    # because a newer one took an older one's place is not mistaken for one demoted; ranks past 10 read as 10
    hits = index.search(pair["query"], vectors[pair["query"]], k=POOL, now=NOW, encode=encode)
    return {rid: (min(rank, TOP), score) for rank, (rid, score) in enumerate(hits)}


class CachedEncoder:
    """The embedding model, each text encoded once per run (the value-masked forms the index asks for)."""

    def __init__(self) -> None:
        self.vectors: dict[str, np.ndarray] = {}

    def __call__(self, texts: list[str]) -> np.ndarray:
        from memtend.storage.embeddings import embed

        missing = sorted(set(texts) - set(self.vectors))
        if missing:
            self.vectors.update(zip(missing, embed(missing), strict=True))
        return np.stack([self.vectors[t] for t in texts])


def score(
    rows: list[dict[str, Any]], config: Any = None, encoder: CachedEncoder | None = None, judge: Any = DEFAULT
) -> dict[str, Any]:
    """Detections, false merges and fillers demoted over ``rows``, with the judge of these knobs (a ConflictConfig;
    None: its defaults), or with ``judge`` instead (None: the newest-wins rules alone)."""
    from memtend.policies.retrieval import RetrievalConfig
    from memtend.storage.embeddings import embed

    texts = sorted({t for row in rows for t in (row["old"], row["new"], row["query"])} | set(FILLERS))
    vectors = dict(zip(texts, embed(texts), strict=True))
    encode = encoder or CachedEncoder()
    used, plain = judge_of(config) if judge is DEFAULT else judge, RetrievalConfig(conflict_pool=0)
    counts = {
        "changes": 0,
        "detected": 0,
        "demoted": 0,
        "newer_wins_plain": 0,
        "unrelated": 0,
        "false_merges": 0,
        "fillers_demoted": 0,
    }
    missed: list[str] = []
    merged: list[str] = []
    lost: list[int] = []  # ranks a falsely merged older note fell (10: out of the top 10)
    for row in rows:
        with_conflicts, alone = _ranked(row, used, vectors, encode), _ranked(row, None, vectors, retrieval=plain)
        far = (TOP, -np.inf)
        old_on_top = alone.get("old", far)[0] < TOP
        demoted = old_on_top and with_conflicts.get("old", far)[1] < alone["old"][1] - 1e-12
        counts["fillers_demoted"] += sum(
            1
            for rid, (rank, was) in alone.items()
            if rid.startswith("f") and rank < TOP and with_conflicts.get(rid, far)[1] < was - 1e-12
        )
        if row["change"]:
            counts["changes"] += 1
            wins = with_conflicts.get("new", far)[0] < with_conflicts.get("old", far)[0]
            counts["detected"] += wins
            counts["demoted"] += demoted
            counts["newer_wins_plain"] += alone.get("new", far)[0] < alone.get("old", far)[0]
            if not wins:
                missed.append(f"{row['old']} -> {row['new']}")
        else:
            counts["unrelated"] += 1
            counts["false_merges"] += demoted
            if demoted:
                merged.append(f"{row['old']} -> {row['new']}")
                lost.append(with_conflicts.get("old", far)[0] - alone["old"][0])
    changes, unrelated = max(1, counts["changes"]), max(1, counts["unrelated"])
    return {
        **counts,
        "detection_rate": counts["detected"] / changes,
        "newer_wins_plain_rate": counts["newer_wins_plain"] / changes,
        "false_merge_rate": counts["false_merges"] / unrelated,
        "merge_ranks_lost": lost,
        "missed": missed,
        "merged": merged,
    }


def run(
    splits: tuple[str, ...] = ("tune", "tune2", "heldout", "fresh"), judge: Any = DEFAULT
) -> dict[str, dict[str, Any]]:
    return {name: score(load(SPLITS[name]), judge=judge) for name in splits}


def recall_cost(pairs: int = 70, queries: int = 40, rounds: int = 3) -> dict[str, dict[str, float]]:
    """What comparing value-masked forms costs a recall, through the public API on an in-process Chroma: one user
    holding the fillers and the old and new notes of ``pairs`` tuning-2 pairs (many possible changes: the costly
    case), recalled with their questions. ``without``: the default, closeness judged as the notes are (nothing
    more encoded); ``first``: the first recall of each question with half of it judged on value-masked forms
    (``conflict_subject_masked_weight=0.5``: masked forms encoded as pairs come up); ``warm``: later recalls so;
    ``no judge``: without memtend-conflicts (the newest-wins rules alone). Warm recalls of the three arms are
    interleaved, the order turned every round. Milliseconds, p50 and p95."""
    import time

    import chromadb
    from memtend import Memory
    from memtend.index.user_index import UserIndex
    from memtend_conflicts import ConflictConfig

    rows = load(SPLITS["tune2"])
    chosen = rows[: pairs // 2] + [r for r in rows if not r["change"]][: pairs - pairs // 2]
    masked = judge_of(ConflictConfig(conflict_subject_masked_weight=0.5, conflict_subject_cosine=0.25))
    plain_judge = judge_of()
    memory = Memory(client=chromadb.EphemeralClient(), collection_prefix="conflictcost", conflict_judge=masked)
    user = memory.user("cost")
    for i, text in enumerate(FILLERS):
        user.remember(text, at=NOW - (60 + i) * DAY)
    for row in chosen:
        user.remember(row["old"], at=NOW - 40 * DAY)
        user.remember(row["new"], at=NOW - 5 * DAY)
    asked = [row["query"] for row in chosen][:queries]
    search = UserIndex.search

    def judged_by(judge: Any) -> Any:
        def patched(self: UserIndex, *args: Any, **kwargs: Any) -> Any:
            self.judge = judge
            try:
                return search(self, *args, **kwargs)
            finally:
                self.judge = masked

        return patched

    arms = {"without": judged_by(plain_judge), "no judge": judged_by(None)}
    times: dict[str, list[float]] = {"without": [], "first": [], "warm": [], "no judge": []}

    def timed(arm: str, query: str) -> None:
        UserIndex.search = arms.get(arm, search)  # type: ignore[method-assign]
        try:
            started = time.perf_counter()
            user.recall(query, k=5, now=NOW)
            times[arm].append(1000 * (time.perf_counter() - started))
        finally:
            UserIndex.search = search  # type: ignore[method-assign]

    user.recall("warm up", now=NOW)
    for query in asked:
        timed("first", query)
    order = ("without", "warm", "no judge")
    for round_ in range(rounds):
        for query in asked:
            for arm in order[round_ % 3 :] + order[: round_ % 3]:
                timed(arm, query)
    memory.close()
    return {
        arm: {"p50": float(np.percentile(ms, 50)), "p95": float(np.percentile(ms, 95)), "n": float(len(ms))}
        for arm, ms in times.items()
    }


def index_cost(rounds: int = 10, queries: int | None = None) -> dict[str, dict[str, float]]:
    """The index's own share of that cost: one user index holding the fillers and every tuning-2 pair, searched with
    the questions once to fill the masked forms, then ``rounds`` times per arm, interleaved (the order turned every
    round): ``without`` (the default: judged as the notes are), ``warm`` (half judged on value-masked forms) and
    ``no judge`` (the newest-wins rules alone). Milliseconds, p50 and p95."""
    import time

    from memtend.index.user_index import UserIndex
    from memtend.records import Kind, Record
    from memtend.storage.embeddings import embed

    rows = load(SPLITS["tune2"])
    said = [(f"f{i}", text, 60.0 + i) for i, text in enumerate(FILLERS)]
    for i, row in enumerate(rows):
        said += [(f"old{i}", row["old"], 40.0), (f"new{i}", row["new"], 5.0)]
    records = [
        Record(id=rid, user_id="u", kind=Kind.NOTE, text=text, created_at=NOW - d * DAY, updated_at=NOW - d * DAY)
        for rid, text, d in said
    ]
    from memtend_conflicts import ConflictConfig

    default = judge_of()
    masked = judge_of(ConflictConfig(conflict_subject_masked_weight=0.5, conflict_subject_cosine=0.25))
    index = UserIndex(None, masked)
    index.upsert(records, embed([r.text for r in records]))
    asked = sorted({row["query"] for row in rows})[:queries]
    vectors = embed(asked)
    encode = CachedEncoder()
    for query, vector in zip(asked, vectors, strict=True):
        index.search(query, vector, k=5, now=NOW, encode=encode)
    times: dict[str, list[float]] = {"without": [], "warm": [], "no judge": []}
    judges = {"without": default, "warm": masked, "no judge": None}
    order = ("without", "warm", "no judge")
    for round_ in range(rounds):
        for query, vector in zip(asked, vectors, strict=True):
            for arm in order[round_ % 3 :] + order[: round_ % 3]:
                index.judge = judges[arm]
                started = time.perf_counter()
                index.search(query, vector, k=5, now=NOW, encode=encode)
                times[arm].append(1000 * (time.perf_counter() - started))
    return {
        arm: {"p50": float(np.percentile(ms, 50)), "p95": float(np.percentile(ms, 95)), "n": float(len(ms))}
        for arm, ms in times.items()
    }


def main(argv: list[str] | None = None) -> int:
    import argparse

    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument(
        "--show-errors",
        choices=("tune", "tune2", "tune3", "tune4", "heldout", "round3", "round5", "round6", "round7", "fresh"),
        action="append",
        default=[],
        help="list misses and false merges of a set tuned on (rounds 3, 5, 6, 7 are tuning data now)",
    )
    parser.add_argument(
        "--splits", default="tune,tune2,heldout,fresh", help="comma-separated: tune, tune2, heldout, fresh"
    )
    parser.add_argument("--cost", action="store_true", help="also time recall with and without masked forms")
    parser.add_argument(
        "--no-judge", action="store_true", help="without memtend-conflicts: the newest-wins rules alone"
    )
    parser.add_argument("--round3", action="store_true", help="also measure the round 3 held-apart set")
    parser.add_argument("--round5", action="store_true", help="also measure the round 5 held-apart set")
    parser.add_argument("--round6", action="store_true", help="also measure the round 6 held-apart set")
    parser.add_argument("--round7", action="store_true", help="also measure the round 7 held-apart set")
    parser.add_argument("--round8", action="store_true", help="also measure the round 8 held-apart set")
    parser.add_argument("--round9", action="store_true", help="also measure the round 9 held-apart set")
    parser.add_argument("--round10", action="store_true", help="also measure the round 10 held-apart set")
    parser.add_argument("--round11", action="store_true", help="also measure the round 11 held-apart set")
    parser.add_argument("--round12", action="store_true", help="also measure the round 12 held-apart set")
    args = parser.parse_args(argv)
    splits = tuple(s.strip() for s in args.splits.split(",") if s.strip())
    if args.round3 and "round3" not in splits:
        splits += ("round3",)
    if args.round5 and "round5" not in splits:
        splits += ("round5",)
    if args.round6 and "round6" not in splits:
        splits += ("round6",)
    if args.round7 and "round7" not in splits:
        splits += ("round7",)
    if args.round8 and "round8" not in splits:
        splits += ("round8",)
    if args.round9 and "round9" not in splits:
        splits += ("round9",)
    if args.round10 and "round10" not in splits:
        splits += ("round10",)
    if args.round11 and "round11" not in splits:
        splits += ("round11",)
    if args.round12 and "round12" not in splits:
        splits += ("round12",)
    for name, result in run(splits, None if args.no_judge else DEFAULT).items():
        label = LABELS[name]
        print(
            f"{label:<28} detected (newer wins) {result['detected']}/{result['changes']} "
            f"({result['detection_rate']:.2f}; ranking alone {result['newer_wins_plain_rate']:.2f})  "
            f"false merges {result['false_merges']}/{result['unrelated']} ({result['false_merge_rate']:.2f}"
            + (f"; the older fell {np.mean(result['merge_ranks_lost']):.1f} ranks" if result["false_merges"] else "")
            + f")  fillers demoted {result['fillers_demoted']}"
        )
        if name in args.show_errors:
            for line in result["missed"]:
                print(f"    MISSED {line}")
            for line in result["merged"]:
                print(f"    MERGED {line}")
    if args.cost:
        for what, cost in (("recall", recall_cost()), ("index search", index_cost())):
            for arm, figures in cost.items():
                p50, p95, n = figures["p50"], figures["p95"], figures["n"]
                print(f"{what} {arm:<8} p50 {p50:.2f} ms  p95 {p95:.2f} ms  ({n:.0f} calls)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
