"""Checks of call arguments that several public entry points share, each rule in one place; every refusal is an
:class:`InvalidInputError` that says how to fix the call and never repeats a refused value (a value passed by
mistake may be a secret): :func:`describe` names what was given instead."""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable, Iterable, Mapping
from typing import Any

from memtend.errors import InvalidInputError, describe
from memtend.records import Kind, Scope, check_days, check_encodable


def check_items(items: object, what: str) -> list[Any]:
    """The items of a list-like argument (a list, tuple, set or iterator), refusing a str, bytes, dict or None,
    which would otherwise be read character by character or key by key."""
    if isinstance(items, str | bytes | bytearray | Mapping) or not isinstance(items, Iterable):
        raise InvalidInputError(f"{what} must be a list (or another iterable of items), got {describe(items)}")
    return list(items)


def check_texts(texts: object, what: str = "texts") -> list[str]:
    """A list of str of valid unicode (what the embedding model can read)."""
    items = check_items(texts, what)
    for text in items:
        if not isinstance(text, str):
            raise InvalidInputError(f"{what} must hold only str, got {describe(text)}")
        check_encodable(text, f"a str of {what}")
    return items


def check_callable(value: object, what: str) -> Callable[..., Any]:
    if not callable(value):
        raise InvalidInputError(f"{what} must be a callable, got {describe(value)}")
    return value


def check_injection_check(value: object) -> Any:
    """``Memory(injection_check=...)``: :data:`memtend.extras.AUTO` (the installed ``memtend-injection``, if any),
    ``None`` (the patterns alone) or a callable taking the text and answering whether it reads like an injection."""
    from memtend.extras import AUTO

    if value is AUTO or value is None or callable(value):
        return value
    raise InvalidInputError(
        "injection_check must be memtend.extras.AUTO (the installed memtend-injection extra, if any), None (the "
        f"patterns alone) or a callable taking a str and returning a bool, got {describe(value)}"
    )


def _days_by_kind(value: object, what: str) -> None:
    """A mapping of record kind -> days (a finite number >= 0) or None."""
    if not isinstance(value, Mapping):
        raise InvalidInputError(f"{what} must be a dict of kind -> days or None, got {describe(value)}")
    for kind, days in value.items():
        Kind.parse(kind)
        if days is not None:
            check_days(days, f"{what}[{kind}]")


def check_retention(policy: Any) -> None:
    """The fields of a RetentionPolicy (checked when it is made and when a Memory takes it)."""
    _days_by_kind(policy.idle_days, "retention.idle_days")
    if policy.pending_review_days is not None:
        check_days(policy.pending_review_days, "retention.pending_review_days")
    check_days(policy.archive_grace_days, "retention.archive_grace_days")
    check_days(policy.session_days, "retention.session_days")
    if not isinstance(policy.scope_days, Mapping):
        raise InvalidInputError(
            f"retention.scope_days must be a dict of scope -> days or None, got {describe(policy.scope_days)}"
        )
    for scope, days in policy.scope_days.items():
        Scope.parse(scope)
        if days is not None:
            check_days(days, f"retention.scope_days[{scope}]")
    if policy.history_days is not None:
        check_days(policy.history_days, "retention.history_days")


def check_retrieval(config: Any) -> None:
    """The knobs of a RetrievalConfig (checked when it is made and when a Memory takes it): every knob a finite
    number (or a tuple of them), the kinds real kinds; a str or NaN there would fail only at the first recall."""
    for knob in dataclasses.fields(config):
        value = getattr(config, knob.name)
        what = f"retrieval.{knob.name}"
        if knob.name == "half_life_days":
            _days_by_kind(value, what)
        elif knob.name == "timeline_kinds":
            for kind in check_items(value, what):
                Kind.parse(kind)
        elif knob.name in ("context_before", "context_after"):
            for weight in check_items(value, what):
                _finite(weight, what)
        else:
            _finite(value, what)


def _finite(value: object, what: str) -> None:
    if not isinstance(value, int | float) or isinstance(value, bool):
        raise InvalidInputError(f"{what} must be a number, got {describe(value)}")
    try:
        finite = math.isfinite(value)
    except OverflowError:
        finite = False
    if not finite:
        raise InvalidInputError(f"{what} must be a finite number, got {describe(value)}")
