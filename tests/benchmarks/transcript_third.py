"""Transcript compaction on a third generator, written before the summariser changes of issue 34 and kept apart.

Not a tuning set: it was written before the code it measures was changed, and nothing was adjusted while looking
at its figures. Other domains again (a school trip, a podcast, a warehouse move), ids in shapes a tool returns
(URLs with the id in the query string, version numbers, short prefixed tickets, JSON values under keys that are
not called ``id``), constraints revised by restating them with a new value and no word announcing a change,
one-off requests ("tell me a joke") that are not constraints, and numbered plans the user gives.

    uv run python tests/benchmarks/transcript_third.py [--n 24] [--seed 5] [--json]
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import random
import sys
from pathlib import Path
from typing import Any

from memtend.transcripts.compaction import compact_transcript, count_tokens
from memtend.transcripts.messages import Message, ToolCall
from memtend.transcripts.summary import llm_summarizer

_spec = importlib.util.spec_from_file_location(
    "memtend_bench_transcript_tuning_third", Path(__file__).with_name("transcript_compaction.py")
)
assert _spec is not None and _spec.loader is not None
tuning = importlib.util.module_from_spec(_spec)
sys.modules[_spec.name] = tuning
_spec.loader.exec_module(tuning)

GOALS = [
    "Organise the year-nine trip to the coast in May: coach, hostel, permission slips, the lot.",
    "Help me launch the second season of the podcast: guests, recording slots, the feed and the artwork.",
    "We are moving the warehouse to the new unit on Dock Road over three weekends; plan and book everything.",
]

# (first version, the same rule restated later with a new value, no change announced) or (rule, None)
RULES: list[tuple[str, str | None]] = [
    ("Spend no more than 300 pounds per booking.", "Per booking the spend can reach 450 pounds."),
    ("Each episode runs 40 minutes at most.", "Each episode runs 55 minutes at most."),
    ("Invoices go to accounts@hollyfield.example.", "Invoices go to finance@hollyfield.example."),
    ("Quotes need two suppliers to compare.", "Quotes need three suppliers to compare."),
    ("The coach leaves at 7:30 sharp.", "The coach leaves at 8:15 sharp."),
    ("Keep the guest list to four names per episode.", "Keep the guest list to six names per episode."),
    ("Forklift hire is capped at 2 days.", "Forklift hire is capped at 5 days."),
    ("Parents get the letter in English and Polish.", None),
    ("Nobody signs anything on my behalf.", None),
    ("Recording happens on Tuesdays.", "Recording happens on Thursdays."),
    ("Avoid the M25 on the move days.", None),
    ("Tag every upload with the season number.", None),
]
REQUESTS = [
    "Tell me a joke while that runs.",
    "Give me a quick status.",
    "Show me the cheapest option so far.",
    "Read me the last result again.",
    "Summarise where we are in two lines.",
]
PLANS = [
    ["Book the coach.", "Reserve the hostel rooms.", "Send the permission slips.", "Collect the deposits."],
    ["Confirm the guests.", "Book the studio.", "Record the trailer.", "Publish the feed."],
    ["Label the racking.", "Hire the forklift.", "Move the cold store.", "Hand back the old keys."],
]
CHATTER = ["ok", "fine", "go on", "Hmm.", "Sure, next.", "Interesting, why?", "right then", "cool"]
AGENT = ["Done with that part.", "Still working through the {n} entries.", "Nothing odd in the {n} rows so far."]
WRITE = ["book_coach", "reserve_rooms", "publish_episode", "open_ticket", "release_build", "create_form"]
READ = ["search_venues", "list_slots", "get_prices", "fetch_feed"]


def _hex(rng: random.Random, n: int) -> str:
    return "".join(rng.choice("0123456789abcdef") for _ in range(n))


def _result(rng: random.Random) -> tuple[str, str]:
    """(a side-effecting tool's result, the id it holds), in one of eight shapes."""
    kind = rng.randrange(8)
    if kind == 0:
        i = f"https://forms.example.org/view?id={rng.randint(1000, 99999)}&lang=en"
        return f"Form ready: {i}", i
    if kind == 1:
        i = f"{rng.randint(1, 9)}.{rng.randint(0, 30)}.{rng.randint(0, 40)}"
        return json.dumps({"released": i, "channel": "stable"}), i
    if kind == 2:
        i = f"{rng.choice(['OPS', 'HR', 'T', 'IT'])}-{rng.randint(1, 999)}"
        return f"Opened {i} for the facilities team.", i
    if kind == 3:
        i = f"https://pod.example.com/e?ep={rng.randint(1, 80)}&s={rng.randint(1, 3)}"
        return json.dumps({"status": "live", "link": i}), i
    if kind == 4:
        i = _hex(rng, rng.choice([7, 12]))
        return json.dumps({"booking": {"code": i, "seats": rng.randint(20, 60)}}), i
    if kind == 5:
        i = str(rng.randint(100, 9999))
        return json.dumps({"room_block": i, "nights": 2}), i
    if kind == 6:
        i = f"r{rng.randint(1, 9)}"
        return f"Reserved as {i}; the hostel will email you.", i
    i = f"{rng.choice(['coach', 'studio', 'dock'])}-{rng.choice(['north', 'east', 'blue'])}"
    return json.dumps({"confirmation": {"slot_name": i}}), i


def _bulky(rng: random.Random) -> str:
    rows = [
        {"n": rng.randint(1, 999), "price": round(rng.uniform(5, 900), 2), "note": "x " * rng.randint(5, 40)}
        for _ in range(rng.randint(5, 20))
    ]
    return json.dumps({"rows": rows})


def make_transcript(rng: random.Random) -> Any:
    n_turns = rng.randint(30, 55)
    goal_index = rng.randrange(len(GOALS))
    chosen = rng.sample(RULES, rng.randint(3, 5))
    said: dict[int, str] = {}
    current: list[str] = []
    replaced: list[str] = []

    def slot(low: int, high: int) -> int:
        at = rng.randrange(low, high)
        while at in said:
            at = rng.randrange(low, high)
        return at

    for first, later in chosen:
        at = slot(2, n_turns - 10)
        said[at] = first
        if later is not None and rng.random() < 0.7:
            said[slot(at + 1, n_turns - 2)] = later
            current.append(later)
            replaced.append(first)
        else:
            current.append(first)
    requests = rng.sample(REQUESTS, 2)
    for request in requests:
        said[slot(2, n_turns - 2)] = request
    plan = PLANS[goal_index]
    said[slot(1, 6)] = "Here is the order I want:\n" + "\n".join(f"{k}. {s}" for k, s in enumerate(plan, 1))
    calls = iter(range(10**9))
    ids: list[str] = []
    turns: list[list[Message]] = []
    for t in range(n_turns):
        turn: list[Message] = [Message.system("You are an organising assistant with tools.")] if t == 0 else []
        turn.append(Message.user(GOALS[goal_index] if t == 0 else said.get(t, rng.choice(CHATTER))))
        for _ in range(rng.choice([0, 1, 1, 2])):
            call_id = f"c{next(calls)}"
            if rng.random() < 0.4:
                name = rng.choice(WRITE)
                result, new_id = _result(rng)
                ids.append(new_id)
            else:
                name, result = rng.choice(READ), _bulky(rng)
            turn.append(Message.assistant("", [ToolCall(call_id, name, {"what": rng.choice(plan)})]))
            turn.append(Message.tool(result, call_id, name=name))
        turn.append(Message.assistant(rng.choice(AGENT).format(n=rng.randint(2, 90))))
        turns.append(turn)
    sample = tuning.Sample(turns=turns, constraints=current, ids=ids, replaced=replaced)
    sample.messages = [m for turn in turns for m in turn]
    sample.requests = requests  # type: ignore[attr-defined]
    sample.plan = plan  # type: ignore[attr-defined]
    return sample


def _requests_and_plan(samples: list[Any]) -> dict[str, Any]:
    """One-shot extractive compaction: requests reported as constraints, and plans kept whole and in order."""
    as_constraints = in_order = 0
    for sample in samples:
        result = compact_transcript(sample.messages, max_turns=tuning.MAX_TURNS, keep_recent_turns=tuning.KEEP_TURNS)
        reported = [tuning._norm(c) for c in result.constraints]
        as_constraints += sum(any(tuning._kept(r, c) for c in reported) for r in sample.requests)
        plan = [tuning._norm(p).rstrip(".") for p in (result.summary.plan if result.summary else [])]
        wanted = [tuning._norm(p).rstrip(".") for p in sample.plan]
        in_order += plan[: len(wanted)] == wanted or any(plan[i : i + len(wanted)] == wanted for i in range(len(plan)))
    return {
        "requests": sum(len(s.requests) for s in samples),
        "requests_reported_as_constraints": as_constraints,
        "plans_kept_in_order": in_order,
        "plans": len(samples),
    }


def run(n_transcripts: int = 24, seed: int = 5) -> dict[str, Any]:
    rng = random.Random(seed)
    samples = [make_transcript(rng) for _ in range(n_transcripts)]
    known = [c for pair in RULES for c in pair if c is not None]
    report: dict[str, Any] = {
        "transcripts": n_transcripts,
        "seed": seed,
        "mean_tokens_before": round(sum(count_tokens(s.messages) for s in samples) / n_transcripts),
        "constraints_in_force": sum(len(s.constraints) for s in samples),
        "revised": sum(len(s.replaced) for s in samples),
        "side_effect_ids": sum(len(s.ids) for s in samples),
    }
    for mode in ("oneshot", "rolling"):
        report[f"extractive/{mode}"] = tuning._measure(samples, mode, lambda: None, known_constraints=known)
    summarizer = llm_summarizer(tuning.ScriptedModel())
    report["scripted-llm/rolling"] = tuning._measure(samples, "rolling", lambda: summarizer, known_constraints=known)
    report["requests_and_plans"] = _requests_and_plan(samples)
    return report


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--n", type=int, default=24)
    parser.add_argument("--seed", type=int, default=5)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    report = run(args.n, args.seed)
    if args.json:
        print(json.dumps(report, indent=2))
        return 0
    print({k: v for k, v in report.items() if not isinstance(v, dict)})
    for key, row in report.items():
        if isinstance(row, dict) and "constraints_kept_pct" in row:
            print(
                f"{key:22} constraints kept {row['constraints_kept_pct']}% reported {row['constraints_reported_pct']}%"
                f" precision {row['constraint_precision_pct']}% ids {row['side_effect_ids_kept_pct']}%"
                f" stale current {row['replaced_reported_current']}/{row['replaced_constraints']}"
                f" wrongly marked {row['in_force_marked_replaced']}"
            )
    print(report["requests_and_plans"])
    return 0


if __name__ == "__main__":
    sys.exit(main())
