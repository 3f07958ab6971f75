"""Chroma writes held as data until they are moved into Chroma: their encoding, their effect on a row, and the
calls a run of them becomes. Pure: no I/O (see :mod:`memtend.storage.write_behind`)."""

from __future__ import annotations

import base64
import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

__all__ = ["Op", "Row", "apply_op", "calls_of", "decode", "encode", "simple_where", "where_matches"]


@dataclass(frozen=True)
class Op:
    """One upsert, or one delete by ids (``where``: the rows must also match it), of one collection."""

    collection: str
    kind: str  # "upsert" | "delete"
    ids: tuple[str, ...]
    embeddings: np.ndarray | None = None  # float32, one row per id
    documents: tuple[str | None, ...] | None = None
    metadatas: tuple[dict[str, Any] | None, ...] | None = None
    where: dict[str, Any] | None = None

    def shape(self) -> tuple[str, str, bool, bool, bool, str]:
        """What two ops must share to go in one Chroma call."""
        return (
            self.collection,
            self.kind,
            self.embeddings is not None,
            self.documents is not None,
            self.metadatas is not None,
            json.dumps(self.where, sort_keys=True),
        )


@dataclass(frozen=True)
class Row:
    """A row as Chroma would hold it after the ops seen so far."""

    document: str | None
    metadata: dict[str, Any]
    embedding: np.ndarray | None


def apply_op(row: Row | None, op: Op, n: int) -> Row | None:
    """The row of ``op.ids[n]`` after ``op``, as Chroma applies it: an upsert replaces what it gives and merges
    metadata (a None value removes the key); a delete removes a row that matches its ``where``."""
    if op.kind == "delete":
        if row is None or (op.where is not None and not where_matches(op.where, row.metadata)):
            return row
        return None
    meta = dict(row.metadata) if row is not None else {}
    if op.metadatas is not None:
        for key, value in (op.metadatas[n] or {}).items():
            if value is None:
                meta.pop(key, None)
            else:
                meta[key] = value
    document = op.documents[n] if op.documents is not None else (row.document if row is not None else None)
    embedding = op.embeddings[n] if op.embeddings is not None else (row.embedding if row is not None else None)
    return Row(document, meta, embedding)


_OPERATORS = ("$eq", "$in")


def simple_where(where: dict[str, Any] | None) -> bool:
    """A filter :func:`where_matches` evaluates as Chroma does: equality and membership, joined by ``$and``."""
    if where is None:
        return True
    if not isinstance(where, dict) or not where:
        return False
    for key, value in where.items():
        if key == "$and":
            if not isinstance(value, list) or not all(simple_where(part) for part in value):
                return False
        elif key.startswith("$") or (
            isinstance(value, dict) and (len(value) != 1 or next(iter(value)) not in _OPERATORS)
        ):
            return False
    return True


def _one_operator(clause: dict[str, Any]) -> bool:
    return len(clause) == 1 and next(iter(clause)) in _OPERATORS


def where_matches(where: dict[str, Any], meta: dict[str, Any]) -> bool:
    """Does a row's metadata match a :func:`simple_where` filter? (A missing key matches nothing.)"""
    for key, value in where.items():
        if key == "$and":
            if not all(where_matches(part, meta) for part in value):
                return False
            continue
        if key not in meta:
            return False
        have = meta[key]
        op, want = next(iter(value.items())) if isinstance(value, dict) else ("$eq", value)
        if op == "$eq" and not _same(have, want):
            return False
        if op == "$in" and not any(_same(have, w) for w in want):
            return False
    return True


def _same(a: Any, b: Any) -> bool:
    return bool(a == b and isinstance(a, bool) == isinstance(b, bool))


def calls_of(ops: Sequence[Op], max_batch: int) -> list[Op]:
    """Ops in the fewest Chroma calls that do the same: within each collection, consecutive ops of one shape with
    no id in common join one call (different collections are independent, so their runs do not break each other's).
    """
    runs: dict[str, list[Op]] = {}
    for op in ops:
        out = runs.setdefault(op.collection, [])
        last = out[-1] if out else None
        if (
            last is not None
            and last.shape() == op.shape()
            and len(last.ids) + len(op.ids) <= max_batch
            and (op.kind == "delete" or not set(last.ids) & set(op.ids))
            and (last.embeddings is None or last.embeddings.shape[1:] == op.embeddings.shape[1:])  # type: ignore[union-attr]
        ):
            out[-1] = _joined(last, op)
        else:
            out.append(op)
    return [op for out in runs.values() for op in out]


def _joined(a: Op, b: Op) -> Op:
    return Op(
        a.collection,
        a.kind,
        a.ids + b.ids,
        np.concatenate([a.embeddings, b.embeddings]) if a.embeddings is not None else None,  # type: ignore[list-item]
        a.documents + b.documents if a.documents is not None else None,  # type: ignore[operator]
        a.metadatas + b.metadatas if a.metadatas is not None else None,  # type: ignore[operator]
        a.where,
    )


def encode(op: Op) -> bytes:
    """The op as one JSON line's bytes (vectors as base64 float32: what Chroma keeps)."""
    body: dict[str, Any] = {"c": op.collection, "k": op.kind, "ids": list(op.ids)}
    if op.embeddings is not None:
        arr = np.ascontiguousarray(op.embeddings, dtype=np.float32)
        body["e"] = [arr.shape[1], base64.b64encode(arr.tobytes()).decode("ascii")]
    if op.documents is not None:
        body["d"] = list(op.documents)
    if op.metadatas is not None:
        body["m"] = list(op.metadatas)
    if op.where is not None:
        body["w"] = op.where
    return json.dumps(body, ensure_ascii=False, allow_nan=False).encode()


def decode(raw: bytes) -> Op:
    """The op :func:`encode` wrote (ValueError or KeyError when it is not one)."""
    body = json.loads(raw)
    embeddings = None
    if "e" in body:
        dim, data = body["e"]
        embeddings = np.frombuffer(base64.b64decode(data), dtype=np.float32).reshape(-1, int(dim))
    return Op(
        str(body["c"]),
        str(body["k"]),
        tuple(str(i) for i in body["ids"]),
        embeddings,
        tuple(body["d"]) if "d" in body else None,
        tuple(body["m"]) if "m" in body else None,
        body.get("w"),
    )


def ids_of(ops: Iterable[Op], collection: str) -> set[str]:
    """Every id an op of ``collection`` touches."""
    return {i for op in ops if op.collection == collection for i in op.ids}
