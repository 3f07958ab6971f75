"""Checks of call arguments that several public entry points share, each rule in one place; every refusal is an
:class:`InvalidInputError` that says how to fix the call and never repeats a refused value (a value passed by
mistake may be a secret): :func:`describe` names what was given instead."""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Iterable, Mapping
from typing import Any

from memtend.errors import InvalidInputError

_SHOWN_NUMBER = 1_000_000  # numbers below this are shown in messages (k=0, ttl=-1); larger ones only described
_PREFIX = re.compile(r"[A-Za-z0-9](?:[A-Za-z0-9_-]|\.(?!\.)){0,62}")


def describe(value: object) -> str:
    """What a refused value is, without its content: ``a str of 12 characters``, ``an int of 16 digits``, ``-1``."""
    if isinstance(value, bool) or value is None:
        return repr(value)
    if isinstance(value, int):
        return repr(value) if abs(value) < _SHOWN_NUMBER else f"an int of about {_digits(value)} digits"
    if isinstance(value, float):
        return repr(value) if not math.isfinite(value) or abs(value) < _SHOWN_NUMBER else "a large float"
    if isinstance(value, str | bytes):
        return f"a {type(value).__name__} of {len(value)} {'characters' if isinstance(value, str) else 'bytes'}"
    return f"a {type(value).__name__}"


def _digits(value: int) -> int:
    return int(value.bit_length() * math.log10(2)) + 1  # str() of a huge int is slow, and refused past 4300 digits


def check_items(items: object, what: str) -> list[Any]:
    """The items of a list-like argument (a list, tuple, set or iterator), refusing a str, bytes, dict or None,
    which would otherwise be read character by character or key by key."""
    if isinstance(items, str | bytes | bytearray | Mapping) or not isinstance(items, Iterable):
        raise InvalidInputError(f"{what} must be a list (or another iterable of items), got {describe(items)}")
    return list(items)


def check_texts(texts: object, what: str = "texts") -> list[str]:
    """A list of str of valid unicode (what the embedding model can read)."""
    from memtend.records import check_encodable

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


def check_memory_options(
    *,
    client: object,
    embedding_function: object,
    retention: object,
    retrieval: object,
    collection_prefix: object,
    max_cached_users: object,
    on_change: object,
) -> None:
    """The arguments of ``Memory(...)`` other than the path, checked before anything is opened."""
    from memtend.policies.forgetting import RetentionPolicy
    from memtend.policies.retrieval import RetrievalConfig

    if on_change is not None and not callable(on_change):
        raise InvalidInputError(f"on_change must be a callable taking a ChangeEvent, got {describe(on_change)}")
    if client is not None and not callable(getattr(client, "get_or_create_collection", None)):
        raise InvalidInputError(
            "client must be a Chroma client (chromadb.EphemeralClient(), PersistentClient(path) or "
            f"HttpClient(host, port)), got {describe(client)}"
        )
    if embedding_function is not None and not callable(embedding_function):
        raise InvalidInputError(
            f"embedding_function must be a Chroma embedding function (callable on a list of str), got "
            f"{describe(embedding_function)}"
        )
    if retention is not None:
        if not isinstance(retention, RetentionPolicy):
            raise InvalidInputError(f"retention must be a RetentionPolicy, got {describe(retention)}")
        check_retention(retention)
    if retrieval is not None:
        if not isinstance(retrieval, RetrievalConfig):
            raise InvalidInputError(f"retrieval must be a RetrievalConfig, got {describe(retrieval)}")
        check_retrieval(retrieval)
    if not isinstance(collection_prefix, str) or not _PREFIX.fullmatch(collection_prefix):
        raise InvalidInputError(
            "collection_prefix must be 1 to 63 characters of letters, digits, '.', '_' or '-', starting with a "
            f"letter or digit (Chroma's collection names), got {describe(collection_prefix)}"
        )
    if not isinstance(max_cached_users, int) or isinstance(max_cached_users, bool) or max_cached_users < 1:
        raise InvalidInputError(f"max_cached_users must be an int >= 1, got {describe(max_cached_users)}")


def _days_by_kind(value: object, what: str) -> None:
    """A mapping of record kind -> days (a finite number >= 0) or None."""
    from memtend.records import Kind, check_days

    if not isinstance(value, Mapping):
        raise InvalidInputError(f"{what} must be a dict of kind -> days or None, got {describe(value)}")
    for kind, days in value.items():
        Kind.parse(kind)
        if days is not None:
            check_days(days, f"{what}[{kind}]")


def check_retention(policy: Any) -> None:
    """The fields of a RetentionPolicy (checked when it is made and when a Memory takes it)."""
    from memtend.records import check_days

    _days_by_kind(policy.idle_days, "retention.idle_days")
    if policy.pending_review_days is not None:
        check_days(policy.pending_review_days, "retention.pending_review_days")
    check_days(policy.archive_grace_days, "retention.archive_grace_days")
    check_days(policy.session_days, "retention.session_days")


def check_retrieval(config: Any) -> None:
    """The knobs of a RetrievalConfig (checked when it is made and when a Memory takes it): every knob a finite
    number (or a tuple of them), the kinds real kinds; a str or NaN there would fail only at the first recall."""
    import dataclasses

    from memtend.records import Kind

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
