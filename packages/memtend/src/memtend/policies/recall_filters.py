"""What narrows a recall besides ranking: a metadata filter on the caller's own fields and a token budget.
Pure: no storage.

A filter is a dict ``{field: condition}`` over the metadata given at write time (``remember(..., metadata=...)``,
``Event(metadata=...)``); every field must match. A condition is a value (equality) or a dict of operators:
``$eq $ne $gt $gte $lt $lte`` (numbers with numbers, strings with strings) and ``$in $nin`` (a list). A record
without the field matches only ``$ne`` and ``$nin``.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from memtend.errors import InvalidInputError
from memtend.records import MAX_KEY_CHARS, Record

Scalar = str | int | float | bool
MetadataFilter = Mapping[str, Any]
CHARS_PER_TOKEN = 4  # the same estimate the transcript code uses (about right for English prose)

_COMPARE: dict[str, Callable[[Any, Any], bool]] = {
    "$eq": lambda a, b: a == b,
    "$ne": lambda a, b: a != b,
    "$gt": lambda a, b: a > b,
    "$gte": lambda a, b: a >= b,
    "$lt": lambda a, b: a < b,
    "$lte": lambda a, b: a <= b,
}
_OPERATORS = (*_COMPARE, "$in", "$nin")
_MISSING = object()


def check_filter(where: object) -> dict[str, dict[str, Any]]:
    """Validate a metadata filter; returns it with every condition as an operator dict."""
    if not isinstance(where, Mapping):
        raise InvalidInputError(f"where must be a dict of metadata field -> condition, got {type(where).__name__}")
    out: dict[str, dict[str, Any]] = {}
    for name, condition in where.items():
        if not isinstance(name, str) or not name or len(name) > MAX_KEY_CHARS:
            raise InvalidInputError(f"where keys must be metadata field names (non-empty str), got {name!r:.60}")
        ops = condition if isinstance(condition, Mapping) else {"$eq": condition}
        if not ops:
            raise InvalidInputError(f"where[{name!r}] has no condition; use a value or {{'$eq': value}}")
        for op, value in ops.items():
            if op not in _OPERATORS:
                raise InvalidInputError(
                    f"unknown operator {op!r:.40} in where[{name!r}]; use one of {', '.join(_OPERATORS)}"
                )
            values = value if op in ("$in", "$nin") else [value]
            if op in ("$in", "$nin") and not isinstance(value, list | tuple):
                raise InvalidInputError(f"where[{name!r}][{op!r}] must be a list of values")
            for v in values:
                if not isinstance(v, Scalar) or (isinstance(v, float) and not math.isfinite(v)):
                    raise InvalidInputError(
                        f"where[{name!r}] compares with {type(v).__name__} {v!r:.40}; use str, int, float or bool"
                    )
        out[name] = dict(ops)
    return out


def _comparable(a: Any, b: Any) -> bool:
    if isinstance(a, bool) or isinstance(b, bool):
        return isinstance(a, bool) and isinstance(b, bool)
    numbers = (int, float)
    return (isinstance(a, numbers) and isinstance(b, numbers)) or (isinstance(a, str) and isinstance(b, str))


def _holds(value: Any, op: str, operand: Any) -> bool:
    if op == "$in":
        return value is not _MISSING and any(_comparable(value, o) and value == o for o in operand)
    if op == "$nin":
        return value is _MISSING or not any(_comparable(value, o) and value == o for o in operand)
    if value is _MISSING or not _comparable(value, operand):
        return op == "$ne"
    return _COMPARE[op](value, operand)


def matches(record: Record, where: Mapping[str, Mapping[str, Any]]) -> bool:
    """True when the record's caller metadata meets every condition of a checked filter."""
    for name, ops in where.items():
        value = record.extra.get(name, _MISSING)
        if not all(_holds(value, op, operand) for op, operand in ops.items()):
            return False
    return True


def check_max_tokens(max_tokens: object) -> int | None:
    if max_tokens is None:
        return None
    if not isinstance(max_tokens, int) or isinstance(max_tokens, bool) or max_tokens < 1:
        raise InvalidInputError(f"max_tokens must be an int >= 1 (or None), got {max_tokens!r:.40}")
    return max_tokens


def estimate_tokens(text: str) -> int:
    """Tokens of ``text`` by the four-characters-a-token estimate (no tokenizer)."""
    return math.ceil(len(text) / CHARS_PER_TOKEN)


def within_budget(texts: Sequence[str], max_tokens: int | None) -> int:
    """How many of ``texts`` (best first) fit in ``max_tokens`` together: the longest prefix that fits, so what
    is returned stays in rank order with nothing better left out."""
    if max_tokens is None:
        return len(texts)
    used = 0
    for n, text in enumerate(texts):
        used += estimate_tokens(text)
        if used > max_tokens:
            return n
    return len(texts)


def recall_test(session: str | None, conditions: dict[str, dict[str, Any]] | None) -> Callable[[Record], bool] | None:
    """The test a recalled record must pass, or None when nothing narrows the recall."""
    if session is None and conditions is None:
        return None

    def test(record: Record) -> bool:
        if session is not None and record.session != session:
            return False
        return conditions is None or matches(record, conditions)

    return test
