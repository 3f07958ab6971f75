"""What of a checkpoint the write gate reads: the channel values and pending writes, translated to JSON and back.

A checkpoint holds the graph's state as Python objects (LangChain messages, dicts, lists, str, pydantic models);
the saver stores them as the serializer's bytes, which the gate cannot read. So before serializing, every value
that is JSON (a dict of messages' fields, a list of content blocks, a str) is handed whole to the core's rule for
secrets (:func:`memtend.surfaces.mask_json`), which reads content blocks of one message together; containers
that are not JSON are walked, pydantic models by their fields, dataclasses likewise. An object of any other kind
is the application's own and is stored as the serializer gives it. A value the gate leaves alone is the same
object, so nothing is copied when there is nothing to mask.
"""

from __future__ import annotations

import dataclasses
from typing import Any

from memtend.surfaces import known_clean, mask_json
from pydantic import BaseModel

SURFACE = "MemtendSaver"
MAX_DEPTH = 64  # nesting walked; deeper values are JSON-checked by the gate itself or left as the app's own


def masked(value: Any, redact: bool, depth: int = 0) -> Any:
    """``value`` with the secrets in its text masked (``redact``) or refused (``SensitiveDataError``)."""
    if depth > MAX_DEPTH or value is None or isinstance(value, bool | int | float | bytes):
        return value
    if _jsonable(value, 0):
        return mask_json(value, surface=SURFACE, redact=redact)
    if isinstance(value, BaseModel):
        fields = {name: getattr(value, name) for name in type(value).model_fields}
        if known_clean(fields):  # a message of an earlier step: its text was read then (one JSON pass, no walk)
            return value
        changed = _changed(fields, masked(fields, redact, depth + 1))
        return value.model_copy(update=changed) if changed else value
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        fields = {f.name: getattr(value, f.name) for f in dataclasses.fields(value) if f.init}
        changed = _changed(fields, masked(fields, redact, depth + 1))
        return dataclasses.replace(value, **changed) if changed else value
    if isinstance(value, dict):
        out = {k: masked(v, redact, depth + 1) for k, v in value.items()}
        return out if _changed(value, out) else value
    if isinstance(value, list | tuple):
        items = [masked(v, redact, depth + 1) for v in value]
        if all(a is b for a, b in zip(items, value, strict=True)):
            return value
        if isinstance(value, list):
            return items
        return type(value)(*items) if hasattr(value, "_fields") else tuple(items)  # a named tuple keeps its type
    return value


def _changed(before: dict[Any, Any], after: Any) -> dict[Any, Any]:
    if not isinstance(after, dict):
        return {}
    return {k: v for k, v in after.items() if k in before and v is not before[k]}


def _jsonable(value: Any, depth: int) -> bool:
    if depth > MAX_DEPTH:
        return False
    if value is None or isinstance(value, str | bool | int):
        return True
    if isinstance(value, float):
        return value == value and value not in (float("inf"), float("-inf"))
    if isinstance(value, list):
        return all(_jsonable(v, depth + 1) for v in value)
    if isinstance(value, dict):
        return all(isinstance(k, str) and _jsonable(v, depth + 1) for k, v in value.items())
    return False
