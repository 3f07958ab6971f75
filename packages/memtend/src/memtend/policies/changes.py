"""Planners: every change to a user's stored memory, decided as data. Pure: no storage, no embedding, no I/O.

A planner takes what the facade read (records, their vectors, the time) and returns a :class:`Change`;
``Memory.apply`` performs it. Keeping the decision here and the performing in one place means atomicity, erasure
checks, change hooks and speed each live in one function.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np

from memtend.policies import compaction, forgetting, precedence
from memtend.policies.precedence import FactOutcome
from memtend.records import Kind, Record, Source, Status, derived_id, fact_id, new_id
from memtend.results import ChangeEvent, ChangeType, DeleteReport, FactResult, HistoryEntry

ARCHIVED_FROM = "archived_from"  # extra field: the status a record had before it was archived
# statuses of records waiting for a person: untrusted text in review, and proposals (memtend.policies.proposals)
HELD = frozenset({Status.PENDING_REVIEW, Status.PROPOSED})
CLAIM_PREFIX = "fv:"  # a fact's claim row (memtend.consistency.claims, which imports this module's package)


@dataclass(frozen=True, eq=False)
class Change:
    """One change to one user's stored data, applied in this order by ``Memory.apply``:

    1. ``upserts``: records written whole (text, metadata, vector), in one call per batch; an upsert whose id is
       in ``vectors`` reuses that vector, the others are embedded;
    2. ``archives``: records moved to the archive in place (metadata rewritten, the stored vector stands);
    3. ``deletes``: record ids deleted for good, then their text scrubbed from the history;
    4. ``history``: the entries of this change, stored as one history row stamped when it is written;
    5. the cached retrieval index follows: live upserts are indexed, archived and deleted records leave it;
    6. ``used``: last-used stamps (record id -> time), buffered and written in the background;
    7. ``erase``: the user is removed from every collection (nothing else may be set with it).

    ``fresh`` says every upserted id is new (nothing stored to replace, which saves a read); ``stored`` holds, by
    id, what the planner read of records that upserts replace (None: nothing stored), so the write need not read
    them again to clear metadata keys the new version lacks; ``redacted`` names,
    per record id, the kinds of sensitive value the gate masked in it (for change hooks; never the values);
    ``resolved``, by fact id, what this change's fact claims made of their keys when the writer knows it exactly
    (the folder-lock holder): the key's new current value, or None when it stands as it was (a key not named is
    resolved when next read: the retrieval index re-reads it, see :mod:`memtend.consistency.claims`).
    """

    user_id: str
    upserts: tuple[Record, ...] = ()
    vectors: Mapping[str, np.ndarray] = field(default_factory=dict)
    archives: tuple[Record, ...] = ()
    deletes: tuple[str, ...] = ()
    history: tuple[HistoryEntry, ...] = ()
    used: Mapping[str, float] = field(default_factory=dict)
    redacted: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    fresh: bool = False
    erase: bool = False
    stored: Mapping[str, Record | None] = field(default_factory=dict)
    resolved: Mapping[str, Record | None] = field(default_factory=dict)
    folded: bool = False  # names the rows of its fact keys already (memtend.consistency.fold): written as it is

    @property
    def empty(self) -> bool:
        return not (self.upserts or self.archives or self.deletes or self.history or self.used or self.erase)

    @property
    def writes(self) -> bool:
        """True when the change touches stored rows now (not only buffered usage stamps)."""
        return bool(self.upserts or self.archives or self.deletes or self.history or self.erase)

    def then(self, other: Change) -> Change:
        """This change followed by ``other`` (same user), as one change."""
        if other.user_id != self.user_id:
            raise ValueError("cannot join changes of different users")
        if self.erase or other.erase:
            raise ValueError("an erasure is a change of its own")
        return Change(
            user_id=self.user_id,
            upserts=self.upserts + other.upserts,
            vectors={**self.vectors, **other.vectors},
            archives=self.archives + other.archives,
            deletes=self.deletes + other.deletes,
            history=self.history + other.history,
            used={**self.used, **other.used},
            redacted={**self.redacted, **other.redacted},
            fresh=self.fresh and other.fresh,
            stored={**self.stored, **other.stored},
        )

    def leaving_index(self) -> list[str]:
        """Ids the retrieval index drops: archived upserts, archives and deletes."""
        gone = [r.id for r in self.upserts if r.status is Status.ARCHIVED]
        return gone + [r.id for r in self.archives] + list(self.deletes)


def entry(user_id: str, op: str, after: Record | None, before: Record | None, source: Source) -> HistoryEntry:
    """A history entry for one record (``at`` is set when the change is written)."""
    target = after or before
    assert target is not None
    return HistoryEntry(
        id=new_id(),
        user_id=user_id,
        op=op,
        record_id=target.id,
        before=before.snapshot() if before else None,
        after=after.snapshot() if after else None,
        source=source.value,
        at=0.0,
    )


def archived(record: Record, superseded_by: str, at: float) -> Record:
    """The archived form of a record; it remembers the status it had, so a restore cannot promote it."""
    return replace(
        record,
        status=Status.ARCHIVED,
        superseded_by=superseded_by,
        updated_at=at,
        extra={**record.extra, ARCHIVED_FROM: record.status.value},
    )


def status_before_archive(record: Record) -> Status:
    """What an archived record was; records archived before this was kept count as reviewed unless external."""
    value = record.extra.get(ARCHIVED_FROM)
    if isinstance(value, str) and value in Status._value2member_map_:
        return Status(value)
    return Status.PENDING_REVIEW if record.source is Source.EXTERNAL else Status.ACTIVE


# ---------------------------------------------------------------------------------------------- capture
def add(
    user_id: str,
    records: Sequence[Record],
    redacted: Mapping[str, tuple[str, ...]] | None = None,
    *,
    batch_id: str | None = None,
) -> Change:
    """New records, each with an ``add`` entry. With ``batch_id`` (a caller's name for the batch), record and entry
    ids derive from it and the record's place in the batch, so a retry of the batch writes the same rows again."""
    redacted = dict(redacted or {})
    if batch_id is not None:
        renamed = [replace(r, id=derived_id(user_id, batch_id, str(n))) for n, r in enumerate(records)]
        redacted = {new.id: redacted[old.id] for old, new in zip(records, renamed, strict=True) if old.id in redacted}
        records = renamed
    history = [entry(user_id, "propose" if r.status is Status.PROPOSED else "add", r, None, r.source) for r in records]
    if batch_id is not None:
        history = [replace(h, id=derived_id(user_id, batch_id, str(n), "add")) for n, h in enumerate(history)]
    return Change(
        user_id=user_id,
        upserts=tuple(records),
        history=tuple(history),
        redacted=redacted,
        fresh=True,
    )


def refresh(
    user_id: str, existing: Record, newer: Record, vector: np.ndarray | None, t: float, *, sessions_kept: int = 8
) -> tuple[Record, Change]:
    """A statement said again: the stored record stays (its id and text), and takes in the new saying: dated now
    (``updated_at``, ``last_used_at``), its source the more trusted of the two, and in its metadata how often it
    was said (``said_times``), by which sources (``said_by``) and in which sessions (``said_in``, the latest
    ``sessions_kept``). ``vector``: the stored one (nothing is embedded again)."""
    extra = dict(existing.extra)
    sources = [s for s in str(extra.get("said_by") or existing.source.value).split(",") if s]
    sessions = [s for s in str(extra.get("said_in") or existing.session).split(",") if s]
    extra["said_times"] = int(extra.get("said_times") or 1) + 1
    extra["said_by"] = ",".join(dict.fromkeys([*sources, newer.source.value]))
    if newer.session:
        extra["said_in"] = ",".join(list(dict.fromkeys([*sessions, newer.session]))[-sessions_kept:])
    for name, value in newer.extra.items():
        extra.setdefault(name, value)
    source = newer.source if newer.source.trust > existing.source.trust else existing.source
    after = replace(existing, source=source, extra=extra, updated_at=t, last_used_at=t)
    return after, Change(
        user_id,
        upserts=(after,),
        vectors={existing.id: vector} if vector is not None else {},
        history=(entry(user_id, "refresh", after, existing, newer.source),),
        stored={existing.id: existing},
    )


def fact(
    user_id: str,
    candidate: Record,
    slot: Record | None,
    slot_vector: np.ndarray | None,
    t: float,
    redacted: tuple[str, ...] = (),
    *,
    said_at: float | None = None,
) -> tuple[FactResult, Change]:
    """A new value for a fact meets what its slot holds (``slot``: the stored record at the key's fact id, of
    any status, with its vector). Precedence decides; a replaced value moves to the archive under a new id with
    a pointer to its successor, in the same write as the new value.

    The slot design's planner: ``set_fact`` now writes a claim per value and readers resolve them
    (:mod:`memtend.consistency.claims`); this stays as the reference the replay of claims is tested against
    (``tests/unit/test_fact_claims.py``: outcomes, value, times, history and archive must equal it)."""
    fid = fact_id(user_id, candidate.key)
    current_value = slot if slot is not None and slot.status is Status.ACTIVE else None
    decision = precedence.decide_fact(current_value, candidate.value, candidate.source, said_at=said_at)
    if decision.outcome in (FactOutcome.UNCHANGED, FactOutcome.KEPT):
        assert current_value is not None
        change = Change(user_id)
        if decision.outcome is FactOutcome.KEPT:
            change = Change(user_id, history=(entry(user_id, "kept", current_value, current_value, candidate.source),))
        return FactResult(decision.outcome, current_value, decision.reason), change
    current = replace(candidate, id=fid)
    marks = {fid: redacted} if redacted else {}
    if current_value is None:
        if slot is not None:  # an archived current slot (forgotten fact): keep its creation time
            current = replace(current, created_at=slot.created_at)
        change = Change(
            user_id,
            upserts=(current,),
            history=(entry(user_id, "add", current, None, current.source),),
            stored={fid: slot},
        )
        return FactResult(decision.outcome, current, decision.reason), replace(change, redacted=marks)
    old = replace(archived(current_value, fid, t), id=new_id())
    current = replace(current, created_at=current_value.created_at, updated_at=t)
    assert slot_vector is not None
    change = Change(
        user_id,
        upserts=(old, current),
        vectors={old.id: slot_vector},
        history=(entry(user_id, "update", current, current_value, current.source),),
        redacted=marks,
        stored={fid: slot, old.id: None},
    )
    return FactResult(decision.outcome, current, decision.reason), change


# ---------------------------------------------------------------------------------------------- review
def retire(user_id: str, records: Sequence[Record], op: str, t: float, *, superseded_by: str = "") -> Change:
    """Move records to the archive in place; the grace period before a purge counts from ``t``."""
    moved = [archived(r, superseded_by, t) for r in records]
    return Change(
        user_id,
        archives=tuple(moved),
        history=tuple(entry(user_id, op, a, r, Source.AGENT) for a, r in zip(moved, records, strict=True)),
    )


def approve(user_id: str, record: Record, source: Source, t: float) -> tuple[Record, Change]:
    """Accept a pending record that is not a fact (a fact goes through :func:`fact` first)."""
    approved = replace(record, status=Status.ACTIVE, updated_at=t)
    return approved, Change(
        user_id, upserts=(approved,), history=(entry(user_id, "approve", approved, record, source),)
    )


def reject(user_id: str, record: Record) -> Change:
    """Drop a pending record for good."""
    return Change(user_id, deletes=(record.id,), history=(entry(user_id, "reject", None, record, Source.USER),))


# ---------------------------------------------------------------------------------------------- deletion
def delete(
    user_id: str, record: Record, summaries: Sequence[Record], sources: Mapping[str, Record], t: float
) -> tuple[DeleteReport, Change]:
    """Delete a record for good; each summary derived from it is rebuilt from its other original sources
    (``sources``: the stored records by id), or deleted when none remain. Rebuilt summaries are written before
    anything is deleted, so an interruption leaves the record (a retry works), never its text in a summary."""
    rebuilt: list[Record] = []
    history: list[HistoryEntry] = []
    removed: list[str] = []
    for summary in summaries:
        if record.id not in summary.derived_from:
            continue
        remaining = [sources[i] for i in summary.derived_from if i != record.id and i in sources]
        originals = sorted((r for r in remaining if r.kind is not Kind.SUMMARY), key=lambda r: r.created_at)
        if not originals:
            removed.append(summary.id)
            history.append(entry(user_id, "delete", None, summary, Source.AGENT))
            continue
        new = replace(
            summary,
            text=compaction.extractive_summary([replace(r, kind=Kind.EVENT) for r in originals]),
            derived_from=[r.id for r in originals],
            updated_at=t,
            extra={**summary.extra, "events": len(originals)},
        )
        rebuilt.append(new)
        history.append(entry(user_id, "rebuild", new, summary, Source.AGENT))
    history.append(entry(user_id, "delete", None, record, Source.USER))
    change = Change(user_id, upserts=tuple(rebuilt), deletes=(*removed, record.id), history=tuple(history))
    return DeleteReport(record, tuple(r.id for r in rebuilt), tuple(removed)), change


def purge(user_id: str, doomed: Sequence[Record]) -> Change:
    """Delete archived records whose grace period is over."""
    return Change(
        user_id,
        deletes=tuple(r.id for r in doomed),
        history=tuple(entry(user_id, "purge", None, r, Source.AGENT) for r in doomed),
    )


# ---------------------------------------------------------------------------------------------- compaction
def compact(
    user_id: str,
    plan: compaction.CompactionPlan,
    text: str,
    flagged: bool,
    vectors: Mapping[str, np.ndarray],
    t: float,
    redacted: tuple[str, ...] = (),
) -> tuple[Record, Change]:
    """One summary standing for what ``plan`` replaces, and the archiving of those records, in one write: no
    state where the sources are gone and no summary stands for them. ``vectors``: the replaced records' vectors."""
    n_events = sum(1 for r in plan.replaced if r.kind is Kind.EVENT) + sum(
        int(r.extra.get("events", 0)) for r in plan.replaced if r.kind is Kind.SUMMARY
    )
    summary = Record(
        id=new_id(),
        user_id=user_id,
        kind=Kind.SUMMARY,
        text=text,
        source=Source.AGENT,
        created_at=max(r.created_at for r in plan.replaced),
        updated_at=t,
        last_used_at=t,
        derived_from=compaction.provenance(plan.replaced),
        # a summary quoting text that read like an instruction to the agent stays flagged
        flagged=flagged or any(r.flagged for r in plan.replaced),
        extra={"events": n_events},
    )
    moved = [archived(r, summary.id, t) for r in plan.replaced]
    change = Change(
        user_id,
        upserts=(summary, *moved),
        vectors={r.id: vectors[r.id] for r in plan.replaced},
        history=(
            entry(user_id, "compact", summary, None, Source.AGENT),
            *(entry(user_id, "archive", a, r, Source.AGENT) for a, r in zip(moved, plan.replaced, strict=True)),
        ),
        redacted={summary.id: redacted} if redacted else {},
    )
    return summary, change


# ---------------------------------------------------------------------------------------------- forgetting
def forget(user_id: str, decisions: Sequence[forgetting.ForgetDecision], t: float) -> Change:
    """Archive what the retention schedule says goes (in place, dated ``t``)."""
    return retire(user_id, [d.record for d in decisions], "forget", t)


def fold(user_id: str, record: Record, line: str, flagged: bool, t: float) -> tuple[Record, Change]:
    """A memory whose window ended folded into ``line`` (its text as the gate passed it): a new record of the same
    kind, scope and source, dated when the memory was said, deriving from it (provenance, for deletion), and the
    long version archived pointing at it, in one write. The line gets a window of its own and is then archived."""
    folded = Record(
        id=new_id(),
        user_id=user_id,
        kind=record.kind,
        text=line,
        source=record.source,
        created_at=record.created_at,
        updated_at=t,
        last_used_at=t,
        derived_from=[record.id],
        session=record.session,
        flagged=flagged or record.flagged,
        extra={**record.extra, forgetting.FOLDED: True},
        scope=record.scope,
    )
    moved = archived(record, folded.id, t)
    change = Change(
        user_id,
        upserts=(folded,),
        archives=(moved,),
        history=(
            entry(user_id, "fold", folded, None, Source.AGENT),
            entry(user_id, "forget", moved, record, Source.AGENT),
        ),
        stored={folded.id: None},
    )
    return folded, change


def restore(
    user_id: str, record: Record, slot: Record | None, vectors: Mapping[str, np.ndarray], t: float
) -> tuple[Record, Change]:
    """Bring an archived record back. A superseded fact value becomes current again in its key's slot (the value
    it restores over is archived in its turn, under the restored record's id, so the restore can be undone).
    ``slot``: the stored record at the key's fact id (facts only); ``vectors``: stored vectors by id."""
    before = status_before_archive(record)
    record = replace(record, extra={k: v for k, v in record.extra.items() if k != ARCHIVED_FROM})
    if before in HELD:  # unreviewed content (or a proposal) goes back to wait, never straight to trust
        back = replace(record, status=before, superseded_by="", updated_at=t)
        return back, Change(user_id, upserts=(back,), history=(entry(user_id, "restore", back, record, Source.USER),))
    fid = fact_id(user_id, record.key) if record.kind is Kind.FACT else ""
    if record.kind is Kind.FACT and record.id != fid:
        current = replace(record, id=fid, status=Status.ACTIVE, superseded_by="", updated_at=t)
        known: dict[str, Any] = {fid: vectors[record.id]}
        if slot is not None and slot.status is Status.ACTIVE:
            displaced = replace(archived(slot, fid, t), id=record.id)
            known[record.id] = vectors[fid]
            return current, Change(
                user_id,
                upserts=(current, displaced),
                vectors=known,
                history=(entry(user_id, "restore", current, slot, Source.USER),),
            )
        return current, Change(
            user_id,
            upserts=(current,),
            vectors=known,
            deletes=(record.id,),
            history=(entry(user_id, "restore", current, record, Source.USER),),
        )
    restored = replace(record, status=Status.ACTIVE, superseded_by="", updated_at=t, last_used_at=t)
    return restored, Change(
        user_id, upserts=(restored,), history=(entry(user_id, "restore", restored, record, Source.USER),)
    )


# ---------------------------------------------------------------------------------------------- change hooks
def events(change: Change, at: float, counts: Mapping[str, int] | None = None) -> list[ChangeEvent]:
    """What a change hook sees of an applied change, one event per record :
    upserts are writes (archived copies are archives), then archives, deletions and the erasure."""
    uid = change.user_id
    if change.erase:
        return [ChangeEvent(ChangeType.ERASURE, uid, "erase", at=at, counts=dict(counts or {}))]
    ops = {h.record_id: h.op for h in change.history}
    out: list[ChangeEvent] = []
    for r in change.upserts:
        if r.id.startswith(CLAIM_PREFIX):  # a fact's claim: its writer tells what it did (see fact_events)
            continue
        if r.status is Status.ARCHIVED:
            out.append(ChangeEvent(ChangeType.ARCHIVE, uid, ops.get(r.id, "archive"), r.id, r, at))
            continue
        out.append(ChangeEvent(ChangeType.WRITE, uid, ops.get(r.id, "write"), r.id, r, at))
        if change.redacted.get(r.id):
            out.append(ChangeEvent(ChangeType.REDACTION, uid, "redact", r.id, r, at, change.redacted[r.id]))
    out += [ChangeEvent(ChangeType.ARCHIVE, uid, ops.get(r.id, "archive"), r.id, r, at) for r in change.archives]
    out += [ChangeEvent(ChangeType.DELETE, uid, ops.get(rid, "delete"), rid, None, at) for rid in change.deletes]
    return out


def fact_events(
    user_id: str,
    outcome: FactOutcome,
    before: Record | None,
    current: Record,
    at: float,
    redacted: tuple[str, ...] = (),
) -> list[ChangeEvent]:
    """What a change hook sees of a fact's claim, once what it did is known: an added value is a write; an update
    archives the value it replaced (``before``, as the archive now shows it) and writes the new one; a kept or
    unchanged value changes nothing a reader sees."""
    out: list[ChangeEvent] = []
    if outcome is FactOutcome.UPDATED and before is not None:
        out.append(ChangeEvent(ChangeType.ARCHIVE, user_id, "archive", before.id, before, at))
    if outcome in (FactOutcome.ADDED, FactOutcome.UPDATED):
        op = "add" if outcome is FactOutcome.ADDED else "update"
        out.append(ChangeEvent(ChangeType.WRITE, user_id, op, current.id, current, at))
        if redacted:
            out.append(ChangeEvent(ChangeType.REDACTION, user_id, "redact", current.id, current, at, redacted))
    return out


def document_events(
    user_id: str,
    written: Sequence[str],
    deleted: Sequence[str],
    masked: Mapping[str, tuple[str, ...]],
    at: float,
) -> list[ChangeEvent]:
    """What a change hook sees of a document write (store items, chat messages, checkpoints, session state):
    one WRITE per document put (then a REDACTION naming the masked kinds), one DELETE per document removed.
    Documents are not memory records, so ``record`` is None; ``record_id`` is the document's id."""
    out: list[ChangeEvent] = []
    for doc_id in written:
        out.append(ChangeEvent(ChangeType.WRITE, user_id, "document.put", doc_id, None, at))
        if masked.get(doc_id):
            out.append(ChangeEvent(ChangeType.REDACTION, user_id, "redact", doc_id, None, at, masked[doc_id]))
    out += [ChangeEvent(ChangeType.DELETE, user_id, "document.delete", doc_id, None, at) for doc_id in deleted]
    return out
