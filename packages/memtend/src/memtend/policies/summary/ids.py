"""Ids a tool call or its result names (orders, tickets, PRs, uuids, references), for side effects and ledgers."""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from typing import Any

from memtend.policies.summary.schema import dedupe

__all__ = ["SECRET_KEY_RE", "URL_RE", "extract_ids", "id_shaped", "json_strings"]

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


def extract_ids(text: str, arguments: Mapping[str, Any] | None = None, limit: int = 16) -> list[str]:
    """Ids found in a tool result (and the id-like arguments of its call), the surest first.

    Looked for: id-named JSON fields (``id``, ``order_id``, ``ticketNumber``, ``url``...), uuids,
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
