"""Where in a long ASCII text the detectors' patterns can match at all, found in a few passes over its bytes, so
each pattern runs only there instead of over the whole text (an 8 MB message is read in tens of ms, not a second).

Every shortcut here returns a superset of the places a pattern can match, and :func:`matches_at` rebuilds from them
exactly the matches ``finditer`` gives, so the findings are those of the whole-text scans
(``tests/unit/test_gate_prefilter.py`` compares the two). Only ASCII text is read this way: there ``lower`` keeps
every position, and a case-insensitive keyword starts where its lower-case spelling does.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from functools import cached_property
from typing import Any

__all__ = ["LONG_TEXT", "LongText", "long_text", "matches_at"]

LONG_TEXT = 4096  # characters from which the prefilter pays for its passes (below, the patterns run directly)

# Letters, digits and the rest as classes: "a" lower-case letter, "A" upper-case letter, "0" digit; other bytes stay.
_CLASSES = bytes.maketrans(
    bytes(range(48, 58)) + bytes(range(65, 91)) + bytes(range(97, 123)), b"0" * 10 + b"A" * 26 + b"a" * 26
)
_DIGIT_BYTES = bytes(1 if 48 <= i <= 57 else 0 for i in range(256))


def matches_at(pattern: re.Pattern[str], text: str, starts: Iterable[int]) -> Iterator[re.Match[str]]:
    """The matches ``pattern.finditer(text)`` gives, when ``starts`` (ascending) holds every position where
    ``pattern`` can match and ``pattern`` never matches the empty string: the leftmost match, then the leftmost
    one from its end, and so on."""
    end = 0
    for start in starts:
        if start < end:
            continue
        match = pattern.match(text, start)
        if match is not None:
            end = match.end()
            yield match


class LongText:
    """A long ASCII text read once for its letters, digits and letter pairs; each question is answered from that."""

    def __init__(self, text: str, lower: str) -> None:
        self.text = text
        self.lower = lower
        self._has: dict[str, bool] = {}

    @cached_property
    def _raw(self) -> bytes:
        return self.text.encode("ascii")

    @cached_property
    def classes(self) -> bytes:
        """The text with every lower-case letter as ``a``, upper-case letter as ``A`` and digit as ``0``."""
        return self._raw.translate(_CLASSES)

    @cached_property
    def _pairs(self) -> Any:
        """Which pairs of adjacent bytes of ``lower`` occur (a table of 65,536 flags)."""
        import numpy as np

        raw = self.lower.encode("ascii")
        present = np.zeros(65536, dtype=np.bool_)
        if len(raw) >= 2:
            present[np.frombuffer(raw, dtype="<u2", count=len(raw) // 2)] = True
            present[np.frombuffer(raw, dtype="<u2", count=(len(raw) - 1) // 2, offset=1)] = True
        return present

    def has(self, needle: str) -> bool:
        """``needle in lower``; a needle of letter pairs that never occur is answered without a search."""
        known = self._has.get(needle)
        if known is not None:
            return known
        if not needle.isascii():
            found = False
        elif len(needle) > 1:
            raw = needle.encode("ascii")
            pairs = self._pairs
            found = all(pairs[raw[i] | raw[i + 1] << 8] for i in range(len(raw) - 1)) and needle in self.lower
        else:
            found = needle in self.lower
        self._has[needle] = found
        return found

    def any(self, needles: Iterable[str]) -> bool:
        return any(self.has(needle) for needle in needles)

    def find_all(self, haystack: str | bytes, needles: Iterable[Any], shift: int = 0) -> list[int]:
        """Every position (ascending) where one of ``needles`` starts in ``haystack``, moved by ``shift``."""
        found: set[int] = set()
        for needle in needles:
            pos = haystack.find(needle)
            while pos >= 0:
                found.add(pos + shift)
                pos = haystack.find(needle, pos + 1)
        return sorted(p for p in found if p >= 0)

    def words(self, *needles: str) -> list[int]:
        """Where any of ``needles`` (lower case) starts in the text, read case-insensitively."""
        return self.find_all(self.lower, [n for n in needles if self.has(n)])

    def shapes(self, *shapes: bytes, shift: int = 0) -> list[int]:
        """Where any of ``shapes`` (in the classes of :attr:`classes`) starts, moved by ``shift``."""
        return self.find_all(self.classes, shapes, shift)

    def digit_clusters(self, min_digits: int, max_gap: int) -> list[tuple[int, int]]:
        """``(first, last)`` of each maximal stretch holding at least ``min_digits`` digits where no two digits in a
        row are more than ``max_gap`` other characters apart."""
        import numpy as np

        digits = np.flatnonzero(np.frombuffer(self._raw.translate(_DIGIT_BYTES), dtype=np.uint8))
        if len(digits) < min_digits:
            return []
        breaks = np.flatnonzero(np.diff(digits) > max_gap + 1)
        firsts = np.concatenate(([0], breaks + 1))
        lasts = np.concatenate((breaks, [len(digits) - 1]))
        dense = np.flatnonzero(lasts - firsts + 1 >= min_digits)
        return [(int(digits[firsts[i]]), int(digits[lasts[i]])) for i in dense]


def long_text(text: str, lower: str, at: int | None = LONG_TEXT) -> LongText | None:
    """The prefilter for ``text`` when it is ASCII and at least ``at`` characters long (``None``: never)."""
    if at is None or len(text) < at or not text.isascii():
        return None
    return LongText(text, lower)
