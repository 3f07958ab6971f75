"""The memory record: kinds, sources, statuses and the record itself. No I/O here."""

from __future__ import annotations

import copy
import hashlib
import json
import math
import time
import uuid
from collections.abc import Mapping
from dataclasses import dataclass, field
from enum import Enum
from typing import Any, TypeVar

from memtend.errors import InvalidInputError, InvalidUserIdError, UnknownKindError, describe

MAX_TEXT_CHARS = 32_000
MAX_USER_ID_CHARS = 256
MAX_KEY_CHARS = 256
MAX_METADATA_VALUE_CHARS = 4_096
MAX_METADATA_KEYS = 64
INT64 = 2**63
DAY = 86_400.0  # seconds: every day-based setting (retention, half-lives, TTLs) is converted with this


E = TypeVar("E", bound=Enum)


def _parse(cls: type[E], value: object, what: str, error: type[InvalidInputError] = InvalidInputError) -> E:
    """The member of ``cls`` named by ``value``, or a typed error listing the choices."""
    try:
        return cls(value)
    except ValueError:
        raise error(f"unknown {what} ({describe(value)}); use one of: {', '.join(str(m.value) for m in cls)}") from None


class Kind(str, Enum):
    FACT = "fact"
    EVENT = "event"
    RULE = "rule"
    SUMMARY = "summary"
    NOTE = "note"

    @classmethod
    def parse(cls, value: Kind | str) -> Kind:
        return _parse(cls, value, "kind", UnknownKindError)


class Source(str, Enum):
    """Who a memory came from. Trust runs user > tool > agent > inferred; external is untrusted."""

    USER = "user"
    TOOL = "tool"
    AGENT = "agent"
    INFERRED = "inferred"
    EXTERNAL = "external"

    @classmethod
    def parse(cls, value: Source | str) -> Source:
        return _parse(cls, value, "source")

    @property
    def trust(self) -> int:
        return _TRUST[self]


_TRUST = {Source.USER: 4, Source.TOOL: 3, Source.AGENT: 2, Source.INFERRED: 1, Source.EXTERNAL: 0}


class Scope(str, Enum):
    """How long a memory is meant to hold: ``user`` until superseded; ``project``, ``task`` and ``session`` for a
    window (``RetentionPolicy.scope_days``) that use and restatement extend. A record without one keeps its kind's
    schedule."""

    USER = "user"
    PROJECT = "project"
    TASK = "task"
    SESSION = "session"

    @classmethod
    def parse(cls, value: Scope | str) -> Scope:
        return _parse(cls, value, "scope")


class Status(str, Enum):
    ACTIVE = "active"
    ARCHIVED = "archived"
    PENDING_REVIEW = "pending_review"
    PROPOSED = "proposed"  # what the agent or an extractor proposed (write_mode="propose"), hidden until accepted

    @classmethod
    def parse(cls, value: Status | str) -> Status:
        return _parse(cls, value, "status")


@dataclass
class Record:
    """One stored memory. Times are epoch seconds."""

    id: str
    user_id: str
    kind: Kind
    text: str
    source: Source = Source.USER
    status: Status = Status.ACTIVE
    key: str = ""
    value: str = ""  # for facts: the value itself (text is "<key in words>: <value>")
    created_at: float = 0.0
    updated_at: float = 0.0
    last_used_at: float = 0.0
    expires_at: float | None = None
    derived_from: list[str] = field(default_factory=list)
    superseded_by: str = ""
    session: str = ""
    flagged: bool = False
    extra: dict[str, str | int | float | bool] = field(default_factory=dict)
    scope: Scope | None = None  # None: the kind's retention schedule (see memtend.policies.forgetting)
    # What a record read from Chroma knows of its row (set by ``from_chroma``; a copy made with ``replace`` is a new
    # version and starts without them): the row's own creation entry (see ``to_metadata``), None when it has none;
    # and the row's metadata keys. Not part of the record's value: equality, ``to_dict`` and snapshots leave them out.
    origin: dict[str, Any] | None = field(default=None, init=False, compare=False, repr=False)
    stored_keys: frozenset[str] = field(default=frozenset(), init=False, compare=False, repr=False)
    # whether the row holds the text as its Chroma document (rows written before the text moved into ``r``): a
    # rewrite of such a row clears the document, which Chroma would otherwise keep
    stored_document: bool = field(default=False, init=False, compare=False, repr=False)
    # the stored row holding a fact's current value when it is not the slot row (its winning claim, see
    # ``memtend.consistency.claims``): what a replaced value is archived as
    row_id: str = field(default="", init=False, compare=False, repr=False)

    def __post_init__(self) -> None:
        # last_used_at is the one time kept as a Chroma float (usage stamps merge it alone): to the microsecond, so
        # the record a write returns equals the one read back
        self.last_used_at = chroma_float(self.last_used_at)

    def to_metadata(self, origin: Mapping[str, Any] | None = None) -> dict[str, str | int | float | bool]:
        """The metadata Chroma stores: ``user_id`` (every read filters on it), ``last_used_at`` (usage stamps
        update it alone, by a metadata merge) and ``r``, every other field as one JSON value, fields at their
        default left out (each stored metadata key is a row Chroma writes and indexes; nothing filters on them).
        The text is in ``r`` too, not in Chroma's document: Chroma indexes every document for full-text search,
        which nothing here uses, so a document would only slow every write down. Rows written before hold it as
        their document and read the same.
        ``origin``: the record's creation entry, kept in ``r`` while the row is the version it created (see
        ``memtend.storage``). Rows written before (one metadata key per field) read the same (``from_chroma``)."""
        packed: dict[str, Any] = {"kind": self.kind.value, "text": self.text, "created_at": float(self.created_at)}
        if self.updated_at != self.created_at:
            packed["updated_at"] = float(self.updated_at)
        optional: dict[str, Any] = {
            "source": self.source.value if self.source is not Source.USER else "",
            "status": self.status.value if self.status is not Status.ACTIVE else "",
            "key": self.key,
            "value": self.value,
            "derived_from": self.derived_from,
            "superseded_by": self.superseded_by,
            "session": self.session,
            "flagged": self.flagged,
            "extra": self.extra,
            "scope": self.scope.value if self.scope is not None else "",
        }
        packed.update((name, value) for name, value in optional.items() if value)
        if self.expires_at is not None:
            packed["expires_at"] = float(self.expires_at)
        if origin is not None:
            packed["h"] = dict(origin)
        meta: dict[str, str | int | float | bool] = {
            "user_id": self.user_id,
            "last_used_at": float(self.last_used_at),
            "r": json.dumps(packed),
        }
        if self.id.startswith("fv:"):  # a claim names its key: a key's claims are one where-read (consistency.claims)
            meta["fk"] = fact_id(self.user_id, self.key)
        return meta

    @classmethod
    def from_chroma(cls, id: str, document: str | None, meta: dict[str, Any]) -> Record:
        record = cls._from_packed(id, document, meta) if "r" in meta else cls._from_fields(id, document, meta)
        record.stored_keys = frozenset(meta)
        record.stored_document = bool(document)
        return record

    @classmethod
    def _from_packed(cls, id: str, document: str | None, meta: dict[str, Any]) -> Record:
        packed = json.loads(str(meta["r"]))
        created = float(packed["created_at"])
        record = cls(
            id=id,
            user_id=str(meta["user_id"]),
            kind=Kind(packed["kind"]),
            text=str(packed["text"]) if "text" in packed else document or "",
            source=Source(packed.get("source", "user")),
            status=Status(packed.get("status", "active")),
            key=str(packed.get("key", "")),
            value=str(packed.get("value", "")),
            created_at=created,
            updated_at=float(packed.get("updated_at", created)),
            last_used_at=float(meta.get("last_used_at", 0.0)),
            expires_at=float(packed["expires_at"]) if "expires_at" in packed else None,
            derived_from=list(packed.get("derived_from", [])),
            superseded_by=str(packed.get("superseded_by", "")),
            session=str(packed.get("session", "")),
            flagged=bool(packed.get("flagged", False)),
            extra=dict(packed.get("extra", {})),
            scope=Scope(packed["scope"]) if packed.get("scope") else None,
        )
        origin = packed.get("h")
        record.origin = dict(origin) if isinstance(origin, dict) else None
        return record

    @classmethod
    def _from_fields(cls, id: str, document: str | None, meta: dict[str, Any]) -> Record:
        """A row written before the fields were packed: one metadata key per field, caller metadata as ``x_*``."""
        extra = {k[2:]: v for k, v in meta.items() if k.startswith("x_")}
        return cls(
            id=id,
            user_id=str(meta["user_id"]),
            kind=Kind(meta["kind"]),
            text=document or "",
            source=Source(meta.get("source", "user")),
            status=Status(meta.get("status", "active")),
            key=str(meta.get("key", "")),
            value=str(meta.get("value", "")),
            created_at=float(meta.get("created_at", 0.0)),
            updated_at=float(meta.get("updated_at", 0.0)),
            last_used_at=float(meta.get("last_used_at", 0.0)),
            expires_at=float(meta["expires_at"]) if "expires_at" in meta else None,
            derived_from=json.loads(str(meta.get("derived_from") or "[]")),
            superseded_by=str(meta.get("superseded_by", "")),
            session=str(meta.get("session", "")),
            flagged=bool(meta.get("flagged", False)),
            extra=extra,
        )

    def snapshot(self) -> dict[str, Any]:
        """The record as a history entry keeps it: ``to_dict`` without the fields at their default (history is
        written with every change, and its size is most of what a write costs)."""
        return {k: v for k, v in self.to_dict().items() if k not in _SNAPSHOT_DEFAULTS or v != _SNAPSHOT_DEFAULTS[k]}

    def to_dict(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "user_id": self.user_id,
            "kind": self.kind.value,
            "text": self.text,
            "source": self.source.value,
            "status": self.status.value,
            "key": self.key,
            "value": self.value,
            "created_at": float(self.created_at),
            "updated_at": float(self.updated_at),
            "last_used_at": float(self.last_used_at),
            "expires_at": self.expires_at,
            "derived_from": list(self.derived_from),
            "superseded_by": self.superseded_by,
            "session": self.session,
            "flagged": self.flagged,
            "extra": dict(self.extra),
            "scope": self.scope.value if self.scope is not None else None,
        }


# What a history snapshot leaves out when a field holds it (see Record.snapshot).
_SNAPSHOT_DEFAULTS: dict[str, Any] = {
    "source": Source.USER.value,
    "status": Status.ACTIVE.value,
    "key": "",
    "value": "",
    "expires_at": None,
    "derived_from": [],
    "superseded_by": "",
    "session": "",
    "flagged": False,
    "extra": {},
    "scope": None,
}


def expand_snapshot(snapshot: dict[str, Any]) -> dict[str, Any]:
    """A history snapshot with the fields it left out filled back in (a scrubbed one stays as it is)."""
    if snapshot.get("removed"):
        return dict(snapshot)
    return {**copy.deepcopy(_SNAPSHOT_DEFAULTS), **snapshot}


def chroma_float(value: float) -> float:
    """``value`` rounded to the microsecond. Chroma keeps float metadata to about 16 significant digits, so an
    epoch time in full precision reads back one unit off in the last place about one time in eight; rounded, it
    reads back exactly."""
    return round(float(value), 6)


def now() -> float:
    return time.time()


def new_id() -> str:
    return uuid.uuid4().hex


def derived_id(*parts: str) -> str:
    """A stable id derived from its parts: the same parts always give the same id (a record of a caller's named
    batch, which a retry of the batch writes again in place instead of twice)."""
    return hashlib.sha256(json.dumps(parts).encode()).hexdigest()[:32]


def fact_id(user_id: str, key: str) -> str:
    """The id of a user's current value for a fact key (one slot per key; replaced values get new ids)."""
    return "fact:" + hashlib.sha256(json.dumps([user_id, key]).encode()).hexdigest()[:40]


def check_user_id(user_id: object) -> str:
    """Validate a user id; the only place the rule lives."""
    return check_name(user_id, "user_id", MAX_USER_ID_CHARS, error=InvalidUserIdError, blank=False)


# Times are epoch seconds between year 1 and year 9999, so every date can be shown and compared.
MIN_TIME = -62_135_596_800.0
MAX_TIME = 253_402_300_799.0


def check_time(value: object, what: str) -> float:
    """Validate a point in time given as epoch seconds."""
    seconds = _number(value, what, "epoch seconds (a number)")
    if not math.isfinite(seconds) or not MIN_TIME <= seconds <= MAX_TIME:
        raise InvalidInputError(f"{what} must be epoch seconds between year 1 and year 9999, got {describe(value)}")
    return seconds


def check_days(value: object, what: str) -> float:
    """Validate a duration in days: a finite number, zero or more."""
    days = _number(value, what, "a number of days")
    if not math.isfinite(days) or days < 0:
        raise InvalidInputError(f"{what} must be a finite number of days >= 0, got {describe(value)}")
    return days


def _number(value: object, what: str, expected: str) -> float:
    """An int or float (not a bool) as a float; an int too large for a float becomes infinity."""
    if not isinstance(value, int | float) or isinstance(value, bool):
        raise InvalidInputError(f"{what} must be {expected}, got {type(value).__name__}")
    try:
        return float(value)
    except OverflowError:
        return math.inf


def check_text(text: object, what: str = "text") -> str:
    """Validate the text of a memory: a non-empty str of storable unicode, within the size limit."""
    if not isinstance(text, str):
        raise InvalidInputError(f"{what} must be a str, got {type(text).__name__}")
    if not text.strip():
        raise InvalidInputError(f"{what} must not be empty or blank")
    if len(text) > MAX_TEXT_CHARS:
        raise InvalidInputError(
            f"{what} is {len(text)} characters; the limit is {MAX_TEXT_CHARS}. "
            "Split it, or compact it into a summary first"
        )
    check_encodable(text, what)
    return text


def check_name(
    value: object,
    what: str,
    limit: int = MAX_KEY_CHARS,
    *,
    error: type[InvalidInputError] = InvalidInputError,
    blank: bool = True,
    empty: bool = True,
) -> str:
    """Validate a short identifier (user, session, record or tool id, a store key): a str of storable unicode within
    ``limit`` characters; not blank (empty or only whitespace) unless ``blank``, not empty unless ``empty``."""
    if not isinstance(value, str):
        raise error(f"{what} must be a str, got {type(value).__name__}")
    if not blank and not value.strip():
        raise error(f"{what} must not be empty or blank")
    if not empty and not value:
        raise error(f"{what} must not be empty")
    if len(value) > limit:
        raise error(f"{what} is {len(value)} characters; the limit is {limit}")
    check_encodable(value, what, error)
    return value


def check_encodable(text: str, what: str, error: type[InvalidInputError] = InvalidInputError) -> None:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        raise error(
            f"{what} holds characters that are not valid unicode (a lone surrogate?); decode the input properly"
        ) from None


def check_extra(extra: object) -> dict[str, str | int | float | bool]:
    """Validate caller metadata: a flat dict of str keys to str, int, float (finite) or bool."""
    if extra is None:
        return {}
    if not isinstance(extra, dict):
        raise InvalidInputError(f"metadata must be a dict, got {type(extra).__name__}")
    if len(extra) > MAX_METADATA_KEYS:
        raise InvalidInputError(f"metadata has {len(extra)} keys; the limit is {MAX_METADATA_KEYS}")
    out: dict[str, str | int | float | bool] = {}
    for name, value in extra.items():
        if not isinstance(name, str) or not name or len(name) > MAX_KEY_CHARS:
            raise InvalidInputError(f"metadata keys must be non-empty str of at most {MAX_KEY_CHARS} chars")
        check_encodable(name, "metadata key")
        if isinstance(value, bool):
            out[name] = value
        elif isinstance(value, int):
            if not -INT64 <= value < INT64:
                raise InvalidInputError(f"metadata value {name!r} does not fit in 64 bits; store it as a str")
            out[name] = value
        elif isinstance(value, float):
            if not math.isfinite(value):
                raise InvalidInputError(f"metadata value {name!r} is {value}; only finite numbers can be stored")
            out[name] = value
        elif isinstance(value, str):
            if len(value) > MAX_METADATA_VALUE_CHARS:
                raise InvalidInputError(
                    f"metadata value {name!r} is {len(value)} characters; the limit is {MAX_METADATA_VALUE_CHARS}"
                )
            check_encodable(value, f"metadata value {name!r}")
            out[name] = value
        else:
            raise InvalidInputError(
                f"metadata value {name!r} is a {type(value).__name__}; Chroma stores only str, int, float and "
                "bool: flatten it or json.dumps it"
            )
    return out
