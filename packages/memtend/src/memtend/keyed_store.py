"""A user-scoped keyed store: JSON values under (namespace, key), for what is not a memory.

Working memory (session state, the side-effect ledger) and the framework adapters (checkpoints, chat messages,
store items) keep their data here, so isolation, export and erasure cover it with no code of their own.
"""

from __future__ import annotations

import json
import math
from typing import Any

from memtend.errors import InvalidInputError
from memtend.records import MAX_KEY_CHARS, MAX_TEXT_CHARS, check_encodable, check_time
from memtend.storage import KVItem, Storage

MAX_VALUE_BYTES = 1_000_000
MAX_DEPTH = 32


class KeyedStore:
    """get / put / delete / items over one namespace of one user's keyed store."""

    def __init__(self, storage: Storage, user_id: str, namespace: str) -> None:
        self._storage = storage
        self.user_id = user_id
        self.namespace = check_name(namespace, "namespace")

    def put(self, key: str, value: Any, *, expires_at: float | None = None) -> None:
        self.put_many([(key, value)], expires_at=expires_at)

    def put_many(self, items: list[tuple[str, Any]], *, expires_at: float | None = None) -> None:
        checked = [(check_name(k, "key"), check_value(v)) for k, v in items]
        if expires_at is not None:
            expires_at = check_time(expires_at, "expires_at")
        self._storage.kv_put(self.user_id, self.namespace, checked, expires_at=expires_at)

    def get(self, key: str, default: Any = None) -> Any:
        item = self.item(key)
        return default if item is None else item.value

    def item(self, key: str) -> KVItem | None:
        key = check_name(key, "key")
        return self._storage.kv_get(self.user_id, self.namespace, [key]).get(key)

    def get_many(self, keys: list[str]) -> dict[str, KVItem]:
        return self._storage.kv_get(self.user_id, self.namespace, [check_name(k, "key") for k in keys])

    def delete(self, key: str) -> bool:
        return self.delete_many([key]) > 0

    def delete_many(self, keys: list[str]) -> int:
        return self._storage.kv_delete(self.user_id, self.namespace, [check_name(k, "key") for k in keys])

    def items(self) -> list[KVItem]:
        """Every item of the namespace, in insertion order (an update keeps an item's place)."""
        return self._storage.kv_list(self.user_id, self.namespace)

    def keys(self) -> list[str]:
        return [i.key for i in self.items()]

    def clear(self) -> int:
        return self.delete_many(self.keys())


def check_name(name: object, what: str) -> str:
    if not isinstance(name, str):
        raise InvalidInputError(f"{what} must be a str, got {type(name).__name__}")
    if not name:
        raise InvalidInputError(f"{what} must not be empty")
    if len(name) > MAX_KEY_CHARS * 4:
        raise InvalidInputError(f"{what} is {len(name)} characters; the limit is {MAX_KEY_CHARS * 4}")
    check_encodable(name, what)
    return name


def check_value(value: Any) -> Any:
    """A value must be JSON: finite numbers, str keys, valid unicode, bounded depth and size."""
    _check_json(value, 0)
    try:
        size = len(json.dumps(value, ensure_ascii=False, allow_nan=False).encode("utf-8"))
    except (ValueError, RecursionError) as exc:  # e.g. an int too long to print as a JSON number
        raise InvalidInputError(f"value cannot be stored as JSON: {str(exc)[:200]}") from None
    if size > MAX_VALUE_BYTES:
        raise InvalidInputError(f"value is {size} bytes as JSON; the limit is {MAX_VALUE_BYTES}")
    return value


def _check_json(value: Any, depth: int) -> None:
    if depth > MAX_DEPTH:
        raise InvalidInputError(f"value is nested deeper than {MAX_DEPTH} levels; flatten it")
    if value is None or isinstance(value, bool | int):
        return
    if isinstance(value, float):
        if not math.isfinite(value):
            raise InvalidInputError(f"value holds {value}; only finite numbers can be stored")
        return
    if isinstance(value, str):
        if len(value) > MAX_TEXT_CHARS * 32:
            raise InvalidInputError("a string in the value is too large")
        check_encodable(value, "value")
        return
    if isinstance(value, list | tuple):
        for v in value:
            _check_json(v, depth + 1)
        return
    if isinstance(value, dict):
        for k, v in value.items():
            if not isinstance(k, str):
                raise InvalidInputError(f"dict keys in a value must be str, got {type(k).__name__}")
            check_encodable(k, "value key")
            _check_json(v, depth + 1)
        return
    raise InvalidInputError(f"value holds a {type(value).__name__}, which is not JSON; convert it first")
