"""Every call on a user's memory, seen once: its op, key, outcome and timing go to the call log and the observers
(:mod:`memtend.metrics.tally`), and what it tells the metrics is counted.

:func:`instrumented` wraps the public calls of the per-user facade listed in :data:`OPS` (working memory counts
its own calls, see :mod:`memtend.working.session`). A call made inside another observed call of the same thread
(``approve`` reading the record it approves) is part of it and is not logged again. Outcomes never hold a value
or a text: a record's status, a count of results, ``refused`` (the write gate said no), ``error: <type>``.
"""

from __future__ import annotations

import contextvars
import functools
import inspect
import time
from collections.abc import Callable, Iterable, Sequence
from typing import Any, TypeVar

from memtend.errors import InvalidInputError, SensitiveDataError
from memtend.metrics import tally

__all__ = ["ASYNC_OPS", "OPS", "instrumented", "outcome_of", "recall_counts", "utilisation_counts"]

C = TypeVar("C", bound=type)

# facade call -> (the argument naming what it is about, whether it writes)
OPS: dict[str, tuple[str | None, bool]] = {
    "remember": (None, True),
    "log": (None, True),
    "log_many": (None, True),
    "capture": (None, True),
    "add_rule": (None, True),
    "set_fact": ("key", True),
    "get_fact": ("key", False),
    "facts": (None, False),
    "recall": (None, False),
    "get": ("record_id", False),
    "list": (None, False),
    "history": ("record_id", False),
    "pending": (None, False),
    "proposals": (None, False),
    "accept": ("record_id", True),
    "approve": ("record_id", True),
    "revise": ("record_id", True),
    "reject": ("record_id", True),
    "delete": ("record_id", True),
    "compact": (None, True),
    "forget": (None, True),
    "purge": (None, True),
    "restore": ("record_id", True),
    "export": (None, False),
    "report_recall": (None, False),
    "report_compaction": (None, False),
    "check_retrieval": (None, False),
}
# async twins that do work of their own rather than run the sync call off the event loop: logged as that op
ASYNC_OPS: dict[str, str] = {"acapture": "capture"}
_inside: contextvars.ContextVar[str | None] = contextvars.ContextVar("memtend_observed", default=None)


def outcome_of(result: Any) -> str:
    """A call's outcome as the log keeps it (never a value or a text)."""
    status = getattr(result, "status", None)
    if status is not None and hasattr(status, "value"):
        return str(status.value)  # a record
    if type(result).__name__ == "CaptureReport":  # counts of what became of the turn's candidates
        return ", ".join(f"{fate} {n}" for fate, n in result.tally().items())
    if type(result).__name__ == "FactResult":
        return result._outcome.value if result._resolve is None else "written"  # a lazy result is not read here
    if isinstance(result, list | tuple | dict):
        return f"{len(result)} results"
    if isinstance(result, bool) or result is None:
        return "ok" if result is not False else "none"
    if isinstance(result, int):
        return str(result)
    return "ok"


def _key(name: str | None, args: tuple[Any, ...], kwargs: dict[str, Any]) -> tuple[str, str]:
    """The key a call is about, canonical for a fact key, and as given."""
    if name is None:
        return "", ""
    value = kwargs.get(name, args[0] if args else None)
    if not isinstance(value, str):
        return "", ""
    if name == "key":
        from memtend.policies.precedence import canonical_key

        try:
            return canonical_key(value), value
        except InvalidInputError:
            return "", ""
    return value, value


def _failed(exc: Exception, writes: bool, counts: dict[str, float]) -> str:
    """The outcome of a call that raised (a refused write is counted)."""
    if isinstance(exc, SensitiveDataError):
        if writes:
            counts["writes.refused"] = 1
        return "refused"
    return f"error: {type(exc).__name__}"


def _note(
    self: Any, op: str, key_arg: str | None, call: tuple[Any, ...], outcome: str, t: tuple[int, dict[str, float]]
) -> None:
    """Log one finished call (``call``: its args and kwargs; ``t``: when it started, what it counts)."""
    started, counts = t
    ended = time.time_ns()
    args, kwargs = call
    key, given = _key(key_arg, args, kwargs)
    session = kwargs.get("session") if op != "recall" else None  # a recall's session narrows, it is not one
    session = session if isinstance(session, str) else ""
    memory = self.memory
    if not getattr(memory, "_closed", False):
        tally.note_call(
            memory, self.user_id, op, key, outcome, session=session, started_ns=started, ended_ns=ended,
            counts=counts, given=given,
        )  # fmt: skip


def _observed(fn: Callable[..., Any], key_arg: str | None, writes: bool, op: str) -> Callable[..., Any]:
    if inspect.iscoroutinefunction(fn):
        return _aobserved(fn, key_arg, writes, op)

    @functools.wraps(fn)
    def call(self: Any, *args: Any, **kwargs: Any) -> Any:
        if getattr(self, "operator", False) and not tally.operating():
            with tally.by_operator():  # the calls inside are the person's too (tally.note_call decides what is kept)
                return call(self, *args, **kwargs)
        if _inside.get() == self.user_id:
            return fn(self, *args, **kwargs)
        token = _inside.set(self.user_id)
        started = time.time_ns()
        outcome = "ok"
        counts: dict[str, float] = {}
        try:
            result = fn(self, *args, **kwargs)
            outcome = outcome_of(result)
            return result
        except Exception as exc:
            outcome = _failed(exc, writes, counts)
            raise
        finally:
            _inside.reset(token)
            _note(self, op, key_arg, (args, kwargs), outcome, (started, counts))

    return call


def _aobserved(fn: Callable[..., Any], key_arg: str | None, writes: bool, op: str) -> Callable[..., Any]:
    """The async form: an async twin that does its own work (``acapture`` awaits its extractor) is logged under the
    sync op's name; the sync calls it runs off the event loop see it is under way and are not logged again."""

    @functools.wraps(fn)
    async def call(self: Any, *args: Any, **kwargs: Any) -> Any:
        if _inside.get() == self.user_id:
            return await fn(self, *args, **kwargs)
        token = _inside.set(self.user_id)
        started = time.time_ns()
        outcome = "ok"
        counts: dict[str, float] = {}
        try:
            result = await fn(self, *args, **kwargs)
            outcome = outcome_of(result)
            return result
        except Exception as exc:
            outcome = _failed(exc, writes, counts)
            raise
        finally:
            _inside.reset(token)
            _note(self, op, key_arg, (args, kwargs), outcome, (started, counts))

    return call


def instrumented(cls: C) -> C:
    """``cls`` with each of its methods named in :data:`OPS` observed (logged, timed, told to the observers)."""
    for name, (key_arg, writes) in OPS.items():
        fn = cls.__dict__.get(name)
        if fn is not None:
            setattr(cls, name, _observed(fn, key_arg, writes, name))
    for name, op in ASYNC_OPS.items():
        fn = cls.__dict__.get(name)
        if fn is not None:
            setattr(cls, name, _observed(fn, *OPS[op], op))
    return cls


# ------------------------------------------------------------------------------------------------ reports
def _ids(items: Iterable[Any], what: str) -> list[str]:
    out = []
    for item in items:
        record = getattr(item, "record", item)  # a Hit, a Record, or an id
        found = getattr(record, "id", record)
        if not isinstance(found, str):
            raise InvalidInputError(f"{what} takes recall hits, records or record ids (str), got {type(item).__name__}")
        out.append(found)
    return out


def recall_counts(recalled: Sequence[Any], used: Iterable[Any] | bool) -> dict[str, float]:
    """What one reported recall adds to the metrics: judged, and a hit when a memory it returned was used (``used``:
    the ids, hits or records of those the application used, or True / False)."""
    if isinstance(recalled, str) or not isinstance(recalled, Sequence):
        raise InvalidInputError("recalled takes the list recall returned (hits, records or record ids)")
    if isinstance(used, bool):
        hit = used
    else:
        if isinstance(used, str):
            raise InvalidInputError("used takes a list of record ids (or hits, records), or True / False")
        hit = bool(set(_ids(used, "used")) & set(_ids(recalled, "recalled")))
    return {"retrieval.reported": 1, "retrieval.reported_hits": 1 if hit else 0}


def utilisation_counts(result: Any, context_window: int | None) -> tuple[dict[str, float], dict[str, float]]:
    """What one transcript compaction adds to the metrics (counts, peaks): nothing when it did not compact; its
    share of the budget (tokens before / ``context_window``, else the result's ``max_tokens``) when one is known."""
    if context_window is not None and (
        isinstance(context_window, bool) or not isinstance(context_window, int) or context_window < 1
    ):
        raise InvalidInputError("context_window must be a positive number of tokens, or None")
    if not hasattr(result, "compacted") or not hasattr(result, "tokens_before"):
        raise InvalidInputError(f"report_compaction takes a CompactionResult, got {type(result).__name__}")
    if not result.compacted:
        return {}, {}
    budget = context_window or getattr(result, "max_tokens", None)
    if not budget:
        return {"compaction.count": 1}, {}
    share = result.tokens_before / budget
    return {"compaction.count": 1, "compaction.measured": 1, "compaction.utilisation": share}, {
        "compaction.utilisation": share
    }
