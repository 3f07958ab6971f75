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
from memtend.records import Kind, Scope, Source, Status, check_text, check_time, now
from memtend.results import CompactionReport, ForgetReport

__all__ = ["compact", "fold_facts", "forget", "lifetime", "prune_history", "purge"]


def lifetime(scope: object, expires_at: object) -> tuple[Scope | None, float | None]:
    """A write's ``scope`` and ``expires_at``, checked (``remember``, ``log``)."""
    if scope is not None and not isinstance(scope, str):
        raise InvalidInputError(f"scope must be one of user, project, task, session, got {describe(scope)}")
    return (
        Scope.parse(scope) if scope is not None else None,
        check_time(expires_at, "expires_at") if expires_at is not None else None,
    )


def compact(
    memory: FacadeHandle,
    user_id: str,
    keep_recent: int,
    summarizer: compaction.LogSummarizer | None,
    *,
    at: float | None = None,
    over: int = 0,
) -> CompactionReport:
    """Keep the newest ``keep_recent`` events verbatim; replace older ones (and any earlier summary) with one
    summary whose ``derived_from`` lists what it replaced. The replaced records move to the archive, dated ``at``
    (default now). ``over``: nothing is done while the user has at most this many active events (upkeep's
    threshold)."""
    if not isinstance(keep_recent, int) or isinstance(keep_recent, bool) or keep_recent < 0:
        raise InvalidInputError(f"keep_recent must be an int >= 0, got {describe(keep_recent)}")
    if summarizer is not None:
        check_callable(summarizer, "summarizer")
    with memory.lock:
        log, vectors = memory.settled_storage().get_records(
            user_id, kinds=[Kind.EVENT, Kind.SUMMARY], statuses=[Status.ACTIVE], with_embeddings=True
        )
        plan = compaction.plan_compaction(log, keep_recent)
        if not plan.needed or sum(r.kind is Kind.EVENT for r in log) <= over:
            return CompactionReport(summary=None, replaced=0, kept=len(plan.kept))
        text = check_text(compaction.summarise(plan.replaced, summarizer), "summary")
        decision = gate.check_write(text, Source.AGENT, redact=True)
        assert vectors is not None
        by_id = {r.id: vectors[i] for i, r in enumerate(log)}
        summary, change = changes.compact(
            user_id, plan, decision.text, decision.flagged, by_id, now() if at is None else at, decision.redacted_kinds
        )
        memory.apply(change)
    return CompactionReport(summary=summary, replaced=len(plan.replaced), kept=len(plan.kept))


def forget(
    memory: FacadeHandle,
    user_id: str,
    t: float,
    *,
    dry_run: bool,
    clock: float,
    summarizer: compaction.LineSummarizer | None = None,
) -> ForgetReport:
    """Apply the retention schedule at time ``t``: report (``dry_run``) or archive what it says goes.

    Rules are pinned. A re-confirmable memory whose window ended is folded into one line first (``summarizer``, or
    the extractive line), in the same write that archives it. Expired session state is removed too (it has no
    archive); ``clock`` is the real time the fact fold reads."""
    summarizer = memory.line_summarizer if summarizer is None else check_callable(summarizer, "summarizer")
    with memory.lock:
        records, _ = memory.settled_storage().get_records(user_id, statuses=[Status.ACTIVE, *changes.HELD])
        decisions = forgetting.plan_forget(records, memory.retention, t)
        by_id = {d.record.id: d.record for d in decisions}
        lines = {d.record.id: compaction.fold_line(d.record, summarizer) for d in decisions if d.fold}
        lines = {rid: line for rid, line in lines.items() if compaction.shortens(by_id[rid], line)}
        folded: list[tuple[str, str]] = [(rid, "") for rid in lines]
        if dry_run:
            expired = expired_count(memory, user_id, t)
        else:
            change = changes.forget(user_id, [d for d in decisions if d.record.id not in lines], t)
            folded = []
            for rid, line in lines.items():
                decision = gate.check_write(line, Source.AGENT, redact=True)
                record, step = changes.fold(user_id, by_id[rid], decision.text, decision.flagged, t)
                change = change.then(step)
                folded.append((rid, record.id))
            memory.apply(change)
            expired = sweep_expired(memory, user_id, t)  # working memory: documents, no archive
            fold_facts(memory, user_id, clock)
    return ForgetReport(
        dry_run=dry_run,
        archived=[(d.record.id, d.record.kind.value, d.reason) for d in decisions],
        session_items=expired,
        folded=folded,
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


def prune_history(memory: FacadeHandle, user_id: str, t: float) -> int:
    """Delete the user's history rows older than the retention's ``history_days`` whose records are all gone
    (purged or deleted: their text was scrubbed from the entries already); returns how many."""
    cutoff = forgetting.history_cutoff(memory.retention, t)
    if cutoff is None:
        return 0
    with memory.lock:
        return memory.settled_storage().prune_history(user_id, cutoff)
