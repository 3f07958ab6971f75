"""Pure translation between LangGraph store ops/items and memtend document ops/documents."""

from __future__ import annotations

import math
import sys
from collections.abc import Sequence
from datetime import datetime, timezone
from typing import Any

from langgraph.store.base import GetOp, InvalidNamespaceError, ListNamespacesOp, Op, PutOp, SearchItem, SearchOp
from langgraph.store.base import Item as LangGraphItem
from memtend.arguments import describe
from memtend.documents import (
    DeleteDocument,
    Document,
    DocumentOp,
    GetDocument,
    ListNamespaces,
    PutDocument,
    SearchDocuments,
)
from memtend.errors import InvalidInputError

Namespace = tuple[str, ...]
SECONDS_PER_MINUTE = 60.0


def prefix_and_suffix(op: ListNamespacesOp) -> tuple[Namespace | None, Namespace | None]:
    """The one prefix and one suffix of a listing (LangGraph builds at most one of each)."""
    prefix: Namespace | None = None
    suffix: Namespace | None = None
    for condition in op.match_conditions or ():
        if condition.match_type == "prefix":
            prefix = tuple(condition.path)
        elif condition.match_type == "suffix":
            suffix = tuple(condition.path)
        else:
            raise ValueError(f"unknown match_type {condition.match_type!r}: use 'prefix' or 'suffix'")
    return prefix, suffix


class StoreNamespaceError(InvalidInputError, InvalidNamespaceError):
    """A namespace label LangGraph's store refuses (not a str, empty, holding ``"."`` or NUL), also when the op is
    handed to ``batch()`` directly. The message says which label and why, never the label itself."""


def check_op(op: Op) -> None:
    """What LangGraph's own ``get``/``put``/``search`` refuse is refused in ``batch()`` too, with a typed error
    that does not repeat the refused value (a label or value may hold what should not be logged)."""
    if isinstance(op, ListNamespacesOp):
        for condition in op.match_conditions or ():
            _check_labels(tuple(condition.path), f"the {condition.match_type} of a listing")
        return
    namespace = op.namespace_prefix if isinstance(op, SearchOp) else getattr(op, "namespace", None)
    if not isinstance(namespace, tuple | list):
        raise StoreNamespaceError(f"a namespace must be a tuple of str labels, got {describe(namespace)}")
    _check_labels(tuple(namespace), "the namespace prefix" if isinstance(op, SearchOp) else "the namespace")
    if isinstance(op, PutOp) and op.value is not None and not isinstance(op.value, dict):
        raise InvalidInputError(
            f"a store value must be a dict (LangGraph's store keeps JSON objects), got a {type(op.value).__name__}; "
            "wrap it, e.g. {'value': ...}, or delete the item with value None"
        )


def _check_labels(labels: Namespace, what: str) -> None:
    for n, label in enumerate(labels):
        where = f"label {n} of {what}"
        if not isinstance(label, str):
            raise StoreNamespaceError(f"{where} must be a str, got {describe(label)}")
        if not label:
            raise StoreNamespaceError(f"{where} is empty; namespace labels must be non-empty")
        if "." in label:
            raise StoreNamespaceError(f"{where} holds a '.', which LangGraph's store does not allow in a label")
        if "\x00" in label:
            raise StoreNamespaceError(f"{where} holds a NUL character, which a label may not hold")


_BIGGEST = sys.float_info.max
# LangGraph's filters compare as Python does, where infinity bounds every number and NaN equals nothing; memtend
# stores only finite numbers and takes only finite operands. Each such clause has an exact finite form (no stored
# number is beyond the largest float): (op, operand) -> the clause to use, or None when it matches everything.
_NOT_FINITE: dict[tuple[str, str], tuple[str, float] | None] = {
    ("$lt", "inf"): ("$lte", _BIGGEST),
    ("$lte", "inf"): ("$lte", _BIGGEST),
    ("$gt", "inf"): ("$gt", _BIGGEST),
    ("$gte", "inf"): ("$gt", _BIGGEST),
    ("$eq", "inf"): ("$gt", _BIGGEST),
    ("$ne", "inf"): None,
    ("$gt", "-inf"): ("$gte", -_BIGGEST),
    ("$gte", "-inf"): ("$gte", -_BIGGEST),
    ("$lt", "-inf"): ("$lt", -_BIGGEST),
    ("$lte", "-inf"): ("$lt", -_BIGGEST),
    ("$eq", "-inf"): ("$gt", _BIGGEST),
    ("$ne", "-inf"): None,
    **{(op, "nan"): ("$gt", _BIGGEST) for op in ("$eq", "$lt", "$lte", "$gt", "$gte")},
    ("$ne", "nan"): None,
}


def finite_filter(flt: Any) -> Any:
    """A LangGraph filter with its infinite and NaN operands in their exact finite form (see ``_NOT_FINITE``)."""
    if not isinstance(flt, dict):
        return flt
    out: dict[str, Any] = {}
    for field, cond in flt.items():
        if isinstance(cond, float) and not math.isfinite(cond):
            cond = {"$eq": cond}
        if not (isinstance(cond, dict) and any(isinstance(k, str) and k.startswith("$") for k in cond)):
            out[field] = cond
            continue
        kept: dict[str, Any] = {}
        for op, operand in cond.items():
            if isinstance(operand, float) and not math.isfinite(operand) and (op, repr(operand)) in _NOT_FINITE:
                finite = _NOT_FINITE[(op, repr(operand))]
                if finite is not None:
                    _tighten(kept, *finite)
            else:
                _tighten(kept, op, operand)
        if kept:
            out[field] = kept
    return out


def _tighten(kept: dict[str, Any], op: str, operand: Any) -> None:
    """Add a bound to a field's clauses; two bounds of one operator keep the stricter (both must hold)."""
    old = kept.get(op)
    numbers = all(isinstance(v, int | float) and not isinstance(v, bool) for v in (old, operand))
    if op not in kept or not numbers:
        kept[op] = operand if op not in kept or operand in (_BIGGEST, -_BIGGEST) else old
    elif op in ("$gt", "$gte"):
        kept[op] = max(old, operand)
    elif op in ("$lt", "$lte"):
        kept[op] = min(old, operand)
    else:
        kept[op] = operand


def routing_namespace(op: Op) -> Namespace:
    """The namespace (or prefix) that names an op's user."""
    if isinstance(op, (GetOp, PutOp)):
        return tuple(op.namespace)
    if isinstance(op, SearchOp):
        return tuple(op.namespace_prefix)
    if isinstance(op, ListNamespacesOp):
        return prefix_and_suffix(op)[0] or ()
    raise TypeError(f"unknown store op {type(op).__name__}; expected GetOp, PutOp, SearchOp or ListNamespacesOp")


class OpTranslator:
    """Turns LangGraph ops into document ops under ``root`` and documents back into LangGraph items."""

    def __init__(self, root: str, index_fields: list[str] | None, refresh_on_read: bool) -> None:
        self.root = root
        self.index_fields = index_fields  # None: the store has no index config, nothing is embedded
        self.refresh_on_read = refresh_on_read

    def inner(self, namespace: Sequence[str]) -> Namespace:
        return (self.root, *namespace)

    def outer(self, namespace: Namespace) -> Namespace:
        return tuple(namespace[1:])

    def index_for(self, index: list[str] | bool | None) -> list[str] | bool:
        if self.index_fields is None or index is False:
            return False
        if index is None or index is True:
            return list(self.index_fields)
        return list(index)

    def to_document_op(self, op: Op) -> DocumentOp:
        if isinstance(op, GetOp):
            return GetDocument(self.inner(op.namespace), str(op.key), refresh_ttl=self._refresh(op.refresh_ttl))
        if isinstance(op, PutOp):
            if op.value is None:
                return DeleteDocument(self.inner(op.namespace), str(op.key))
            ttl = None if op.ttl is None else float(op.ttl) * SECONDS_PER_MINUTE
            return PutDocument(
                self.inner(op.namespace), str(op.key), dict(op.value), ttl=ttl, index=self.index_for(op.index)
            )
        if isinstance(op, SearchOp):
            return self.to_search_op(op)
        if isinstance(op, ListNamespacesOp):
            return self.to_list_op(op, limit=op.limit, offset=op.offset)
        raise TypeError(f"unknown store op {type(op).__name__}")

    def to_search_op(self, op: SearchOp) -> SearchDocuments:
        return SearchDocuments(
            self.inner(op.namespace_prefix),
            filter=finite_filter(op.filter),
            query=op.query if op.query else None,
            limit=op.limit,
            offset=op.offset,
            refresh_ttl=self._refresh(op.refresh_ttl),
        )

    def to_list_op(self, op: ListNamespacesOp, *, limit: int, offset: int) -> ListNamespaces:
        prefix, suffix = prefix_and_suffix(op)
        prefix = prefix or ()
        if suffix and len(prefix) < len(suffix):
            # a suffix never reaches into the root label: only namespaces at least as long as the suffix match
            prefix = prefix + ("*",) * (len(suffix) - len(prefix))
        return ListNamespaces(
            prefix=self.inner(prefix),
            suffix=suffix,
            max_depth=None if op.max_depth is None else op.max_depth + 1,
            limit=limit,
            offset=offset,
        )

    def _refresh(self, refresh_ttl: bool) -> bool:
        return bool(refresh_ttl) and self.refresh_on_read

    def to_result(self, op: Op, result: Any) -> Any:
        if isinstance(op, GetOp):
            return None if result is None else self.item(result)
        if isinstance(op, PutOp):
            return None
        if isinstance(op, SearchOp):
            return [self.search_item(doc) for doc in result]
        if isinstance(op, ListNamespacesOp):
            return [self.outer(tuple(ns)) for ns in result]
        raise TypeError(f"unknown store op {type(op).__name__}")

    def item(self, doc: Document) -> LangGraphItem:
        return LangGraphItem(
            value=doc.value,
            key=doc.key,
            namespace=self.outer(doc.namespace),
            created_at=_datetime(doc.created_at),
            updated_at=_datetime(doc.updated_at),
        )

    def search_item(self, doc: Document) -> SearchItem:
        return SearchItem(
            self.outer(doc.namespace),
            doc.key,
            doc.value,
            _datetime(doc.created_at),
            _datetime(doc.updated_at),
            score=doc.score,
        )


def _datetime(epoch_seconds: float) -> datetime:
    return datetime.fromtimestamp(epoch_seconds, tz=timezone.utc)
