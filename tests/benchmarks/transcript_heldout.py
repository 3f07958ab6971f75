"""Transcript compaction on transcripts the summariser was never tuned on (held apart, like LoCoMo's report split).

A second generator, written apart from ``transcript_compaction.py`` with other domains, templates, vocabulary,
tool names and id shapes: lowercase words joined by hyphens, UUIDs, URLs, file and bucket paths, dotted ids,
slashed invoice numbers, bare numbers and mixed-case tokens, in JSON under unusual keys or inside sentences.
The user's constraints are phrased without the usual marker words (limits, prohibitions, requests to be asked
first, preferences, standing orders), and some are revised later in the conversation: then the latest version
must survive and the earlier one must not be reported as current.

Never tune on it: changes to the summariser are made while looking at the tuning benchmark and the unit tests,
then measured here.

    uv run python tests/benchmarks/transcript_heldout.py [--n 40] [--seed 11] [--json]
    uv run python tests/benchmarks/transcript_heldout.py --seeds 1-20   # revision marking over many seeds
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import random
import string
import sys
from pathlib import Path
from typing import Any

from memtend.transcripts.compaction import count_tokens
from memtend.transcripts.messages import Message, ToolCall
from memtend.transcripts.summary import llm_summarizer

_spec = importlib.util.spec_from_file_location(
    "memtend_bench_transcript_tuning", Path(__file__).with_name("transcript_compaction.py")
)
assert _spec is not None and _spec.loader is not None
tuning = importlib.util.module_from_spec(_spec)
sys.modules[_spec.name] = tuning
_spec.loader.exec_module(tuning)

DOMAINS = [
    (
        "We're rebuilding the kitchen at the Hollis Street flat; source the cabinets, book the fitters and keep the "
        "paperwork straight.",
        ["cabinets", "worktop", "fitters", "plumber", "skip hire", "tiles", "invoice"],
    ),
    (
        "Our lab needs the sequencing runs from October re-processed with the new pipeline and the results shared "
        "with the partner institutes.",
        ["run", "sample sheet", "pipeline", "aligner", "coverage", "bucket", "partner"],
    ),
    (
        "Get the spring campaign for the garden-furniture line out the door: audiences, creatives, landing pages.",
        ["audience", "banner", "landing page", "budget", "newsletter", "coupon", "segment"],
    ),
    (
        "The cloud bill doubled last quarter. Find what is idle, shut it down, and show me the savings.",
        ["instance", "volume", "snapshot", "load balancer", "cluster", "bucket", "reservation"],
    ),
    (
        "Review the supplier contracts that renew in January and prepare the renegotiation letters.",
        ["contract", "clause", "renewal", "supplier", "letter", "redline", "signature"],
    ),
]

# (first version, revised version or None): none uses a constraint marker word of the first generator.
CONSTRAINTS: list[tuple[str, str | None]] = [
    ("Keep each order under 500 dollars.", "Scratch that, each order can go up to 800 dollars now."),
    ("Run anything that touches billing past me first.", None),
    ("Weekends are off limits for changes to production.", None),
    ("Customer names stay out of the logs and the exports.", None),
    ("Leave the legacy folder alone.", None),
    ("Ping me before you merge anything into main.", None),
    ("I'd like every report as a CSV file.", "Change of plan: send the reports as Excel workbooks from now."),
    ("Stay below 40 requests a minute against the vendor API.", None),
    ("Hold off on emailing the partners until Monday.", "Update: you can email the partners from Thursday."),
    ("Two reviewers per change, minimum.", None),
    ("Cap refunds at 50 euros each.", "Let's raise the refund cap to 75 euros each."),
    ("Let me see the draft before it goes out.", None),
    ("Staging first, production only after I say so.", None),
    ("The budget tops out at 2,000 euros for the whole job.", "New ceiling for the whole job: 2,500 euros."),
    ("Skip the Friday afternoon slots when booking anything.", None),
    ("Use British spelling in every document you write.", None),
    ("Nothing gets deleted without my okay.", None),
    ("Keep me posted after each step.", None),
    ("Book the fitters for mornings only.", "Afternoons are fine for the fitters too now, but not Fridays."),
    ("Send nothing to the legal team yet.", None),
    ("Copy Priya on anything that goes to the partners.", None),
    ("The shared drive is read-only for you.", None),
]
WRAPPERS = [
    "{c}",
    "One thing before you go on: {c}",
    "Cheers. {c}",
    "{c} It burned us last year.",
    "Right, got it. {c} Carry on.",
    "Also, {lc}",
]
REVISION_WRAPPERS = ["{c}", "Hmm, thinking about it again. {c}", "{c} Sorry for the back and forth."]
SMALL_TALK = [
    "carry on",
    "Sounds right.",
    "Hm, odd. Why would that be?",
    "brb, coffee",
    "Lovely, thanks.",
    "Is that normal?",
    "ok",
    "Good stuff, what does that leave?",
    "Back now.",
    "Right.",
]
AGENT_LINES = [
    "I went through {n} entries for the {w}; nothing unusual so far.",
    "The {w} numbers look consistent with last week.",
    "Looking at the {w} next.",
    "That {w} is the largest item on the list.",
    "I found {n} candidates for the {w}.",
]

READ_TOOLS = ["lookup_supplier", "list_instances", "query_runs", "get_quote", "search_catalog", "read_contract"]
WRITE_TOOLS = [
    "create_bucket",
    "submit_order",
    "publish_landing_page",
    "schedule_fitter",
    "upload_results",
    "send_letter",
    "terminate_instance",
    "file_claim",
    "enqueue_job",
    "generate_invoice",
    "issue_coupon",
    "tag_release",
]
WORDS = ["alder", "birch", "cedar", "delta", "ember", "fjord", "grove", "harbor", "indigo", "juniper", "kestrel"]


def _hex(rng: random.Random, n: int) -> str:
    return "".join(rng.choice("0123456789abcdef") for _ in range(n))


def _uuid(rng: random.Random) -> str:
    return f"{_hex(rng, 8)}-{_hex(rng, 4)}-4{_hex(rng, 3)}-8{_hex(rng, 3)}-{_hex(rng, 12)}"


def _side_effect(rng: random.Random, tool: str) -> tuple[str, str]:
    """(result text, the id it holds), in one of twelve shapes."""
    kind = rng.randrange(12)
    word, other = rng.sample(WORDS, 2)
    if kind == 0:
        i = f"{word}-{other}-{rng.randint(10, 99)}"
        return f"Bucket {i} is ready in eu-central.", i
    if kind == 1:
        i = _uuid(rng)
        return json.dumps({"result": {"handle": i, "state": "queued"}}), i
    if kind == 2:
        i = f"https://shop.example.net/orders/{_hex(rng, 4)}-{rng.randint(10, 99)}"
        return f"Order placed, you can follow it at {i}", i
    if kind == 3:
        i = f"/srv/exports/2024/q{rng.randint(1, 4)}/{word}-results-{rng.randint(1, 9)}.parquet"
        return f"Wrote {rng.randint(2, 90)} files; the merged output is {i}", i
    if kind == 4:
        i = f"job.2024.{rng.randint(10, 12)}.{rng.randint(10, 28)}.{rng.randint(1000, 9999)}"
        return json.dumps({"accepted": True, "slug": i}), i
    if kind == 5:
        i = f"INV/2024/{rng.randint(10000, 99999)}"
        return f"Invoice {i} generated for {rng.randint(100, 900)} EUR.", i
    if kind == 6:
        i = str(rng.randint(1_000_000, 9_999_999))
        return json.dumps({"ok": True, "claim": {"number_assigned": i}}), i
    if kind == 7:
        i = "".join(rng.choice(string.ascii_letters + string.digits) for _ in range(10))
        return f"Coupon created: {i} (valid 14 days)", i
    if kind == 8:
        i = f"s3://lab-share/{word}/{_hex(rng, 6)}/"
        return json.dumps({"location": i, "objects": rng.randint(3, 40)}), i
    if kind == 9:
        i = f"v{rng.randint(1, 4)}.{rng.randint(0, 20)}.{rng.randint(0, 9)}-{word}"
        return f"Tagged {i} on the release branch.", i
    if kind == 10:
        i = f"fit-{word}-{rng.randint(100, 999)}"
        return f"The fitter is booked (booking {i}) for next Tuesday 8:00.", i
    i = f"{word}.{other}.{rng.randint(1, 99)}"
    return json.dumps({"data": [{"name": i, "created": True}]}), i


def _bulky(rng: random.Random, tool: str, vocabulary: list[str]) -> str:
    rows = [
        {
            "ref": rng.randint(100, 99999),
            "label": f"{rng.choice(vocabulary)} {rng.choice(WORDS)}",
            "state": rng.choice(["idle", "active", "archived", "draft", "late"]),
            "cost": round(rng.uniform(1, 4000), 2),
            "owner": rng.choice(["ops", "lab", "finance", "marketing"]),
            "comment": " ".join(rng.choice(vocabulary + WORDS) for _ in range(rng.randint(6, 30))),
        }
        for _ in range(rng.randint(6, 28))
    ]
    return json.dumps({"source": tool, "rows": rows, "next_page": None})


def make_transcript(rng: random.Random) -> tuple[tuple[str, str | None], ...] | Any:
    goal, vocabulary = rng.choice(DOMAINS)
    n_turns = rng.randint(35, 70)
    chosen = rng.sample(CONSTRAINTS, rng.randint(3, 6))
    plan: dict[int, str] = {}
    current: list[str] = []
    replaced: list[str] = []
    for first, revised in chosen:
        at = rng.randrange(1, n_turns - 8)
        while at in plan:
            at = rng.randrange(1, n_turns - 8)
        plan[at] = rng.choice(WRAPPERS).format(c=first, lc=first[0].lower() + first[1:])
        if revised is not None and rng.random() < 0.7:
            later = rng.randrange(at + 1, n_turns - 2)
            while later in plan:
                later = rng.randrange(at + 1, n_turns - 2)
            plan[later] = rng.choice(REVISION_WRAPPERS).format(c=revised)
            current.append(revised)
            replaced.append(first)
        else:
            current.append(first)
    calls = iter(range(10**9))
    ids: list[str] = []
    turns: list[list[Message]] = []
    for t in range(n_turns):
        turn: list[Message] = [Message.system("You help with projects using the tools provided.")] if t == 0 else []
        turn.append(Message.user(goal if t == 0 else plan.get(t, rng.choice(SMALL_TALK))))
        for _ in range(rng.choice([0, 1, 1, 2, 3])):
            tool_calls, results = [], []
            for _ in range(rng.choice([1, 1, 2])):
                call_id = f"tc-{next(calls)}"
                if rng.random() < 0.35:
                    name = rng.choice(WRITE_TOOLS)
                    result, new_id = _side_effect(rng, name)
                    ids.append(new_id)
                    args = {"item": rng.choice(vocabulary), "qty": rng.randint(1, 12)}
                else:
                    name = rng.choice(READ_TOOLS)
                    result = _bulky(rng, name, vocabulary)
                    args = {"match": rng.choice(vocabulary), "page": rng.randint(1, 4)}
                tool_calls.append(ToolCall(call_id, name, args))
                results.append(Message.tool(result, call_id, name=name))
            turn.append(Message.assistant(rng.choice(["", "Checking.", "On it."]), tool_calls))
            turn.extend(results)
        turn.append(Message.assistant(rng.choice(AGENT_LINES).format(n=rng.randint(2, 60), w=rng.choice(vocabulary))))
        turns.append(turn)
    sample = tuning.Sample(turns=turns, constraints=current, ids=ids, replaced=replaced)
    sample.messages = [m for turn in turns for m in turn]
    return sample


def run(n_transcripts: int = 40, seed: int = 11) -> dict[str, Any]:
    rng = random.Random(seed)
    samples = [make_transcript(rng) for _ in range(n_transcripts)]
    tokens = [count_tokens(s.messages) for s in samples]
    known = [c for pair in CONSTRAINTS for c in pair if c is not None]
    report: dict[str, Any] = {
        "transcripts": n_transcripts,
        "seed": seed,
        "mean_turns": round(sum(len(s.turns) for s in samples) / n_transcripts, 1),
        "mean_tokens_before": round(sum(tokens) / n_transcripts),
        "planted_constraints": sum(len(s.constraints) for s in samples),
        "revised_constraints": sum(len(s.replaced) for s in samples),
        "side_effect_ids": sum(len(s.ids) for s in samples),
    }
    report["extractive/oneshot-16k-budget"] = tuning._measure(
        samples, "oneshot", lambda: None, known_constraints=known, max_tokens=16_000
    )
    for mode in ("oneshot", "rolling"):
        report[f"extractive/{mode}"] = tuning._measure(samples, mode, lambda: None, known_constraints=known)
        model = tuning.ScriptedModel()
        summarizer = llm_summarizer(model)
        row = tuning._measure(samples, mode, lambda s=summarizer: s, known_constraints=known)
        report[f"scripted-llm/{mode}"] = {**row, "model_calls": model.calls}
    return report


def sweep(seeds: range, n_transcripts: int = 40) -> dict[int, dict[str, dict[str, Any]]]:
    """Revision marking and constraints kept over many generator seeds: extractive summaries one-shot and rolling,
    and the scripted model rolling."""
    known = [c for pair in CONSTRAINTS for c in pair if c is not None]
    out: dict[int, dict[str, dict[str, Any]]] = {}
    for seed in seeds:
        rng = random.Random(seed)
        samples = [make_transcript(rng) for _ in range(n_transcripts)]
        out[seed] = {
            mode: tuning._measure(samples, mode, lambda: None, known_constraints=known)
            for mode in ("oneshot", "rolling")
        }
        summarizer = llm_summarizer(tuning.ScriptedModel())
        out[seed]["llm-rolling"] = tuning._measure(samples, "rolling", lambda s=summarizer: s, known_constraints=known)
    return out


def _print_sweep(report: dict[int, dict[str, dict[str, Any]]]) -> None:
    totals: dict[str, list[int]] = {}
    for seed, modes in report.items():
        cells = []
        for mode, row in modes.items():
            t = totals.setdefault(mode, [0, 0, 0])
            t[0] += row["replaced_reported_current"]
            t[1] += row["in_force_marked_replaced"]
            t[2] += row["replaced_constraints"]
            cells.append(
                f"{mode} stale {row['replaced_reported_current']}/{row['replaced_constraints']} wrongly marked "
                f"{row['in_force_marked_replaced']} kept {row['constraints_kept_pct']}%"
            )
        print(f"seed {seed:>3}: " + "; ".join(cells))
    for mode, (stale, wrong, revised) in totals.items():
        print(f"total {mode}: replaced shown as current {stale}/{revised}, in-force marked replaced {wrong}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--n", type=int, default=40)
    parser.add_argument("--seed", type=int, default=11)
    parser.add_argument("--seeds", help="a range of seeds, as 1-20: revision marking per seed")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    if args.seeds:
        first, _, last = args.seeds.partition("-")
        _print_sweep(sweep(range(int(first), int(last or first) + 1), args.n))
        return 0
    report = run(args.n, args.seed)
    if args.json:
        print(json.dumps(report, indent=2))
        return 0
    print(
        f"HELD-APART transcripts: {report['transcripts']} (seed {report['seed']}), {report['mean_turns']} turns and "
        f"{report['mean_tokens_before']} tokens on average; {report['planted_constraints']} constraints in force "
        f"({report['revised_constraints']} of them revised), {report['side_effect_ids']} side-effect ids"
    )
    print(
        f"{'summariser/mode':29} {'tokens -%':>9} {'constr.':>8} {'reported':>9} {'precis.':>8} {'ids':>7}"
        f" {'stale current':>14} {'wrong':>6} {'unsafe':>7}"
    )
    for key, row in report.items():
        if isinstance(row, dict):
            print(
                f"{key:29} {row['token_reduction_pct']:>9} {row['constraints_kept_pct']:>8} "
                f"{row['constraints_reported_pct']:>9} {row['constraint_precision_pct']:>8} "
                f"{row['side_effect_ids_kept_pct']:>7} {row['replaced_reported_current']:>8}/"
                f"{row['replaced_constraints']:<6} {row['in_force_marked_replaced']:>5} {row['unsafe_cuts']:>7}"
            )
    return 0


if __name__ == "__main__":
    sys.exit(main())
