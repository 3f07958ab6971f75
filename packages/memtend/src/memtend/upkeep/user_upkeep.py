"""One user's upkeep, each a plan from :mod:`memtend.policies` applied through the store's one write path.

``UserMemory.compact`` / ``forget`` / ``purge`` are thin calls into these; a store-wide schedule calls them too.
"""

from __future__ import annotations

from memtend.arguments import check_callable, describe
from memtend.consistency import claims as fact_claims
from memtend.consistency import fold as fact_fold
from memtend.documents.keyed import expired_count, sweep_expired
from memtend.errors import InvalidInputError
from memtend.handle import FacadeHandle
from memtend.policies import changes, compaction, forgetting, gate
from memtend.records import Kind, Source, Status, check_text, now
from memtend.results import CompactionReport, ForgetReport

__all__ = ["compact", "fold_facts", "forget", "purge"]


def compact(
    memory: FacadeHandle, user_id: str, keep_recent: int, summarizer: compaction.LogSummarizer | None
) -> CompactionReport:
    """Keep the newest ``keep_recent`` events verbatim; replace older ones (and any earlier summary) with one
    summary whose ``derived_from`` lists what it replaced. The replaced records move to the archive."""
    if not isinstance(keep_recent, int) or isinstance(keep_recent, bool) or keep_recent < 0:
        raise InvalidInputError(f"keep_recent must be an int >= 0, got {describe(keep_recent)}")
    if summarizer is not None:
        check_callable(summarizer, "summarizer")
    with memory.lock:
        log, vectors = memory.settled_storage().get_records(
            user_id, kinds=[Kind.EVENT, Kind.SUMMARY], statuses=[Status.ACTIVE], with_embeddings=True
        )
        plan = compaction.plan_compaction(log, keep_recent)
        if not plan.needed:
            return CompactionReport(summary=None, replaced=0, kept=len(plan.kept))
        text = check_text(compaction.summarise(plan.replaced, summarizer), "summary")
        decision = gate.check_write(text, Source.AGENT, redact=True)
        assert vectors is not None
        by_id = {r.id: vectors[i] for i, r in enumerate(log)}
        summary, change = changes.compact(
            user_id, plan, decision.text, decision.flagged, by_id, now(), decision.redacted_kinds
        )
        memory.apply(change)
    return CompactionReport(summary=summary, replaced=len(plan.replaced), kept=len(plan.kept))


def forget(memory: FacadeHandle, user_id: str, t: float, *, dry_run: bool, clock: float) -> ForgetReport:
    """Apply the retention schedule at time ``t``: report (``dry_run``) or archive what it says goes.

    Rules are pinned. Expired session state is removed too (it has no archive); ``clock`` is the real time the
    fact fold reads."""
    with memory.lock:
        records, _ = memory.settled_storage().get_records(user_id, statuses=[Status.ACTIVE, *changes.HELD])
        decisions = forgetting.plan_forget(records, memory.retention, t)
        if dry_run:
            expired = expired_count(memory, user_id, t)
        else:
            memory.apply(changes.forget(user_id, decisions, t))
            expired = sweep_expired(memory, user_id, t)  # working memory: documents, no archive
            fold_facts(memory, user_id, clock)
    return ForgetReport(
        dry_run=dry_run,
        archived=[(d.record.id, d.record.kind.value, d.reason) for d in decisions],
        session_items=expired,
    )


def fold_facts(memory: FacadeHandle, user_id: str, clock: float) -> None:
    """Compaction of fact keys (hold the memory's lock): claims written more than ``FOLD_AFTER`` seconds ago
    fold into their key's checkpoint, in one write (see :mod:`memtend.consistency.fold`); the key reads the same."""
    storage = memory.settled_storage()
    change = fact_fold.compaction(storage, user_id, clock - fact_fold.FOLD_AFTER, clock)
    if change is None:
        return
    fids = sorted({fact_claims.key_of(r.id) or r.id for r in change.archives})
    memory.apply(change)
    storage.slots.drop(fids)  # claims written since the fold point may stand over the checkpoint
    memory.mark_stale(user_id, fids)


def purge(memory: FacadeHandle, user_id: str, t: float, grace_days: float | None) -> int:
    """Delete archived records whose grace period is over at time ``t``; returns how many."""
    with memory.lock:
        storage = memory.settled_storage()
        archived, _ = storage.get_records(user_id, statuses=[Status.ARCHIVED])
        doomed = forgetting.plan_purge(archived, memory.retention, t, grace_days)
        if doomed:
            memory.apply(changes.purge(user_id, doomed))
        # fact claims folded into their checkpoint whose value is not an archived one (the checkpoint holds it,
        # or it never was a value): no reader shows them and their entries are in the fold's history row, so
        # once past the grace period they go with no entry of their own (memtend.consistency.fold)
        folded = [
            r
            for r in storage.claim_stamps(user_id)
            if r.status is Status.ARCHIVED and r.extra.get(changes.ARCHIVED_FROM) == fact_fold.FOLDED
        ]
        # with a restore claim goes the claim it restored from, which it kept out of the archive (its value is
        # the checkpoint's now); one restoring a row of an earlier version stays (that row keeps history entries)
        gone = [
            r
            for r in forgetting.plan_purge(folded, memory.retention, t, grace_days)
            if all(fact_claims.is_claim(d) for d in r.derived_from)
        ]
        if gone:
            ids = {r.id for r in gone} | {d for r in gone for d in r.derived_from}
            storage.delete_records(user_id, sorted(ids))
    return len(doomed)
