"""What a document value may be, and how it is gated, stored, indexed and filtered (pure: no I/O).

:mod:`memtend.documents.store` is the store; this module holds its rules: namespace and key checks, the write gate for
documents (:func:`gated_value`, the one place that decides which adapter data passes it), the stored form of a
value (JSON text or base64 bytes, at most ``MAX_VALUE_BYTES``), the scalar fields kept for Chroma-side filters,
the texts an ``index=`` embeds, and the filter language with its JSON semantics.
"""

from __future__ import annotations

import base64
import binascii
import functools
import hashlib
import json
import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from memtend.arguments import describe
from memtend.errors import (
    DocumentTooLargeError,
    InvalidInputError,
    MemtendError,
    SensitiveDataError,
    SensitiveIdentifierError,
)
from memtend.policies import gate as write_gate
from memtend.records import MAX_KEY_CHARS, check_encodable

Namespace = tuple[str, ...]
GateMode = Literal["text", "off"]

MAX_VALUE_BYTES = 64 * 1024 * 1024  # the default; Memory(max_document_bytes=...) sets a store's own
MAX_DEPTH = 64  # nesting of a JSON value
MAX_LABELS = 16  # labels of a namespace
MAX_FILTER_FIELDS = 256  # scalar fields of one value kept for Chroma-side filters
MAX_FILTER_CHARS = 512  # a longer string field is kept as a digest (equality filters still work)
MAX_INT_BITS = 1_000  # larger integers (over 300 digits) are refused: no float holds them, so no filter could
MAX_TTL = 1e10  # seconds (about 300 years)
MAX_PAGE = 2**31 - 1  # a larger limit or offset is the same page, and more than Chroma takes
PARTIAL = "fpart"  # a document field: some of the value's filter fields could not be kept (see storage)
_OPS = ("$eq", "$ne", "$gt", "$gte", "$lt", "$lte")


# --------------------------------------------------------------------------------------------- validation
def check_namespace(namespace: object, what: str = "namespace", *, empty: bool = False) -> Namespace:
    if isinstance(namespace, list):
        namespace = tuple(namespace)
    if not isinstance(namespace, tuple):
        raise InvalidInputError(f"{what} must be a tuple of str labels, got {type(namespace).__name__}")
    if not namespace and not empty:
        raise InvalidInputError(f"{what} must have at least one label")
    if len(namespace) > MAX_LABELS:
        raise InvalidInputError(f"{what} has {len(namespace)} labels; the limit is {MAX_LABELS}")
    for label in namespace:
        check_label(label, f"a label of {what}")
    return namespace


def check_label(label: object, what: str) -> str:
    if not isinstance(label, str):
        raise InvalidInputError(f"{what} must be a str, got {type(label).__name__}")
    if not label:
        raise InvalidInputError(f"{what} must not be empty")
    if "\x00" in label:
        raise InvalidInputError(f'{what} must not contain "\\x00"')
    if len(label) > MAX_KEY_CHARS * 4:
        raise InvalidInputError(f"{what} is {len(label)} characters; the limit is {MAX_KEY_CHARS * 4}")
    check_encodable(label, what)
    return label


def check_ttl(ttl: object) -> float | None:
    if ttl is None:
        return None
    if not isinstance(ttl, int | float) or isinstance(ttl, bool) or not 0 <= ttl <= MAX_TTL:
        raise InvalidInputError(f"ttl must be a number of seconds from 0 to {MAX_TTL:.0f} or None, got {describe(ttl)}")
    return float(ttl)


def check_page(limit: object, offset: object) -> tuple[int, int]:
    for name, n in (("limit", limit), ("offset", offset)):
        if not isinstance(n, int) or isinstance(n, bool) or n < 0:
            raise InvalidInputError(f"{name} must be an int >= 0, got {describe(n)}")
    # beyond any row count: the same page, and within what Chroma takes
    return min(int(limit), MAX_PAGE), min(int(offset), MAX_PAGE)  # type: ignore[call-overload]


def check_json(value: Any, depth: int = 0, *, max_depth: int = MAX_DEPTH, max_str_chars: int | None = None) -> None:
    """``value`` is JSON: finite numbers, str keys, valid unicode, nested at most ``max_depth`` levels and, when
    ``max_str_chars`` is given, no string longer than that. Raises :class:`InvalidInputError` saying what to fix."""
    if depth > max_depth:
        raise InvalidInputError(f"value is nested deeper than {max_depth} levels; flatten it")
    if value is None or isinstance(value, bool):
        return
    if isinstance(value, int):
        if value.bit_length() > MAX_INT_BITS:
            raise InvalidInputError(f"value holds an integer of over {MAX_INT_BITS} bits; store it as a string")
        return
    if isinstance(value, float):
        if not math.isfinite(value):
            raise InvalidInputError(f"value holds {value}; only finite numbers can be stored")
        return
    if isinstance(value, str):
        if max_str_chars is not None and len(value) > max_str_chars:
            raise InvalidInputError(f"a string in the value is too large (over {max_str_chars} characters)")
        check_encodable(value, "a string in the value")
        return
    if isinstance(value, list | tuple):
        for v in value:
            check_json(v, depth + 1, max_depth=max_depth, max_str_chars=max_str_chars)
        return
    if isinstance(value, dict):
        for k, v in value.items():
            if not isinstance(k, str):
                raise InvalidInputError(f"object keys in a value must be str, got {type(k).__name__}")
            check_encodable(k, "an object key in the value")
            check_json(v, depth + 1, max_depth=max_depth, max_str_chars=max_str_chars)
        return
    raise InvalidInputError(f"value holds a {type(value).__name__}, which is neither JSON nor bytes; convert it first")


# --------------------------------------------------------------------------------------------- the gate
# The one place that decides what of a JSON value (a document, a session value, a ledger entry, record metadata)
# passes the write gate. Each scalar is read beside its field name (``password: ...``), and every string of the
# value is also read joined with single spaces, so a secret split across list items or lines (``["password",
# "hunter22"]``, a card number over four lines) is seen too. Identifiers (keys, namespace labels, session ids,
# tool names) are refused when they hold sensitive data: they name what is stored and cannot be masked.

JsonPath = tuple[str | int, ...]
_WHITESPACE = re.compile(r"\s+")


def gate_identifier(name: str, what: str) -> str:
    """``name`` if it holds no sensitive data; else :class:`SensitiveIdentifierError` naming ``what`` and the kinds
    found (never the value)."""
    findings = write_gate.find_sensitive(name)
    if findings:
        raise SensitiveIdentifierError(what, [f.kind for f in findings])
    return name


def gated_value(
    value: Any, key: str, mode: GateMode, *, redact: bool, namespace: Namespace = (), names: bool = True
) -> tuple[Any, tuple[str, ...]]:
    """What of a document passes the write gate: with ``names``, its namespace labels and key must hold no
    sensitive data (they name the document: :class:`SensitiveIdentifierError`), whatever ``mode`` says; the value
    goes through :func:`gated_json` unless ``mode="off"`` (opaque data) or it is ``bytes``."""
    if names:
        kinds = _label_kinds(namespace)  # labels repeat from write to write: read once per process
        if kinds:
            raise SensitiveIdentifierError("a namespace label", list(kinds))
    identifiers = [("the document key", key)] if names else []
    if mode == "off" or isinstance(value, bytes | bytearray | memoryview):
        _scan(None, "", identifiers, values=False)
        return value, ()
    return gated_json(value, key, redact=redact, identifiers=identifiers)


@functools.lru_cache(maxsize=4_096)
def _label_kinds(namespace: Namespace) -> tuple[str, ...]:
    """The kinds of sensitive data in a namespace's labels (each read apart from the others)."""
    found = write_gate.find_sensitive(_BOUNDARY.join(namespace)) if namespace else []
    return tuple(sorted({f.kind for f in found}))


def gated_json(
    value: Any,
    name: str = "",
    *,
    redact: bool,
    identifiers: Sequence[tuple[str, str]] = (),
    can_redact: bool = True,
) -> tuple[Any, tuple[str, ...]]:
    """``value`` (JSON, under field ``name``) as the write gate lets it be stored, and the kinds it masked.

    Object keys and scalars are read as ``name: value`` lines, and all strings together joined by spaces. A
    finding raises :class:`SensitiveDataError` (kinds only, never values) unless ``redact``: then values are
    masked field by field (``[REDACTED:<kind>]``), a secret split over several strings masks each of them whole,
    and what still cannot be masked is refused. ``identifiers`` (what, text) are read in the same scan and raise
    :class:`SensitiveIdentifierError` whatever ``redact`` says. ``can_redact=False`` (a call with no redact option)
    makes the error's advice not mention ``redact=True``."""
    findings = _scan(value, name, identifiers)
    if not findings:
        return value, ()
    if not redact:
        raise SensitiveDataError([kind for kind, _ in findings], can_redact=can_redact)
    kinds = {kind for kind, _ in findings}
    masked = write_gate.redact_json({name: value}) if name else write_gate.redact_json(value)
    masked = next(iter(masked.values())) if name else masked
    left = _scan(masked, name)
    if left:  # what field-by-field masking missed (a secret split over strings): mask those strings whole
        whole = {path: kind for kind, paths in left for path in paths}
        if not whole or any(not paths for _, paths in left):
            raise SensitiveDataError([kind for kind, _ in left])
        masked = _replaced(masked, {p: f"[REDACTED:{k}]" for p, k in whole.items()})
        left = _scan(masked, name)
        if left:
            raise SensitiveDataError([kind for kind, _ in left])
    return masked, tuple(sorted(kinds))


def gated_metadata(extra: dict[str, Any], *, redact: bool) -> tuple[dict[str, Any], tuple[str, ...]]:
    """Record metadata (flat, already validated) as the write gate lets it be stored, and the kinds it masked: a
    key holding sensitive data is refused (it names a filter field), values are read and masked like JSON."""
    if not extra:
        return extra, ()
    return gated_json(extra, redact=redact, identifiers=[("a metadata key", k) for k in extra])


_BOUNDARY = "\n\x00\x00\n"  # between the parts of one scan: the detectors never read across NUL
JOINED_EDGE = 80  # of a longer string, the joined reading takes the head and the tail (where a split continues)


class _Reading:
    """The text one gate scan reads, and which identifier or JSON scalar each span of it came from."""

    def __init__(self) -> None:
        self.parts: list[str] = []
        self.at = 0
        self.identifiers: list[tuple[int, int, str]] = []
        self.spans: list[tuple[int, int, JsonPath | None]] = []

    def add(self, text: str, sep: str) -> int:
        if self.parts:
            self.parts.append(sep)
            self.at += len(sep)
        start = self.at
        self.parts.append(text)
        self.at += len(text)
        return start


def _scan(
    value: Any, name: str, identifiers: Sequence[tuple[str, str]] = (), *, values: bool = True
) -> list[tuple[str, set[JsonPath]]]:
    """The findings of the gate over ``identifiers`` and the reading of ``value``: each value finding's kind and
    the paths of the scalars it covers (empty when it lies in an object key, which masking handles itself). A
    finding in an identifier raises :class:`SensitiveIdentifierError`. Identifiers, lines and joined strings are
    three scans: the detectors' prechecks (digits, keywords) then skip what one part lacks."""
    if identifiers:
        ids = _Reading()
        for what, text in identifiers:
            start = ids.add(text, _BOUNDARY)
            ids.identifiers.append((start, start + len(text), what))
        named = [
            (next(w for a, b, w in ids.identifiers if a < f.end and f.start < b), f.kind)
            for f in write_gate.find_sensitive("".join(ids.parts))
        ]
        if named:
            what = named[0][0]
            raise SensitiveIdentifierError(what, [kind for w, kind in named if w == what])
    if not values:
        return []
    fast = _Walk(paths=False)
    fast.walk(value, name, ())
    if not write_gate.find_sensitive(fast.text()) and not _finds_joined(fast.groups):
        return []  # the common case: nothing found, no path bookkeeping
    full = _Walk(paths=True)
    full.walk(value, name, ())
    lines = _Reading()
    for line, path in zip(full.lines, full.line_paths, strict=True):
        start = lines.add(line, "\n")
        lines.spans.append((start, start + len(line), path))
    for key in full.keys:  # each object key apart: a key is a name, read whole, never joined to the next line
        start = lines.add(key, _BOUNDARY)
        lines.spans.append((start, start + len(key), None))
    return [
        (f.kind, {p for a, b, p in reading.spans if p is not None and a < f.end and f.start < b})
        for reading in (lines, _joined(full.groups))
        for f in write_gate.find_sensitive("".join(reading.parts))
    ]


class _Walk:
    """The gate's reading of a JSON value: ``lines`` (scalars as ``name: value``), ``keys`` (object keys, each
    read apart from everything else) and ``groups`` of strings read joined: the string items of each list (a
    secret split over items), the strings under one field name in the objects of a list (a secret split over two
    content blocks of one message: ``[{"type": "text", "text": ...}, {"type": "text", "text": ...}]``), and a
    string whose whitespace is not single spaces (split over lines). With ``paths``, where each came from."""

    def __init__(self, *, paths: bool) -> None:
        self.paths = paths
        self.lines: list[str] = []
        self.line_paths: list[JsonPath | None] = []
        self.keys: list[str] = []
        self.groups: list[list[tuple[JsonPath, str]]] = []

    def text(self) -> str:
        """Everything this walk reads in one text (the fast check that nothing at all is found)."""
        return _BOUNDARY.join(["\n".join(self.lines), *self.keys])

    def walk(self, value: Any, name: str, path: JsonPath) -> None:
        if isinstance(value, dict):
            for k, v in value.items():
                self.keys.append(k)
                self.walk(v, k, (*path, k) if self.paths else path)
        elif isinstance(value, list | tuple):
            group = []
            fields: dict[str, list[tuple[JsonPath, str]]] = {}
            for i, v in enumerate(value):
                at = (*path, i) if self.paths else path
                self.walk(v, name, at)
                if isinstance(v, str):
                    group.append((at, v))
                elif isinstance(v, dict):
                    for k, field in v.items():
                        if isinstance(field, str):
                            fields.setdefault(k, []).append(((*at, k) if self.paths else at, field))
            if len(group) > 1:
                self.groups.append(group)
            self.groups.extend(g for g in fields.values() if len(g) > 1)
        else:
            text = value if isinstance(value, str) else json.dumps(value)
            self.lines.append(f"{name}: {text}" if name else text)
            self.line_paths.append(path)
            if isinstance(value, str) and (_WHITESPACE.search(value.replace(" ", "")) or "  " in value):
                self.groups.append([(path, value)])


def _finds_joined(groups: list[list[tuple[JsonPath, str]]]) -> bool:
    return bool(groups) and bool(write_gate.find_sensitive("".join(_joined(groups).parts)))


def _joined(groups: list[list[tuple[JsonPath, str]]]) -> _Reading:
    """Each group's strings joined by single spaces, whitespace runs collapsed, groups apart: a secret split over
    list items or lines reads whole, while strings of different fields never join. A long string gives its head
    and tail (apart, so they never join each other); what lies inside one string is the detectors' to read."""
    reading = _Reading()
    for group in groups:
        sep = _BOUNDARY
        for path, text in group:
            edges = [text] if len(text) <= 4 * JOINED_EDGE else [text[: 2 * JOINED_EDGE], text[-2 * JOINED_EDGE :]]
            for n, edge in enumerate(edges):
                flat = _WHITESPACE.sub(" ", edge).strip()
                if flat:
                    start = reading.add(flat, _BOUNDARY if n else sep)
                    reading.spans.append((start, start + len(flat), path))
                    sep = " "
    return reading


def _replaced(value: Any, at: dict[JsonPath, str], path: JsonPath = ()) -> Any:
    if path in at:
        return at[path]
    if isinstance(value, dict):
        return {k: _replaced(v, at, (*path, k)) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_replaced(v, at, (*path, i)) for i, v in enumerate(value)]
    return value


# --------------------------------------------------------------------------------------------- encoding
def check_value_limit(limit: object) -> int:
    """A store's largest document in bytes (``Memory(max_document_bytes=...)``): a positive int."""
    if isinstance(limit, bool) or not isinstance(limit, int) or limit < 1:
        raise InvalidInputError(f"max_document_bytes must be a positive int (bytes), got {describe(limit)}")
    return limit


def encode_value(value: Any, limit: int = MAX_VALUE_BYTES) -> tuple[str, str]:
    """(type, text) of a value as stored: JSON text, or bytes as base64. Raises on what cannot be stored, and
    :class:`DocumentTooLargeError` on a value over ``limit`` bytes."""
    if isinstance(value, bytes | bytearray | memoryview):
        raw = bytes(value)
        if len(raw) > limit:
            raise DocumentTooLargeError(_too_large(len(raw), "bytes", limit))
        return "bytes", base64.b64encode(raw).decode("ascii")
    check_json(value)
    try:
        text = json.dumps(value, ensure_ascii=False, allow_nan=False, separators=(",", ":"))
    except (ValueError, RecursionError) as exc:  # e.g. an int too long to print
        raise InvalidInputError(f"value cannot be stored as JSON: {str(exc)[:200]}") from None
    size = len(text.encode("utf-8")) if len(text) * 4 > limit else len(text)
    if size > limit:
        raise DocumentTooLargeError(_too_large(size, "JSON", limit))
    return "json", text


def _too_large(size: int, what: str, limit: int) -> str:
    return (
        f"the value is {size} bytes as {what}; a document of this store holds at most {limit} bytes "
        f"({limit / 2**20:g} MB; {MAX_VALUE_BYTES // 2**20} MB by default). Open the Memory with "
        "max_document_bytes=<bytes> to raise the limit, or split the value or keep a reference to it instead"
    )


def decode_value(kind: str, text: str) -> Any:
    if kind == "bytes":
        try:
            return base64.b64decode(text.encode("ascii"), validate=True)
        except (binascii.Error, ValueError):
            raise MemtendError("a stored bytes document is damaged (not base64)") from None
    return json.loads(text)


def filter_fields(value: Any) -> dict[str, Any]:
    """Scalar fields of a JSON object value, as Chroma metadata ``f:<dotted path>`` (for Chroma-side filters).

    Paths go through objects only; keys holding ``"."`` cannot be named by a filter path and are skipped.
    A string longer than ``MAX_FILTER_CHARS`` is kept as a digest; numbers beyond int64 as floats. A value with
    more than ``MAX_FILTER_FIELDS`` scalar fields is marked partial (its filters are checked in Python)."""
    out: dict[str, Any] = {}
    if not isinstance(value, dict):
        return out

    def walk(obj: dict[str, Any], path: str) -> None:
        for k, v in obj.items():
            if not k or "." in k or len(out) > MAX_FILTER_FIELDS:
                continue
            name = f"{path}.{k}" if path else k
            if isinstance(v, dict):
                walk(v, name)
            elif (leaf := _filter_scalar(v)) is not None:
                out["f:" + name] = leaf

    walk(value, "")
    if len(out) > MAX_FILTER_FIELDS:
        return {PARTIAL: True}
    return out


def _filter_scalar(v: Any) -> str | int | float | bool | None:
    if isinstance(v, bool):
        return v
    if isinstance(v, int):
        return v if -(2**63) < v < 2**63 else float(v)
    if isinstance(v, float):
        return v
    if isinstance(v, str):
        return v if len(v) <= MAX_FILTER_CHARS else _digest(v)
    return None


def _digest(text: str) -> str:
    return "\x00sha256:" + hashlib.sha256(text.encode("utf-8")).hexdigest()


# --------------------------------------------------------------------------------------------- indexed text
def check_index(index: object) -> list[str]:
    """The JSON paths to embed: None or False -> none, True -> the whole value, a list -> those paths."""
    if index is None or index is False:
        return []
    if index is True:
        return ["$"]
    if not isinstance(index, list) or not all(isinstance(p, str) and p for p in index):
        raise InvalidInputError(f"index must be a list of JSON paths, False or None, got {describe(index)}")
    for path in index:
        _path_tokens(path)
    return list(dict.fromkeys(index))


def _path_tokens(path: str) -> list[str | int]:
    """``"a.b[0].c"``, ``"arr[*].x"``, ``"arr[-1]"`` -> ``["a", "b", 0, "c"]`` (``"*"`` for every item)."""
    if path == "$":
        return []
    tokens: list[str | int] = []
    for part in path.removeprefix("$.").split("."):
        name, _, rest = part.partition("[")
        if name:
            tokens.append(name)
        while rest:
            inner, sep, rest = rest.partition("]")
            if not sep:
                raise InvalidInputError(f"index path {path!r:.60} has an unclosed '['")
            rest = rest.removeprefix("[")
            if inner == "*":
                tokens.append("*")
            else:
                try:
                    tokens.append(int(inner))
                except ValueError:
                    raise InvalidInputError(f"index path {path!r:.60}: [{inner}] is not an index or *") from None
        if not name and not tokens:
            raise InvalidInputError(f"index path {path!r:.60} has an empty part")
    return tokens


def texts_at(value: Any, paths: list[str]) -> list[str]:
    """The texts to embed: what each path reaches in the value (strings as they are, the rest as JSON)."""
    out: list[str] = []
    for path in paths:
        found = [value]
        for token in _path_tokens(path):
            nxt: list[Any] = []
            for v in found:
                if token == "*" and isinstance(v, list):
                    nxt.extend(v)
                elif _reaches(v, token):
                    nxt.append(v[token])
            found = nxt
        for v in found:
            if v is not None:
                text = v if isinstance(v, str) else json.dumps(v, ensure_ascii=False)
                if text.strip():
                    out.append(text)
    return list(dict.fromkeys(out))


def _reaches(v: Any, token: str | int) -> bool:
    if isinstance(token, int):
        return isinstance(v, list) and -len(v) <= token < len(v)
    return token != "*" and isinstance(v, dict) and token in v


# --------------------------------------------------------------------------------------------- filters
@dataclass(frozen=True)
class Clause:
    path: tuple[str, ...]
    op: str
    operand: Any

    def pushable(self) -> tuple[str, str, Any] | None:
        """The clause as a Chroma metadata clause, or None when Chroma cannot evaluate it exactly."""
        name = "f:" + ".".join(self.path)
        v = self.operand
        if any(not p or "." in p for p in self.path):
            return None
        if self.op in ("$eq", "$ne"):
            if isinstance(v, str) and len(v) > MAX_FILTER_CHARS:
                return name, self.op, _digest(v)
            leaf = _filter_scalar(v)
            return (name, self.op, leaf) if leaf is not None else None
        if isinstance(v, int | float) and not isinstance(v, bool) and math.isfinite(v):
            return name, self.op, v
        return None

    def matches(self, value: Any) -> bool:
        found, field = _at_path(value, self.path)
        if self.op == "$ne":
            return not found or not json_equal(field, self.operand)
        if not found:
            return False
        if self.op == "$eq":
            return json_equal(field, self.operand)
        both_numbers = _is_number(field) and _is_number(self.operand)
        if not (both_numbers or (isinstance(field, str) and isinstance(self.operand, str))):
            return False
        return bool(
            {
                "$gt": field > self.operand,
                "$gte": field >= self.operand,
                "$lt": field < self.operand,
                "$lte": field <= self.operand,
            }[self.op]
        )


def _is_number(v: Any) -> bool:
    return isinstance(v, int | float) and not isinstance(v, bool)


def json_equal(a: Any, b: Any) -> bool:
    """Equality as JSON has it: booleans are not numbers, 1 == 1.0, arrays and objects compare whole."""
    if isinstance(a, bool) or isinstance(b, bool):
        return isinstance(a, bool) and isinstance(b, bool) and a == b
    if _is_number(a) and _is_number(b):
        return bool(a == b)
    if isinstance(a, list | tuple) and isinstance(b, list | tuple):
        return len(a) == len(b) and all(json_equal(x, y) for x, y in zip(a, b, strict=True))
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(json_equal(a[k], b[k]) for k in a)
    return type(a) is type(b) and bool(a == b)


def _at_path(value: Any, path: tuple[str, ...]) -> tuple[bool, Any]:
    for part in path:
        if not isinstance(value, dict) or part not in value:
            return False, None
        value = value[part]
    return True, value


def parse_filter(flt: object) -> list[Clause]:
    if flt is None:
        return []
    if not isinstance(flt, Mapping):
        raise InvalidInputError(f"filter must be a dict, got {type(flt).__name__}")
    if len(flt) > MAX_FILTER_FIELDS:
        raise InvalidInputError(f"filter has {len(flt)} fields; the limit is {MAX_FILTER_FIELDS}")
    clauses = []
    for field, cond in flt.items():
        if not isinstance(field, str) or not field:
            raise InvalidInputError(f"filter fields must be non-empty str, got {describe(field)}")
        path = tuple(field.split("."))
        if isinstance(cond, Mapping) and any(isinstance(k, str) and k.startswith("$") for k in cond):
            for op, operand in cond.items():
                if op not in _OPS:
                    raise InvalidInputError(
                        f"unsupported filter operator ({describe(op)}); use one of {', '.join(_OPS)}"
                    )
                check_json(operand)
                clauses.append(Clause(path, op, operand))
        else:
            check_json(cond)
            clauses.append(Clause(path, "$eq", cond))
    return clauses
