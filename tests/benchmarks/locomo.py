"""LoCoMo turn-level evidence retrieval, LLM-free (see ../shared/data/locomo/README.md).

One user per conversation; each turn is one memory ``"<speaker>: <text>"`` (plus ``" [shares <caption>]"``
for image turns) timestamped with its session's date; "now" is the last session's date. Every question
recalls the top k memories of its user, and its evidence turns are scored:

- frac@k: mean fraction of a question's evidence found in the top k;
- R_all@k: share of questions whose evidence is all in the top k;

for categories 1-4, category 5 (adversarial) and all five. memtend goes through its public API
(``Memory.user(...)``, then ``recall``) with the turns written six ways: events in one ``log_many`` per
conversation (``memtend``), one ``log(text, at=...)`` per turn (``memtend-log``), or as notes, one
``remember(text, at=...)`` per turn (``memtend-notes``, as an agent's memories are written), each with its
``session`` and with its time only, no session (the ``-times`` systems: what most users pass). Two baselines are
computed in the same run: BM25 (rank-bm25 defaults, stopwords dropped, no stemming) and all-MiniLM-L6-v2 cosine
alone.

The split, by conversation, is fixed here (``SPLITS``): ranking changes are chosen on the tuning part (conv-26,
conv-30) and only then measured on the held-out report part (conv-41, 42, 43), whose figure is the one that counts.
It has been the split since the first ranking work (see tests/benchmarks/RESULTS.md for which rounds looked at
which part).

Nothing from a question's annotations (answer, evidence, category) is used at query time.

    uv run python tests/benchmarks/locomo.py [--data PATH] [--limit-conversations N] [--split tune|report|all]
        [--systems memtend,memtend-times,memtend-log,memtend-notes-times,...]
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import re
import sys
import tempfile
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

REPO = Path(__file__).resolve().parents[2]
DEFAULT_DATA = REPO / ".." / "shared" / "data" / "locomo" / "locomo_dev.json"
SPLITS: dict[str, tuple[str, ...]] = {
    "tune": ("conv-26", "conv-30"),
    "report": ("conv-41", "conv-42", "conv-43"),
}
GROUPS: dict[str, frozenset[int]] = {
    "cat 1-4": frozenset({1, 2, 3, 4}),
    "cat 5": frozenset({5}),
    "all five": frozenset({1, 2, 3, 4, 5}),
}
KS = (5, 10)
DEPTH = max(KS)


# -- data ------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Turn:
    dia_id: str
    text: str  # the memory: "<speaker>: <text>[ [shares <caption>]]"
    session: str
    at: float  # epoch seconds (UTC) of the session


@dataclass(frozen=True)
class Question:
    text: str
    evidence: frozenset[str]
    category: int


@dataclass
class Conversation:
    sample_id: str
    turns: list[Turn]
    questions: list[Question]
    now: float


def parse_session_date(text: str) -> float:
    """``"1:56 pm on 8 May, 2023"`` -> epoch seconds, read as UTC."""
    when = dt.datetime.strptime(" ".join(text.split()), "%I:%M %p on %d %B, %Y")
    return when.replace(tzinfo=dt.timezone.utc).timestamp()


_EVIDENCE = re.compile(r"D\s*:?\s*(\d+)\s*:\s*(\d+)")


def normalise_evidence(raw: Iterable[str]) -> list[str]:
    """Split and normalise evidence ids: "D8:6; D9:17" -> two ids, "D:11:26" -> D11:26, "D30:05" -> D30:5."""
    out: list[str] = []
    for item in raw:
        for session, turn in _EVIDENCE.findall(str(item)):
            out.append(f"D{int(session)}:{int(turn)}")
    return out


def memory_text(turn: dict[str, Any]) -> str:
    text = f"{turn['speaker']}: {turn['text']}"
    if turn.get("blip_caption"):
        text += f" [shares {turn['blip_caption']}]"
    return text


def load(path: str | Path = DEFAULT_DATA, conversations: Sequence[str] | None = None) -> list[Conversation]:
    """The conversations (all, or those named), with evidence normalised and unusable questions dropped."""
    with open(path, encoding="utf-8") as f:
        samples = json.load(f)
    out: list[Conversation] = []
    for sample in samples:
        if conversations is not None and sample["sample_id"] not in conversations:
            continue
        conv = sample["conversation"]
        turns: list[Turn] = []
        numbers = sorted(int(m.group(1)) for key in conv if (m := re.fullmatch(r"session_(\d+)", key)) and conv[key])
        for number in numbers:
            at = parse_session_date(conv[f"session_{number}_date_time"])
            for turn in conv[f"session_{number}"]:
                (dia_id,) = normalise_evidence([turn["dia_id"]])
                turns.append(Turn(dia_id, memory_text(turn), f"session_{number}", at))
        known = {t.dia_id for t in turns}
        questions = []
        for qa in sample["qa"]:
            evidence = frozenset(e for e in normalise_evidence(qa.get("evidence", [])) if e in known)
            if evidence:
                questions.append(Question(qa["question"], evidence, int(qa["category"])))
        out.append(Conversation(sample["sample_id"], turns, questions, now=max(t.at for t in turns)))
    if conversations is not None:
        order = {name: i for i, name in enumerate(conversations)}
        out.sort(key=lambda c: order[c.sample_id])
    return out


# -- scoring ---------------------------------------------------------------------------------------


@dataclass
class Ranked:
    """One system's ranking for every question of some conversations, plus its timings."""

    rows: list[tuple[str, Question, list[str]]] = field(default_factory=list)  # (conversation, question, ids)
    ingest_seconds: float = 0.0
    latencies: list[float] = field(default_factory=list)  # seconds per recall


def scores(ranked: Ranked, conversations: Iterable[str] | None = None) -> dict[str, dict[str, float]]:
    """Metrics (percent) per question group, over the named conversations (default all)."""
    wanted = set(conversations) if conversations is not None else None
    out: dict[str, dict[str, float]] = {}
    for group, categories in GROUPS.items():
        rows = [
            (q, ids) for conv, q, ids in ranked.rows if q.category in categories and (wanted is None or conv in wanted)
        ]
        metrics: dict[str, float] = {"questions": float(len(rows))}
        for k in KS:
            found = [len(q.evidence.intersection(ids[:k])) / len(q.evidence) for q, ids in rows]
            metrics[f"frac@{k}"] = 100.0 * float(np.mean(found)) if rows else float("nan")
            metrics[f"R_all@{k}"] = 100.0 * float(np.mean([f == 1.0 for f in found])) if rows else float("nan")
        out[group] = metrics
    return out


def latency_summary(latencies: Sequence[float]) -> dict[str, float]:
    if not latencies:
        return {"median_ms": float("nan"), "p95_ms": float("nan")}
    ms = np.asarray(latencies) * 1000.0
    return {"median_ms": float(np.median(ms)), "p95_ms": float(np.percentile(ms, 95))}


# -- systems ---------------------------------------------------------------------------------------


SYSTEMS = (
    "memtend",  # events, one log_many per conversation, with sessions
    "memtend-times",  # the same without sessions
    "memtend-log",  # events, one log per turn, with sessions
    "memtend-log-times",
    "memtend-notes",  # notes, one remember per turn, with sessions
    "memtend-notes-times",
    "memtend-index",  # the ranking on a UserIndex (no storage): the tuning harness; events
    "memtend-index-times",
    "memtend-index-notes",
    "memtend-index-notes-times",
    "bm25",
    "minilm",
)
WRITES = ("batch", "log", "remember")  # log_many per conversation; one log per turn; one remember per turn (notes)


def run_memtend(
    conversations: Sequence[Conversation],
    *,
    sessions: bool = True,
    conflict_judge: Any = "auto",
    writes: str = "batch",
) -> Ranked:
    """memtend through its public API, on an embedded Chroma in a temporary folder.

    ``sessions=False`` writes each turn with its time only (no ``session``), as most users would;
    ``writes``: ``"batch"`` (one ``log_many`` per conversation), ``"log"`` (one ``log(text, at=...)`` per turn) or
    ``"remember"`` (the turns stored as notes, one ``remember(text, at=...)`` per turn, as an agent's memories are);
    ``conflict_judge``: Memory's (``"auto"``: the installed memtend-conflicts; None: the newest-wins rules alone).
    """
    from memtend import Event, Memory
    from memtend.extras import AUTO

    if writes not in WRITES:
        raise ValueError(f"writes must be one of {WRITES}")
    judge = AUTO if conflict_judge == "auto" else conflict_judge
    out = Ranked()
    with (
        tempfile.TemporaryDirectory(prefix="memtend-locomo-") as folder,
        Memory(path=folder, conflict_judge=judge) as mem,
    ):
        mem.user("warm-up").recall("warm up the embedding model", k=1)
        for conv in conversations:
            user = mem.user(conv.sample_id)
            started = time.perf_counter()
            if writes == "batch":
                user.log_many(
                    Event(text=t.text, at=t.at, session=t.session if sessions else "", metadata={"dia_id": t.dia_id})
                    for t in conv.turns
                )
            else:
                write = user.log if writes == "log" else user.remember
                for t in conv.turns:
                    write(t.text, at=t.at, session=t.session if sessions else "", metadata={"dia_id": t.dia_id})
            user.recall("index warm-up", k=1, now=conv.now)  # the first recall loads the user's index
            out.ingest_seconds += time.perf_counter() - started
            for q in conv.questions:
                started = time.perf_counter()
                hits = user.recall(q.text, k=DEPTH, now=conv.now)
                out.latencies.append(time.perf_counter() - started)
                out.rows.append((conv.sample_id, q, [str(h.record.extra.get("dia_id", "")) for h in hits]))
    return out


def run_index(
    conversations: Sequence[Conversation],
    config: Any = None,
    embed: Callable[[list[str]], np.ndarray] | None = None,
    *,
    sessions: bool = True,
    conflict_judge: Any = "auto",
    notes: bool = False,
) -> Ranked:
    """memtend's ranking straight on a ``UserIndex`` (no storage): the harness used for tuning.

    ``sessions=False`` indexes the turns with their times only (no session); ``notes``: as notes, not events;
    ``conflict_judge`` as Memory's."""
    from memtend.extras import AUTO, resolve
    from memtend.index.user_index import UserIndex
    from memtend.records import Kind, Record

    judge = resolve("conflict_judge", AUTO if conflict_judge == "auto" else conflict_judge)

    embed = embed or _embed
    out = Ranked()
    for conv in conversations:
        started = time.perf_counter()
        index = UserIndex(config, judge)
        records = [
            Record(
                id=t.dia_id,
                user_id=conv.sample_id,
                kind=Kind.NOTE if notes else Kind.EVENT,
                text=t.text,
                created_at=t.at,
                updated_at=t.at,
                session=t.session if sessions else "",
                extra={"dia_id": t.dia_id},
            )
            for t in conv.turns
        ]
        index.upsert(records, embed([t.text for t in conv.turns]))
        out.ingest_seconds += time.perf_counter() - started
        vectors = embed([q.text for q in conv.questions])
        for q, vector in zip(conv.questions, vectors, strict=True):
            started = time.perf_counter()
            hits = index.search(q.text, vector, k=DEPTH, now=conv.now)
            out.latencies.append(time.perf_counter() - started)
            out.rows.append((conv.sample_id, q, [rid for rid, _ in hits]))
    return out


def bm25_tokens(text: str) -> list[str]:
    from memtend.index.lexical import tokenize

    return tokenize(text, stemming=False)


def run_bm25(conversations: Sequence[Conversation]) -> Ranked:
    """rank-bm25's BM25Okapi with its defaults over lowercase words, stopwords dropped."""
    from rank_bm25 import BM25Okapi

    out = Ranked()
    for conv in conversations:
        started = time.perf_counter()
        bm25 = BM25Okapi([bm25_tokens(t.text) for t in conv.turns])
        out.ingest_seconds += time.perf_counter() - started
        ids = [t.dia_id for t in conv.turns]
        for q in conv.questions:
            started = time.perf_counter()
            ranked = _top(bm25.get_scores(bm25_tokens(q.text)), DEPTH)
            out.latencies.append(time.perf_counter() - started)
            out.rows.append((conv.sample_id, q, [ids[i] for i in ranked]))
    return out


def run_minilm(conversations: Sequence[Conversation], embed: Callable[[list[str]], np.ndarray] | None = None) -> Ranked:
    """all-MiniLM-L6-v2 cosine alone."""
    embed = embed or _embed
    out = Ranked()
    for conv in conversations:
        started = time.perf_counter()
        matrix = embed([t.text for t in conv.turns])
        out.ingest_seconds += time.perf_counter() - started
        ids = [t.dia_id for t in conv.turns]
        for q in conv.questions:
            started = time.perf_counter()
            ranked = _top(matrix @ embed([q.text])[0], DEPTH)
            out.latencies.append(time.perf_counter() - started)
            out.rows.append((conv.sample_id, q, [ids[i] for i in ranked]))
    return out


def _top(values: np.ndarray, k: int) -> list[int]:
    return [int(i) for i in np.argsort(-np.asarray(values), kind="stable")[:k]]


_VECTORS: dict[str, np.ndarray] = {}  # text -> embedding, so repeated runs in one process embed once


def _embed(texts: list[str]) -> np.ndarray:
    from memtend.storage.embeddings import embed

    missing = [t for t in dict.fromkeys(texts) if t not in _VECTORS]
    if missing:
        _VECTORS.update(zip(missing, embed(missing), strict=True))
    return np.stack([_VECTORS[t] for t in texts]) if texts else np.zeros((0, 384), dtype=np.float32)


# -- ablation: each ranking change, cumulatively, on UserIndex ----------------------------------------

ABLATION: tuple[tuple[str, dict[str, Any]], ...] = (
    (
        "BM25 words only, stemmed (k1 1.5, b 0.75)",
        {
            "meaning_weight": 0.0,
            "context_share": 0.0,
            "k1": 1.5,
            "b": 0.75,
            "recency_weight": 0.0,
            "date_bonus": 0.0,
            "time_words_bonus": 0.0,
            "name_bonus": 0.0,
            "question_factor": 1.0,
            "conflict_pool": 0,
        },
    ),
    ("+ length normalisation mostly off (k1 1.2, b 0.1)", {"k1": 1.2, "b": 0.1}),
    ("+ MiniLM cosine, min-max fused with equal weights", {"meaning_weight": 1.0}),
    ("+ context window (2 before, 1 after) as one document", {"context_share": 0.67}),
    ("+ date bonus (query names the record's date)", {"date_bonus": 0.33}),
    ("+ time words on when/how-long questions", {"time_words_bonus": 0.13}),
    ("+ named speaker bonus", {"name_bonus": 0.02}),
    ("+ records that only ask a question x0.9", {"question_factor": 0.9}),
    ("+ recency 0.01 (events: half-life 30 days)", {"recency_weight": 0.01}),
    ("+ conflicts: newest wins (= the defaults)", {"conflict_pool": 30}),
)


def ablation(
    data_path: str | Path = DEFAULT_DATA, conversations: Sequence[str] | None = None, *, sessions: bool = True
) -> list[dict[str, Any]]:
    """frac@5 / frac@10 (all five categories) per part after each cumulative ranking change."""
    from dataclasses import replace

    from memtend.policies.retrieval import RetrievalConfig

    convs = load(data_path, conversations)
    names = [c.sample_id for c in convs]
    parts = {part: [n for n in names if n in members] for part, members in SPLITS.items()}
    parts = {part: members for part, members in parts.items() if members}
    parts["all"] = names
    config = RetrievalConfig()
    rows = []
    for label, change in ABLATION:
        config = replace(config, **change)
        ranked = run_index(convs, config, sessions=sessions)
        row: dict[str, Any] = {"change": label}
        for part, members in parts.items():
            metrics = scores(ranked, members)["all five"]
            row[part] = (metrics["frac@5"], metrics["frac@10"])
        rows.append(row)
    assert config == RetrievalConfig(), "the last ablation step must be memtend's defaults"
    return rows


def format_ablation(rows: list[dict[str, Any]]) -> str:
    parts = [key for key in rows[0] if key != "change"]
    lines = [
        "Ranking changes, cumulative (UserIndex, all five categories, frac@5 / frac@10)",
        f"| change | {' | '.join(parts)} |",
        "|---|" + "---|" * len(parts),
    ]
    for row in rows:
        cells = " | ".join(f"{row[p][0]:.1f} / {row[p][1]:.1f}" for p in parts)
        lines.append(f"| {row['change']} | {cells} |")
    return "\n".join(lines)


# -- running and reporting -------------------------------------------------------------------------


def run(
    data_path: str | Path = DEFAULT_DATA,
    conversations: Sequence[str] | None = None,
    *,
    systems: Sequence[str] = ("memtend", "memtend-times", "bm25", "minilm"),
    conflict_judge: Any = "auto",
) -> dict[str, Any]:
    """Run the benchmark and return metrics per system, per part and per question group.

    ``result["systems"][name]["parts"][part][group]["frac@5"]``, with parts "tune", "report" and "all"
    (a part is left out when none of its conversations ran), plus ingest time and recall latency.
    """
    convs = load(data_path, conversations)
    names = [c.sample_id for c in convs]
    runners: dict[str, Callable[[Sequence[Conversation]], Ranked]] = {
        "memtend": lambda c: run_memtend(c, conflict_judge=conflict_judge),
        "memtend-times": lambda c: run_memtend(c, sessions=False, conflict_judge=conflict_judge),
        "memtend-log": lambda c: run_memtend(c, conflict_judge=conflict_judge, writes="log"),
        "memtend-log-times": lambda c: run_memtend(c, sessions=False, conflict_judge=conflict_judge, writes="log"),
        "memtend-notes": lambda c: run_memtend(c, conflict_judge=conflict_judge, writes="remember"),
        "memtend-notes-times": lambda c: run_memtend(
            c, sessions=False, conflict_judge=conflict_judge, writes="remember"
        ),
        "memtend-index": lambda c: run_index(c, conflict_judge=conflict_judge),
        "memtend-index-times": lambda c: run_index(c, sessions=False, conflict_judge=conflict_judge),
        "memtend-index-notes": lambda c: run_index(c, conflict_judge=conflict_judge, notes=True),
        "memtend-index-notes-times": lambda c: run_index(c, sessions=False, conflict_judge=conflict_judge, notes=True),
        "bm25": run_bm25,
        "minilm": run_minilm,
    }
    parts: dict[str, list[str]] = {part: [n for n in names if n in members] for part, members in SPLITS.items()}
    parts = {part: members for part, members in parts.items() if members}
    parts["all"] = names
    result: dict[str, Any] = {
        "conversations": names,
        "parts": parts,
        "turns": sum(len(c.turns) for c in convs),
        "questions": sum(len(c.questions) for c in convs),
        "systems": {},
    }
    for name in systems:
        ranked = runners[name](convs)
        result["systems"][name] = {
            "parts": {part: scores(ranked, members) for part, members in parts.items()},
            "ingest_seconds": ranked.ingest_seconds,
            "latency": latency_summary(ranked.latencies),
        }
    return result


def format_report(result: dict[str, Any]) -> str:
    lines = [
        f"LoCoMo retrieval, LLM-free: {len(result['conversations'])} conversations "
        f"({', '.join(result['conversations'])}), {result['turns']} turns, {result['questions']} questions",
    ]
    metrics = [f"{m}@{k}" for m in ("frac", "R_all") for k in KS]
    for part, members in result["parts"].items():
        label = {"tune": "tuning part", "report": "held-out report part", "all": "all run"}[part]
        lines.append(f"\n== {label}: {', '.join(members)}")
        for group in GROUPS:
            counts = {int(s["parts"][part][group]["questions"]) for s in result["systems"].values()}
            lines.append(f"-- {group} ({'/'.join(map(str, sorted(counts)))} questions)")
            lines.append(f"   {'system':<26}" + "".join(f"{m:>10}" for m in metrics))
            for name, system in result["systems"].items():
                row = system["parts"][part][group]
                lines.append(f"   {name:<26}" + "".join(f"{row[m]:>10.1f}" for m in metrics))
    lines.append("\n== timings (all run)")
    for name, system in result["systems"].items():
        lat = system["latency"]
        lines.append(
            f"   {name:<26} ingest {system['ingest_seconds']:7.2f} s   recall median {lat['median_ms']:6.2f} ms"
            f"   p95 {lat['p95_ms']:6.2f} ms"
        )
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--data", default=str(DEFAULT_DATA), help="path to locomo_dev.json")
    parser.add_argument("--limit-conversations", type=int, default=None, help="run only the first N conversations")
    parser.add_argument("--split", choices=("tune", "report", "all"), default="all")
    parser.add_argument(
        "--systems",
        default="memtend,memtend-times,bm25,minilm",
        help="comma-separated, of: " + ", ".join(SYSTEMS),
    )
    parser.add_argument(
        "--ablation", action="store_true", help="print the effect of each ranking change instead (UserIndex only)"
    )
    parser.add_argument("--times-only", action="store_true", help="with --ablation: turns logged without sessions")
    parser.add_argument(
        "--no-judge",
        action="store_true",
        help="without memtend-conflicts (conflict_judge=None): newest-wins rules only",
    )
    args = parser.parse_args(argv)
    if not Path(args.data).is_file():
        print(f"LoCoMo data not found at {args.data}; pass --data PATH", file=sys.stderr)
        return 2
    names = [s["sample_id"] for s in json.loads(Path(args.data).read_text(encoding="utf-8"))]
    if args.split != "all":
        names = [n for n in names if n in SPLITS[args.split]]
    if args.limit_conversations is not None:
        names = names[: args.limit_conversations]
    if args.ablation:
        print(format_ablation(ablation(args.data, names, sessions=not args.times_only)))
        return 0
    systems = [s.strip() for s in args.systems.split(",") if s.strip()]
    result = run(args.data, names, systems=systems, conflict_judge=None if args.no_judge else "auto")
    print(format_report(result))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
