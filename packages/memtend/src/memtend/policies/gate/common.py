"""What every detector shares: findings and hits, redaction markers, and the tests for a random token or a
stand-in value."""

from __future__ import annotations

import math
import re
from collections import Counter
from dataclasses import dataclass


@dataclass(frozen=True)
class Finding:
    """One sensitive value: its kind and where it is (``text[start:end]``). The value itself is not kept."""

    kind: str
    start: int
    end: int


# ---------------------------------------------------------------------------------------------------------
# Redaction markers. Text already redacted holds ``[REDACTED:<kind>]``; before scanning, markers are
# replaced by NUL characters of the same length, which no detector accepts inside a value and which act as
# a hard boundary. So a marker is never mistaken for (part of) a value and ``redact`` reaches a fixpoint.

MARKER_PREFIX = "[REDACTED:"
MARKER = re.compile(r"\[REDACTED:[a-z0-9_]+\]")
OPAQUE = "\x00"


def mask_markers(text: str) -> str:
    if MARKER_PREFIX not in text:
        return text
    return MARKER.sub(lambda m: OPAQUE * (m.end() - m.start()), text)


# A hit from one detector: (start, end, kind). Detectors run on the masked text.
Hit = tuple[int, int, str]


def _entropy(value: str) -> float:
    counts = Counter(value)
    n = len(value)
    return -sum(c / n * math.log2(c / n) for c in counts.values())


def looks_random(value: str, *, min_len: int = 16, min_entropy: float = 3.0) -> bool:
    """A machine-made token: long, mixes character classes, high Shannon entropy. Words and ids do not."""
    if len(value) < min_len:
        return False
    has_lower = any("a" <= c <= "z" for c in value)
    has_upper = any("A" <= c <= "Z" for c in value)
    has_digit = any("0" <= c <= "9" for c in value)
    if not has_digit or has_lower + has_upper + has_digit < 2:
        return False
    return _entropy(value) >= min_entropy


_PLACEHOLDER_WORDS = frozenset(
    re.findall(
        r"\S+",
        "password passwd pass pwd secret token key apikey api_key changeme placeholder redacted hidden masked "
        "example sample dummy xxx xxxx xxxxx none null nil n/a na tbd tba todo unknown unset empty blank",
    )
)


_VARIABLE = re.compile(r"\$\{.*|\$\(.*|%\(.*|\$[A-Z_][A-Z0-9_]*|%[A-Za-z_][A-Za-z0-9_]*%")


def is_placeholder(value: str) -> bool:
    """A stand-in rather than a value: ``<password>``, ``${DB_PASS}``, ``$DB_PASS``, ``****``, ``your_password``."""
    if not value or value[0] in "<{[" or _VARIABLE.fullmatch(value):
        return True
    low = value.lower()
    if low in _PLACEHOLDER_WORDS or low.startswith(("your_", "your-", "my_", "xxx")):
        return True
    return len(set(value)) == 1 or all(c in "*•●·.-_#xX" for c in value)


# Numbers need at least two digits in a row somewhere in the text.
HAS_DIGITS = re.compile(r"[0-9]{2}")
