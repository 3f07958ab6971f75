"""Precedence: what happens when a fact is written over an existing one. Pure: no storage."""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass
from enum import Enum

from memtend.errors import InvalidInputError
from memtend.records import MAX_KEY_CHARS, Record, Source, check_encodable


class FactOutcome(str, Enum):
    """What ``set_fact`` did. Compares equal to its string value ("added", ...)."""

    ADDED = "added"
    UPDATED = "updated"
    UNCHANGED = "unchanged"
    KEPT = "kept"  # the existing value came from a more trusted source and stays

    def __str__(self) -> str:
        return self.value


@dataclass(frozen=True)
class FactDecision:
    outcome: FactOutcome
    reason: str


_CAMEL = re.compile(r"(?<=[a-z0-9])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z])")
_SEPARATORS = re.compile(r"[\s\-_/]+")
_ALLOWED = re.compile(r"[^\w.]+", re.UNICODE)


def canonical_key(key: object) -> str:
    """The one place keys are canonicalised: "User ID", "user_id", "userId" and "user-id" are all "user_id".

    Dots separate segments ("Contact.Method" -> "contact.method"); each segment is lower snake case.
    """
    if not isinstance(key, str):
        raise InvalidInputError(f"key must be a str, got {type(key).__name__}")
    check_encodable(key, "key")
    text = unicodedata.normalize("NFKC", key).strip()
    segments = []
    for segment in text.split("."):
        segment = _CAMEL.sub("_", segment.strip())
        segment = _SEPARATORS.sub("_", segment)
        segment = _ALLOWED.sub("", segment).strip("_").lower()
        if segment:
            segments.append(segment)
    canonical = ".".join(segments)
    if not canonical:
        raise InvalidInputError(f"key {key!r} has no letters or digits; use a name such as 'contact.method'")
    if len(canonical) > MAX_KEY_CHARS:
        raise InvalidInputError(
            f"key is {len(canonical)} characters after canonicalising; the limit is {MAX_KEY_CHARS}"
        )
    return canonical


def normalise_value(value: str) -> str:
    """Values that differ only in case or spacing are the same value."""
    return " ".join(unicodedata.normalize("NFKC", value).split()).casefold()


def decide_fact(existing: Record | None, value: str, source: Source, *, said_at: float | None = None) -> FactDecision:
    """Decide how a new value for a fact meets the current one.

    A lower-trust source never replaces a higher-trust one: an inference never overwrites what the user said.
    Equal or higher trust replaces (the newest statement of the same standing wins): a value back-dated
    (``said_at``, when it was said) to before the current value was set does not replace it.
    """
    if existing is None:
        return FactDecision(FactOutcome.ADDED, "no current value")
    if normalise_value(existing.value) == normalise_value(value):
        return FactDecision(FactOutcome.UNCHANGED, "same value")
    if said_at is not None and said_at < existing.updated_at:
        return FactDecision(FactOutcome.KEPT, "the current value was said later")
    if source.trust < existing.source.trust:
        return FactDecision(
            FactOutcome.KEPT,
            f"current value came from {existing.source.value}, which outranks {source.value}",
        )
    return FactDecision(FactOutcome.UPDATED, f"{source.value} replaces {existing.source.value}")


def fact_text(key: str, value: str) -> str:
    """What a fact record embeds and shows: the key in words, then the value."""
    return f"{key.replace('_', ' ').replace('.', ' ')}: {value}"
