"""Review writes a person makes on one user's records: accepting a proposal (optionally edited), and the fact claims
that approve, accept and restore write. Planning is :mod:`memtend.policies.proposals` and
:mod:`memtend.policies.changes`; this reads what they need and hands the change to the one write path."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from typing import TYPE_CHECKING

import numpy as np

from memtend.consistency import claims as fact_claims
from memtend.consistency import guarded as shared_writes
from memtend.errors import InvalidInputError, RecordNotFoundError
from memtend.policies import changes, gate, precedence, proposals
from memtend.policies.changes import Change
from memtend.records import Kind, Record, Source, Status, check_text, fact_id, new_id, now

if TYPE_CHECKING:
    from memtend.handle import FacadeHandle

__all__ = ["accept", "approve", "claim_row", "fact_now", "held_record", "proposal", "restore", "revise"]

Read = Callable[[str], Record]  # the facade's get: a record of the user by id, or RecordNotFoundError


def claim_row(user_id: str, value: Record, op: str) -> Record:
    """A claim row of ``value``'s key written by ``op`` (approve, accept, restore: named in its write id, see
    :func:`memtend.consistency.claims.claim_of`), said when ``value`` was, written now."""
    t = now()
    write_id = f"{op}-{new_id()}"
    return replace(
        value,
        id=fact_claims.claim_id(user_id, value.key, write_id),
        status=Status.ACTIVE,
        superseded_by="",
        extra={k: v for k, v in value.extra.items() if k != changes.ARCHIVED_FROM},
        derived_from=[value.id] if op == "restore" else [],  # the archived value it brings back
        updated_at=t,
        last_used_at=t,
    )


def fact_now(memory: FacadeHandle, user_id: str, claim: Record) -> Record:
    """The fact a claim was written for, as it stands now (read back: the claim's write resolves its key)."""
    fid = fact_id(user_id, claim.key)
    storage = memory.settled_storage()
    storage.slots.drop([fid])
    current, _ = storage.fact_slot(user_id, fid)  # read (and known again where cached)
    return current if current is not None and current.status is Status.ACTIVE else replace(claim, id=fid)


def proposal(memory: FacadeHandle, user_id: str, record_id: str) -> tuple[Record, np.ndarray]:
    """The stored proposal ``record_id`` and its vector, or a typed error (not found; not a proposal)."""
    found, vectors = memory.settled_storage().get_records(user_id, [record_id], with_embeddings=True)
    if not found:
        raise RecordNotFoundError("no record with that id for this user; list the user's proposals for their ids")
    record = found[0]
    if record.status is not Status.PROPOSED:
        hint = "; approve or reject it" if record.status is Status.PENDING_REVIEW else ""
        raise InvalidInputError(f"that record is {record.status.value}, not a proposal{hint}")
    assert vectors is not None
    return record, vectors[0]


def held_record(record: Record, record_id: str, held: frozenset[Status]) -> Record:
    """``record`` when it waits for review (its status in ``held``), else a typed error."""
    if record.status not in held:
        raise InvalidInputError(f"record {record_id!r} is {record.status.value}, not pending review")
    return record


def approve(memory: FacadeHandle, user_id: str, record_id: str, source: Source, get: Read) -> Record:
    """Accept a pending record. A pending fact is applied through precedence as vouched for by ``source``."""

    def plan() -> tuple[Record, Change]:
        record = held_record(get(record_id), record_id, frozenset({Status.PENDING_REVIEW}))
        t = now()
        if record.kind is Kind.FACT:  # one claim of the key, vouched for by ``source``, and the pending one retired
            claim = claim_row(user_id, replace(record, source=source), "approve")
            retired = changes.retire(user_id, [record], "approved", t, superseded_by=fact_id(user_id, record.key))
            return claim, Change(user_id, upserts=(claim,)).then(retired)
        return changes.approve(user_id, record, source, t)

    with memory.lock:
        out = shared_writes.guarded(memory, user_id, [record_id], plan)
        return fact_now(memory, user_id, out) if fact_claims.is_claim(out.id) else out


def restore(memory: FacadeHandle, user_id: str, record_id: str, get: Read) -> Record:
    """Bring an archived record back. A superseded fact value becomes current again (the value it restores over is
    archived in its turn, so the restore can itself be undone); what waited for review (or was a proposal) waits
    again."""

    def plan() -> tuple[Record, Change]:
        record = get(record_id)
        if record.status is not Status.ARCHIVED:
            raise InvalidInputError(f"record {record_id!r} is {record.status.value}, not archived")
        if record.kind is Kind.FACT and changes.status_before_archive(record) not in changes.HELD:
            # a value of the key written again as a claim that takes the key (op restore); the value it
            # restores over stays in the archive, so the restore can itself be undone
            claim = claim_row(user_id, record, "restore")
            return claim, Change(user_id, upserts=(claim,), fresh=True)
        return changes.restore(user_id, record, None, {}, now())

    with memory.lock:
        out = shared_writes.guarded(memory, user_id, [record_id], plan)
        return fact_now(memory, user_id, out) if fact_claims.is_claim(out.id) else out


def accept(memory: FacadeHandle, user_id: str, record_id: str, text: str | None, *, redact: bool) -> Record:
    """Accept the proposal ``record_id``; with ``text``, as a person edited it (for a fact: the new value), gated
    again and embedded again. A fact's value is written as a claim of its key, so precedence decides what the key
    holds (an agent's unedited value never replaces what the user said); returns the record as it now stands."""
    if text is not None:
        text = check_text(text)

    def plan() -> tuple[Record, Change]:
        record, vector = proposal(memory, user_id, record_id)
        t = now()
        edit = _edit(memory, record, text, redact=redact, t=t) if text is not None else None
        redacted = edit[1] if edit is not None else ()
        edited = edit[0] if edit is not None else None
        if record.kind is Kind.FACT:
            claim = claim_row(user_id, edited or record, "accept")
            change = Change(user_id, upserts=(claim,), vectors={} if edited else {claim.id: vector})
            change = change.then(proposals.retire_accepted(user_id, record, edited, fact_id(user_id, record.key), t))
            return claim, replace(change, redacted={claim.id: redacted} if redacted else {})
        replaces = record.extra.get(proposals.REPLACES)
        replaced = None
        if isinstance(replaces, str) and replaces:
            found, _ = memory.settled_storage().get_records(user_id, [replaces])
            replaced = found[0] if found else None
        accepted, change = proposals.accept(user_id, record, edited, t, replaced)
        vectors = {} if edited else {accepted.id: vector}
        return accepted, replace(change, vectors=vectors, redacted={accepted.id: redacted} if redacted else {})

    with memory.lock:
        out = shared_writes.guarded(memory, user_id, [record_id], plan)
        return fact_now(memory, user_id, out) if fact_claims.is_claim(out.id) else out


def revise(memory: FacadeHandle, user_id: str, old_id: str, new: Record, redacted: tuple[str, ...]) -> Record:
    """Store ``new`` (checked and gated by the facade) as the next version of the active note or rule ``old_id``
    (see :func:`memtend.policies.proposals.revise`)."""

    def plan() -> tuple[Record, Change]:
        found, _ = memory.settled_storage().get_records(user_id, [old_id])
        if not found:
            raise RecordNotFoundError("no record with that id for this user; list the user's records for their ids")
        old = found[0]
        if old.status is not Status.ACTIVE or old.kind not in (Kind.NOTE, Kind.RULE, Kind.EVENT):
            what = "a fact: set it with set_fact" if old.kind is Kind.FACT else f"{old.status.value} {old.kind.value}"
            raise InvalidInputError(f"only an active note, rule or event can be revised; that record is {what}")
        stored = replace(new, kind=old.kind, extra={**old.extra, **new.extra, proposals.REPLACES: old.id})
        return stored, proposals.revise(user_id, old, stored, redacted, now())

    with memory.lock:
        return shared_writes.guarded(memory, user_id, [old_id], plan)


def _edit(
    memory: FacadeHandle, record: Record, text: str, *, redact: bool, t: float
) -> tuple[Record, tuple[str, ...]] | None:
    """The proposal with a person's text, through the gate as the user's words (None when it changes nothing), and
    the kinds of sensitive value the gate masked."""
    value = text if record.kind is Kind.FACT else ""
    full = precedence.fact_text(record.key, text) if record.kind is Kind.FACT else text
    if full == record.text:
        return None
    decision = gate.check_write(full, Source.USER, redact=redact, meaning=memory.injection_check)
    if decision.text != full and value:  # masked: keep the value consistent with what is stored
        value = gate.redact(value)
    return proposals.edited(record, decision.text, value, decision.flagged, t), decision.redacted_kinds
