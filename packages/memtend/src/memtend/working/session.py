"""Working memory: per-session key-value state in the user's keyed store.

``SessionState`` keeps what an agent notes for itself during one session (namespace ``session:<id>``): keys go
through :func:`~memtend.policies.precedence.canonical_key`, the session id, key and value (any JSON shape) through
the write gate (:func:`memtend.documents.values.gated_json`), every write sets ``expires_at`` from
``retention.session_days``, so ``UserMemory.forget`` removes stale state and ``Memory.erase_user`` removes all of
it. A value from an external source (``source="external"``: web pages, mail, documents) is held for review like
``remember(source="external")``: ``get``/``list`` do not serve it until ``approve(key)``; ``pending()`` shows it,
``reject(key)`` drops it. A write (``set``) carries the call counts in the same ``put`` as the
value; reads are counted in memory (see :mod:`memtend.working.scope`).

Untrusted content is a property of the conversation, kept here: once an adapter reports that untrusted content
(an untrusted tool's output, a web page, a mail) entered the session (``mark_untrusted``), every later write the
agent makes on its strength is held for review, on every turn and in every process, until a person has reviewed
the conversation (``clear_untrusted``): ``set`` from the agent is held like an external value, and
``UserMemory.remember`` / ``log`` with ``session=`` this id store an agent's, a tool's or an inference's text as
external content (``pending_review``). What the user says stays the user's.

The side-effect ledger of a session is :class:`memtend.working.ledger.Ledger`.
"""

from __future__ import annotations

import asyncio
import builtins
import json
import time
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

from memtend.documents.keyed import KVItem, check_value
from memtend.documents.values import gate_identifier, gated_json
from memtend.errors import InvalidInputError, MemtendError, SensitiveDataError, SensitiveIdentifierError
from memtend.metrics import tally as metrics_tally
from memtend.policies import gate
from memtend.policies.precedence import FactOutcome, canonical_key
from memtend.records import MAX_KEY_CHARS, MAX_TEXT_CHARS, Source, check_name, now
from memtend.working.scope import (
    FLUSH_EVERY,
    OPS,
    STATS_KEY,
    CallRecord,
    SessionScoped,
    drop_user_tallies,
    is_expired,
    persist_counts,
    stored_counts,
)

__all__ = [
    "OPS",
    "STATS_KEY",
    "CallRecord",
    "SessionState",
    "SetResult",
    "drop_user_tallies",
]

SESSION_PREFIX = "session:"
MAX_VALUE_CHARS = MAX_TEXT_CHARS  # a session value, as JSON; working memory is small by design
_OUTCOME_COUNTERS = {"hit": "hits", "miss": "misses", "refused": "refused", "error": "errors"}


PENDING_PREFIX = "@pending:"  # a held external value of key k is stored under "@pending:k" (never a canonical key)
UNTRUSTED_KEY = "@untrusted"  # the conversation's untrusted mark (see _Mark)
MAX_MARK_NAMES = 200  # sources, pieces and reviewed pieces kept in the mark (the newest of each)
_HELD_WHEN_UNTRUSTED = (Source.AGENT, Source.TOOL, Source.INFERRED)  # writes made on the strength of the conversation


def _live(item: KVItem | None) -> bool:
    return item is not None and not is_expired(item, now())


@dataclass
class _Mark:
    """The conversation's untrusted mark as stored: whether it holds unreviewed untrusted content, since when,
    from which sources, the pieces that marked it and the pieces a person has reviewed (the newest of each)."""

    marked: bool = False
    at: float | None = None
    what: builtins.list[str] = field(default_factory=builtins.list)
    refs: builtins.list[str] = field(default_factory=builtins.list)
    reviewed: builtins.list[str] = field(default_factory=builtins.list)

    @classmethod
    def of(cls, item: KVItem | None) -> _Mark:
        body = item.value if _live(item) and item is not None and isinstance(item.value, dict) else {}

        def names(field_name: str) -> builtins.list[str]:
            found = body.get(field_name)
            return [n for n in found if isinstance(n, str)] if isinstance(found, builtins.list) else []

        at = body.get("at")
        return cls(bool(body.get("marked")), at if isinstance(at, float | int) else None, *map(names, _MARK_LISTS))

    def value(self) -> dict[str, Any]:
        lists = {name: getattr(self, name)[-MAX_MARK_NAMES:] for name in _MARK_LISTS}
        return {"marked": self.marked, "at": self.at, **lists}


_MARK_LISTS = ("what", "refs", "reviewed")


def conversation_untrusted(user: Any, session_id: str) -> bool:
    """Whether the conversation ``session_id`` of ``user`` (a :class:`~memtend.user_memory.UserMemory`) is
    marked as holding untrusted content (see :meth:`SessionState.mark_untrusted`)."""
    return SessionState(user, session_id).untrusted()


def _reserved(key: str) -> bool:
    return key.startswith("@")  # the stats row and held values: canonical keys never start with "@"


# --------------------------------------------------------------------------------------------- session state
@dataclass
class _Call:
    op: str
    key: str
    outcome: str = "ok"
    persisted: bool = False  # already counted in a write that carried the stats
    started_ns: int = field(default_factory=time.time_ns)
    given: str = ""  # the key as given (canonicalising lower-cases, which can hide a token from the log's gate)


@dataclass(frozen=True)
class SetResult:
    """What ``SessionState.set`` did: the canonical key, ``added | updated | unchanged`` (``kept`` when the value
    is held for review), whether the value reads like an instruction to the agent (it is stored; treat it as data)
    and whether it waits for review (``pending``)."""

    key: str
    outcome: FactOutcome
    flagged: bool = False
    pending: bool = False  # held for review (an external source): not served by get/list until approved


class SessionState(SessionScoped):
    """Key-value working memory of one (user, session): ``get``, ``set``, ``list`` (insertion order), ``delete``.

    Obtained from ``user.session(session_id)``; ``SessionState(user, session_id)`` builds the same thing.
    """

    prefix = SESSION_PREFIX
    label = "session"

    @property
    def namespace(self) -> str:
        return self._store.namespace

    # ------------------------------------------------------------------ the four operations
    def get(self, key: str, default: Any = None) -> Any:
        """The value under ``key`` (canonicalised), or ``default``. Expired state is not returned."""
        with self._call("get", key) as call:
            call.key = canonical_key(key)
            item = self._store.item(call.key)
            found = item is not None and not is_expired(item, now())
            call.outcome = "hit" if found else "miss"
        self._after_read()
        return item.value if found and item is not None else default

    def set(self, key: str, value: Any, *, source: Source | str = Source.AGENT) -> SetResult:
        """Store a JSON ``value`` under ``key`` (canonicalised); it expires ``retention.session_days`` after this write.

        The gate reads the session id, the key and the value (any JSON shape) and refuses secrets
        (:class:`SensitiveDataError`, naming the kinds, never the value). An existing key keeps its place in
        ``list``. With ``source="external"`` the value is held for review (``pending=True``): ``get`` and ``list``
        keep serving the trusted value until ``approve(key)``.
        """
        with self._call("set", key) as call:
            call.key = name = canonical_key(key)
            source = Source.parse(source)
            flagged = self._checked(name, value, key)
            with self._tally().lock:
                found = self._store.get_many([name, STATS_KEY, UNTRUSTED_KEY])  # one read decides and counts
                tainted = source in _HELD_WHEN_UNTRUSTED and _Mark.of(found.get(UNTRUSTED_KEY)).marked
                if source is Source.EXTERNAL or tainted:
                    held = {"value": value, "flagged": flagged, "at": now()}
                    self._write([(PENDING_PREFIX + name, held)], "set", found.get(STATS_KEY))
                    call.outcome = "held" + (" flagged" if flagged else "") + (" untrusted" if tainted else "")
                    call.persisted = True
                    return SetResult(key=name, outcome=FactOutcome.KEPT, flagged=flagged, pending=True)
                outcome = self._put(name, value, found=found)
            call.persisted = True
            call.outcome = outcome.value + (" flagged" if flagged else "")
        return SetResult(key=name, outcome=outcome, flagged=flagged)

    # ------------------------------------------------------------------ untrusted content in the conversation
    def mark_untrusted(self, what: str = "", *, ref: str = "") -> None:
        """Record that untrusted content entered this conversation (``what``: where from, e.g. a tool's name;
        ``ref``: which piece, e.g. the tool call's id, so a piece a person has reviewed never marks it again).
        From now on what the agent writes on its strength is held for review. Both are identifiers: no secrets."""
        what, ref = check_name(what, "what"), check_name(ref, "ref")
        for name, label in ((what, "the untrusted source's name"), (ref, "the untrusted content's ref")):
            if name:
                gate_identifier(name, label)
        self._gate_session_id()
        with self._tally().lock:
            mark = _Mark.of(self._store.item(UNTRUSTED_KEY))
            if ref and ref in mark.reviewed:
                return  # a person has reviewed this piece
            if mark.marked and (ref in mark.refs if ref else what in mark.what):
                return  # already marked for it: no write
            mark.marked = True
            mark.at = mark.at or now()
            if what and what not in mark.what:
                mark.what.append(what)
            if ref:
                mark.refs.append(ref)
            self._store.put(UNTRUSTED_KEY, mark.value())

    def untrusted(self) -> bool:
        """Whether untrusted content entered this conversation and no person has reviewed it since."""
        return _Mark.of(self._store.item(UNTRUSTED_KEY)).marked

    def clear_untrusted(self) -> bool:
        """A person reviewed the conversation: the agent's later writes are trusted again, and the pieces marked so
        far never mark it again (what was held stays held until approved). True if it was marked."""
        with self._tally().lock:
            mark = _Mark.of(self._store.item(UNTRUSTED_KEY))
            if not mark.marked:
                return False
            mark.reviewed = [*mark.reviewed, *mark.refs]
            mark.marked, mark.at, mark.what, mark.refs = False, None, [], []
            self._store.put(UNTRUSTED_KEY, mark.value())
            return True

    async def amark_untrusted(self, what: str = "", *, ref: str = "") -> None:
        await asyncio.to_thread(self.mark_untrusted, what, ref=ref)

    async def auntrusted(self) -> bool:
        return await asyncio.to_thread(self.untrusted)

    async def aclear_untrusted(self) -> bool:
        return await asyncio.to_thread(self.clear_untrusted)

    def _checked(self, name: str, value: Any, raw_key: str | None = None) -> bool:
        """Validate and gate a value about to be written (the key, as given and canonical, is an identifier);
        whether it reads like an instruction to the agent."""
        self._gate_session_id()
        gate_identifier(name, "the key")
        if raw_key is not None and raw_key != name:  # canonicalising lower-cases, which can hide a token's shape
            gate_identifier(raw_key, "the key")
        check_value(value)
        size = len(json.dumps(value, ensure_ascii=False))
        if size > MAX_VALUE_CHARS:
            raise InvalidInputError(
                f"value is {size} characters as JSON; the limit for session state is {MAX_VALUE_CHARS}. "
                "Store a summary or a reference instead"
            )
        gated_json(value, name, redact=False, can_redact=False)
        return gate.looks_like_injection("\n".join(gate.json_lines(value, name)))

    def _put(
        self, name: str, value: Any, *, drop: tuple[str, ...] = (), found: dict[str, KVItem] | None = None
    ) -> FactOutcome:
        """Write a trusted value (with the counts, and deleting ``drop``); whether it was added, updated or the same.
        ``found``: the value's and the stats' rows, when the caller has just read them under the tally's lock."""
        tally = self._tally()
        with tally.lock:
            if found is None:
                found = self._store.get_many([name, STATS_KEY])
            old = found.get(name)
            if old is None or is_expired(old, now()):
                outcome = FactOutcome.ADDED
            else:
                same = old.value == json.loads(json.dumps(value))
                outcome = FactOutcome.UNCHANGED if same else FactOutcome.UPDATED
            self._write([(name, value)], "set", found.get(STATS_KEY), drop=drop)
        return outcome

    def _write(
        self, items: builtins.list[tuple[str, Any]], op: str, stats: KVItem | None, *, drop: tuple[str, ...] = ()
    ) -> None:
        """Put ``items`` and the call counts (``stats``, the stats row as read, plus this call's ``op``), and delete
        ``drop``, in one write. Call it holding the tally's lock."""
        tally = self._tally()
        with tally.lock:
            counts = stored_counts(stats) + tally.pending + Counter({op: 1})
            self._store._put_and_delete([*items, (STATS_KEY, dict(counts))], drop, expires_at=self._expiry())
            tally.pending.clear()
            tally.reads_since_flush = 0

    # ------------------------------------------------------------------ review of external values
    def pending(self) -> dict[str, Any]:
        """Values from external sources waiting for review, key -> value (oldest first); ``get``/``list`` leave
        them out."""
        t = now()
        return {
            i.key[len(PENDING_PREFIX) :]: i.value.get("value")
            for i in self._store.items()
            if i.key.startswith(PENDING_PREFIX) and isinstance(i.value, dict) and not is_expired(i, t)
        }

    def approve(self, key: str) -> SetResult:
        """Accept the held external value of ``key``: it becomes the value ``get`` and ``list`` serve. Raises
        :class:`InvalidInputError` when no value of that key waits for review."""
        with self._call("approve", key) as call:
            call.key = name = canonical_key(key)
            held = self._store.item(PENDING_PREFIX + name)
            if held is None or is_expired(held, now()) or not isinstance(held.value, dict):
                raise InvalidInputError("no value of that key waits for review in this session; see pending()")
            value = held.value.get("value")
            flagged = self._checked(name, value)  # the gate may have learned more since it was held
            outcome = self._put(name, value, drop=(PENDING_PREFIX + name,))
            call.persisted = True
            call.outcome = "approved " + outcome.value
        return SetResult(key=name, outcome=outcome, flagged=flagged)

    def reject(self, key: str) -> bool:
        """Drop the held external value of ``key`` for good; True if there was one."""
        with self._call("reject", key) as call:
            call.key = name = canonical_key(key)
            held = self._store.item(PENDING_PREFIX + name)
            if held is not None:
                self._store.delete(PENDING_PREFIX + name)
            found = held is not None and not is_expired(held, now())
            call.outcome = "rejected" if found else "absent"
        return found

    def list(self) -> dict[str, Any]:
        """Every live key and value of the session, in the order keys were first set."""
        with self._call("list", "") as call:
            t = now()
            items = [i for i in self._store.items() if not _reserved(i.key) and not is_expired(i, t)]
            call.outcome = f"{len(items)} keys"
        self._after_read()
        return {i.key: i.value for i in items}

    def delete(self, key: str) -> bool:
        """Remove ``key`` (canonicalised) for good; True if it was set. (Named ``forget`` before: memtend's
        ``forget`` archives by the retention schedule, ``delete`` removes.)"""
        with self._call("delete", key) as call:
            call.key = name = canonical_key(key)
            tally = self._tally()
            with tally.lock:
                found = self._store.get_many([name, STATS_KEY, PENDING_PREFIX + name])
                old = found.get(name)
                doomed = [k for k in (name, PENDING_PREFIX + name) if k in found]
                if doomed:  # the value and any held external value of the key
                    self._store.delete_many(doomed)
                present = old is not None and not is_expired(old, now())
                call.outcome = "removed" if present else "absent"
                stats = found.get(STATS_KEY)
                if stats is not None:  # a write carries the counts, but never creates the stats row
                    counts = stored_counts(stats) + tally.pending + Counter({"delete": 1})
                    self._store.put(STATS_KEY, dict(counts), expires_at=stats.expires_at)
                    tally.pending.clear()
                    call.persisted = True
        return present

    # ------------------------------------------------------------------ statistics and the call log
    def flush(self) -> int:
        """Persist the counts of calls not yet stored (creating the stats row if needed); returns how many."""
        return persist_counts(self._store, self._tally(), create=True, expires_at=self._expiry())

    def stats(self) -> dict[str, Any]:
        """Calls per op, ``get`` hits and misses, ``hit_rate`` (hits / gets; None before any get), refused
        writes, errors, and ``unflushed`` (calls counted in this process only). Stored and pending counts add up."""
        tally = self._tally()
        stored = stored_counts(self._store.item(STATS_KEY))
        with tally.lock:
            counts = stored + tally.pending
            unflushed = sum(tally.pending[op] for op in OPS)
        gets = counts["hits"] + counts["misses"]
        return {
            "session_id": self.session_id,
            "calls": {op: counts[op] for op in OPS},
            "hits": counts["hits"],
            "misses": counts["misses"],
            "hit_rate": counts["hits"] / gets if gets else None,
            "refused": counts["refused"],
            "errors": counts["errors"],
            "unflushed": unflushed,
        }

    def calls(self) -> builtins.list[CallRecord]:  # `list` is a method here
        """The calls made on this session in this process, oldest first (the newest ``LOG_SIZE``). (Named ``log``
        before: ``log`` appends an event to a user's memory.)"""
        tally = self._tally()
        with tally.lock:
            return list(tally.log)

    # ---------------------------------------------------------- async twins (each runs its sync call in a thread)
    async def aget(self, key: str, default: Any = None) -> Any:
        return await asyncio.to_thread(self.get, key, default)

    async def aset(self, key: str, value: Any, *, source: Source | str = Source.AGENT) -> SetResult:
        return await asyncio.to_thread(self.set, key, value, source=source)

    async def alist(self) -> dict[str, Any]:
        return await asyncio.to_thread(self.list)

    async def adelete(self, key: str) -> bool:
        return await asyncio.to_thread(self.delete, key)

    async def apending(self) -> dict[str, Any]:
        return await asyncio.to_thread(self.pending)

    async def aapprove(self, key: str) -> SetResult:
        return await asyncio.to_thread(self.approve, key)

    async def areject(self, key: str) -> bool:
        return await asyncio.to_thread(self.reject, key)

    async def aflush(self) -> int:
        return await asyncio.to_thread(self.flush)

    async def astats(self) -> dict[str, Any]:
        return await asyncio.to_thread(self.stats)

    async def acalls(self) -> builtins.list[CallRecord]:
        return await asyncio.to_thread(self.calls)

    # ------------------------------------------------------------------ machinery
    @contextmanager
    def _call(self, op: str, key: object) -> Iterator[_Call]:
        """Count and log one call, whatever its outcome."""
        call = _Call(op, key[:MAX_KEY_CHARS] if isinstance(key, str) else f"<{type(key).__name__}>")
        call.given = call.key
        try:
            yield call
        except SensitiveIdentifierError:
            call.outcome = "refused"
            call.key = "<withheld>"  # the key or session id holds the secret: the call log keeps neither
            raise
        except SensitiveDataError:
            call.outcome = "refused"
            raise
        except MemtendError as exc:
            call.outcome = f"error: {type(exc).__name__}"
            raise
        finally:
            self._note(call)

    def _note(self, call: _Call) -> None:
        if not metrics_tally.counted(call.op, self.user.operator):
            return  # a person's read: not the agent's use of its memory
        tally = self._tally()
        with tally.lock:
            tally.log.append(CallRecord(now(), call.op, call.key, call.outcome))
            if not call.persisted:
                tally.pending[call.op] += 1
                counter = _OUTCOME_COUNTERS.get(call.outcome.split(":")[0])
                if counter:
                    tally.pending[counter] += 1
        # the memory metrics and the stored call log (see memtend.metrics): after the session's lock is let go
        counts: dict[str, float] = {}
        if call.op == "get" and call.outcome in ("hit", "miss"):
            counts = {"memory.gets": 1, "memory.hits": 1 if call.outcome == "hit" else 0}
        elif call.outcome == "refused":
            counts = {"writes.refused": 1}
        metrics_tally.note_call(
            self.user.memory, self.user.user_id, call.op, call.key, call.outcome, session=self.session_id,
            started_ns=call.started_ns, ended_ns=time.time_ns(), counts=counts, given=call.given, tier="working",
            operator=self.user.operator,
        )  # fmt: skip

    def _after_read(self) -> None:
        if not metrics_tally.counted("get", self.user.operator):
            return
        tally = self._tally()
        with tally.lock:
            tally.reads_since_flush += 1
            due = tally.reads_since_flush >= FLUSH_EVERY
        if due:
            persist_counts(self._store, tally, create=False, expires_at=None)
