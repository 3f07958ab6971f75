"""The gate over JSON values (documents, tool arguments): read as ``name: value`` lines, masked field by field.

A detector sees each scalar beside its field name, so ``{"password": "hunter22"}`` reads as
``password: hunter22`` and is found, while the value alone would not be.
"""

from __future__ import annotations

import json
from typing import Any

from memtend.policies.gate.policy import GatePolicy
from memtend.policies.gate.sensitive import find_sensitive, redact

__all__ = ["json_lines", "redact_json"]


def json_lines(value: Any, name: str = "") -> list[str]:
    """The text the gate reads for a JSON value: scalars as ``name: value`` lines, containers walked."""
    if isinstance(value, dict):
        out = []
        for k, v in value.items():
            out.extend(json_lines(v, k) if isinstance(v, dict | list | tuple) else [_line(k, v)])
        return out
    if isinstance(value, list | tuple):
        return [line for v in value for line in json_lines(v, name)]
    return [_line(name, value)]


def _line(name: str, value: Any) -> str:
    text = value if isinstance(value, str) else json.dumps(value)
    return f"{name}: {text}" if name else text


def redact_json(value: Any, *, policy: GatePolicy | None = None) -> Any:
    """``value`` with sensitive values masked (``[REDACTED:<kind>]``), each read beside its field name; keys
    holding sensitive data are masked too. Lists come back as lists; other values are unchanged."""
    if isinstance(value, dict):
        out = {}
        for k, v in value.items():
            name = redact(k, policy=policy)
            if isinstance(v, dict | list | tuple):
                out[name] = redact_json(v, policy=policy)
            elif isinstance(v, str) or find_sensitive(_line(k, v), policy=policy):
                text = v if isinstance(v, str) else json.dumps(v)
                line, head = redact(f"{name}: {text}", policy=policy), f"{name}: "
                out[name] = line[len(head) :] if line.startswith(head) else redact(text, policy=policy)
            else:
                out[name] = v
        return out
    if isinstance(value, list | tuple):
        return [redact_json(v, policy=policy) for v in value]
    if isinstance(value, str):
        return redact(value, policy=policy)
    if value is not None and not isinstance(value, bool) and find_sensitive(json.dumps(value), policy=policy):
        return redact(json.dumps(value), policy=policy)
    return value
