"""Transcript compaction benchmark: token reduction, and what survives it.

Generates long, varied, tool-using agent transcripts (seeded): a user goal; user constraints planted
at random turns in varied phrasings, alone or inside chit-chat; read-only tool calls returning bulky
JSON; side-effecting calls returning ids in varied formats (uuids, ``#123``, ``PR-45``, ``ord_…``,
``key=value``, nested JSON ids, confirmation codes); several calls per assistant turn; small talk.
Each transcript is compacted

* once (``oneshot``: ``max_turns=20``, keeping the last 4 turns), and
* while it grows (``rolling``: after every turn, as an agent middleware would, so summaries of
  summaries are exercised),

and the benchmark reports the token reduction (default counter), the share of planted constraints
and of side-effect ids still present in the compacted transcript (and in
``CompactionResult.constraints``), and the share of reported constraints that were planted
(precision). Summarisers: the extractive one, and a scripted stand-in for a model that returns
schema-valid JSON but misses some constraints and ids, ignores the earlier summary, answers with
prose now and then (retry) and sometimes twice (fallback); it runs with and without the
extractive back-fill of ``compact_transcript(ensure_extracted=...)``.

    uv run python tests/benchmarks/transcript_compaction.py [--n 50] [--seed 7] [--json]

``run(n_transcripts, seed)`` returns the numbers as a dict (a smoke test calls it small).
"""

from __future__ import annotations

import argparse
import json
import random
import re
import string
import sys
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from memtend.transcripts.compaction import compact_transcript, count_tokens
from memtend.transcripts.messages import Message, ToolCall, transcript_problems
from memtend.transcripts.summary import Summarizer, llm_summarizer

MAX_TURNS = 20
KEEP_TURNS = 4

GOALS = [
    "Help me clean up the failed orders from last week's checkout outage and make affected customers whole.",
    "I need to migrate our billing service to the new payments provider before the end of the month.",
    "Plan and book the team offsite in Lisbon for 12 people in October.",
    "Investigate why the nightly ETL job keeps timing out and fix it.",
    "Triage the open support tickets about login failures and respond to the customers.",
    "Prepare the Q3 release: merge the pending PRs, deploy to staging, then production.",
]

CONSTRAINTS = [
    "Never refund more than 200 EUR without asking me first.",
    "Always CC finance@acme.test on customer emails.",
    "Don't touch the production database directly.",
    "Do not deploy on Fridays.",
    "You must keep every customer message under 120 words.",
    "Only use the staging cluster until I say otherwise.",
    "Avoid booking flights with more than one stop.",
    "I prefer aisle seats for everyone.",
    "Make sure every ticket gets the 'outage-2024' label.",
    "Please don’t email customers on weekends.",
    "Use metric units in every report, never imperial.",
    "From now on, write all summaries in German.",
    "No more than three API calls per minute to the payments provider.",
    "Keep the hotel budget at most 150 EUR per night.",
    "Make sure to run the test suite before any merge.",
    "Do not share internal ticket numbers with customers.",
    "We should avoid vendors outside the EU.",
    "Never delete a branch that has open PRs.",
    "Always ask me before charging a card.",
    "Only book refundable rates.",
    "Be sure to log every config change in the change log.",
    "Don't restart the ETL workers during business hours.",
    "Reply in the customer's language, without machine-translation disclaimers.",
    "You have to keep a backup before every migration step.",
]
CONSTRAINT_WRAPPERS = [
    "{c}",
    "Oh, one more thing. {c}",
    "Thanks for that! By the way, {lc}",
    "{c} That matters a lot to us.",
    "Looks good so far. {c} What's next?",
    "Quick note: {lc}",
]
CHIT_CHAT = [
    "thanks!",
    "ok, go on",
    "Nice work, keep going.",
    "Hmm, interesting. What does that mean for us?",
    "Can you explain that last result again?",
    "cool",
    "Great, what's next?",
    "I'm back, sorry for the delay.",
    "That took a while, huh.",
    "Good catch.",
]
ASSISTANT_LINES = [
    "The search returned {n} matching records.",
    "Most failures come from the {w} component.",
    "I checked the {w} logs; the error rate dropped after the fix.",
    "The {w} step finished without errors.",
    "Two of the {w} records look inconsistent; I will flag them.",
]
WORDS = ["billing", "checkout", "auth", "etl", "scheduler", "gateway", "ledger", "mailer"]

READ_TOOLS = [
    "search_orders",
    "get_customer",
    "list_deployments",
    "query_logs",
    "fetch_metrics",
    "search_flights",
]
WRITE_TOOLS = [
    "create_ticket",
    "issue_refund",
    "deploy_service",
    "send_email",
    "book_hotel",
    "open_pull_request",
    "update_customer_record",
    "charge_card",
    "schedule_meeting",
    "delete_branch",
]


def _alnum(rng: random.Random, n: int, alphabet: str = string.ascii_lowercase + string.digits) -> str:
    return "".join(rng.choice(alphabet) for _ in range(n))


def _uuid(rng: random.Random) -> str:
    h = f"{rng.getrandbits(128):032x}"
    return f"{h[:8]}-{h[8:12]}-4{h[13:16]}-a{h[17:20]}-{h[20:32]}"


def _side_effect_result(rng: random.Random) -> tuple[str, str]:
    """(result text, the id it holds), in one of ten formats."""
    kind = rng.randrange(10)
    if kind == 0:
        i = _uuid(rng)
        return json.dumps({"id": i, "status": "created", "created_at": "2024-05-02T10:00:00Z"}), i
    if kind == 1:
        i = "ord_" + _alnum(rng, 10)
        return json.dumps({"order": {"order_id": i, "total": rng.randint(10, 900)}, "ok": True}), i
    if kind == 2:
        i = f"#{rng.randint(100, 99999)}"
        return f"Created ticket {i}. It has been assigned to the on-call engineer.", i
    if kind == 3:
        i = f"{rng.choice(['PR', 'OPS', 'REL'])}-{rng.randint(1, 9999)}"
        return f"Opened {i} against main; CI is running.", i
    if kind == 4:
        i = "dep-" + _alnum(rng, 8, "0123456789abcdef")
        return f"Deployment started: deployment_id={i} region=eu-west-1", i
    if kind == 5:
        i = _alnum(rng, 6, string.ascii_uppercase + string.digits)
        return f"Booking confirmed. Confirmation code: {i}", i
    if kind == 6:
        i = "ch_" + _alnum(rng, 14, string.ascii_letters + string.digits)
        return f"Charge succeeded (charge {i}).", i
    if kind == 7:
        i = _uuid(rng)
        return f"Email queued, message id <{i}>.", i
    if kind == 8:
        i = "re_" + _alnum(rng, 12, string.ascii_letters + string.digits)
        return json.dumps({"data": {"refund": {"refundId": i, "amount": rng.randint(5, 400)}}}), i
    i = _alnum(rng, 8, string.ascii_uppercase + string.digits)
    return f"Done. Your reference number is {i}.", i


def _bulky_result(rng: random.Random, tool: str) -> str:
    rows = [
        {
            "id": rng.randint(1000, 999999),
            "name": f"{rng.choice(WORDS)}-{_alnum(rng, 5)}",
            "status": rng.choice(["ok", "failed", "pending", "retrying"]),
            "amount": round(rng.uniform(1, 999), 2),
            "region": rng.choice(["eu-west-1", "us-east-1", "ap-south-1"]),
            "updated_at": f"2024-0{rng.randint(1, 9)}-1{rng.randint(0, 9)}T0{rng.randint(0, 9)}:00:00Z",
            "tags": rng.sample(WORDS, 3),
            "note": " ".join(rng.choice(WORDS) for _ in range(rng.randint(5, 25))),
        }
        for _ in range(rng.randint(5, 25))
    ]
    return json.dumps({"tool": tool, "count": len(rows), "results": rows})


@dataclass
class Sample:
    turns: list[list[Message]]  # the transcript, turn by turn (the first holds the system prompt)
    constraints: list[str]  # the constraints in force at the end (for a revised one, its latest version)
    ids: list[str]
    messages: list[Message] = field(default_factory=list)
    replaced: list[str] = field(default_factory=list)  # earlier versions of revised constraints


def make_transcript(rng: random.Random) -> Sample:
    n_turns = rng.randint(30, 70)
    planted = rng.sample(CONSTRAINTS, rng.randint(3, 6))
    at = {rng.randrange(n_turns): c for c in planted}  # turn -> constraint (collisions drop one)
    if rng.random() < 0.3 and 0 not in at:  # sometimes a constraint rides in the goal message
        at[0] = rng.choice([c for c in CONSTRAINTS if c not in at.values()])
    calls = iter(range(10**9))
    ids: list[str] = []
    turns: list[list[Message]] = []
    for t in range(n_turns):
        turn: list[Message] = [Message.system("You are an operations agent. Use the tools.")] if t == 0 else []
        text = rng.choice(GOALS) if t == 0 else rng.choice(CHIT_CHAT)
        if t in at:
            c = at[t]
            wrapped = rng.choice(CONSTRAINT_WRAPPERS).format(c=c, lc=c[0].lower() + c[1:])
            text = f"{text} {c}" if t == 0 else wrapped
        turn.append(Message.user(text))
        for _ in range(rng.choice([0, 1, 1, 2, 2, 3])):
            tool_calls = []
            results = []
            for _ in range(rng.choice([1, 1, 2, 3])):
                call_id = f"call_{next(calls)}"
                if rng.random() < 0.3:
                    name = rng.choice(WRITE_TOOLS)
                    result, new_id = _side_effect_result(rng)
                    ids.append(new_id)
                    args = {"target": rng.choice(WORDS), "amount": rng.randint(1, 300)}
                else:
                    name = rng.choice(READ_TOOLS)
                    result = _bulky_result(rng, name)
                    args = {"query": rng.choice(WORDS), "limit": 25}
                tool_calls.append(ToolCall(call_id, name, args))
                results.append(Message.tool(result, call_id, name=name))
            turn.append(Message.assistant(rng.choice(["", "Let me check."]), tool_calls))
            turn.extend(rng.sample(results, len(results)))
        line = rng.choice(ASSISTANT_LINES).format(n=rng.randint(2, 40), w=rng.choice(WORDS))
        if rng.random() < 0.15:
            line += "\nNext steps:\n1. verify the fix\n2. notify the owners\n3. close the incident"
        turn.append(Message.assistant(line))
        turns.append(turn)
    sample = Sample(turns=turns, constraints=list(at.values()), ids=ids)
    sample.messages = [m for turn in turns for m in turn]
    return sample


# --- a scripted stand-in for a model ------------------------------------------------------------------

_STRONG = re.compile(r"\b(never|always|must|don't|do not)\b", re.I)
_SIMPLE_IDS = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}|#\d+")


class ScriptedModel:
    """Deterministic stand-in for a summarising model. It reads the transcript lines of the prompt
    and answers schema-valid JSON, but like a hurried model it keeps only the constraints worded
    with never/always/must/don't, only uuid and #123 ids, and ignores the earlier summary. Every
    fourth prompt it first answers with prose (the retry fixes it); every eleventh, twice (fallback)."""

    def __init__(self) -> None:
        self.prompts = 0
        self.calls = 0

    def __call__(self, prompt: str) -> str:
        self.calls += 1
        retry = "Your previous answer was rejected" in prompt
        if not retry:
            self.prompts += 1
        if (self.prompts % 11 == 0) or (self.prompts % 4 == 0 and not retry):
            return "Sure! The conversation was about operations work; several tools were used."
        body = prompt.split("Conversation to compact:\n", 1)[-1].split("\n\nYour previous answer", 1)[0]
        lines = body.split("\n")
        users = [line[7:] for line in lines if line.startswith("[user] ")]
        constraints = [s for u in users for s in re.split(r"(?<=[.!?])\s+", u) if _STRONG.search(s) and "?" not in s]
        effects = []
        for line in lines:
            match = re.match(r"\[tool result (\w+) (\S+)\] (.*)", line)
            if match and match.group(1) in WRITE_TOOLS:
                found = _SIMPLE_IDS.findall(match.group(3))
                effects.append({"tool": match.group(1), "what": f"called {match.group(1)}", "ids": found})
        facts = [line[12:] for line in lines if line.startswith("[assistant] ")][-5:]
        answer = {
            "goal": users[0] if users else "",
            "plan": [],
            "facts": facts,
            "side_effects": effects,
            "constraints": constraints,
            "open_questions": [],
            "files": [],
        }
        return json.dumps(answer)


# --- measuring -------------------------------------------------------------------------------------------


def _norm(text: str) -> str:
    return " ".join(text.replace("’", "'").casefold().split())


def _kept(needle: str, haystack: str) -> bool:
    return _norm(needle).rstrip(".") in haystack


def _measure(
    samples: list[Sample],
    mode: str,
    summarizer_factory: Callable[[], Summarizer | None],
    ensure_extracted: bool = True,
    known_constraints: list[str] = CONSTRAINTS,
    max_tokens: int | None = None,
) -> dict[str, Any]:
    """Compact every sample (``oneshot`` or ``rolling``) and measure what survived. ``known_constraints``:
    every constraint the generator can plant (a reported constraint is precise when it is one of them);
    ``replaced_reported_current`` counts replaced versions still reported as current (in
    ``result.constraints`` without a "replaced" mark) and ``in_force_marked_replaced`` constraints still in force
    reported only with that mark (the wrong one marked). ``max_tokens``: compact to that token budget (keeping
    at most half of it verbatim) instead of by turns."""
    before_total = after_total = 0
    kept_constraints = reported = planted_total = 0
    kept_ids = ids_total = 0
    reported_total = reported_planted = 0
    replaced_total = replaced_current = 0
    in_force_marked = 0  # constraints still in force that are reported only as replaced
    unsafe = 0  # compacted transcripts with a broken call/result pair, or whose kept part does not start with a user
    origins: Counter[str] = Counter()
    compactions = calls = 0
    seconds = 0.0
    for sample in samples:
        summarizer = summarizer_factory()

        def timed(messages: list[Message], summarizer: Summarizer | None = summarizer) -> Any:
            nonlocal seconds
            start = time.perf_counter()
            by_turns: dict[str, Any] = {"max_turns": MAX_TURNS, "keep_recent_turns": KEEP_TURNS}
            by_tokens: dict[str, Any] = {"max_tokens": max_tokens, "keep_tokens": (max_tokens or 2) // 2}
            result = compact_transcript(
                messages,
                **(by_tokens if max_tokens else by_turns),
                summarizer=summarizer,
                ensure_extracted=ensure_extracted,
            )
            seconds += time.perf_counter() - start
            return result

        if mode == "oneshot":
            result = timed(sample.messages)
            results = [result]
        else:
            current: list[Message] = []
            results = []
            for turn in sample.turns:
                result = timed([*current, *turn])
                current = result.messages
                results.append(result)
            result = results[-1]
        calls += len(results)
        for r in results:
            rest = [m for m in r.messages if m.role != "system"]
            if r.compacted and (transcript_problems(r.messages) or len(rest) < 2 or rest[1].role != "user"):
                unsafe += 1
            if r.compacted and r.summary is not None:
                compactions += 1
                origins[r.summary.origin] += 1
        before_total += count_tokens(sample.messages)
        after_total += count_tokens(result.messages)
        text = _norm("\n".join(m.content for m in result.messages))
        in_result = _norm("\n".join(result.constraints))
        planted_total += len(sample.constraints)
        kept_constraints += sum(_kept(c, text) for c in sample.constraints)
        reported += sum(_kept(c, in_result) for c in sample.constraints)
        ids_total += len(sample.ids)
        kept_ids += sum(i.casefold() in text for i in sample.ids)
        reported_total += len(result.constraints)
        reported_planted += sum(
            any(_norm(c).rstrip(".") in _norm(r) or _norm(r).rstrip(".") in _norm(c) for c in known_constraints)
            for r in result.constraints
        )
        current = [_norm(r) for r in result.constraints if "replaced" not in r.casefold()]
        replaced_total += len(sample.replaced)
        replaced_current += sum(any(_kept(old, r) for r in current) for old in sample.replaced)
        marked = [_norm(r) for r in result.constraints if "replaced" in r.casefold()]
        in_force_marked += sum(
            any(_kept(c, r) for r in marked) and not any(_kept(c, r) for r in current) for c in sample.constraints
        )
    return {
        "token_reduction_pct": round(100 * (1 - after_total / before_total), 1),
        "constraints_kept_pct": round(100 * kept_constraints / max(1, planted_total), 1),
        "constraints_reported_pct": round(100 * reported / max(1, planted_total), 1),
        "constraint_precision_pct": round(100 * reported_planted / max(1, reported_total), 1),
        "side_effect_ids_kept_pct": round(100 * kept_ids / max(1, ids_total), 1),
        "unsafe_cuts": unsafe,
        "replaced_constraints": replaced_total,
        "replaced_reported_current": replaced_current,
        "in_force_marked_replaced": in_force_marked,
        "compactions": compactions,
        "ms_per_compaction_call": round(1000 * seconds / max(1, calls), 2),
        "origins": dict(origins),
    }


def run(n_transcripts: int = 50, seed: int = 7) -> dict[str, Any]:
    rng = random.Random(seed)
    samples = [make_transcript(rng) for _ in range(n_transcripts)]
    tokens = [count_tokens(s.messages) for s in samples]
    report: dict[str, Any] = {
        "transcripts": n_transcripts,
        "seed": seed,
        "mean_turns": round(sum(len(s.turns) for s in samples) / n_transcripts, 1),
        "mean_tokens_before": round(sum(tokens) / n_transcripts),
        "planted_constraints": sum(len(s.constraints) for s in samples),
        "side_effect_ids": sum(len(s.ids) for s in samples),
    }
    for mode in ("oneshot", "rolling"):
        report[f"extractive/{mode}"] = _measure(samples, mode, lambda: None)
        for name, backfill in (("scripted-llm", True), ("scripted-llm-no-backfill", False)):
            model = ScriptedModel()  # one model for the whole run, so its failure schedule cycles
            summarizer = llm_summarizer(model)
            row = _measure(samples, mode, lambda s=summarizer: s, ensure_extracted=backfill)
            report[f"{name}/{mode}"] = {**row, "model_calls": model.calls}
    return report


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--n", type=int, default=50, help="number of transcripts (default 50)")
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--json", action="store_true", help="print the report as JSON")
    args = parser.parse_args(argv)
    report = run(args.n, args.seed)
    if args.json:
        print(json.dumps(report, indent=2))
        return 0
    print(
        f"{report['transcripts']} transcripts (seed {report['seed']}), {report['mean_turns']} turns and "
        f"{report['mean_tokens_before']} tokens on average; {report['planted_constraints']} planted "
        f"constraints, {report['side_effect_ids']} side-effect ids"
    )
    header = f"{'summariser/mode':38} {'tokens -%':>9} {'constr.':>8} {'reported':>9} {'precis.':>8} {'ids':>7}"
    print(header + f" {'compactions':>11} {'ms/call':>8}  origins")
    for key, row in report.items():
        if not isinstance(row, dict):
            continue
        print(
            f"{key:38} {row['token_reduction_pct']:>9} {row['constraints_kept_pct']:>8} "
            f"{row['constraints_reported_pct']:>9} {row['constraint_precision_pct']:>8} "
            f"{row['side_effect_ids_kept_pct']:>7} {row['compactions']:>11} "
            f"{row['ms_per_compaction_call']:>8}  " + ", ".join(f"{k}={v}" for k, v in sorted(row["origins"].items()))
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
