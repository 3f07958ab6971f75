"""A change that writes or deletes rows of a fact key as readers see them (forget, retire, delete or purge of a
fact id, of an archived value, of a replaced checkpoint's value) turned into the rows that hold the key (see
:mod:`memtend.consistency.claims`), read just before the write:

- a fold: the key's active claims are folded into its checkpoint, the slot row ``fact:<hash>``, in the change's
  one Chroma call: the slot row is written with the key's value (as the change has it when it writes the fact id,
  else as the claims resolve), every active claim is rewritten archived (a value that was replaced as the archive
  shows it; the others, whose value the checkpoint now holds or which were never a value, marked ``folded``:
  readers leave them out), a checkpoint value a claim had replaced is kept as an archived row of its own, and the
  history entries the claims derived are stored as one history row (their ids and times as read). Done when the
  change writes the fact id, or deletes an archived value of the key (a purge: the entries derived from it must
  outlive it);
- deleting the fact id deletes every row of the key: its checkpoint and all its claims; deleting a replaced
  checkpoint's value (presented under ``fv:<hash>:checkpoint``) deletes the slot row.

On a shared store a write stamped before the fold may land after it (other processes write without this one's
lock). A claim landing after a fold replays after the checkpoint, so it would beat a value of equal standing that
was stamped after it but folded. So there a fold that keeps the key's value (a purge or delete of an archived
value) folds only the claims written more than ``FOLD_AFTER`` seconds before it (no write is in flight that long),
and, when it deletes a value replaced since, the claims up to the one that replaced it (the checkpoint must not hold
a deleted value); later claims stay claims and replay after the checkpoint in write order, a late one among them.
What is left: a late write stamped before the replacing claim of a value deleted within ``FOLD_AFTER`` of its
replacement still replays after that checkpoint. A change that writes or deletes the fact id (forget, retire,
delete) acts on every claim it read; a write landing after it counts as written after it.

A change naming no such row is returned as it is, with no read.

The invariants this keeps between processes: docs/consistency.md."""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING

import numpy as np

from memtend.consistency import claims as fact_claims
from memtend.policies.changes import ARCHIVED_FROM, Change, archived
from memtend.records import Record, Status, new_id
from memtend.results import HistoryEntry

if TYPE_CHECKING:
    from memtend.storage.store import Storage

__all__ = ["FOLDED", "FOLD_AFTER", "FOLD_MIN_CLAIMS", "compaction", "expand"]

FOLD_AFTER = 300.0  # seconds: a claim this old is folded by compaction (no write in flight is older)
FOLD_MIN_CLAIMS = 2  # a key is folded once it has this many foldable claims (one claim reads as fast as a slot)

FOLDED = fact_claims.FOLDED


def expand(storage: Storage, change: Change, t: float, *, shared: bool = False) -> Change:
    """``change`` with its fact keys' rows named (see the module docstring); ``t``: when it is written;
    ``shared``: other processes write the store (a fold keeping the key's value leaves recent claims as claims)."""
    if change.erase or change.folded:
        return change
    written = {r.id for r in (*change.upserts, *change.archives) if r.id.startswith(fact_claims.SLOT_PREFIX)}
    deleted = {rid for rid in change.deletes if rid.startswith(fact_claims.SLOT_PREFIX)}
    pruned = {fact_claims.key_of(rid) or rid for rid in change.deletes if fact_claims.is_claim(rid)}
    fids = sorted(written | deleted | pruned)
    if not fids:
        return change
    rows, raw = storage.key_rows(change.user_id, fids, with_embeddings=True)
    vectors = dict(zip([r.id for r in rows], raw, strict=True)) if raw else {}
    checkpoints = {r.id: r for r in rows if r.id in fids}
    claims: dict[str, list[Record]] = {fid: [] for fid in fids}
    for r in rows:
        fid = fact_claims.key_of(r.id)
        if fid is not None and r.id != fid and fid in claims:
            claims[fid].append(r)
    deletes: list[str] = []
    for rid in change.deletes:
        if rid in deleted:  # the key: every row of it
            deletes += [rid, *(c.id for c in claims.get(rid, []))]
        elif fact_claims.is_claim(rid) and rid.endswith(":" + fact_claims.CHECKPOINT_WRITE):
            # a replaced checkpoint's value: the slot row, which the fold below rewrites with the key's value
            # instead whenever the key has active claims (and a replaced checkpoint has: the one that replaced it)
            fid = fact_claims.key_of(rid) or rid
            if not any(c.status is Status.ACTIVE for c in claims.get(fid, [])):
                deletes.append(fid)
            deletes.append(rid)  # no row: named so the history forgets its value (memtend.policies.history_scrub)
        else:
            deletes.append(rid)
    gone = set(deletes)
    upserts: list[Record] = []
    archives: list[Record] = []
    new_vectors = dict(change.vectors)
    for r in change.archives:
        if r.id in written and r.id not in gone:  # the value as readers saw it, archived: written to the slot row
            upserts.append(r)
            vector = _value_vector(r, claims[r.id], vectors)
            if vector is not None:
                new_vectors[r.id] = vector
        else:
            archives.append(r)
    history = list(change.history)
    for fid in fids:
        active = [c for c in claims[fid] if c.status is Status.ACTIVE]
        if fid in deleted or not active:
            continue
        if shared and fid not in written:
            active = _settled(fid, active, checkpoints.get(fid), gone, t - FOLD_AFTER)
            if not active:
                continue
        folded, entries = _fold(fid, active, checkpoints.get(fid), vectors, t, keep_value=fid not in written)
        folded = [
            (r, v) for r, v in folded if not _replaced_checkpoint(r) or fact_claims.checkpoint_value_id(fid) not in gone
        ]
        history = [*entries, *history]
        _place(folded, upserts, archives, new_vectors, gone)  # what the change deletes itself stays out
    return replace(
        change,
        upserts=(*change.upserts, *upserts),
        archives=tuple(archives),
        deletes=tuple(dict.fromkeys(deletes)),
        vectors=new_vectors,
        history=tuple(history),
        fresh=False,
    )


def compaction(storage: Storage, user_id: str, before: float, t: float) -> Change | None:
    """The fold of the user's fact keys holding at least ``FOLD_MIN_CLAIMS`` active claims written before
    ``before`` (the review/forget cycle's compaction; see the module docstring), as one change (one Chroma call
    when it fits in a batch); None when no key needs it. Claims written since stay active and replay after the
    checkpoint, so the key reads the same."""
    counts: dict[str, int] = {}
    for record in storage.claim_stamps(user_id):
        rid = record.id
        if record.status is Status.ACTIVE and record.updated_at < before:
            fid = fact_claims.key_of(rid)
            assert fid is not None
            counts[fid] = counts.get(fid, 0) + 1
    fids = sorted(fid for fid, n in counts.items() if n >= FOLD_MIN_CLAIMS)
    if not fids:
        return None
    rows, raw = storage.key_rows(user_id, fids, with_embeddings=True)
    vectors = dict(zip([r.id for r in rows], raw, strict=True)) if raw else {}
    upserts: list[Record] = []
    archives: list[Record] = []
    new_vectors: dict[str, np.ndarray] = {}
    history: list[HistoryEntry] = []
    for fid in fids:
        prefix = [
            r
            for r in rows
            if r.id != fid and fact_claims.key_of(r.id) == fid and r.status is Status.ACTIVE and r.updated_at < before
        ]
        checkpoint = next((r for r in rows if r.id == fid), None)
        folded, entries = _fold(fid, prefix, checkpoint, vectors, t, keep_value=True)
        history += entries
        _place(folded, upserts, archives, new_vectors)
    return Change(
        user_id,
        upserts=tuple(upserts),
        vectors=new_vectors,
        archives=tuple(archives),
        history=tuple(history),
        folded=True,
    )


def _settled(fid: str, active: list[Record], checkpoint: Record | None, gone: set[str], before: float) -> list[Record]:
    """The claims a fold on a shared store may fold (see the module docstring): those written before ``before``,
    and those up to the claim that replaced a value the change deletes."""
    resolved = fact_claims.resolve(
        active[0].user_id, active[0].key, [fact_claims.claim_of(c) for c in active], checkpoint=checkpoint
    )
    # a replaced value is presented archived at the time it was replaced: its replacing claim's write time
    through = max((r.updated_at for r in resolved.superseded if r.id in gone), default=before)
    return [c for c in active if c.updated_at < before or c.updated_at <= through]


def _fold(
    fid: str,
    active: list[Record],
    checkpoint: Record | None,
    vectors: dict[str, np.ndarray],
    t: float,
    *,
    keep_value: bool,
) -> tuple[list[tuple[Record, np.ndarray | None]], list[HistoryEntry]]:
    """The rows folding a key's active claims into its checkpoint: (record, vector to write it with; None: its
    metadata rewritten in place) and the history entries they derived. ``keep_value``: write the resolved value to
    the slot row (else the change writes the slot row itself)."""
    resolved = fact_claims.resolve(
        active[0].user_id, active[0].key, [fact_claims.claim_of(c) for c in active], checkpoint=checkpoint
    )
    shown = {r.id: r for r in resolved.superseded}
    out: list[tuple[Record, np.ndarray | None]] = []
    for c in active:
        if c.id in shown:  # a replaced value: archived as the archive shows it
            out.append((shown[c.id], None))
        else:  # its value is the checkpoint's now, or it never was a value: left out by readers
            hidden = archived(c, fid, t)
            out.append((replace(hidden, extra={**hidden.extra, ARCHIVED_FROM: FOLDED}), None))
    replaced_checkpoint = shown.get(fact_claims.checkpoint_value_id(fid))
    if replaced_checkpoint is not None and checkpoint is not None and fid in vectors:
        kept = replace(
            replaced_checkpoint, id=fact_claims.claim_id_of(fid, f"{fact_claims.CHECKPOINT_WRITE}-{new_id()}")
        )
        out.append((kept, vectors[fid]))
    if keep_value and resolved.current is not None and resolved.winner is not None:
        winner = fact_claims.claim_id_of(fid, resolved.winner)
        current = replace(resolved.current)
        out.append((current, vectors.get(winner)))
    return out, list(resolved.entries)


def _place(
    folded: list[tuple[Record, np.ndarray | None]],
    upserts: list[Record],
    archives: list[Record],
    vectors: dict[str, np.ndarray],
    skip: set[str] | frozenset[str] = frozenset(),
) -> None:
    """A fold's rows into the change: a row with a vector (the key's value) is upserted with it, one without joins
    the archives (its metadata rewritten in place); rows named in ``skip`` are left out."""
    for record, vector in folded:
        if record.id in skip:
            continue
        if vector is not None:
            upserts.append(record)
            vectors[record.id] = vector
        else:
            archives.append(record)


def _replaced_checkpoint(record: Record) -> bool:
    return fact_claims.write_id_of(record.id).startswith(fact_claims.CHECKPOINT_WRITE + "-")


def _value_vector(value: Record, claims: list[Record], vectors: dict[str, np.ndarray]) -> np.ndarray | None:
    """The stored vector of the row holding a key's value as readers saw it (its winning claim, or the slot row)."""
    holder = value.row_id if value.row_id in vectors else value.id
    found = vectors.get(holder)
    if found is None:  # the value as one of the claims holds it
        found = next((vectors[c.id] for c in claims if c.value == value.value and c.id in vectors), None)
    return found
