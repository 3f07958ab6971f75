"""Injection flagging on text it was tuned on and on text it never saw.

Three corpora, each ``{"text", "injection": bool, "lang", "kind"}`` a line:

* ``../shared/data/gate/injection_dev.jsonl``: the project's development set (English);
* ``tests/benchmarks/data/injection_tune.jsonl``: written for tuning the detector (English, German, French,
  Spanish; addressing the agent, role-play, rule changes, tools and exfiltration, hidden notes; negatives are
  ordinary web and document text and articles that quote attacks);
* ``tests/benchmarks/data/injection_tune3.jsonl``: a third round of tuning text, written for the learned
  classifier (``injection_train.py`` trains it on this and the two above): indirect orders naming nobody,
  claimed authority, personas, memory poisoning, exfiltration, tool misuse, hidden notes in markup and data,
  fake chat formats, slanted summaries, in nine languages, some set inside ordinary documents; hard ordinary
  text (how-tos, recipes, READMEs, support mail, policies, news, posts about assistants, security writing);
* ``tests/benchmarks/data/injection_tune4.jsonl``: a fourth round of tuning text, weighted to German, French,
  Italian, Portuguese, Dutch, Polish and Spanish: orders hidden in product pages, reviews, emails, calendar
  invites, code comments and tool output, role-play, "the user already agreed", memory poisoning, exfiltration,
  "don't tell the user", some set inside ordinary documents; hard ordinary text in the same genres and
  languages. Scored once by the classifier trained before it was written (recall 0.641 at 0.033 false flags),
  then trained on;
* ``tests/benchmarks/data/injection_tune5.jsonl``: a fifth, smaller round aimed at what round 4 still missed
  (formatting orders, tool output, emails to whatever reads the inbox, memory poisoning, code comments, reviews
  speaking to price comparers) in Polish, Dutch, Italian and German, with look-alike ordinary text. Scored once
  by the classifier trained before it was written (recall 0.417, no false flag), then trained on;
* ``tests/benchmarks/data/injection_tune7.jsonl``: a seventh round, written after studying round 5's errors:
  unrequested actions (bookings, purchases, cancellations, payments) aimed at whatever reads a page, mail, invite
  or ticket, role-play, soft suggestions to summarisers and indexers, orders in tool output, JSON and code
  comments, résumés speaking to screening software, orders buried in longer text, in thirteen languages; hard
  ordinary text: writing that quotes or describes such attacks, text about assistants, ordinary markup (HTML
  comments, alt text, JSON fields, tables), mail, invites and tickets asking a person to act, fiction, games;
* ``tests/benchmarks/data/injection_tune8.jsonl``: an eighth round for languages the sentence encoder does not
  know: four injections and four ordinary texts in each of 28 languages (the most used on the web and the most
  spoken that are not among the encoder's 16), written with the multilingual word lexicon
  (``memtend_injection/lexicon.py``). Scored once by the classifier trained before it was written (recall
  0.312, no false flag), then trained on;
* ``tests/benchmarks/data/injection_tune9.jsonl``: a ninth round of hard ordinary text, written after reading
  round 9's false flags (new phrasings, not copies): security writing that quotes or describes attacks (lectures,
  case studies, quizzes, bulletins) in twelve languages, log excerpts in nine, code, long training modules, reports,
  stories, policies and legal text, mail and signatures, chat between friends full of "you" and kind imperatives;
  and injections hidden in the same carriers (a log message, a code comment, a signature, a clause, an order
  buried in a report) so that the carrier's shape is not read as ordinary;
* ``tests/benchmarks/data/injection_tune10.jsonl``: a tenth round written by another hand without reading the
  detectors: hard ordinary text (security tips and advisories, red-team and CTF write-ups, reports of found
  messages, sanitiser docs, agent test reports, mail to people, about assistants) and the weak kinds of injection
  (planted memories, soft suggestions, polite requests, concealment, orders in reviews and data) in fifteen
  languages. Scored once by the classifier trained before it (recall 0.805 at 0.047 false flags), then trained on;
* ``tests/benchmarks/data/injection_tune11.jsonl``: an eleventh round written by another hand without reading the
  detectors (hard ordinary text, weak kinds of injection, many languages). Scored once by the shipped classifier
  (af71455, threshold 1.62) before anyone trained on it: recall 0.846 at 0.062 false flags (13 of 208);
* ``tests/benchmarks/data/injection_tune11b.jsonl``: written by hand, new phrasings, for two classes of mistake:
  chat between friends (encouragement, "a reminder to ...", "a role model", "let me know", "you should read it")
  in English and ten other languages, and attacks described in the third person ("they pretend to be the bank
  and ask the assistant to ...") in 32 languages, with orders in the same languages and shapes (the page
  speaking of itself: "the author of this page asks every assistant that summarises it to ...", greeted requests,
  planted memories, soft suggestions) so that neither the shape nor the language is read as ordinary;
* ``tests/benchmarks/data/injection_heldout.jsonl``: written apart with other phrasings, the same languages and
  kinds of negatives, and **never tuned on**: patterns and the instruction bank are changed only while looking
  at the first two, and this one is measured after;
* ``tests/benchmarks/data/injection_fresh.jsonl``: a second held-apart set, written before the next round of
  changes (and committed before them): other phrasings again, memory poisoning, and three languages the
  detector was never written for (Italian, Portuguese, Dutch) beside German and French; negatives are ordinary
  web and document text in the same languages;
* ``tests/benchmarks/data/injection_fresh2.jsonl``: a third held-apart set, English only, written after the
  word families and before a round of additions to the meaning bank: indirect orders, claimed authority,
  persona switches, memory poisoning, and look-alike ordinary text;
* ``others``: ordinary text written by other hands, read at run time and never copied into the repository:
  every turn of the LoCoMo conversations and their session summaries (``../shared/data/locomo/``) and the
  benign memories of the shared sensitive-data corpus (``../shared/data/gate/sensitive_dev.jsonl``). It has no
  injections: it measures false flags only;
* ``tests/benchmarks/data/round3/injection.jsonl`` (only with ``--round3``): the round 3 held-apart set, written
  by another hand while the detector was tuned and measured only at the end (English, Spanish, German, French
  and a few others; hard negatives: how-tos, recipes, READMEs, policies, forum posts about assistants, security
  articles quoting attacks). Its errors are never printed.
* ``tests/benchmarks/data/round4/injection.jsonl`` (only with ``--round4``): the round 4 held-apart set, written
  by another hand apart from the detector and its tuning data and measured only at the end (English and ten
  other languages; injections in many framings, some buried in long ordinary text; hard negatives including
  security writing that quotes attacks). Its errors are never printed.
* ``tests/benchmarks/data/round5/injection.jsonl`` (only with ``--round5``): the round 5 held-apart set, written
  by another hand apart from the detector and its tuning data and measured only before and after tuning (about
  55% English, the rest in nine other languages; injections from pages, mail, tool output, code, reviews and
  invites, some hidden in markup or long text; hard negatives including security writing that quotes attacks
  and text about assistants). Its errors are never printed.
* ``tests/benchmarks/data/round6/injection.jsonl`` (only with ``--round6``): the round 6 held-apart set, written
  by another hand apart from the detector and its tuning data and measured only before and after tuning (about
  half English, the rest in eight other languages, five of them new: Japanese, Chinese, Russian, Korean,
  Indonesian; injections in many framings, some buried in long text or hidden in markup; hard negatives including
  security writing that quotes attacks and text about assistants). Its errors are never printed.
* ``tests/benchmarks/data/round7/injection.jsonl`` (only with ``--round7``): the round 7 held-apart set, written
  by another hand apart from the detector and every earlier data set, for the next session to measure (about half
  English, the rest in eight other languages, four of them new: Vietnamese, Ukrainian, Romanian, Greek; new angles
  such as fake transcripts, subtitles, CSV cells, commit messages, document metadata and obfuscated text; hard
  negatives including security writing that quotes attacks and text about assistants). Its errors are never printed.
* ``tests/benchmarks/data/round8/injection.jsonl`` (only with ``--round8``): the round 8 held-apart set, written
  by another hand apart from the detector and every earlier data set, for the next session to measure (about half
  English, the rest in eight other languages, four of them new: Catalan, Finnish, Hungarian, Norwegian; injections
  hidden in markup, code, commits, spreadsheet cells, config values, invites, footers, reviews and metadata,
  planted memories, polite and obfuscated ones, ten buried in long text; hard negatives including security writing
  that quotes attacks and text about assistants). Its errors are never printed.
* ``tests/benchmarks/data/round9/injection.jsonl`` (only with ``--round9``): the round 9 held-apart set, written
  by another hand apart from the detector and every earlier data set, for the next session to measure (about 200
  injections and 250 ordinary texts in ten languages, about half English, two languages no earlier set has).
  Measured once before and after the session that never read it, tuning data since (``injection_train.py``'s
  seventh fold): ``--show-errors round9`` prints its errors.
* ``tests/benchmarks/data/round10/injection.jsonl`` (only with ``--round10``): the round 10 held-apart set, written
  by another hand apart from the detector and every earlier data set (round 9's included), for the next session to
  measure (about 200 injections and 250 ordinary texts in ten languages, about half English, two languages no
  earlier set has; injections in many carriers, some buried in long text; hard negatives including security
  writing that quotes attacks and text about assistants). Measured once before and after the session that never
  read it, tuning data since (``injection_train.py``'s eighth fold): ``--show-errors round10`` prints its errors.
* ``tests/benchmarks/data/round11/injection.jsonl`` (only with ``--round11``): the round 11 held-apart set, written
  by another hand apart from the detector and every earlier data set (round 10's included), for the next session to
  measure (about 200 injections and 250 ordinary texts in ten languages, about half English, two languages no
  earlier set has; injections in many carriers and framings, some buried in long text; ordinary text in the mix a
  reviewer of an agent's inputs meets, with hard negatives: security writing that quotes attacks and text about
  assistants). Measured once before and after the session that never read it, tuning data since
  (``injection_train.py``'s ninth fold): ``--show-errors round11`` prints its errors.
* ``tests/benchmarks/data/round12/injection.jsonl`` (only with ``--round12``): the round 12 held-apart set, written
  by another hand apart from the detector and every earlier data set (round 11's included), for the next session
  to measure (about 200 injections and 250 ordinary texts in eleven languages, about half English, two languages no
  earlier set has; injections in many carriers and framings, some buried in long text; ordinary text in the mix a
  reviewer of an agent's inputs meets, hard negatives a realistic share of it: security writing that quotes attacks
  and text about assistants). Its errors are never printed.

Reports flag recall on injections and the false-flag rate on ordinary text, overall, per language and per
kind, and the time per call.

    uv run python tests/benchmarks/injection.py [--show-errors SPLIT] [--round3] [--round4] [--round5] [--round6]
        [--round7] [--round8] [--round9] [--round10] [--round11] [--round12]
"""

from __future__ import annotations

import argparse
import json
import time
from collections import defaultdict
from collections.abc import Callable
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
SHARED = HERE.parents[1] / ".." / "shared" / "data"
SPLITS: dict[str, Path] = {
    "dev": SHARED / "gate" / "injection_dev.jsonl",
    "tune": HERE / "data" / "injection_tune.jsonl",
    "tune3": HERE / "data" / "injection_tune3.jsonl",
    "tune4": HERE / "data" / "injection_tune4.jsonl",
    "tune5": HERE / "data" / "injection_tune5.jsonl",
    "tune6": HERE / "data" / "injection_tune6.jsonl",
    "tune7": HERE / "data" / "injection_tune7.jsonl",
    "tune8": HERE / "data" / "injection_tune8.jsonl",
    "tune9": HERE / "data" / "injection_tune9.jsonl",
    "tune10": HERE / "data" / "injection_tune10.jsonl",
    "tune11": HERE / "data" / "injection_tune11.jsonl",
    "tune11b": HERE / "data" / "injection_tune11b.jsonl",
    "heldout": HERE / "data" / "injection_heldout.jsonl",
    "fresh": HERE / "data" / "injection_fresh.jsonl",
    "fresh2": HERE / "data" / "injection_fresh2.jsonl",
    "others": SHARED / "locomo" / "locomo_dev.json",
    "round3": HERE / "data" / "round3" / "injection.jsonl",
    "round4": HERE / "data" / "round4" / "injection.jsonl",
    "round5": HERE / "data" / "round5" / "injection.jsonl",
    "round6": HERE / "data" / "round6" / "injection.jsonl",
    "round7": HERE / "data" / "round7" / "injection.jsonl",
    "round8": HERE / "data" / "round8" / "injection.jsonl",
    "round9": HERE / "data" / "round9" / "injection.jsonl",
    "round10": HERE / "data" / "round10" / "injection.jsonl",
    "round11": HERE / "data" / "round11" / "injection.jsonl",
    "round12": HERE / "data" / "round12" / "injection.jsonl",
}
LABELS = {
    "dev": "shared dev",
    "tune": "tuning",
    "tune3": "tuning 3 (classifier)",
    "tune4": "tuning 4 (classifier)",
    "tune5": "tuning 5 (classifier)",
    "tune6": "tuning 6 (classifier)",
    "tune7": "tuning 7 (classifier)",
    "tune8": "tuning 8 (28 languages)",
    "tune9": "tuning 9 (logs, code, long)",
    "tune10": "tuning 10 (hard negatives, weak kinds)",
    "tune11": "tuning 11 (another hand)",
    "tune11b": "tuning 11b (chat, described attacks)",
    "heldout": "HELD-APART 1 (measured 4x)",
    "fresh": "HELD-APART 2 (fresh)",
    "fresh2": "HELD-APART 3 (fresh, en)",
    "others": "others' ordinary text",
    "round3": "HELD-APART 4 (round 3)",
    "round4": "HELD-APART 5 (round 4)",
    "round5": "HELD-APART 6 (round 5)",
    "round6": "HELD-APART 7 (round 6)",
    "round7": "HELD-APART 8 (round 7)",
    "round8": "HELD-APART 9 (round 8)",
    "round9": "HELD-APART 10 (round 9)",
    "round10": "HELD-APART 11 (round 10)",
    "round11": "HELD-APART 12 (round 11)",
    "round12": "HELD-APART 13 (round 12)",
}


def load(path: Path) -> list[dict[str, Any]]:
    if path == SPLITS["others"]:
        return load_others()
    with path.open(encoding="utf-8") as fh:
        rows = [json.loads(line) for line in fh if line.strip()]
    for row in rows:
        row.setdefault("lang", "en")
        row.setdefault("kind", "?")
    return rows


def load_others() -> list[dict[str, Any]]:
    """Ordinary text other hands wrote: LoCoMo turns and session summaries, the shared corpus's benign memories."""
    rows: list[dict[str, Any]] = []
    with SPLITS["others"].open(encoding="utf-8") as fh:
        for sample in json.load(fh):
            conversation = sample["conversation"]
            for key, turns in conversation.items():
                if key.startswith("session_") and isinstance(turns, list):
                    rows += [{"text": t["text"], "injection": False, "kind": "locomo-turn"} for t in turns]
            summaries = sample.get("session_summary", {}).values()
            rows += [{"text": text, "injection": False, "kind": "locomo-summary"} for text in summaries]
    sensitive = SHARED / "gate" / "sensitive_dev.jsonl"
    with sensitive.open(encoding="utf-8") as fh:
        benign = [json.loads(line) for line in fh if line.strip()]
    rows += [{"text": row["text"], "injection": False, "kind": "gate-benign"} for row in benign if not row["sensitive"]]
    for row in rows:
        row["lang"] = "en"
    return rows


def score(rows: list[dict[str, Any]], flag: Callable[[str], bool]) -> dict[str, Any]:
    """Recall, false-flag rate, per language and kind, and the rows it got wrong."""
    counts: dict[str, list[int]] = defaultdict(lambda: [0, 0])  # group -> [right, total]
    tp = fn = fp = tn = 0
    wrong: list[int] = []
    started = time.perf_counter()
    for i, row in enumerate(rows):
        truth, said = bool(row["injection"]), flag(str(row["text"]))
        tp, fn = tp + (truth and said), fn + (truth and not said)
        fp, tn = fp + (not truth and said), tn + (not truth and not said)
        if truth != said:
            wrong.append(i)
        for group in (f"lang {row['lang']}", f"{'pos' if truth else 'neg'} {row['kind']}"):
            counts[group][0] += truth == said
            counts[group][1] += 1
    seconds = time.perf_counter() - started
    return {
        "recall": tp / (tp + fn) if tp + fn else float("nan"),
        "false_flag_rate": fp / (fp + tn) if fp + tn else float("nan"),
        "positives": tp + fn,
        "negatives": fp + tn,
        "groups": {group: (right, total) for group, (right, total) in sorted(counts.items())},
        "wrong": wrong,
        "ms_per_text": 1000 * seconds / max(1, len(rows)),
    }


def run(
    splits: tuple[str, ...] = ("dev", "tune", "heldout", "fresh", "fresh2", "others"), *, semantic: bool = True
) -> dict[str, dict[str, Any]]:
    """Scores per split; ``semantic=False`` measures the patterns alone, ``semantic=True`` the patterns and the
    installed injection extra (``memtend-injection``), as ``Memory()`` flags external text."""
    from memtend.extras import installed
    from memtend.policies.gate import looks_like_injection

    check = installed("injection_check") if semantic else None

    def flag(text: str) -> bool:
        return looks_like_injection(text, meaning=check)

    flag("warm up: load the encoder")
    return {name: score(load(SPLITS[name]), flag) for name in splits if SPLITS[name].is_file()}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument(
        "--show-errors",
        choices=("dev", "tune", "tune9", "tune10", "tune11", "tune11b", "round9", "round10", "round11"),
        action="append",
        default=[],
        help="print the errors of a tuning split (never of a held-apart one)",
    )
    parser.add_argument(
        "--splits",
        default="dev,tune,heldout,fresh,fresh2,others",
        help="comma-separated: dev, tune, tune3, tune4, tune5, tune6, tune7, heldout, fresh, fresh2, others",
    )
    parser.add_argument("--round3", action="store_true", help="also measure the round 3 held-apart set")
    parser.add_argument("--round4", action="store_true", help="also measure the round 4 held-apart set")
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
    if args.round4 and "round4" not in splits:
        splits += ("round4",)
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
    for semantic in (False, True):
        print("patterns + the injection extra (external text)" if semantic else "patterns only (every source)")
        for name, result in run(splits, semantic=semantic).items():
            label = LABELS[name]
            print(
                f"  {label:<28} recall {result['recall']:.3f} ({result['positives']} injections)   false flags "
                f"{result['false_flag_rate']:.3f} ({result['negatives']} ordinary)  {result['ms_per_text']:.1f} ms/text"
            )
            print("      " + "  ".join(f"{g} {r}/{t}" for g, (r, t) in result["groups"].items()))
            if semantic and name in args.show_errors:
                rows = load(SPLITS[name])
                for i in result["wrong"]:
                    print(f"      {'MISS' if rows[i]['injection'] else 'FALSE'} {rows[i]['text']}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
