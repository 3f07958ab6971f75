"""Undo the disguises an order aimed at the agent hides behind, so the checks read the words themselves.

An injection can be written so that no pattern and no sentence encoder sees its words: letters spaced or joined
by hyphens ("I g n o r e  a l l", "I-g-n-o-r-e"), digits for letters ("1gn0r3 ur pr3v10us 1nstruct10ns"), the
whole text written backwards, letters from another script that look the same (a Cyrillic "о" in "ignоre"), or the
words encoded (base64, hexadecimal, rot13). :func:`uncover` rewrites only what is so disguised and leaves every
other word as it was: each rule fires on a shape ordinary text rarely has (runs of five or more single letters,
three or more words mixing digits into letters, a text whose reversal reads better), and a decoded blob is kept
only when it decodes to text with words in it.
"""

from __future__ import annotations

import base64
import binascii
import codecs
import re

from memtend.policies.gate.normalise import unmask_lookalikes

__all__ = ["lift", "uncover"]

# five or more single letters each followed by one space (two or more spaces part words): "I g n o r e  a l l"
_SPACED = re.compile(r"(?<![^\W\d_])(?:[^\W\d_] {1,3}){4,}[^\W\d_](?![^\W\d_])")
# a word of four letters or more joined by hyphens or dots: "I-g-n-o-r-e", "p.r.o.m.p.t" (not "U.S.A.")
_JOINED = re.compile(r"(?<![\w.-])[^\W\d_](?:[-.·][^\W\d_]){3,}(?![\w-])(?:\.(?=\s|$))?")
_JOINED_SHORT = re.compile(r"(?<![\w.-])[^\W\d_](?:[-.·][^\W\d_]){2}(?![\w.-])")  # "t-h-e", in such a text
# a word with digits standing for letters: "1gn0r3", "pr3v10us", "4ss1st3nt3"
_LEET_WORD = re.compile(r"(?<![\w@$])(?=[\w'@$]*[A-Za-z])(?=[\w'@$]*[013457@$])[A-Za-z0-9@$']{3,}(?![\w@$])")
_LEET_TOKEN = re.compile(r"(?<![\w@$])[\w@$']+(?![\w@$])")
_LEET = str.maketrans({"0": "o", "1": "i", "3": "e", "4": "a", "5": "s", "7": "t", "@": "a", "$": "s"})
_LEET_MIN_WORDS = 3  # a text is read as written in digits-for-letters only when this many words are so written
# a few of the commonest words of languages written in Latin letters: a text that reads better reversed has more
_COMMON = re.compile(
    r"\b(?:the|and|to|of|you|your|is|this|that|with|all|und|der|die|das|ist|nicht|le|la|les|et|est|des|vous"
    r"|el|los|que|en|por|para|il|di|che|non|een|het|van|de|do|da|não|na|ze|się|och|att|är|och)\b",
    re.IGNORECASE,
)
_HEAD = 2000  # the characters compared when deciding whether a text reads better backwards or in rot13
_BASE64 = re.compile(r"(?<![A-Za-z0-9+/=])[A-Za-z0-9+/]{24,}={0,2}(?![A-Za-z0-9+/=])")
_HEX = re.compile(r"(?<![0-9A-Fa-f])(?:[0-9A-Fa-f]{2}[ :]?){16,}(?![0-9A-Fa-f])")
_WORDS = re.compile(r"[^\W\d_]{2,}")
# a word mixing Latin letters with Cyrillic or Greek ones: its look-alikes are read as the Latin letters they imitate
_MIXED_SCRIPT = re.compile(r"\b(?=\w*[a-zA-Z])(?=\w*[\u0370-\u03ff\u0400-\u04ff])\w+\b")


def _unspace(match: re.Match[str]) -> str:
    words = re.split(r" {2,}", match.group(0))
    return " ".join(word.replace(" ", "") for word in words)


def _unjoin(match: re.Match[str]) -> str:
    return re.sub(r"[-.·]", "", match.group(0))


def _unleet(match: re.Match[str]) -> str:
    """A word of a digits-for-letters text read with letters (a lone digit too: "0 seu" is "o seu")."""
    word = match.group(0)
    if re.search(r"[A-Za-z]", word) or word.isdigit():
        return word.translate(_LEET)
    return word


def _decoded(blob: bytes) -> str | None:
    """The blob as text, when it is text with words in it (not a key, a hash or an image)."""
    try:
        text = blob.decode("utf-8")
    except UnicodeDecodeError:
        return None
    printable = sum(c.isprintable() or c in "\n\t" for c in text)
    if printable < 0.95 * len(text) or len(_WORDS.findall(text)) < 3 or " " not in text:
        return None
    return text


def _from_base64(match: re.Match[str]) -> str:
    blob = match.group(0)
    try:
        decoded = _decoded(base64.b64decode(blob + "=" * (-len(blob) % 4), validate=True))
    except (binascii.Error, ValueError):
        return blob
    return f"{blob} ({decoded})" if decoded else blob


def _from_hex(match: re.Match[str]) -> str:
    blob = match.group(0)
    try:
        decoded = _decoded(bytes.fromhex(re.sub(r"[ :]", "", blob)))
    except ValueError:
        return blob
    return f"{blob} ({decoded})" if decoded else blob


def _common(text: str) -> int:
    return len(_COMMON.findall(text))


def uncover(text: str) -> str:
    """``text`` with its disguised words written plainly (see the module's doc); unchanged when nothing is
    disguised."""
    if _MIXED_SCRIPT.search(text):
        text = unmask_lookalikes(text, mixed_only=True)  # the write gate's table (normalise)
    text = _SPACED.sub(_unspace, text)
    if len(_JOINED.findall(text)) >= 2:
        text = _JOINED_SHORT.sub(_unjoin, _JOINED.sub(_unjoin, text))
    leet = [m for m in _LEET_WORD.finditer(text) if any(c in "013457@$" for c in m.group(0))]
    if len(leet) >= _LEET_MIN_WORDS and not any(c.isdigit() for c in text if c not in "013457"):
        text = _LEET_TOKEN.sub(_unleet, text)
    if len(text) >= 24:
        text = _BASE64.sub(_from_base64, text)
        text = _HEX.sub(_from_hex, text)
        head = text[:_HEAD]
        plain = _common(head)
        for read in (lambda t: t[::-1], lambda t: codecs.encode(t, "rot13")):
            if _common(read(head)) >= max(3, 2 * plain + 1):
                return read(text)
    return text


# Carriers: where a page or a file keeps text its reader never sees, or sees only as data. Each payload found is
# also read on a line of its own, so the checks score it apart from the markup or the table around it.
_ATTRIBUTE = re.compile(
    r"\b(?:content|alt|title|aria-label|aria-description|placeholder|value|label|summary|description|data-[\w-]+)"
    r"\s*=\s*(?:\"([^\"<>]{12,})\"|'([^'<>]{12,})')",
    re.IGNORECASE,
)
_COMMENT = re.compile(r"<!--(.{12,}?)-->|\[(?:comment|//)\]:\s*#\s*\((.{12,}?)\)\s*$", re.DOTALL | re.MULTILINE)
_ELEMENT_TEXT = re.compile(r">([^<>]{12,})<")
# a quoted cell of a table, a formula's string, a config or JSON value: "x,\"...\"", "= ... & \"...\"", "key: \"...\""
_CELL = re.compile(r"(?:[,;\t|&]|[:=][ \t]*|^)\"(\S[^\"\n]{11,})\"(?=[,;\t|&)}\]]|[ \t]*$)", re.MULTILINE)
_MAX_LIFTED = 8


def _payloads(text: str) -> list[str]:
    found: list[str] = []
    if "<" in text or "](" in text or "[" in text:
        found += [a or b for a, b in _ATTRIBUTE.findall(text)]
        found += [a or b for a, b in _COMMENT.findall(text)]
        if "</" in text:
            found += _ELEMENT_TEXT.findall(text)
    if '"' in text:
        found += _CELL.findall(text)
    return [f.strip() for f in found if len(_WORDS.findall(f)) >= 3]


def lift(text: str) -> str:
    """``text`` followed by what its carriers hold, each on a line of its own: attribute values (``content``,
    ``alt``, ``title``...), HTML and markdown comments, the text of elements, quoted spreadsheet cells and the
    strings of formulas; unchanged when it has none."""
    found = list(dict.fromkeys(_payloads(text)))[:_MAX_LIFTED]
    return text + "\n\n" + "\n".join(found) if found else text
