"""Extension points of the write gate: custom detectors and an allow-list, gathered in a :class:`GatePolicy`.

A detector is any callable taking the text and returning :class:`Finding` s (kind and span, never the value).
It receives the text with earlier redaction markers (``[REDACTED:<kind>]``) replaced by NUL characters of the
same length, so its spans index the text it was given. Its kinds must be lower-case letters, digits and ``_``
(they become ``[REDACTED:<kind>]`` markers).

The allow-list names values that are not secrets even though a detector matches them (a documented test card,
a public demo key): exact values, regular expressions matched against the whole value, or whole kinds.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from re import Pattern

from memtend.errors import InvalidInputError
from memtend.policies.gate.common import Finding

__all__ = ["DEFAULT_POLICY", "AllowList", "Detector", "GatePolicy"]

Detector = Callable[[str], Iterable[Finding]]
"""A custom detector: text in, findings out (``Finding(kind, start, end)`` with ``text[start:end]`` the value)."""

KIND = re.compile(r"[a-z0-9_]+")


@dataclass(frozen=True, init=False)
class AllowList:
    """Values never treated as sensitive, whichever detector matches them.

    ``values``: exact values; ``patterns``: regular expressions (``str`` or compiled) that must match the whole
    value; ``kinds``: kinds not looked for at all (for example ``{"national_id"}``).
    """

    values: frozenset[str] = field(default_factory=frozenset)  # exact values allowed
    patterns: tuple[Pattern[str], ...] = ()  # regular expressions, each matched against a whole value
    kinds: frozenset[str] = field(default_factory=frozenset)  # finding kinds not looked for at all

    def __init__(
        self,
        values: Iterable[str] = (),
        patterns: Iterable[str | Pattern[str]] = (),
        kinds: Iterable[str] = (),
    ) -> None:
        values = _strings(values, "values")
        kinds = _strings(kinds, "kinds")
        compiled: list[Pattern[str]] = []
        for pattern in _items(patterns, "patterns"):
            if isinstance(pattern, Pattern):
                compiled.append(pattern)
            elif isinstance(pattern, str):
                try:
                    compiled.append(re.compile(pattern))
                except re.error as exc:
                    raise InvalidInputError(f"allow-list pattern {pattern!r} is not a valid regex: {exc}") from None
            else:
                raise InvalidInputError(f"allow-list patterns must be str or re.Pattern, got {type(pattern).__name__}")
        object.__setattr__(self, "values", frozenset(values))
        object.__setattr__(self, "patterns", tuple(compiled))
        object.__setattr__(self, "kinds", frozenset(kinds))

    def __bool__(self) -> bool:
        return bool(self.values or self.patterns or self.kinds)

    def allows(self, kind: str, value: str) -> bool:
        """True if a hit of ``kind`` on ``value`` is allowed (not sensitive)."""
        if kind in self.kinds or value in self.values:
            return True
        return any(pattern.fullmatch(value) is not None for pattern in self.patterns)


def _items(items: object, name: str) -> list[object]:
    if isinstance(items, (str, bytes)) or not isinstance(items, Iterable):
        kind = type(items).__name__
        raise InvalidInputError(f"allow-list {name} must be a collection (list, set, tuple), got {kind}")
    return list(items)


def _strings(items: object, name: str) -> list[str]:
    out = _items(items, name)
    for item in out:
        if not isinstance(item, str) or not item:
            raise InvalidInputError(f"allow-list {name} must be non-empty strings, got {item!r}")
    return out  # type: ignore[return-value]


@dataclass(frozen=True)
class GatePolicy:
    """What the gate looks for beyond its built-in detectors, and what it lets through.

    ``detectors`` run after the built-in ones; their findings are merged with the rest (a span found by two
    detectors is masked once). ``allow`` removes hits on allowed values before anything is refused or masked.
    """

    detectors: tuple[Detector, ...] = ()  # custom detectors (text -> findings), run after the built-in ones
    allow: AllowList = field(default_factory=AllowList)  # values and kinds never treated as sensitive

    def __post_init__(self) -> None:
        detectors = self.detectors
        if callable(detectors) or not isinstance(detectors, Iterable):
            raise InvalidInputError("GatePolicy.detectors must be a tuple of callables, e.g. detectors=(my_detector,)")
        detectors = tuple(detectors)
        for detector in detectors:
            if not callable(detector):
                raise InvalidInputError(f"a gate detector must be callable (text -> findings), got {detector!r}")
        object.__setattr__(self, "detectors", detectors)
        if not isinstance(self.allow, AllowList):
            raise InvalidInputError(
                f"GatePolicy.allow must be an AllowList, got {type(self.allow).__name__}; "
                "build one with AllowList(values=..., patterns=..., kinds=...)"
            )


DEFAULT_POLICY = GatePolicy()


def check_custom_finding(detector: Detector, finding: object, length: int) -> Finding:
    """A custom detector's finding, checked: a :class:`Finding` with a marker-safe kind and an in-range span."""
    if not isinstance(finding, Finding):
        raise InvalidInputError(
            f"gate detector {getattr(detector, '__name__', detector)!r} returned {type(finding).__name__}; "
            "return memtend.policies.gate.Finding(kind, start, end) objects"
        )
    if not isinstance(finding.kind, str) or KIND.fullmatch(finding.kind) is None:
        raise InvalidInputError(
            f"gate detector {getattr(detector, '__name__', detector)!r} returned kind {finding.kind!r}; "
            "kinds are lower-case letters, digits and '_' (e.g. 'employee_id')"
        )
    if not (isinstance(finding.start, int) and isinstance(finding.end, int) and 0 <= finding.start <= finding.end):
        raise InvalidInputError(
            f"gate detector {getattr(detector, '__name__', detector)!r} returned span "
            f"({finding.start!r}, {finding.end!r}); spans are 0 <= start <= end <= len(text)"
        )
    return Finding(finding.kind, finding.start, min(finding.end, length))
