"""Ids a tool call or its result names (orders, tickets, PRs, uuids, references): the one place that reads them.

* :func:`extract_ids`: broad, for summaries' side effects: first the values of the result's structure
  (:func:`result_values`), then id-shaped tokens of its prose, so nothing a later turn may need is lost;
* :func:`result_ids`: strict, for the side-effect ledger (id fields, uuids, ``#123``, ``PR-45``), without
  sensitive values.
"""

from __future__ import annotations

import contextlib
import json
import re
from collections.abc import Mapping
from typing import Any

from memtend.errors import InvalidInputError
from memtend.policies.precedence import canonical_key
from memtend.transcripts.summary.schema import dedupe

__all__ = ["SECRET_KEY_RE", "URL_RE", "extract_ids", "id_shaped", "json_strings", "result_ids", "result_values"]

_ID_KEY_RE = re.compile(
    r"(^|_)(id|ids|uuid|number|no|ref|reference|confirmation|confirmation_code|booking_code|"
    r"sha|commit|url|html_url|permalink)$|[a-z](Id|ID|Ids|IDs|Number|Ref|Url)$"
)
_ID_PATTERNS = [
    re.compile(r"\b[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}\b"),
    re.compile(r"(?<![\w#&])#\d{1,10}\b"),
    re.compile(r"\b[A-Z][A-Z0-9]{1,9}-\d{1,9}\b"),
    re.compile(r"\b[a-z][a-z0-9]{1,5}_(?=[A-Za-z0-9]*[\dA-Z])[A-Za-z0-9]{3,40}\b"),
    re.compile(r"\b[a-z]{2,3}_[a-z0-9]{3,40}\b"),
]
_KEYED_ID_RE = re.compile(
    r"\b(?:[A-Za-z]+[ _-])?(?:id|ID|Id|number|no|ref|reference|code|confirmation)(?:\s*[=:]\s*|\s+is\s+)"
    r"[\"']?([A-Za-z0-9][\w\-./#]{1,63})"
)
SECRET_KEY_RE = re.compile(r"(secret|token|password|passwd|api_?key|private|credential)", re.I)

URL_RE = re.compile(r"\b[a-z][a-z0-9+.-]*://\S+", re.I)

# Any other shape an id takes: one token of letters, digits and - _ . / : # that mixes letters and digits,
# or joins three parts, or is a long number; URLs and paths. Dates, times, amounts and plain words are not.
_TOKEN_EDGES = ".,;:!?()[]{}<>\"'`"
_ID_CHARS = re.compile(r"^[\w\-./:#~@+=%]{3,200}$")
_NOT_ID = re.compile(
    r"^(?:\d{4}-\d{2}-\d{2}(?:[T ][\d:.]+Z?(?:[+-]\d\d:?\d\d)?)?|\d{1,2}:\d{2}(?::\d{2})?(?:am|pm)?|\d+[.,]\d{1,2}"
    r"|\d{1,4}|[a-z]{1,3}\d{1,2}|\d{1,3}(?:st|nd|rd|th|am|pm|h|m|s|ms|k|kb|mb|gb|eur|usd|x|%))$",
    re.IGNORECASE,
)
_PATH = re.compile(r"^(?:~|\.{1,2})?/[\w.\-]+(?:/[\w.\-]*)+$")


def id_shaped(token: str) -> bool:
    """Does one token (no spaces) look like an identifier, whatever its shape?"""
    if not _ID_CHARS.match(token) or _NOT_ID.match(token):
        return False
    if "://" in token or _PATH.match(token):
        return True
    letters = any(c.isalpha() for c in token)
    digits = sum(c.isdigit() for c in token)
    parts = [p for p in re.split(r"[-_./:#]+", token) if p]
    if letters and digits:
        return True
    if digits >= 5 and not letters:
        return True
    if len(token) >= 8 and token.isalpha() and any(c.isupper() for c in token[1:]) and not token[1:].isupper():
        return True  # a random token of mixed case ("XkqbLpQzzA"), not a word or an acronym
    return letters and len(parts) >= 3


def _loose_ids(data: Any, plain: str) -> list[str]:
    """Every id-shaped token of a result: its JSON string values (not under secret-looking keys), or its words."""
    tokens: list[str] = []
    if isinstance(data, (dict, list)):
        for value in json_strings(data):
            tokens.extend(value.split() if len(value) > 200 else [value])
    else:
        tokens = plain.split()
    found = []
    for token in tokens:
        if "=" in token and "://" not in token:
            token = token.rsplit("=", 1)[1]  # key=value: the value
        token = token.strip(_TOKEN_EDGES)
        if token.endswith("/") and "://" not in token and not token.startswith("/"):
            token = token.rstrip("/")
        if id_shaped(token):
            found.append(token)
    return found


MAX_VALUES = 40  # of one result's structure: a created object has a handful; a listing is not an id
_URL_END = ".,;:!?)]}>'\""


def _urls(text: str) -> list[str]:
    return [url.rstrip(_URL_END) for url in URL_RE.findall(text)]


def result_values(text: str) -> list[str]:
    """The values of a tool result that may name what the call made, taken from its structure, not its prose.

    The rule: in a JSON result (object or list, nested), every scalar that is not prose is kept verbatim: an
    integer, or a string of one token (no whitespace, no comma; at most 200 characters); a URL inside a longer
    string is kept whole (query string and all). Values under secret-looking keys, booleans, nulls and
    fractional numbers (amounts, measures) are not names and are left out. A plain-text result has no structure
    but its URLs, kept whole. Values of id-named keys come first, then the others in document order, at most
    ``MAX_VALUES``.
    """
    try:
        data = json.loads(text)
    except (ValueError, RecursionError):
        data = None
    if not isinstance(data, (dict, list)):
        return _urls(text)
    named: list[str] = []
    other: list[str] = []
    _values_in(data, named, other, "", 0)
    return dedupe([*named, *other], fold=False)[:MAX_VALUES]


def _values_in(data: Any, named: list[str], other: list[str], key: str, depth: int) -> None:
    if depth > 8 or len(named) + len(other) > 4 * MAX_VALUES:
        return
    if isinstance(data, Mapping):
        for name, value in data.items():
            if not SECRET_KEY_RE.search(str(name)):
                _values_in(value, named, other, str(name), depth + 1)
    elif isinstance(data, list):
        for item in data[:50]:
            _values_in(item, named, other, key, depth + 1)
    elif isinstance(data, int) and not isinstance(data, bool):
        (named if _ID_KEY_RE.search(key) else other).append(str(data))
    elif isinstance(data, str):
        value = data.strip()
        if value and len(value) <= 200 and not re.search(r"[\s,]", value):
            (named if _ID_KEY_RE.search(key) else other).append(value)
        else:
            other.extend(_urls(value[:10_000]))


def extract_ids(text: str, arguments: Mapping[str, Any] | None = None, limit: int = MAX_VALUES) -> list[str]:
    """Ids found in a tool result (and the id-like arguments of its call), the surest first.

    First the id-named arguments of the call and the values of the result's structure (:func:`result_values`:
    every one-token scalar of a JSON result, URLs whole); then, for prose, id-named JSON fields (``id``,
    ``order_id``, ``ticketNumber``, ``url``...), uuids,
    ``#123``, ``PR-45``-style keys, prefixed ids (``ord_abc``, ``ch_3Nx9``), and ``key=value`` /
    ``reference: X`` / ``id is X`` in text; then any other id-shaped token (:func:`id_shaped`: lowercase
    words joined by hyphens with a number, dotted and slashed ids, URLs, paths, long numbers, mixed
    letters and digits). Values under secret-looking keys are skipped.
    """
    found: list[str] = []
    if arguments:
        _ids_from_json(arguments, found, depth=0)
    try:
        data = json.loads(text)
    except ValueError:
        data = None
    found.extend(result_values(text))
    if isinstance(data, (dict, list)):
        _ids_from_json(data, found, depth=0)
    plain = URL_RE.sub(" ", "\n".join(json_strings(data)) if isinstance(data, (dict, list)) else text)
    for pattern in _ID_PATTERNS:
        found.extend(pattern.findall(plain))
    found.extend(match.group(1) for match in _KEYED_ID_RE.finditer(plain))
    found.extend(_loose_ids(data, text))
    cleaned = [i.strip().rstrip(".,;:)]}'\"") for i in found]
    return dedupe([i for i in cleaned if i and not re.search(r"[\s,]", i)], fold=False)[:limit]


def _ids_from_json(data: Any, found: list[str], depth: int) -> None:
    if depth > 3 or len(found) > 40:
        return
    if isinstance(data, list):
        for item in data[:10]:
            _ids_from_json(item, found, depth + 1)
        return
    if not isinstance(data, Mapping):
        return
    for key, value in data.items():
        if SECRET_KEY_RE.search(str(key)):
            continue
        if _ID_KEY_RE.search(str(key)):
            values = value if isinstance(value, list) else [value]
            for item in values[:10]:
                if isinstance(item, (str, int)) and not isinstance(item, bool) and len(str(item)) <= 200:
                    found.append(str(item))
        elif isinstance(value, (dict, list)):
            _ids_from_json(value, found, depth + 1)


def json_strings(data: Any, depth: int = 0) -> list[str]:
    """String values of a JSON document (not its keys), bounded."""
    if depth > 4:
        return []
    if isinstance(data, str):
        return [data]
    if isinstance(data, list):
        return [s for item in data[:20] for s in json_strings(item, depth + 1)]
    if isinstance(data, Mapping):
        return [
            s
            for key, value in data.items()
            if not SECRET_KEY_RE.search(str(key))
            for s in json_strings(value, depth + 1)
        ]
    return []


# --- the ledger's strict reading ---------------------------------------------------------------------

_UUID = re.compile(r"\b[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}\b")
_HEX32 = re.compile(r"\b[0-9a-f]{32}\b")
_HASH_NUMBER = re.compile(r"(?<![\w&#])#\d+\b")
_TICKET = re.compile(r"\b([A-Z][A-Z0-9]{0,9})-\d+\b")
_NOT_TICKETS = {"UTF", "ISO", "SHA", "MD", "GPT", "COVID", "IPV", "X", "H", "TLS", "SSL", "AES", "RSA"}


def result_ids(result: Any, limit: int = 20) -> list[str]:
    """Ids a tool result names: JSON fields ``id`` / ``*_id`` / ``*Id`` (and ``ids`` lists), uuid-like strings,
    ``#123`` and ``PR-45``-style references; in order of appearance, without duplicates or sensitive values, at
    most ``limit``. Stricter than :func:`extract_ids` (no URLs, keyed text or loose tokens): the ledger keeps
    exactly the ids a result reports."""
    from memtend.policies.gate import find_sensitive  # here: summaries alone do not load the gate's detectors

    if isinstance(result, str) and result.lstrip()[:1] in ("{", "["):
        with contextlib.suppress(ValueError, RecursionError):
            result = json.loads(result)
    found: list[str] = []
    _ids_in(result, found, 0, limit * 4)
    seen: set[str] = set()
    out = []
    for candidate in found:
        if candidate not in seen and not find_sensitive(candidate):
            seen.add(candidate)
            out.append(candidate)
        if len(out) >= limit:
            break
    return out


def _id_field(name: str) -> str:
    try:
        key = canonical_key(name)
    except InvalidInputError:
        return ""
    if key == "id" or key.endswith("_id"):
        return "one"
    if key == "ids" or key.endswith("_ids"):
        return "many"
    return ""


def _ids_in(value: Any, found: list[str], depth: int, most: int) -> None:
    if depth > 32 or len(found) > most:
        return
    if isinstance(value, dict):
        for name, v in value.items():
            kind = _id_field(str(name))
            if kind == "one" and isinstance(v, str | int) and not isinstance(v, bool) and str(v).strip():
                found.append(str(v))
            elif kind == "many" and isinstance(v, list):
                found.extend(str(x) for x in v if isinstance(x, str | int) and not isinstance(x, bool))
            else:
                _ids_in(v, found, depth + 1, most)
    elif isinstance(value, list | tuple):
        for v in value:
            _ids_in(v, found, depth + 1, most)
    elif isinstance(value, str):
        found.extend(_ids_in_text(value[:100_000]))


def _ids_in_text(text: str) -> list[str]:
    hits: list[tuple[int, str]] = []
    for pattern in (_UUID, _HEX32, _HASH_NUMBER):
        hits.extend((m.start(), m.group(0)) for m in pattern.finditer(text))
    hits.extend((m.start(), m.group(0)) for m in _TICKET.finditer(text) if m.group(1) not in _NOT_TICKETS)
    return [h for _, h in sorted(hits)]
