"""The memory metrics as read: counts stored in the user's reserved documents plus this process's unwritten ones
(:mod:`memtend.metrics.tally`), turned into the four rates, per session, per user and for the whole store.

* ``memory_hit_rate``: working-memory ``get`` calls that found their key / all ``get`` calls;
* ``context_utilisation_at_compaction``: the mean share of the context budget a transcript used when compaction
  fired (tokens before / the budget), over the compactions reported with a budget; ``peak`` the largest;
* ``retrieval_hit_rate``: recalls that found what was needed / recalls judged, from the outcomes an application
  reports (``report_recall``) and the held-out checks it runs (``check_retrieval``), each also given apart;
* ``side_effect_repeat_rate``: side-effecting calls the agent made again with the same arguments in the same
  session / all side-effecting calls it made, as the ledger saw them (a repeat the ledger answered or refused instead
  of running counts: the agent made it; ``detail.side_effect_repeats_stopped`` says how many were not run).

A rate is None until there is something to divide by. ``writes`` counts writes refused by the gate, held for
review, proposed and accepted (a held or proposed record approved).
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from memtend.documents.store import core_documents
from memtend.errors import InvalidInputError
from memtend.metrics import tally
from memtend.metrics.tally import CallEntry

if TYPE_CHECKING:
    from memtend.handle import MemoryHandle

__all__ = [
    "MATCHES",
    "RATE_KEYS",
    "WRITE_KEYS",
    "RetrievalCheck",
    "call_log",
    "fact_cases",
    "rates",
    "store_metrics",
    "user_metrics",
]

RATE_KEYS = (
    "memory_hit_rate",
    "context_utilisation_at_compaction",
    "retrieval_hit_rate",
    "side_effect_repeat_rate",
)
WRITE_KEYS = ("refused", "held_for_review", "proposed", "accepted")
_WRITE_COUNTS = {
    "refused": "writes.refused",
    "held_for_review": "writes.held",
    "proposed": "writes.proposed",
    "accepted": "writes.accepted",
}
_ALL = 10**9


def _ratio(part: float, whole: float) -> float | None:
    return part / whole if whole else None


def rates(counts: Counter[str] | dict[str, float], peaks: dict[str, float] | None = None) -> dict[str, Any]:
    """The metrics of one scope from its counts (see the module docstring for each key)."""
    c = Counter(counts)
    peaks = peaks or {}
    judged = c["retrieval.reported"] + c["retrieval.checked"]
    return {
        "memory_hit_rate": _ratio(c["memory.hits"], c["memory.gets"]),
        "context_utilisation_at_compaction": _ratio(c["compaction.utilisation"], c["compaction.measured"]),
        "retrieval_hit_rate": _ratio(c["retrieval.reported_hits"] + c["retrieval.checked_hits"], judged),
        "side_effect_repeat_rate": _ratio(c["ledger.repeats"], c["ledger.calls"]),
        "writes": {name: int(c[key]) for name, key in _WRITE_COUNTS.items()},
        "detail": {
            "memory_gets": int(c["memory.gets"]),
            "memory_hits": int(c["memory.hits"]),
            "compactions": int(c["compaction.count"]),
            "compactions_measured": int(c["compaction.measured"]),
            "context_utilisation_peak": peaks.get("compaction.utilisation"),
            "retrieval_reported": int(c["retrieval.reported"]),
            "retrieval_reported_hit_rate": _ratio(c["retrieval.reported_hits"], c["retrieval.reported"]),
            "retrieval_checked": int(c["retrieval.checked"]),
            "retrieval_checked_hit_rate": _ratio(c["retrieval.checked_hits"], c["retrieval.checked"]),
            "side_effect_calls": int(c["ledger.calls"]),
            "side_effect_repeats": int(c["ledger.repeats"]),
            "side_effect_repeats_stopped": int(c["ledger.prevented"]),
        },
    }


def _stored(memory: MemoryHandle, user_id: str) -> dict[str, tuple[Counter[str], dict[str, float]]]:
    """The user's stored counts and peaks by session ("" the user's)."""
    docs = core_documents(memory, user_id)
    out: dict[str, tuple[Counter[str], dict[str, float]]] = {}
    for doc in docs.search(tally.METRICS, limit=_ALL):
        if doc.namespace == tally.USER_METRICS and doc.key == tally.USER_KEY:
            name = ""
        elif doc.namespace == tally.SESSION_METRICS:
            name = doc.key
        else:
            continue
        value = doc.value if isinstance(doc.value, dict) else {}
        out[name] = (Counter(_numbers(value.get("counts"))), dict(_numbers(value.get("peaks"))))
    return out


def _numbers(found: Any) -> dict[str, float]:
    if not isinstance(found, dict):
        return {}
    return {k: v for k, v in found.items() if isinstance(v, int | float) and not isinstance(v, bool)}


def _combined(memory: MemoryHandle, user_id: str) -> dict[str, tuple[Counter[str], dict[str, float]]]:
    """Stored counts with this process's unwritten ones laid over them, by session."""
    scopes = _stored(memory, user_id)
    unwritten, _ = tally.pending(memory, user_id)
    for name, (added, peaks) in unwritten.items():
        counts, old_peaks = scopes.get(name, (Counter(), {}))
        merged_peaks = dict(old_peaks)
        for k, v in peaks.items():
            merged_peaks[k] = max(v, merged_peaks.get(k, v))
        scopes[name] = (counts + added, merged_peaks)
    return scopes


def user_metrics(memory: MemoryHandle, user_id: str, session: str | None = None) -> dict[str, Any]:
    """One user's metrics (``session``: one session's only), with each session's under ``sessions``."""
    scopes = _combined(memory, user_id)
    if session is not None:
        counts, peaks = scopes.get(session, (Counter(), {}))
        return {"user_id": user_id, "session_id": session, **rates(counts, peaks)}
    counts, peaks = scopes.get("", (Counter(), {}))
    sessions = {name: rates(*scope) for name, scope in sorted(scopes.items()) if name}
    return {"user_id": user_id, **rates(counts, peaks), "sessions": sessions}


def store_metrics(memory: MemoryHandle, user_ids: Iterable[str]) -> dict[str, Any]:
    """The store-wide metrics (every user's counts added up) and each user's (without their sessions)."""
    total: Counter[str] = Counter()
    peaks: dict[str, float] = {}
    users: dict[str, Any] = {}
    for user_id in sorted({*user_ids, *tally.noted_users(memory)}):
        counts, user_peaks = _combined(memory, user_id).get("", (Counter(), {}))
        total += counts
        for k, v in user_peaks.items():
            peaks[k] = max(v, peaks.get(k, v))
        users[user_id] = rates(counts, user_peaks)
    return {"store": rates(total, peaks), "users": users}


def call_log(memory: MemoryHandle, user_id: str, session: str | None = None) -> list[CallEntry]:
    """The user's stored call log, oldest first, with this process's unwritten records after it: long-term
    memory calls and every session's (``session``: that session's only; ``""``: long-term memory's only)."""
    docs = core_documents(memory, user_id)
    logs: dict[str, list[CallEntry]] = {}
    for doc in docs.search(tally.CALLS, limit=_ALL):
        if doc.namespace == tally.USER_CALLS and doc.key == tally.USER_KEY:
            name = ""
        elif doc.namespace == tally.SESSION_CALLS:
            name = doc.key
        else:
            continue
        if session is not None and name != session:
            continue
        rows = doc.value.get("calls", []) if isinstance(doc.value, dict) else []
        logs[name] = [_entry(row, name) for row in rows if isinstance(row, list) and len(row) in (6, 7)]
    _, unwritten = tally.pending(memory, user_id)
    for name, entries in unwritten.items():
        if session is None or name == session:
            logs[name] = [*logs.get(name, []), *entries][-tally.CALL_LOG_SIZE :]
    return sorted((e for entries in logs.values() for e in entries), key=lambda e: e.at)


def _entry(row: list[Any], session: str) -> CallEntry:
    at, op, key, outcome, ms, tier, *by = row
    return CallEntry(
        float(at), str(op), str(key), str(outcome), session, float(ms), str(tier), str(by[0]) if by else ""
    )


# ------------------------------------------------------------------------------------------------ held-out check
@dataclass(frozen=True)
class RetrievalCheck:
    """What :meth:`~memtend.user_memory.UserMemory.check_retrieval` found: how many held-out queries were asked, how
    many recalled one of their expected records in the top ``k``, the rate, and the positions of those that missed."""

    cases: int
    hits: int
    k: int
    missed: tuple[int, ...] = ()

    @property
    def hit_rate(self) -> float | None:
        return self.hits / self.cases if self.cases else None

    def to_dict(self) -> dict[str, Any]:
        return {"cases": self.cases, "hits": self.hits, "k": self.k, "hit_rate": self.hit_rate, "missed": self.missed}


MATCHES = ("id", "text")  # what a held-out case names: the records it should find, or text they should hold


def checked_cases(cases: object, by: str = "id") -> list[tuple[str, frozenset[str]]]:
    """Held-out cases as given: a mapping or pairs of (query, what it should find): with ``by="id"`` the id or ids
    of the records, with ``by="text"`` a text or texts one of the recalled records should contain (compared with
    case and runs of whitespace ignored, so an application can write cases without knowing record ids)."""
    if by not in MATCHES:
        raise InvalidInputError(f"by must be 'id' or 'text', got {by!r}")
    what = "record ids" if by == "id" else "expected texts"
    if isinstance(cases, Mapping):
        items = list(cases.items())
    elif isinstance(cases, Iterable) and not isinstance(cases, str | bytes):
        items = list(cases)
    else:
        raise InvalidInputError(f"cases takes (query, {what}) pairs, or a mapping of query -> {what}")
    out = []
    for n, item in enumerate(items):
        if not isinstance(item, tuple | list) or len(item) != 2:
            raise InvalidInputError(f"case {n} is not a (query, {what}) pair")
        query, expected = item
        if not isinstance(query, str) or not query.strip():
            raise InvalidInputError(f"case {n}: the query must be a non-empty str")
        wanted = [expected] if isinstance(expected, str) else expected
        if not isinstance(wanted, Iterable) or not all(isinstance(i, str) and i.strip() for i in wanted):
            raise InvalidInputError(f"case {n}: the expected {what} must be non-empty str")
        found = frozenset(wanted if by == "id" else (_folded(t) for t in wanted))
        if not found:
            raise InvalidInputError(f"case {n}: nothing expected")
        out.append((query, found))
    if not out:
        raise InvalidInputError("check_retrieval needs at least one case")
    return out


def fact_cases(facts: Mapping[str, str]) -> list[tuple[str, str]]:
    """Held-out cases built from a user's own profile (``user.facts()``): for each fact, its key in words as the
    query and its value as the text a recalled record should hold (for ``check_retrieval(cases, by="text")``)."""
    out = []
    for key, value in facts.items():
        words = " ".join(re.split(r"[._\-/:\s]+", key)).strip()
        if words and value.strip():
            out.append((f"what is the {words}?", value))
    return out


def run_check(
    recall: Callable[[str, int], Sequence[Any]], cases: list[tuple[str, frozenset[str]]], k: int, by: str = "id"
) -> RetrievalCheck:
    """Ask each held-out query through ``recall`` (the facade's, so the check sees what an agent would)."""
    hits, missed = 0, []
    for n, (query, expected) in enumerate(cases):
        recalled = recall(query, k)
        if by == "id":
            hit = bool({h.record.id for h in recalled} & expected)
        else:
            texts = [_folded(h.record.text) for h in recalled]
            hit = any(e in t for e in expected for t in texts)
        if hit:
            hits += 1
        else:
            missed.append(n)
    return RetrievalCheck(cases=len(cases), hits=hits, k=k, missed=tuple(missed))


def _folded(text: str) -> str:
    return " ".join(text.casefold().split())
