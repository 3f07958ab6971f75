"""Writing one claim of a fact key (what ``UserMemory.set_fact`` does once the value passed the gate): one new
row, reading nothing on a shared store; precedence between the key's claims is resolved when it is read
(:mod:`memtend.consistency.claims`).

The invariants this keeps between processes: docs/consistency.md."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from typing import TYPE_CHECKING

import numpy as np

from memtend.consistency import claims as fact_claims
from memtend.consistency import guarded as shared_writes
from memtend.policies import changes
from memtend.policies.changes import Change
from memtend.policies.precedence import FactOutcome
from memtend.records import Record, Status, fact_id, new_id, now
from memtend.results import FactResult, HistoryEntry

if TYPE_CHECKING:
    from memtend.handle import FacadeHandle
    from memtend.storage.store import Storage

__all__ = ["claim_result", "write_claim"]


def write_claim(
    memory: FacadeHandle,
    user_id: str,
    candidate: Record,
    redacted: tuple[str, ...],
    *,
    said_at: float | None = None,
    embedded: dict[str, np.ndarray] | None = None,
    clock: Callable[[], float] = now,
) -> FactResult:
    """Write one claim of a fact key: ONE new row, reading nothing on a shared store (see
    :mod:`memtend.consistency.claims`). On a store only this process writes, the key's current value is known (cached,
    or read once) and the result is exact at once; a value that changes nothing is not written. Elsewhere the
    result is read lazily (``FactResult``). ``clock`` is the facade's clock, so one clock stamps the write and its
    events."""
    fid = fact_id(user_id, candidate.key)
    written_at = clock()
    write_id = new_id()
    # when it was said (created_at) and when it was written (updated_at): a claim differing in the two was
    # back-dated (``at=``), which precedence weighs (claims.claim_of)
    claim = replace(
        candidate,
        id=fact_claims.claim_id(user_id, candidate.key, write_id),
        created_at=said_at if said_at is not None else written_at,
        updated_at=written_at,
        last_used_at=written_at,
    )
    history = HistoryEntry(write_id, user_id, "set", claim.id, None, claim.snapshot(), claim.source.value, 0.0)
    change = Change(
        user_id,
        upserts=(claim,),
        history=(history,),
        vectors={claim.id: embedded[claim.text]} if embedded and claim.text in embedded else {},
        fresh=True,
        redacted={claim.id: redacted} if redacted else {},
    )
    with memory.lock:
        if shared_writes.shared(memory):
            memory.apply(change)
            if memory.on_change is None:
                return FactResult.deferred(
                    lambda: claim_result(memory.settled_storage(), user_id, fid, write_id, claim)[:3]
                )
            # a hook is told what the write did: read it now (and the result with it)
            outcome, current, reason, before = claim_result(memory.settled_storage(), user_id, fid, write_id, claim)
            memory.emit(changes.fact_events(user_id, outcome, before, current, clock(), redacted))
            return FactResult(outcome, current, reason)
        slot, _ = memory.settled_storage().fact_slot(user_id, fid)  # the key as it stands (cached: no read)
        resolved = fact_claims.resolve(user_id, candidate.key, [fact_claims.claim_of(claim)], checkpoint=slot)
        outcome = resolved.outcomes[write_id]
        reason = resolved.reasons[write_id]
        assert resolved.current is not None
        if outcome is FactOutcome.UNCHANGED:  # not written: the restatement is stamped as a use of the value's row
            current = resolved.current
            row = (slot.row_id or slot.id) if slot is not None else fid  # the claim or checkpoint holding the value
            memory.apply(Change(user_id, used={row: written_at}))
            return FactResult(outcome, replace(current, last_used_at=max(current.last_used_at, written_at)), reason)
        made: Record | None = resolved.current if resolved.winner == write_id else None  # None: kept as it was
        if made is not None:  # as a read presents it: held by this claim, beside the slot row if there is one
            made.row_id = claim.id
            made.stored_keys = slot.stored_keys if slot is not None else frozenset()
            made.stored_document = slot.stored_document if slot is not None else False
        memory.apply(replace(change, resolved={fid: made}))
        memory.settled_storage().slots.put(user_id, fid, resolved.current, None)
        if memory.on_change is not None and slot is not None and made is not None:
            before = replace(
                slot,
                id=slot.row_id or fact_claims.checkpoint_value_id(fid),
                status=Status.ARCHIVED,
                superseded_by=fid,
                updated_at=written_at,
            )
        else:
            before = None
        memory.emit(changes.fact_events(user_id, outcome, before, resolved.current, clock(), redacted))
        return FactResult(outcome, resolved.current, reason)


def claim_result(
    storage: Storage, user_id: str, fid: str, write_id: str, claim: Record
) -> tuple[FactOutcome, Record, str, Record | None]:
    """What a claim written on a shared store did, read after the write (one read of the key's rows), and the
    value it replaced (as the archive shows it) when it replaced one."""
    resolved = storage.resolve_fact(user_id, fid)
    outcome = resolved.outcomes.get(write_id)
    if outcome is None or resolved.current is None:  # folded, deleted or erased meanwhile: as written
        return FactOutcome.ADDED, replace(claim, id=fid), "written (the key changed since)", None
    before = next((r for r in resolved.superseded if r.updated_at == claim.updated_at and r.id != claim.id), None)
    return outcome, resolved.current, resolved.reasons[write_id], before
