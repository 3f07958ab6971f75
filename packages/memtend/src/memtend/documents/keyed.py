"""A user-scoped keyed store: JSON values under (namespace, key), for what is not a memory.

Its data are documents (:mod:`memtend.documents.store`) in memtend's reserved space, which no public document call
reaches, lists or collides with: ``user.store("x")`` keeps namespace ``("store", "x")`` there, session state
``("session", <id>)`` and the side-effect ledger ``("ledger", <id>)``. So ``user.store("session:t1")`` is just a
store with an odd name, never the session's state. Isolation, export (``user.export()["store"]``) and erasure
cover it with no code of their own. Creating a ``KeyedStore`` does no I/O.

Writes pass the write gate: a namespace or key holding sensitive data raises
:class:`~memtend.errors.SensitiveIdentifierError` (it names what is stored and cannot be masked), a value holding
one :class:`~memtend.errors.SensitiveDataError`; nothing of the call is written.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from memtend.arguments import check_items, describe
from memtend.documents.store import DeleteDocument, Document, PutDocument, core_documents, reserved_documents
from memtend.documents.values import check_json, gate_identifier, gated_json
from memtend.errors import InvalidInputError
from memtend.records import MAX_KEY_CHARS, MAX_TEXT_CHARS, check_time, now
from memtend.records import check_name as check_identifier

if TYPE_CHECKING:
    from memtend.handle import MemoryHandle

MAX_VALUE_BYTES = 1_000_000
MAX_DEPTH = 32
STORE_LABEL = "store"  # the first label of a keyed store's namespace in the reserved space


@dataclass(frozen=True)
class KVItem:
    """One item of a keyed store."""

    namespace: str
    key: str
    value: Any
    created_at: float
    updated_at: float
    expires_at: float | None = None


class KeyedStore:
    """get / put / delete / items over one namespace of one user's keyed store."""

    def __init__(
        self,
        memory: MemoryHandle,
        user_id: str,
        namespace: str,
        *,
        _labels: tuple[str, ...] | None = None,
        _gated: bool = True,
    ) -> None:
        self.user_id = user_id
        self.namespace = check_name(namespace, "namespace")
        self._labels = _labels or (STORE_LABEL, self.namespace)
        self._docs = core_documents(memory, user_id)
        self._gated = _gated  # session state and the ledger gate what they write themselves

    def __repr__(self) -> str:
        return f"KeyedStore(user_id={self.user_id!r}, namespace={self.namespace!r})"

    def put(self, key: str, value: Any, *, expires_at: float | None = None) -> None:
        self.put_many([(key, value)], expires_at=expires_at)

    def put_many(self, items: list[tuple[str, Any]], *, expires_at: float | None = None) -> None:
        """Store several values at once (all or none); ``expires_at`` (epoch seconds) applies to each."""
        self._put_and_delete(items, (), expires_at=expires_at)

    def _put_and_delete(
        self, items: list[tuple[str, Any]], drop: Sequence[str], *, expires_at: float | None = None
    ) -> None:
        """Store ``items`` and delete the keys ``drop`` in one write, all or none (working memory's approve moves
        a held value to its key this way)."""
        checked = [(check_name(k, "key"), check_value(v)) for k, v in _pairs(items)]
        if self._gated:  # the namespace and keys name what is stored: refused, never masked; values refused
            gate_identifier(self.namespace, "the store namespace")
            for k, v in checked:
                gate_identifier(k, "a store key")
                gated_json(v, k, redact=False, can_redact=False)
        ttl = None
        if expires_at is not None:
            ttl = max(0.0, check_time(expires_at, "expires_at") - now())
        gone = [DeleteDocument(self._labels, check_name(k, "key")) for k in drop]
        self._docs.batch([*(PutDocument(self._labels, k, v, ttl=ttl) for k, v in checked), *gone])

    def get(self, key: str, default: Any = None) -> Any:
        item = self.item(key)
        return default if item is None else item.value

    def item(self, key: str) -> KVItem | None:
        doc = self._docs.get(self._labels, check_name(key, "key"))
        return self._item(doc) if doc is not None else None

    def get_many(self, keys: list[str]) -> dict[str, KVItem]:
        found = self._docs.get_many(self._labels, [check_name(k, "key") for k in check_items(keys, "keys")])
        return {k: self._item(d) for k, d in found.items()}

    def delete(self, key: str) -> bool:
        return self.delete_many([key]) > 0

    def delete_many(self, keys: list[str]) -> int:
        return self._docs.delete_many(self._labels, [check_name(k, "key") for k in check_items(keys, "keys")])

    def items(self) -> list[KVItem]:
        """Every live item of the namespace, in insertion order (an update keeps an item's place)."""
        return [self._item(d) for d in self._docs.search(self._labels, limit=_ALL)]

    def keys(self) -> list[str]:
        return [i.key for i in self.items()]

    def clear(self) -> int:
        return self._docs.delete_prefix(self._labels)

    def _item(self, doc: Document) -> KVItem:
        return KVItem(self.namespace, doc.key, doc.value, doc.created_at, doc.updated_at, doc.expires_at)

    # ------------------------------------------------------------------ async twins
    async def aput(self, key: str, value: Any, *, expires_at: float | None = None) -> None:
        await asyncio.to_thread(self.put, key, value, expires_at=expires_at)

    async def aput_many(self, items: list[tuple[str, Any]], *, expires_at: float | None = None) -> None:
        await asyncio.to_thread(self.put_many, items, expires_at=expires_at)

    async def aget(self, key: str, default: Any = None) -> Any:
        return await asyncio.to_thread(self.get, key, default)

    async def aitem(self, key: str) -> KVItem | None:
        return await asyncio.to_thread(self.item, key)

    async def aget_many(self, keys: list[str]) -> dict[str, KVItem]:
        return await asyncio.to_thread(self.get_many, keys)

    async def adelete(self, key: str) -> bool:
        return await asyncio.to_thread(self.delete, key)

    async def adelete_many(self, keys: list[str]) -> int:
        return await asyncio.to_thread(self.delete_many, keys)

    async def aitems(self) -> list[KVItem]:
        return await asyncio.to_thread(self.items)

    async def akeys(self) -> list[str]:
        return await asyncio.to_thread(self.keys)

    async def aclear(self) -> int:
        return await asyncio.to_thread(self.clear)


_ALL = 10**9  # a limit no namespace reaches


def export_items(memory: MemoryHandle, user_id: str) -> list[dict[str, Any]]:
    """Every keyed-store, session-state and ledger item of the user, for ``export()["store"]``: ``namespace`` as
    the store was named (``session:<id>`` / ``ledger:<id>`` for working memory) and ``kind`` telling them apart."""
    out = []
    for doc in reserved_documents(memory, user_id):
        kind, name = doc.namespace[0], doc.namespace[1]
        out.append(
            {
                "namespace": name if kind == STORE_LABEL else f"{kind}:{name}",
                "kind": kind,
                "key": doc.key,
                "value": doc.value,
                "created_at": doc.created_at,
                "updated_at": doc.updated_at,
            }
        )
    return out


def expired_count(memory: MemoryHandle, user_id: str, at: float) -> int:
    """How many of the user's keyed-store, session and ledger items have expired at ``at``."""
    return core_documents(memory, user_id).expired_count(at)


def sweep_expired(memory: MemoryHandle, user_id: str, at: float) -> int:
    """Delete the user's expired keyed-store, session and ledger items; returns how many."""
    return core_documents(memory, user_id).sweep(at)


def check_name(name: object, what: str) -> str:
    """A store namespace or key: a non-empty str (whitespace allowed) of at most ``4 * MAX_KEY_CHARS``."""
    return check_identifier(name, what, MAX_KEY_CHARS * 4, empty=False)


def check_value(value: Any) -> Any:
    """A value must be JSON: finite numbers, str keys, valid unicode, bounded depth and size."""
    check_json(value, max_depth=MAX_DEPTH, max_str_chars=MAX_TEXT_CHARS * 32)
    try:
        size = len(json.dumps(value, ensure_ascii=False, allow_nan=False).encode("utf-8"))
    except (ValueError, RecursionError) as exc:  # e.g. an int too long to print as a JSON number
        raise InvalidInputError(f"value cannot be stored as JSON: {str(exc)[:200]}") from None
    if size > MAX_VALUE_BYTES:
        raise InvalidInputError(f"value is {size} bytes as JSON; the limit is {MAX_VALUE_BYTES}")
    return value


def _pairs(items: object) -> list[tuple[Any, Any]]:
    """``(key, value)`` pairs of a put_many call."""
    pairs = check_items(items, "items")
    for pair in pairs:
        if not isinstance(pair, tuple | list) or len(pair) != 2:
            raise InvalidInputError(f"put_many takes (key, value) pairs, got {describe(pair)}")
    return [(k, v) for k, v in pairs]
