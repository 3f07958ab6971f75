"""Fact precedence resolved when facts are read (DESIGN + the pure resolver; NOT wired into memtend yet).

Why (measured, ``tests/benchmarks/single_write.py --n 200 --runs 2``, which now times each write's Chroma reads):
on a store other processes may write (a ``chroma run`` server, an in-process client without the folder lock)
``set_fact`` makes three reads (the key's writes before, the slot with its vector, the key's writes after) and one
upsert of three rows and a change mark. At a 1-min load of 3-5 on 2 cores: server ``set_fact`` 1.25-1.46 of the raw
add, its reads 0.32 of the raw add (9.6-10.2 ms); in-process 1.42-1.43, its reads 0.37 (3.3-5.9 ms); ``remember``
(one new row and the mark, no read) 0.87-0.99 on every backend. Written alone (vectors given, no embedding), a
set_fact update's rows cost 2.7 ms more than one new row on the server (37.2 -> 39.9 ms) and 0.6 ms in-process
(2.5 -> 3.1 ms). So the reads are 75-100 % of set_fact's excess over the raw add on the shared stores, the extra
rows the rest, and the fact's longer text (``raw_add_fact``) 0-7 %. On an embedded folder (slots cached, no read)
set_fact is 1.01-1.08 of the raw add, 1.00-1.02 of a raw add of its own text: the archived row of the old value.

The design: every ``set_fact`` is ONE ``add`` of ONE new row (a "claim"), reading nothing; precedence is a pure
function of a key's claims, applied by every reader.

Rows
  A claim: id ``fv:<the key's 40-hex hash, as fact_id>:<write id>`` (new by construction: Chroma's ``add``, the
  write cheaper than an upsert; a replay of a journalled write writes the same id). Metadata as any record
  (``user_id``, ``last_used_at``, ``r`` packed, with its creation entry ``h`` as ``remember``'s row keeps it:
  entry id = write id, op ``set``, source, written-at) plus ONE top-level field ``fk`` = ``fact_id(user, key)``, so
  a key's claims are one where-read (``user_id`` and ``fk``); said-at (``at=``, when given) is the record's
  ``created_at``, kept in ``r``. Its vector is the fact text's embedding (a claim is searchable as the slot row is).
  A store written by earlier versions keeps its slot row ``fact:<hash>`` and its archived values: a slot row
  counts as the key's checkpoint (below), so it reads as before with no migration pass.

Resolution (``resolve``): a key's ACTIVE claims in WRITE order (written-at, then write id: every process orders
them alike) are replayed through ``precedence.decide_fact``, each with its said-at when it was back-dated, exactly
as the slot design applied them one after the other: added / updated / unchanged / kept. Hence:
  - a guess never stays over the user's value, whatever order racing writes land in (the replay of either order
    ends on the user's value: a lower source is ``kept``, a higher one ``updated``), with no read-check-write;
  - the newest value of equal standing wins; a back-dated value said before the current one was set is kept out;
  - the current value is presented as today's slot record (id ``fact_id``, created at its first add, updated at
    its last update), so every public id, ``get(fid)``, ``delete(fid)`` and ``history(fid)`` keep their meaning;
  - superseded claims are the archive (presented ARCHIVED, ``superseded_by`` = fact id): never current, never lost;
  - history is derived: add/update/kept entries (before/after as the slot design wrote them, entry id = the
    claim's write id); an unchanged write leaves no entry (as before). A checkpoint's stored history (history
    rows, entries kept in archived rows) is read as today and comes first.
  - pending (external) claims take no part until approved; approval writes a new claim (op ``approve``).

Outcome without a read: on an embedded folder whose lock this process holds, the key's resolution is cached (as
``FactSlots`` caches slots now) and updated from the process's own writes: exact. On a shared store the outcome
is resolved lazily: ``FactResult.outcome``/``.record`` read the key's claims once when first asked (after the
write, so it tells what really happened, racing writers included); a caller that ignores it pays nothing.

Every reader of facts resolves: ``get_fact`` (one where-read of the key's claims, plus the legacy slot by id on
stores written before), ``facts``/profile and export (group the user's fact rows by key), the per-user index
(recall, conflicts: a key's superseded claims are indexed as archived; a write or a catch-up re-resolves the keys
it touched), ``get``/``history``/``restore`` (a restore writes a new claim, op ``restore``), ``delete(fid)``
(deletes every row of the key: its claims, where ``fk``, and the legacy slot; history scrubbed as now), erasure
(every row carries ``user_id``: unchanged, superseded claims and archives included).

Compaction (the review/forget cycle): claims older than a grace window (no write in flight can be older) fold into
a checkpoint, written in ONE upsert: the key's slot row ``fact:<hash>`` rewritten to the resolved value (its
written-at = the last folded claim's), the derived entries as one history row, the folded claims rewritten as
archived values (or deleted once scrubbed). A claim written after the fold point replays after the checkpoint.

All-or-nothing under SIGKILL: a claim is one row in one call; a fold is one call (Chroma applies one call as one
transaction).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from dataclasses import dataclass, replace

from memtend.policies.precedence import FactOutcome, decide_fact
from memtend.records import Record, Status, fact_id
from memtend.results import HistoryEntry

__all__ = ["Claim", "Resolved", "claim_id", "resolve"]

CLAIM_PREFIX = "fv:"


def claim_id(user_id: str, key: str, write_id: str) -> str:
    """The id of one write of a fact key: the key's hash (as ``fact_id``'s) and the write's own id."""
    digest = hashlib.sha256(json.dumps([user_id, key]).encode()).hexdigest()[:40]
    return f"{CLAIM_PREFIX}{digest}:{write_id}"


@dataclass(frozen=True)
class Claim:
    """One stored write of a fact key: the value as written (``record``: key, value, text, source, status, and
    ``created_at`` = when it was said), its write id, when it was written, whether it was back-dated (``at=``)."""

    record: Record
    write_id: str
    written_at: float
    backdated: bool = False
    op: str = "set"


@dataclass(frozen=True)
class Resolved:
    """A key's claims resolved: the current value (as the slot record, id ``fact_id``), the derived history, what
    each write did, and the claims that are not current (presented archived)."""

    current: Record | None
    entries: tuple[HistoryEntry, ...]
    outcomes: dict[str, FactOutcome]
    superseded: tuple[Record, ...]


def resolve(user_id: str, key: str, claims: Sequence[Claim]) -> Resolved:
    """Replay a key's claims in write order through precedence (see the module docstring)."""
    fid = fact_id(user_id, key)
    current: Record | None = None
    winner: str | None = None  # the write id of the claim holding the current value
    entries: list[HistoryEntry] = []
    outcomes: dict[str, FactOutcome] = {}
    for claim in sorted(claims, key=lambda c: (c.written_at, c.write_id)):
        r = claim.record
        if r.status is not Status.ACTIVE:
            continue
        said_at = r.created_at if claim.backdated else None
        decision = decide_fact(current, r.value, r.source, said_at=said_at)
        outcomes[claim.write_id] = decision.outcome
        if decision.outcome is FactOutcome.UNCHANGED:
            continue
        if decision.outcome is FactOutcome.KEPT:
            assert current is not None
            snap = current.snapshot()
            entries.append(_entry(claim, user_id, fid, "kept", snap, snap))
            continue
        if current is None:
            new = replace(r, id=fid, status=Status.ACTIVE)
            entries.append(_entry(claim, user_id, fid, "add", None, new.snapshot()))
        else:
            new = replace(r, id=fid, status=Status.ACTIVE, created_at=current.created_at, updated_at=claim.written_at)
            entries.append(_entry(claim, user_id, fid, "update", current.snapshot(), new.snapshot()))
        current, winner = new, claim.write_id
    superseded = tuple(
        replace(c.record, status=Status.ARCHIVED, superseded_by=fid)
        for c in claims
        if c.write_id != winner and c.record.status is Status.ACTIVE
    )
    return Resolved(current, tuple(entries), outcomes, superseded)


def _entry(
    claim: Claim, user_id: str, fid: str, op: str, before: dict[str, object] | None, after: dict[str, object] | None
) -> HistoryEntry:
    return HistoryEntry(
        id=claim.write_id,
        user_id=user_id,
        op=op,
        record_id=fid,
        before=before,
        after=after,
        source=claim.record.source.value,
        at=claim.written_at,
    )
