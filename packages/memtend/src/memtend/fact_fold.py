"""A change that writes or deletes a fact key as readers see it (its current value, id ``fact_id``: forget,
retire, delete, purge) turned into the rows that hold the key (see :mod:`memtend.fact_claims`), read just before
the write:

- writing the key's value (archiving it, rewriting it) folds the key into its checkpoint: the slot row
  ``fact:<hash>`` is written with the value as the change has it, and every claim still active is rewritten as
  archived (superseded by the fact id), with the history entries those claims derived stored as one history row,
  all in the change's one Chroma call;
- deleting the key deletes every row of it: its checkpoint and all its claims (the value a claim replaced
  included); deleting a replaced checkpoint's value (presented under ``fv:<hash>:checkpoint``) deletes the slot row.

A change naming no fact id is returned as it is, with no read.
"""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING

import numpy as np

from memtend import fact_claims
from memtend.policies.changes import Change, archived
from memtend.records import Record, Status

if TYPE_CHECKING:
    from memtend.storage import Storage

__all__ = ["expand"]


def _slot_ids(change: Change) -> set[str]:
    ids = [r.id for r in (*change.upserts, *change.archives)] + list(change.deletes)
    out = set()
    for rid in ids:
        if rid.startswith(fact_claims.SLOT_PREFIX) or (
            fact_claims.is_claim(rid) and rid.endswith(":" + fact_claims.CHECKPOINT_WRITE)
        ):
            out.add(rid)
    return out


def expand(storage: Storage, change: Change, t: float) -> Change:
    """``change`` with its fact keys' rows named (see the module docstring); ``t``: when it is written."""
    named = _slot_ids(change)
    if not named or change.erase:
        return change
    fids = sorted({fact_claims.key_of(rid) or rid for rid in named})
    rows, raw = storage.key_rows(change.user_id, fids, with_embeddings=True)
    vectors = dict(zip([r.id for r in rows], raw, strict=True)) if raw else {}
    claims: dict[str, list[Record]] = {fid: [] for fid in fids}
    for r in rows:
        fid = fact_claims.key_of(r.id)
        if fid is not None and r.id != fid:
            claims[fid].append(r)
    deletes: list[str] = []
    for rid in change.deletes:
        if rid.startswith(fact_claims.SLOT_PREFIX):  # the key: every row of it
            deletes += [rid, *(c.id for c in claims.get(rid, []))]
        elif rid in named:  # a replaced checkpoint's value: the slot row
            deletes.append(fact_claims.key_of(rid) or rid)
        else:
            deletes.append(rid)
    deleted = set(deletes)
    upserts = list(change.upserts)
    archives: list[Record] = []
    new_vectors = dict(change.vectors)
    folded: list[Record] = []
    history = list(change.history)
    for r in change.archives:
        if r.id in fids and r.id not in deleted:  # the value as readers saw it, archived: written to the slot row
            upserts.append(r)
            vector = _value_vector(r, claims[r.id], vectors)
            if vector is not None:
                new_vectors[r.id] = vector
        else:
            archives.append(r)
    for r in upserts:
        if r.id in fids and r.id not in deleted:
            folded += [c for c in claims[r.id] if c.status is Status.ACTIVE]
    if folded:
        checkpoints = {r.id: r for r in rows if r.id in fids}
        for fid in {fact_claims.key_of(c.id) for c in folded}:
            assert fid is not None
            mine = [c for c in folded if fact_claims.key_of(c.id) == fid]
            resolved = fact_claims.resolve(
                change.user_id, mine[0].key, [fact_claims.claim_of(c) for c in mine], checkpoint=checkpoints.get(fid)
            )
            history = [*resolved.entries, *history]
        archives += [archived(c, fact_claims.key_of(c.id) or "", t) for c in folded]
    return replace(
        change,
        upserts=tuple(upserts),
        archives=tuple(archives),
        deletes=tuple(dict.fromkeys(deletes)),
        vectors=new_vectors,
        history=tuple(history),
        fresh=False,
    )


def _value_vector(value: Record, claims: list[Record], vectors: dict[str, np.ndarray]) -> np.ndarray | None:
    """The stored vector of the row holding a key's value as readers saw it (its winning claim, or the slot row)."""
    holder = value.row_id if value.row_id in vectors else value.id
    found = vectors.get(holder)
    if found is None:  # the value as one of the claims holds it
        found = next((vectors[c.id] for c in claims if c.value == value.value and c.id in vectors), None)
    return found
