"""The side-effect ledger: which side-effecting tool calls a session already made, when, and what ids they returned.

Entries live in the user's keyed store (namespace ``ledger:<session id>``) under a stable hash of the tool name and
its canonical JSON arguments, so an agent can ask before repeating a deploy or a database write. Arguments and
results are stored with sensitive values masked (keys and values of any JSON shape, through the write gate's JSON
reading, :func:`memtend.documents.values.gated_json`); a tool name or session id holding sensitive data is refused
(:class:`~memtend.errors.SensitiveIdentifierError`). Entries expire with the session (``retention.session_days``).
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import time
from contextlib import suppress
from dataclasses import dataclass
from datetime import datetime, timezone
from typing import Any

from memtend.documents.keyed import check_value
from memtend.documents.values import check_json, gate_identifier, gated_json
from memtend.errors import InvalidInputError, SensitiveDataError
from memtend.metrics import tally as metrics_tally
from memtend.records import check_name, now
from memtend.transcripts.summary.ids import result_ids
from memtend.working.scope import SessionScoped, is_expired

__all__ = ["Ledger", "LedgerEntry", "call_key", "extract_ids"]

LEDGER_PREFIX = "ledger:"
RESULT_CHARS = 500  # a ledger keeps this much of a result (redacted), for the agent to read
MAX_IDS = 20  # ids kept per entry


def extract_ids(result: Any) -> list[str]:
    """The ids a tool result reports, as the ledger keeps them (:func:`memtend.transcripts.summary.ids.result_ids`)."""
    return result_ids(result, MAX_IDS)


@dataclass(frozen=True)
class LedgerEntry:
    """A side-effecting call the ledger holds. ``calls`` counts the times it was made (a ``pending`` record
    completed by its result is one call); ``args`` and ``result`` are stored with sensitive values masked."""

    key: str
    tool: str
    args: Any
    result: str | None
    ids: tuple[str, ...]
    first_at: float
    last_at: float
    calls: int
    pending: bool = False

    @classmethod
    def from_value(cls, key: str, value: dict[str, Any]) -> LedgerEntry:
        return cls(
            key=key,
            tool=str(value["tool"]),
            args=value.get("args"),
            result=value.get("result"),
            ids=tuple(value.get("ids") or ()),
            first_at=float(value["first_at"]),
            last_at=float(value["last_at"]),
            calls=int(value.get("calls", 1)),
            pending=bool(value.get("pending", False)),
        )

    def to_value(self) -> dict[str, Any]:
        return {
            "tool": self.tool,
            "args": self.args,
            "result": self.result,
            "ids": list(self.ids),
            "first_at": self.first_at,
            "last_at": self.last_at,
            "calls": self.calls,
            "pending": self.pending,
        }

    def describe(self) -> str:
        """One line for the agent: the call was made, when, how often, and which ids it produced."""
        times = "once" if self.calls == 1 else f"{self.calls} times, last at {_when(self.last_at)}"
        text = f"{self.tool} was already called with these arguments at {_when(self.first_at)} ({times})"
        if self.pending:
            text += "; its result was not recorded (it may have failed or still be running)"
        text += f"; result ids: {', '.join(self.ids)}" if self.ids else "; no result ids recorded"
        return text


def _when(t: float) -> str:
    return datetime.fromtimestamp(t, tz=timezone.utc).strftime("%Y-%m-%d %H:%M:%S UTC")


def _canonical_args(args: Any) -> Any:
    """Arguments as canonical JSON data: a JSON string is parsed, integral floats become ints."""
    if isinstance(args, str):
        parsed = None
        with suppress(ValueError, RecursionError):
            parsed = json.loads(args)
        if isinstance(parsed, dict | list):
            args = parsed
    check_value(args)
    return _normalise_numbers(args)


def _normalise_numbers(value: Any) -> Any:
    if isinstance(value, float) and value.is_integer():
        return int(value)
    if isinstance(value, dict):
        return {k: _normalise_numbers(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_normalise_numbers(v) for v in value]
    return value


def call_key(tool: str, args: Any) -> str:
    """The stable ledger key of a call: a hash of the tool name and the canonical JSON of its arguments
    (object keys sorted), so the same call with arguments in another order has the same key."""
    canonical = json.dumps([tool, _canonical_args(args)], sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return "call:" + hashlib.sha256(canonical.encode("utf-8")).hexdigest()[:40]


def _check_tool(tool: object) -> str:
    return check_name(tool, "tool", blank=False)


def _masked(value: Any) -> Any:
    """``value`` with what the write gate finds masked (keys and values of any JSON shape). What cannot be masked
    field by field is replaced whole: the call happened, so the ledger records it rather than refusing."""
    try:
        return gated_json(value, redact=True)[0]
    except SensitiveDataError as exc:
        return f"[REDACTED:{exc.kinds[0]}]"


def _result_text(result: Any) -> str | None:
    if result is None:
        return None
    data: Any = result
    if isinstance(result, str):
        data = result[: RESULT_CHARS * 8]
    else:
        try:
            text = json.dumps(result, ensure_ascii=False, default=str)
        except (ValueError, RecursionError) as exc:  # too deep, a cycle, an integer too long to write
            raise InvalidInputError(
                f"result cannot be written as JSON ({type(exc).__name__}); pass it as text, or a smaller value"
            ) from None
        if len(text) > RESULT_CHARS * 8 or not _is_json(result):
            data = text[: RESULT_CHARS * 8]
    masked = _masked(data)
    text = masked if isinstance(masked, str) else json.dumps(masked, ensure_ascii=False)
    return text if len(text) <= RESULT_CHARS else text[:RESULT_CHARS] + "…"


def _is_json(value: Any) -> bool:
    try:
        check_json(value)
    except InvalidInputError:
        return False
    return True


class Ledger(SessionScoped):
    """Side effects of one (user, session): ``record`` a call, ask whether it was ``seen`` before repeating it.

    Obtained from ``user.ledger(session_id)``; ``Ledger(user, session_id)`` builds the same thing. Entries expire
    with the session state (``retention.session_days`` after their last record) and are erased with the user.
    """

    prefix = LEDGER_PREFIX
    label = "ledger"

    def record(self, tool: str, args: Any, result: Any = None, *, pending: bool = False) -> LedgerEntry:
        """Record a side-effecting call of ``tool`` with ``args`` (a JSON value, or a JSON string of one).

        Call it after the call with its ``result``, or before it with ``pending=True`` and again after with the
        result (which completes the entry: one call). Recording a call already recorded counts as a repeat.
        """
        started = time.time_ns()
        tool = gate_identifier(_check_tool(tool), "the tool name")  # it names the entry: refused, never masked
        self._gate_session_id()
        args = _canonical_args(args)
        key = call_key(tool, args)
        ids = extract_ids(result) if result is not None else []
        result_text = _result_text(result)
        t = now()
        tally = self._tally()
        with tally.lock:
            old_value = self._store.get(key)
            previous = 0  # times the call was recorded before
            if isinstance(old_value, dict):
                old = LedgerEntry.from_value(key, old_value)
                previous = old.calls
                completes = old.pending and not pending
                entry = LedgerEntry(
                    key=key,
                    tool=tool,
                    args=old.args,
                    result=result_text if result_text is not None else old.result,
                    ids=tuple(dict.fromkeys([*old.ids, *ids]))[:MAX_IDS],
                    first_at=old.first_at,
                    last_at=t,
                    calls=old.calls if completes else old.calls + 1,
                    pending=pending,
                )
            else:
                entry = LedgerEntry(key, tool, _masked(args), result_text, tuple(ids), t, t, 1, pending)
            self._store.put(key, entry.to_value(), expires_at=self._expiry())
        repeat = previous > 0 and entry.calls > previous
        new_call = previous == 0 or repeat
        outcome = "repeat" if repeat else "new" if new_call else "completed"
        counts = {"ledger.calls": 1 if new_call else 0, "ledger.repeats": 1 if repeat else 0}
        metrics_tally.note_call(
            self.user.memory, self.user.user_id, "record", tool, outcome + (" pending" if pending else ""),
            session=self.session_id, started_ns=started, ended_ns=time.time_ns(), counts=counts, tier="working",
            operator=self.user.operator,
        )  # fmt: skip
        return entry

    def claim(self, tool: str, args: Any) -> LedgerEntry | None:
        """Reserve a call before making it: None when it was not made before (a ``pending`` entry now stands for
        it, completed by ``record`` with the result), else the earlier entry, and nothing is written. The check and
        the reservation are one step for every caller in this process, so two identical calls made at once (a
        model's parallel tool calls) run once."""
        started = time.time_ns()
        tool = gate_identifier(_check_tool(tool), "the tool name")
        self._gate_session_id()
        args = _canonical_args(args)
        key = call_key(tool, args)
        t = now()
        earlier = None
        with self._tally().lock:
            item = self._store.item(key)
            if item is not None and not is_expired(item, t) and isinstance(item.value, dict):
                earlier = LedgerEntry.from_value(key, item.value)
            else:
                entry = LedgerEntry(key, tool, _masked(args), None, (), t, t, 1, pending=True)
                self._store.put(key, entry.to_value(), expires_at=self._expiry())
        # an attempt either way; a repeat the ledger stopped counts as a repeat too (the agent made it)
        counts = {"ledger.calls": 1, "ledger.repeats": 1, "ledger.prevented": 1} if earlier else {"ledger.calls": 1}
        metrics_tally.note_call(
            self.user.memory, self.user.user_id, "claim", tool, "repeat stopped" if earlier else "claimed",
            session=self.session_id, started_ns=started, ended_ns=time.time_ns(), counts=counts, tier="working",
            operator=self.user.operator,
        )  # fmt: skip
        return earlier

    def release(self, tool: str, args: Any) -> bool:
        """Drop a claim whose call failed (it raised, or reported an error), so a retry runs: only a pending
        first call is dropped; a completed call stays recorded. True when a claim was dropped."""
        key = call_key(_check_tool(tool), args)
        with self._tally().lock:
            value = self._store.get(key)
            if not isinstance(value, dict):
                return False
            entry = LedgerEntry.from_value(key, value)
            if not (entry.pending and entry.calls == 1):
                return False
            return self._store.delete(key)

    def seen(self, tool: str, args: Any) -> LedgerEntry | None:
        """The recorded call of ``tool`` with these ``args`` (in any key order), or None if it was not made."""
        started = time.time_ns()
        key = call_key(_check_tool(tool), args)
        item = self._store.item(key)
        found = item is not None and not is_expired(item, now()) and isinstance(item.value, dict)
        metrics_tally.note_call(
            self.user.memory, self.user.user_id, "seen", tool, "hit" if found else "miss", session=self.session_id,
            started_ns=started, ended_ns=time.time_ns(), tier="working", operator=self.user.operator,
        )  # fmt: skip
        return LedgerEntry.from_value(key, item.value) if found and item is not None else None

    def entries(self) -> list[LedgerEntry]:
        """Every recorded call of the session, oldest first."""
        t = now()
        return [
            LedgerEntry.from_value(i.key, i.value)
            for i in self._store.items()
            if isinstance(i.value, dict) and not is_expired(i, t)
        ]

    def stats(self) -> dict[str, Any]:
        """``calls`` made, ``distinct`` calls, ``repeats`` (records of a call already recorded) and
        ``repeat_rate`` (repeats / calls; None before any call)."""
        entries = self.entries()
        calls = sum(e.calls for e in entries)
        repeats = sum(e.calls - 1 for e in entries)
        return {
            "session_id": self.session_id,
            "calls": calls,
            "distinct": len(entries),
            "repeats": repeats,
            "repeat_rate": repeats / calls if calls else None,
        }

    # ---------------------------------------------------------- async twins (each runs its sync call in a thread)
    async def arecord(self, tool: str, args: Any, result: Any = None, *, pending: bool = False) -> LedgerEntry:
        return await asyncio.to_thread(self.record, tool, args, result, pending=pending)

    async def aclaim(self, tool: str, args: Any) -> LedgerEntry | None:
        return await asyncio.to_thread(self.claim, tool, args)

    async def arelease(self, tool: str, args: Any) -> bool:
        return await asyncio.to_thread(self.release, tool, args)

    async def aseen(self, tool: str, args: Any) -> LedgerEntry | None:
        return await asyncio.to_thread(self.seen, tool, args)

    async def aentries(self) -> list[LedgerEntry]:
        return await asyncio.to_thread(self.entries)

    async def astats(self) -> dict[str, Any]:
        return await asyncio.to_thread(self.stats)
