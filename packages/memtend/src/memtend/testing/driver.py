"""The interface the isolation machine drives: a :class:`Driver` over one memory surface, and what it shows."""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from memtend.records import Source

__all__ = ["VOLATILE", "Driver", "Seen", "owner_ids", "strip_keys"]


@dataclass(frozen=True)
class Seen:
    """One item a surface showed for a user: the owner it reports (None if it reports none) and its text."""

    user_id: str | None
    text: str


class Driver(ABC):
    """What the isolation machine needs from a memory surface: the core, or a framework adapter.

    ``write``/``recall``/``list``/``export``/``erase`` are required. Anything else goes through ``operate``
    and is only called when ``supports`` says so; the machine's model covers ``facts`` and ``store``.
    """

    name: str = "driver"

    @abstractmethod
    def write(self, user_id: str, text: str, *, kind: str, source: Source = Source.USER) -> None:
        """Store ``text`` for the user as a memory of ``kind`` (note, event, rule)."""

    @abstractmethod
    def recall(self, user_id: str, query: str) -> list[Seen]: ...

    @abstractmethod
    def list(self, user_id: str) -> list[Seen]:
        """Everything the surface lists for the user (every status)."""

    @abstractmethod
    def export(self, user_id: str) -> Any:
        """Everything kept about the user, JSON-able; volatile stamps (export time, last use) left out."""

    @abstractmethod
    def erase(self, user_id: str) -> None: ...

    def validate_user(self, user_id: object) -> None:  # noqa: B027 - optional hook
        """Raise InvalidUserIdError for an id the surface refuses."""

    def supports(self, op: str) -> bool:
        return False

    def operate(self, user_id: str, op: str, **params: Any) -> Any:
        raise NotImplementedError(op)

    def close(self) -> None:  # noqa: B027 - optional hook
        """Release what the driver holds."""


# Export fields that change without any write (the export's own time, last use): left out of fingerprints.
VOLATILE = frozenset({"exported_at", "last_used_at"})
# Reserved namespaces of the memory metrics and the call log: every call, a read or a refused one included, adds to
# them, so like the volatile stamps they stay out of "nothing changed" comparisons (see ``without_read_stats``).
READ_STATS = ("metrics:", "calls:")


def without_read_stats(value: Any) -> Any:
    """``value`` (an export) without the documents of the read statistics' namespaces, at any depth."""
    if isinstance(value, dict):
        return {k: without_read_stats(v) for k, v in value.items()}
    if isinstance(value, list):
        return [
            without_read_stats(v)
            for v in value
            if not (isinstance(v, dict) and str(v.get("namespace", "")).startswith(READ_STATS))
        ]
    return value


def strip_keys(value: Any, drop: frozenset[str]) -> Any:
    """``value`` without the dict keys in ``drop``, at any depth."""
    if isinstance(value, dict):
        return {k: strip_keys(v, drop) for k, v in value.items() if k not in drop}
    if isinstance(value, list):
        return [strip_keys(v, drop) for v in value]
    return value


def owner_ids(value: Any) -> Iterator[Any]:
    """Every value found under a ``user_id`` key, at any depth (caller metadata, ``extra``, aside)."""
    if isinstance(value, dict):
        for k, v in value.items():
            if k == "user_id":
                yield v
            elif k != "extra":
                yield from owner_ids(v)
    elif isinstance(value, list):
        for v in value:
            yield from owner_ids(v)
