"""Capture over multi-session conversations (issue 31): what each way of writing memory keeps, and what a later
session finds.

The conversations (``data/capture/``, written for this benchmark; see its README) are users over several sessions
whose user turns are labelled: durable statements (facts with one answer, preferences, decisions with reasons,
corrections of an earlier value, unfinished work) among chit-chat, one-off requests, acknowledgements and tool
output. Three systems write the same conversations, each into a fresh store, in the same run:

- ``every-turn``: today's behaviour before capture, every user message logged (``UserMemory.log``);
- ``offline``: ``UserMemory.capture`` after each exchange (a user message and what answers it, as the LangChain
  middleware's ``capture='turn'`` does), and at each session's end with the whole session (``conversation=``, as
  every adapter's ``end_session`` does: the instructions still in force are kept), with the offline default
  extractor;
- ``scripted-llm``: the same capture calls with ``llm_extractor`` over a scripted model, which reads the real
  prompt's numbered user lines and answers, in the asked JSON shape, the candidate a good model would write for
  each (the data's ``llm`` field): it stands in where a model writes text, so the figure is what the rest of the
  cycle (validation, the gate, fact precedence, write or merge, recall) makes of good extraction.

Figures per system (scored by whole words of the stored text, and by each record's provenance):

- ``kept``: share of durable statements with a stored memory (any status: a value later corrected counts);
- ``chitchat_stored``: share of the other user turns (chit-chat, requests, acknowledgements) that left a memory;
  ``tool_stored``: the same for tool output;
- ``old_active``: corrections whose old value is still in an active memory (one without the new value);
- ``hit@3``: questions asked after the last session whose answering memory is in the top 3 of ``recall``;
  ``stale@3``: questions on a corrected value whose top 3 still holds the old value (a memory without the new one);
- ``active``: active memories at the end (what a later prompt draws from).

The parts are reported apart, labelled (``LABELS``): ``tune`` (tuning), ``heldout`` (the round-1 held-out part,
tuned on in round 2, so tuning data from then on) and ``heldout2`` (round 2's held-out part, never tuned on); only
tuning data may be looked at while adjusting capture. No timing is asserted anywhere; the wall time is printed.

    uv run python tests/benchmarks/capture_cycle.py [--split tune|heldout|heldout2|all] [--users N]
        [--systems every-turn,offline,scripted-llm] [--backend ephemeral|persistent] [--json]
"""

from __future__ import annotations

import argparse
import json
import re
import tempfile
import time
import uuid
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import chromadb
from memtend import Memory, Message, llm_extractor

DATA = Path(__file__).parent / "data" / "capture"
SPLITS = ("tune", "heldout", "heldout2")
LABELS = {
    "tune": "tuning",
    "heldout": "held-out round 1, tuning data for round 2 (its misses were fixed)",
    "heldout2": "held-out round 2 (never tuned on)",
}
SYSTEMS = ("every-turn", "offline", "scripted-llm")
NOT_KEPT = ("chat", "request", "ack")
_LINE = re.compile(r"^\[(\d+)\] user: (.*)$", re.MULTILINE)


@dataclass
class Statement:
    """A durable statement of the data: where it was said and how a memory of it is recognised."""

    id: str
    kind: str
    terms: list[str]
    old: list[str]
    llm: dict[str, Any]
    session: str
    turn: int


@dataclass
class Conversation:
    user: str
    sessions: list[list[Message]]
    labels: list[list[str]]  # each message's label, as in the data
    statements: dict[str, Statement] = field(default_factory=dict)
    questions: list[tuple[str, str]] = field(default_factory=list)


def session_id(n: int) -> str:
    return f"s{n + 1}"


def load(split: str, users: int | None = None) -> list[Conversation]:
    """The conversations of one part (one of ``SPLITS``), the first ``users`` of them if given."""
    out: list[Conversation] = []
    for line in (DATA / f"{split}.jsonl").read_text(encoding="utf-8").splitlines():
        if not line.strip():
            continue
        item = json.loads(line)
        conv = Conversation(item["user"], [], [])
        for n, turns in enumerate(item["sessions"]):
            messages: list[Message] = []
            labels: list[str] = []
            for i, turn in enumerate(turns):
                label, text = turn[0], turn[1]
                mid = f"{item['user']}-{session_id(n)}-{i}"
                if label == "tool":  # the call that the output answers, then the output
                    call = {"id": f"call-{mid}", "name": "lookup", "arguments": {}}
                    messages.append(Message("assistant", "", tool_calls=[call], id=f"{mid}-call"))
                    labels.append("assistant")
                    messages.append(Message("tool", text, tool_call_id=f"call-{mid}", id=mid))
                else:
                    messages.append(Message("assistant" if label == "assistant" else "user", text, id=mid))
                labels.append(label)
                if label == "durable":
                    meta = turn[2]
                    conv.statements[meta["id"]] = Statement(
                        meta["id"],
                        meta["kind"],
                        meta["terms"],
                        meta.get("old", []),
                        meta["llm"],
                        session_id(n),
                        len(messages) - 1,
                    )
            conv.sessions.append(messages)
            conv.labels.append(labels)
        conv.questions = [(q["q"], q["answer"]) for q in item["questions"]]
        out.append(conv)
    return out[:users] if users is not None else out


def exchanges(messages: Sequence[Message]) -> list[tuple[int, list[Message]]]:
    """The session cut into exchanges: a user message and the messages after it up to the next user message, each
    with the index of its first message (capture's ``offset``)."""
    out: list[tuple[int, list[Message]]] = []
    for i, message in enumerate(messages):
        if message.role == "user" or not out:
            out.append((i, []))
        out[-1][1].append(message)
    return out


class ScriptedModel:
    """A structured-output model that answers what a good model would: for each numbered user line of the prompt
    that the script knows, its candidate (kind, text, key, value) with that turn and a reason."""

    def __init__(self, conversations: Sequence[Conversation]) -> None:
        self.script: dict[str, dict[str, Any]] = {}
        for conv in conversations:
            for statement in conv.statements.values():
                text = conv.sessions[int(statement.session[1:]) - 1][statement.turn].content
                self.script[text] = statement.llm
        self.calls = 0

    def __call__(self, prompt: str) -> str:
        self.calls += 1
        conversation = prompt.split("\nConversation:\n", 1)[-1]
        memories: list[dict[str, Any]] = []
        for number, content in _LINE.findall(conversation):
            answer = self.script.get(content.strip())
            if answer is not None and all(m["turn"] != int(number) for m in memories):
                memories.append({**answer, "turn": int(number), "reason": f"a durable {answer['kind']}"})
        return json.dumps({"memories": memories})


def _has(text: str, terms: Sequence[str]) -> bool:
    return all(re.search(rf"(?<!\w){re.escape(t)}(?!\w)", text, re.IGNORECASE) for t in terms)


def _write(memory: Memory, conv: Conversation, system: str, model: ScriptedModel | None) -> None:
    user = memory.user(conv.user)
    extractor = llm_extractor(model) if model is not None else None
    for n, messages in enumerate(conv.sessions):
        sid = session_id(n)
        if system == "every-turn":
            for i, message in enumerate(messages):
                if message.role == "user":
                    user.log(message.content, session=sid, metadata={"capture_turn": i})
            continue
        for offset, part in exchanges(messages):
            user.capture(part, session=sid, offset=offset, extractor=extractor)
        # the session ends (an adapter's end_session): the instructions still in force are kept
        user.capture([], session=sid, extractor=extractor, conversation=messages)


def _score(memory: Memory, conv: Conversation) -> dict[str, list[int]]:
    """Per figure, [hits, total] for one user after all sessions."""
    user = memory.user(conv.user)
    every = user.list(status=None)
    active = [r for r in every if r.status.value == "active"]
    by_turn: set[tuple[str, int]] = {
        (r.session, int(r.extra["capture_turn"])) for r in every if "capture_turn" in r.extra
    }
    figures: dict[str, list[int]] = {k: [0, 0] for k in ("kept", "chitchat_stored", "tool_stored", "old_active")}
    figures["hit@3"] = [0, 0]
    figures["stale@3"] = [0, 0]
    for statement in conv.statements.values():
        figures["kept"][0] += any(_has(r.text, statement.terms) for r in every)
        figures["kept"][1] += 1
        if statement.old:
            figures["old_active"][0] += any(
                _has(r.text, statement.old) and not _has(r.text, statement.terms) for r in active
            )
            figures["old_active"][1] += 1
    for n, labels in enumerate(conv.labels):
        for i, label in enumerate(labels):
            figure = "chitchat_stored" if label in NOT_KEPT else "tool_stored" if label == "tool" else ""
            if figure:
                figures[figure][0] += (session_id(n), i) in by_turn
                figures[figure][1] += 1
    for question, answer in conv.questions:
        hits = user.recall(question, k=3)
        statement = conv.statements[answer]
        figures["hit@3"][0] += any(_has(h.text, statement.terms) for h in hits)
        figures["hit@3"][1] += 1
        if statement.old:  # a corrected value: does the old one still reach the prompt?
            figures["stale@3"][0] += any(
                _has(h.text, statement.old) and not _has(h.text, statement.terms) for h in hits
            )
            figures["stale@3"][1] += 1
    figures["active"] = [len(active), 1]
    return figures


def _open(backend: str, folder: str, embedding_function: Any) -> Memory:
    if backend == "persistent":
        return Memory(path=Path(folder) / uuid.uuid4().hex, embedding_function=embedding_function)
    return Memory(
        client=chromadb.EphemeralClient(),
        embedding_function=embedding_function,
        collection_prefix="cap" + uuid.uuid4().hex[:10],
    )


def run(
    *,
    splits: Sequence[str] = SPLITS,
    systems: Sequence[str] = SYSTEMS,
    users: int | None = None,
    backend: str = "ephemeral",
    embedding_function: Any = None,
) -> dict[str, dict[str, dict[str, Any]]]:
    """``{split: {system: {figure: {"n": hits, "of": total, "share": hits / total}, "seconds": wall time}}}``."""
    results: dict[str, dict[str, dict[str, Any]]] = {}
    with tempfile.TemporaryDirectory(prefix="memtend-capture-") as folder:
        for split in splits:
            conversations = load(split, users)
            results[split] = {}
            for system in systems:
                model = ScriptedModel(conversations) if system == "scripted-llm" else None
                memory = _open(backend, folder, embedding_function)
                started = time.perf_counter()
                totals: dict[str, list[int]] = {}
                try:
                    for conv in conversations:
                        _write(memory, conv, system, model)
                    for conv in conversations:
                        for figure, (hits, total) in _score(memory, conv).items():
                            totals.setdefault(figure, [0, 0])
                            totals[figure][0] += hits
                            totals[figure][1] += total
                finally:
                    memory.close()
                out: dict[str, Any] = {
                    figure: {"n": hits, "of": total, "share": hits / total if total else 0.0}
                    for figure, (hits, total) in totals.items()
                    if figure != "active"
                }
                out["active"] = totals["active"][0]
                out["users"] = len(conversations)
                out["model_calls"] = model.calls if model is not None else 0
                out["seconds"] = time.perf_counter() - started
                results[split][system] = out
    return results


FIGURES = ("kept", "chitchat_stored", "tool_stored", "old_active", "hit@3", "stale@3")


def report(results: dict[str, dict[str, dict[str, Any]]]) -> str:
    lines = []
    for split, by_system in results.items():
        label = LABELS[split]
        any_system = next(iter(by_system.values()))
        lines.append(f"\n{split}: {label}, {any_system['users']} users")
        lines.append(f"{'system':<14}" + "".join(f"{f:>18}" for f in FIGURES) + f"{'active':>8}{'s':>7}")
        for system, out in by_system.items():
            cells = "".join(f"{out[f]['share'] * 100:>9.1f}% {out[f]['n']:>3}/{out[f]['of']:<3}" for f in FIGURES)
            lines.append(f"{system:<14}{cells}{out['active']:>8}{out['seconds']:>7.1f}")
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--split", choices=[*SPLITS, "all"], default="all")
    parser.add_argument("--users", type=int, default=None)
    parser.add_argument("--systems", default=",".join(SYSTEMS))
    parser.add_argument("--backend", choices=["ephemeral", "persistent"], default="ephemeral")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    systems = [s for s in args.systems.split(",") if s]
    unknown = set(systems) - set(SYSTEMS)
    if unknown:
        parser.error(f"unknown systems: {', '.join(sorted(unknown))}")
    splits = SPLITS if args.split == "all" else (args.split,)
    results = run(splits=splits, systems=systems, users=args.users, backend=args.backend)
    print(json.dumps(results, indent=2) if args.json else report(results))


if __name__ == "__main__":
    main()
