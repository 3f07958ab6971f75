"""Forgetting: a retention schedule by kind and idle age. Pure: takes records, returns decisions."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field

from memtend.arguments import check_retention
from memtend.records import DAY, Kind, Record, Status


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

    def __post_init__(self) -> None:
        check_retention(self)

    def idle_limit(self, kind: Kind) -> float | None:
        if kind is Kind.RULE:
            return None  # pinned
        days = self.idle_days.get(kind)
        return None if days is None else days * DAY


@dataclass(frozen=True)
class ForgetDecision:
    record: Record
    reason: str


def idle_since(record: Record) -> float:
    return max(record.last_used_at, record.updated_at, record.created_at)


def plan_forget(records: Iterable[Record], policy: RetentionPolicy, now: float) -> list[ForgetDecision]:
    """Which active or pending records the schedule says to archive now, and why."""
    out = []
    for record in records:
        if record.expires_at is not None and record.expires_at <= now and record.kind is not Kind.RULE:
            out.append(ForgetDecision(record, "expired"))
            continue
        if record.status in (Status.PENDING_REVIEW, Status.PROPOSED):
            limit = None if policy.pending_review_days is None else policy.pending_review_days * DAY
            if limit is not None and now - idle_since(record) > limit:
                waiting = "proposed" if record.status is Status.PROPOSED else "pending review"
                out.append(ForgetDecision(record, f"{waiting} for over {policy.pending_review_days:g} days"))
            continue
        if record.status is not Status.ACTIVE:
            continue
        limit = policy.idle_limit(record.kind)
        if limit is not None and now - idle_since(record) > limit:
            out.append(ForgetDecision(record, f"{record.kind.value} unused for over {limit / DAY:g} days"))
    return out


def plan_purge(
    records: Iterable[Record], policy: RetentionPolicy, now: float, grace_days: float | None = None
) -> list[Record]:
    """Archived records whose grace period is over."""
    grace = (policy.archive_grace_days if grace_days is None else grace_days) * DAY
    return [r for r in records if r.status is Status.ARCHIVED and now - r.updated_at >= grace]
