"""Forgetting: a retention schedule by scope, kind and idle age. Pure: takes records, returns decisions.

A record with a scope (:class:`~memtend.records.Scope`) lives for its scope's window, counted from when it was
last used, written or restated; without one, its kind's idle limit applies. When the window of a re-confirmable
memory (a project, task or session note) ends, it is first folded into one line (the long version archived, the
line deriving from it); a folded line whose own window ends is archived like any other record. A scoped fact or
event is archived at the end of its window (see :data:`REFOLDABLE`)."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field

from memtend.arguments import check_retention
from memtend.records import DAY, Kind, Record, Scope, Status

FOLDED = "folded"  # extra field of a line a longer memory was folded into (it is never folded again)
# kinds whose scoped records fold into one line at the end of their window: a note. Not a fact (it is one "key:
# value" line already: archived whole, restorable), nor an event (a record of what happened, which nothing
# re-confirms; the log's long form is compaction's summary, so a scoped event is archived as it is)
REFOLDABLE = (Kind.NOTE,)
DERIVED_KINDS = (Kind.SUMMARY, *REFOLDABLE)  # kinds of the records that may hold another record's text


@dataclass(frozen=True)
class RetentionPolicy:
    """How long each kind may sit unused before it is archived, and how long the archive keeps it.

    ``None`` means never by age. Rules are pinned whatever is set here; facts are kept until superseded
    (their superseded values live in the archive). Session state (working memory) expires after
    ``session_days`` without a write.
    """

    # days a record of each kind may sit unused (not recalled, written or updated) before it is archived; None: never
    idle_days: dict[Kind, float | None] = field(
        default_factory=lambda: {
            Kind.EVENT: 90.0,
            Kind.NOTE: 180.0,
            Kind.SUMMARY: None,
            Kind.FACT: None,
            Kind.RULE: None,
        }
    )
    # days a record may wait for review (external text, or a proposal) before it is archived; None: no limit
    pending_review_days: float | None = 30.0
    archive_grace_days: float = 30.0  # days an archived record is kept (and can be restored) before purge deletes it
    session_days: float = 7.0  # days working memory (session state, side-effect ledger) lives after its last write
    # days a record of each scope lives after its last use, write or restatement; None: until superseded
    scope_days: dict[Scope, float | None] = field(
        default_factory=lambda: {Scope.USER: None, Scope.PROJECT: 90.0, Scope.TASK: 7.0, Scope.SESSION: 7.0}
    )
    # days a history row is kept once every record it names is gone (purged or deleted); None: for ever
    history_days: float | None = 365.0

    def __post_init__(self) -> None:
        check_retention(self)

    def idle_limit(self, kind: Kind) -> float | None:
        if kind is Kind.RULE:
            return None  # pinned
        days = self.idle_days.get(kind)
        return None if days is None else days * DAY

    def scope_limit(self, scope: Scope) -> float | None:
        days = self.scope_days.get(scope)
        return None if days is None else days * DAY

    def window_end(self, record: Record) -> float | None:
        """When the record's lifetime ends if nothing uses or restates it first: its explicit expiry, else its
        scope's window (or its kind's idle limit) after its last use; None when nothing ends it (rules never)."""
        if record.kind is Kind.RULE:
            return None
        if record.expires_at is not None:
            return record.expires_at
        limit = self.scope_limit(record.scope) if record.scope is not None else self.idle_limit(record.kind)
        return None if limit is None else idle_since(record) + limit


@dataclass(frozen=True)
class ForgetDecision:
    record: Record
    reason: str
    fold: bool = False  # fold into one line first (the long version is archived, the line derives from it)


def idle_since(record: Record) -> float:
    return max(record.last_used_at, record.updated_at, record.created_at)


def plan_forget(records: Iterable[Record], policy: RetentionPolicy, now: float) -> list[ForgetDecision]:
    """Which active or pending records the schedule says to archive now, and why."""
    out = []
    for record in records:
        if record.expires_at is not None and record.expires_at <= now and record.kind is not Kind.RULE:
            out.append(ForgetDecision(record, "expired", refoldable(record)))
            continue
        if record.status in (Status.PENDING_REVIEW, Status.PROPOSED):
            limit = None if policy.pending_review_days is None else policy.pending_review_days * DAY
            if limit is not None and now - idle_since(record) > limit:
                waiting = "proposed" if record.status is Status.PROPOSED else "pending review"
                out.append(ForgetDecision(record, f"{waiting} for over {policy.pending_review_days:g} days"))
            continue
        if record.status is not Status.ACTIVE:
            continue
        if record.scope is not None:
            limit = policy.scope_limit(record.scope)
            if limit is not None and now - idle_since(record) > limit:
                reason = f"{record.scope.value} scope: not used or restated for over {limit / DAY:g} days"
                out.append(ForgetDecision(record, reason, refoldable(record)))
            continue
        limit = policy.idle_limit(record.kind)
        if limit is not None and now - idle_since(record) > limit:
            out.append(ForgetDecision(record, f"{record.kind.value} unused for over {limit / DAY:g} days"))
    return out


def refoldable(record: Record) -> bool:
    """Whether the end of the record's window folds it into one line first: an active note of a project, task
    or session scope that is not itself a folded line."""
    return (
        record.status is Status.ACTIVE
        and record.kind in REFOLDABLE
        and record.scope not in (None, Scope.USER)
        and not record.extra.get(FOLDED)
    )


def plan_purge(
    records: Iterable[Record], policy: RetentionPolicy, now: float, grace_days: float | None = None
) -> list[Record]:
    """Archived records whose grace period is over."""
    grace = (policy.archive_grace_days if grace_days is None else grace_days) * DAY
    return [r for r in records if r.status is Status.ARCHIVED and now - r.updated_at >= grace]


def history_cutoff(policy: RetentionPolicy, now: float) -> float | None:
    """History rows written before this time go once every record they name is gone; None: kept for ever."""
    return None if policy.history_days is None else now - policy.history_days * DAY


def derives_from(record: Record, record_id: str) -> bool:
    """Whether ``record`` holds text of the record ``record_id``: a summary over it, or the line it was folded
    into (deleting ``record_id`` rebuilds or deletes it)."""
    return record_id in record.derived_from and (record.kind is Kind.SUMMARY or bool(record.extra.get(FOLDED)))
