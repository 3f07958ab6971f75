"""What the core's calls return: plain, typed dataclasses. No I/O here.

Values that hold a :class:`~memtend.records.Record` (a mutable dataclass) compare field by field and hash by
identity fields that equal values share, so ``a == b`` always implies ``hash(a) == hash(b)``.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime, timezone
from enum import Enum
from typing import Any

from memtend.policies.precedence import FactOutcome
from memtend.records import Record, Source, now

__all__ = [
    "ChangeEvent",
    "ChangeType",
    "CompactionReport",
    "DeleteReport",
    "ErasureReceipt",
    "Event",
    "FactResult",
    "ForgetReport",
    "HistoryEntry",
    "Hit",
]


@dataclass(frozen=True)
class Event:
    """One log entry for ``log_many``: text, when it happened, and the session or thread it belongs to."""

    text: str
    at: float | None = None
    session: str = ""
    metadata: dict[str, str | int | float | bool] | None = None
    source: Source = Source.USER

    def __hash__(self) -> int:
        return hash((self.text, self.at, self.session, self.source))


@dataclass(frozen=True)
class Hit:
    """A recalled record, its fused score, and its date, so a prompt can label it."""

    record: Record
    score: float

    def __hash__(self) -> int:
        return hash((self.record.id, self.score))

    @property
    def date(self) -> str:
        return datetime.fromtimestamp(self.record.created_at, tz=timezone.utc).strftime("%Y-%m-%d")

    @property
    def text(self) -> str:
        return self.record.text

    def label(self) -> str:
        return f"[{self.date}] {self.record.text}"


class FactResult:
    """What ``set_fact`` did (``outcome``: added, updated, unchanged or kept), the fact as it now stands, and why.

    Two results are equal when every field is; compare the outcome with ``result.outcome == "added"``.

    On a store only this process writes (an embedded folder whose lock it holds) the result is known when
    ``set_fact`` returns, with no read. On a store other processes may write (a ``chroma run`` server, a client
    without the folder lock) ``set_fact`` writes its value and reads nothing: the result is resolved lazily, by
    one read of the key's writes the first time ``outcome``, ``record`` or ``reason`` is asked for (so it tells
    what really happened, racing writers included); a caller that ignores it pays nothing."""

    __slots__ = ("_outcome", "_reason", "_record", "_resolve")

    def __init__(self, outcome: FactOutcome, record: Record, reason: str) -> None:
        self._outcome, self._record, self._reason = outcome, record, reason
        self._resolve: Callable[[], tuple[FactOutcome, Record, str]] | None = None

    @classmethod
    def deferred(cls, resolve: Callable[[], tuple[FactOutcome, Record, str]]) -> FactResult:
        """A result resolved by ``resolve`` (a read) when first asked for (see the class docstring)."""
        out = cls.__new__(cls)
        out._resolve = resolve
        return out

    def _settle(self) -> None:
        if self._resolve is not None:
            self._outcome, self._record, self._reason = self._resolve()
            self._resolve = None

    @property
    def outcome(self) -> FactOutcome:
        self._settle()
        return self._outcome

    @property
    def record(self) -> Record:
        self._settle()
        return self._record

    @property
    def reason(self) -> str:
        self._settle()
        return self._reason

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, FactResult):
            return NotImplemented
        return (self.outcome, self.record, self.reason) == (other.outcome, other.record, other.reason)

    def __hash__(self) -> int:
        return hash((self.outcome, self.record.id, self.reason))

    def __repr__(self) -> str:
        return f"FactResult(outcome={self.outcome!r}, record={self.record!r}, reason={self.reason!r})"


@dataclass(frozen=True)
class CompactionReport:
    """What ``compact`` did: the new summary (None when nothing needed folding), records replaced and kept."""

    summary: Record | None
    replaced: int
    kept: int

    def __hash__(self) -> int:
        return hash((self.summary.id if self.summary else None, self.replaced, self.kept))


@dataclass(frozen=True)
class ForgetReport:
    """What ``forget`` archived (or would archive, with ``dry_run``): (record id, kind, reason) per record, and
    how many expired working-memory items it removed; ``folded``: (archived record id, id of the one line it was
    folded into) per memory folded before it was archived (a dry run names no line: "")."""

    dry_run: bool
    archived: list[tuple[str, str, str]]
    session_items: int = 0
    folded: list[tuple[str, str]] = field(default_factory=list)

    def __hash__(self) -> int:
        return hash((self.dry_run, tuple(self.archived), self.session_items, tuple(self.folded)))

    @property
    def count(self) -> int:
        return len(self.archived)


@dataclass(frozen=True)
class DeleteReport:
    """What ``delete`` did: the record deleted for good (as it was), and the summaries derived from it that were
    rebuilt from their other sources or, with none left, deleted."""

    record: Record
    rebuilt: tuple[str, ...] = ()
    removed: tuple[str, ...] = ()

    def __hash__(self) -> int:
        return hash((self.record.id, self.rebuilt, self.removed))

    @property
    def summaries_touched(self) -> int:
        return len(self.rebuilt) + len(self.removed)


@dataclass(frozen=True)
class ErasureReceipt:
    """What ``Memory.erase_user`` removed: rows per collection, and when. ``shared`` names the namespaces (two
    labels deep) of documents an adapter keeps for no one user (``memtend.identity.SHARED_OWNER``): they are
    not the user's, so they stay; look there for anything of the user an application put in shared data."""

    user_id: str
    counts: dict[str, int]
    at: float = field(default_factory=now)
    shared: tuple[tuple[str, ...], ...] = ()

    def __hash__(self) -> int:
        return hash((self.user_id, self.at))

    @property
    def total(self) -> int:
        return sum(self.counts.values())


@dataclass(frozen=True)
class HistoryEntry:
    """One change to one record: the operation (add, update, kept, approve, reject, archive, forget, compact,
    rebuild, delete, purge, restore), the record as it was before and after (snapshots as dicts; None where it
    did not exist), who caused it, and when it was written."""

    id: str
    user_id: str
    op: str
    record_id: str
    before: dict[str, Any] | None
    after: dict[str, Any] | None
    source: str
    at: float

    def __hash__(self) -> int:
        return hash(self.id)

    def stored(self) -> dict[str, Any]:
        """The entry as its history row keeps it (user and time are the row's)."""
        out: dict[str, Any] = {"id": self.id, "op": self.op, "record_id": self.record_id, "source": self.source}
        if self.before is not None:
            out["before"] = self.before
        if self.after is not None:
            out["after"] = self.after
        return out

    def to_dict(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "op": self.op,
            "record_id": self.record_id,
            "before": self.before,
            "after": self.after,
            "source": self.source,
            "at": self.at,
        }


class ChangeType(str, Enum):
    """What a change did to stored data, as a change hook sees it."""

    WRITE = "write"  # a record was added or rewritten (add, update, approve, restore, rebuild, compact)
    REDACTION = "redaction"  # a record was written with sensitive values masked (follows its WRITE)
    ARCHIVE = "archive"  # a record moved to the archive (forget, compact, a replaced fact value)
    DELETE = "delete"  # a record was removed for good (delete, reject, purge)
    ERASURE = "erasure"  # every row of a user was removed


@dataclass(frozen=True)
class ChangeEvent:
    """One change to stored data, as ``Memory(on_change=...)`` sees it, after it was written.

    ``record`` is the record as stored now (None for deletions and erasure); refused values never appear, since
    nothing refused is written. ``redacted`` names the kinds of sensitive value masked in a REDACTION;
    ``counts`` are the rows an ERASURE removed."""

    type: ChangeType
    user_id: str
    op: str
    record_id: str = ""
    record: Record | None = None
    at: float = 0.0
    redacted: tuple[str, ...] = ()
    counts: dict[str, int] | None = None

    def __hash__(self) -> int:
        return hash((self.type, self.user_id, self.op, self.record_id, self.at))
