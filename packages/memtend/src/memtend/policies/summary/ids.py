"""Ids a tool call or its result names (orders, tickets, PRs, uuids, references), for side effects and ledgers."""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from typing import Any

from memtend.policies.summary.schema import dedupe

__all__ = ["SECRET_KEY_RE", "URL_RE", "extract_ids", "json_strings"]

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


def extract_ids(text: str, arguments: Mapping[str, Any] | None = None, limit: int = 12) -> list[str]:
    """Ids found in a tool result (and the id-like arguments of its call).

    Looked for: id-named JSON fields (``id``, ``order_id``, ``ticketNumber``, ``url``...), uuids,
    ``#123``, ``PR-45``-style keys, prefixed ids (``ord_abc``, ``ch_3Nx9``), and ``key=value`` /
    ``reference: X`` / ``id is X`` in text. Values under secret-looking keys are skipped.
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
