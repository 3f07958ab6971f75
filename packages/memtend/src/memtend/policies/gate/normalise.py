"""The form of a text the detectors read: Unicode NFKC, invisible characters dropped, every digit ASCII, and
Cyrillic or Greek look-alike letters inside Latin words read as Latin.

A value hidden from a pattern by its spelling is found in this form: full-width letters and digits
(``ｐａｓｓｗｏｒｄ``, ``４１１１``), digits of other scripts (Arabic-Indic, Devanagari, Thai, ...), mathematical
digits, no-break and thin spaces, and zero-width characters, soft hyphens or joiners put inside a number or a
word. Each character of the normal form remembers the span of the original character it came from, so a
finding on the normal form masks exactly the original characters (:meth:`Normalised.span`).

ASCII text is its own normal form and costs nothing.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass
from functools import lru_cache

__all__ = ["Normalised", "normalise", "unmask_lookalikes"]

# Not "Cf" as a whole: the Arabic number signs and similar are "Cf" but shape what follows.
_INVISIBLE = frozenset(
    "\u00ad\u034f\u061c\u115f\u1160\u17b4\u17b5\u180b\u180c\u180d\u180e\u200b\u200c\u200d\u200e\u200f"
    "\u202a\u202b\u202c\u202d\u202e\u2060\u2061\u2062\u2063\u2064\u2066\u2067\u2068\u2069\u206a\u206b"
    "\u206c\u206d\u206e\u206f\u3164\ufe00\ufe01\ufe02\ufe03\ufe04\ufe05\ufe06\ufe07\ufe08\ufe09\ufe0a"
    "\ufe0b\ufe0c\ufe0d\ufe0e\ufe0f\ufeff\uffa0"
)


@dataclass(frozen=True)
class Normalised:
    """A text in normal form and, unless it is the original itself, where each of its characters came from."""

    text: str
    origin: tuple[int, ...] | None  # origin[i]: index in the original of the character that gave text[i]

    def span(self, start: int, end: int) -> tuple[int, int]:
        """The original span that ``text[start:end]`` (non-empty) came from."""
        if self.origin is None:
            return start, end
        return self.origin[start], self.origin[end - 1] + 1


@lru_cache(maxsize=4096)
def _normal_char(ch: str) -> str:
    if ch in _INVISIBLE:
        return ""
    out = unicodedata.normalize("NFKC", ch)
    if any(not ("0" <= c <= "9") and c.isdigit() for c in out):
        out = "".join(str(unicodedata.decimal(c, "")) or c if c.isdigit() else c for c in out)
    return out


# Cyrillic and Greek letters drawn like Latin ones. In a word that mixes them with Latin letters ("pаsswоrd" with
# a Cyrillic "а" and "о"), or is made of nothing else, they are read as the Latin letter; real Russian or Greek
# words keep their letters.
_LOOKALIKE = str.maketrans(
    "аеорсухіјѕԁԝӏһԛАВЕКМНОРСТХУІЈЅοραινΑΒΕΖΗΙΚΜΝΟΡΤΧΥ",
    "aeopcyxijsdwlhqABEKMHOPCTXYIJSopaivABEZHIKMNOPTXY",
)
_LOOKALIKE_CHARS = frozenset(chr(c) for c in _LOOKALIKE)
_WORD = re.compile(r"[^\W\d_]+")


def unmask_lookalikes(text: str, *, mixed_only: bool = False) -> str:
    """``text`` with the look-alike letters of each word that mixes them with Latin letters read as Latin, and
    (unless ``mixed_only``) of each word made of nothing else."""

    def fix(match: re.Match[str]) -> str:
        word = match.group()
        if not any(c in _LOOKALIKE_CHARS for c in word):
            return word
        if any(c.isascii() for c in word) or (not mixed_only and all(c in _LOOKALIKE_CHARS for c in word)):
            return word.translate(_LOOKALIKE)
        return word

    return _WORD.sub(fix, text)


def normalise(text: str) -> Normalised:
    """``text`` in the form the detectors read (see the module doc)."""
    if text.isascii():
        return Normalised(text, None)
    parts: list[str] = []
    origin: list[int] = []
    changed = False
    for i, ch in enumerate(text):
        if ch < "\x80":
            parts.append(ch)
            origin.append(i)
            continue
        out = _normal_char(ch)
        if out != ch:
            changed = True
        parts.append(out)
        origin.extend([i] * len(out))
    normal = "".join(parts)
    if not _LOOKALIKE_CHARS.isdisjoint(normal):
        normal = unmask_lookalikes(normal)  # one letter for one letter: the origins stay as they are
        changed = changed or normal != text
    if not changed:
        return Normalised(text, None)
    return Normalised(normal, tuple(origin))
