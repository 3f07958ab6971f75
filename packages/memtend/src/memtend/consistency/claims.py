"""Fact precedence resolved when facts are read: the stored rows of a key (its claims, its checkpoint) and how every
reader presents them (the slot record, the archive, the derived history).

Why: on a store other processes may write (a ``chroma run`` server, an in-process client without the folder lock),
a ``set_fact`` that reads its key before writing needs three Chroma reads (the key's writes before, the slot with
its vector, the key's writes after) and an upsert of three rows and a change mark; those reads are most of what
such a write costs beyond a plain add, and the extra rows the rest (``tests/benchmarks/single_write.py`` times
each part).

What is built: every ``set_fact`` is ONE write of ONE new row (a "claim"); on a shared store it reads nothing;
precedence is a pure function of a key's rows, applied by every reader.

Rows
  A claim: id ``fv:<the key's 40-hex hash, as fact_id>:<write id>``, new by construction (added where this process
  holds the folder lock; upserted with the change mark on a shared store). Metadata as any record (``user_id``,
  ``last_used_at``, ``r`` packed; a ``set`` keeps its creation entry ``h`` as ``remember``'s row does: entry id =
  write id, op ``set``) plus ONE top-level field ``fk`` = ``fact_id(user, key)``, so a key's claims are one
  where-read. When it was written is the record's ``updated_at`` (stamped by the writer); when it was said its
  ``created_at`` (they differ only for a back-dated value, ``at=``). A claim written by ``approve`` or ``restore``
  names its operation in its write id (``approve-<id>``, ``restore-<id>``). Its vector is the fact text's.
  The key's slot row ``fact:<hash>`` is its checkpoint: written by a fold (below), or by an earlier version of
  memtend (a store written before reads as it did, with no migration pass: its slot row is the checkpoint, its
  archived values and history rows stand).

Resolution (``resolve``): the checkpoint's value (when active) is where a replay starts; the key's ACTIVE claims
follow in WRITE order (written-at, then write id: every process orders them alike), each through
``precedence.decide_fact`` with its said-at when back-dated, exactly as the slot design applied them one after the
other (added / updated / unchanged / kept; the unit property test replays 200 random sequences against the slot
design's planner). A ``restore`` claim takes the key whatever precedence says. Hence:
  - a guess never stays over the user's value, whatever order racing writes land in, with no read-check-write;
  - the newest value of equal standing wins; a back-dated value said before the current one was set is kept out;
  - the current value is presented as the slot record (id ``fact_id``, created at its first add, updated at its
    last update; ``Record.row_id`` names the claim holding it), so every public id, ``get(fid)``, ``delete(fid)``
    and ``history(fid)`` keep their meaning;
  - the archive is the slot design's: each value that was current and was replaced, presented ARCHIVED under its
    claim's id, ``superseded_by`` = fact id, archived when it was replaced (a checkpoint value replaced by a claim
    under ``fv:<hash>:checkpoint``); a kept or unchanged write never was a value and shows in the history only; the
    row a ``restore`` claim brought back (``derived_from``) leaves the archive;
  - history is derived: add / update / kept / restore entries (before/after as the slot design wrote them, entry id =
    the claim's write id); a checkpoint's stored history (history rows, entries kept in rows) comes with them.

Readers: ``Storage.get_records`` presents every read (a read by id of a fact id or claim id reads the whole key:
its slot row by id, its claims by ``fk``, two gets), and so ``get_fact``, ``facts``/profile, ``list``, export,
``get``/``history``/``restore``/``approve``/``delete``, forgetting, purging, stats and the per-user index (a
superseded claim is archived, so never indexed: recall never shows a losing guess) read keys resolved. The catch-up
of the index compares presented records (``record_stamps``); a claim this process wrote without knowing what it
did (a shared store) marks its key stale in the index, re-read on the index's next use.

Outcome: where this process holds the folder lock, each key as it stands is cached (``memtend.consistency.slots``; read
once when not known) and updated by the process's own writes: ``FactResult`` is exact at once with no read, and a
value that changes nothing is not written. On a shared store ``FactResult`` is resolved lazily (one read of the
key, when first asked for); a change hook is told what the write did (read at once, only when a hook is set).

Folding (``memtend.consistency.fold``): a change that writes the fact id (forget, retire) or deletes an archived value
of the key (purge, delete) folds the key's active claims into its checkpoint in the same Chroma call: the slot row
rewritten with the value, the claims rewritten archived (replaced values as the archive shows them, the others
marked ``folded`` and left out by readers), the entries they derived stored as one history row; ``forget`` also
folds every key holding two or more claims older than ``fold.FOLD_AFTER`` (compaction; later claims replay
after the checkpoint), and ``purge`` deletes folded claims past the grace period. Deleting the fact id deletes
every row of the key. Erasure deletes every row of the user (claims, checkpoints, archives) as before. On a shared
store a fold keeping the key's value folds only claims older than ``FOLD_AFTER`` (and those up to the one that
replaced a value it deletes), so a write stamped earlier but landing after the fold still replays in write order
(``memtend.consistency.fold`` says what is left).

All-or-nothing under SIGKILL: a claim is one row in one call; a fold is one call (Chroma applies one call as one
transaction), a fold with deletions is journaled as every multi-call change is.

The invariants this keeps between processes: docs/consistency.md."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field, replace

from memtend.policies.precedence import FactOutcome, decide_fact
from memtend.records import Record, Status, fact_id
from memtend.results import HistoryEntry

__all__ = [
    "CLAIM_PREFIX",
    "Claim",
    "Presented",
    "Resolved",
    "claim_id",
    "claim_of",
    "is_claim",
    "key_of",
    "present",
    "resolve",
    "select",
]

CLAIM_PREFIX = "fv:"
SLOT_PREFIX = "fact:"
FACT_KEY_FIELD = "fk"  # the top-level metadata field naming a claim's key (its fact id): one where-read per key
CHECKPOINT_WRITE = "checkpoint"  # the write id under which a replaced checkpoint's value is presented archived
FOLDED = "folded"  # ``archived_from`` of a claim folded into its checkpoint whose value is not in the archive
FORCED_OPS = frozenset({"restore"})  # claim operations that take the key whatever precedence says


def claim_id(user_id: str, key: str, write_id: str) -> str:
    """The id of one write of a fact key: the key's hash (as ``fact_id``'s) and the write's own id."""
    digest = hashlib.sha256(json.dumps([user_id, key]).encode()).hexdigest()[:40]
    return f"{CLAIM_PREFIX}{digest}:{write_id}"


def is_claim(record_id: str) -> bool:
    return record_id.startswith(CLAIM_PREFIX)


def key_of(record_id: str) -> str | None:
    """The fact id (``fact:<hash>``) of a claim id or a slot id; None for any other record."""
    if record_id.startswith(SLOT_PREFIX):
        return record_id
    if record_id.startswith(CLAIM_PREFIX):
        digest = record_id[len(CLAIM_PREFIX) :].split(":", 1)[0]
        return SLOT_PREFIX + digest
    return None


def checkpoint_value_id(fid: str) -> str:
    """The id a replaced checkpoint's value is presented under in the archive (its row keeps the fact id)."""
    return claim_id_of(fid, CHECKPOINT_WRITE)


def claim_id_of(fid: str, write_id: str) -> str:
    """The claim id of a key's write."""
    return f"{CLAIM_PREFIX}{fid[len(SLOT_PREFIX) :]}:{write_id}"


def write_id_of(record_id: str) -> str:
    return record_id.rsplit(":", 1)[-1]


@dataclass(frozen=True)
class Claim:
    """One stored write of a fact key: the value as written (``record``: key, value, text, source, status, and
    ``created_at`` = when it was said), its write id, when it was written, whether it was back-dated (``at=``)."""

    record: Record
    write_id: str
    written_at: float
    backdated: bool = False
    op: str = "set"


def claim_of(record: Record) -> Claim:
    """The claim a stored claim row holds: written at its ``updated_at``; back-dated when said at another time
    (``created_at``; only a ``set`` can be); its operation is named in its write id (``<op>-<id>``: ``approve``,
    ``restore``, which takes the key whatever precedence says, as restoring an archived value always did; a bare id
    is a ``set``), so a claim says what it is in its one row, whatever else its write stored."""
    write_id = write_id_of(record.id)
    op = write_id.split("-", 1)[0] if "-" in write_id else "set"
    return Claim(
        record=record,
        write_id=write_id,
        written_at=record.updated_at,
        backdated=op == "set" and record.created_at != record.updated_at,
        op=op,
    )


@dataclass(frozen=True)
class Resolved:
    """A key's claims resolved: the current value (as the slot record, id ``fact_id``), the derived history, what
    each write did, and the values that were current and were replaced (presented archived, as the slot design
    archived them; a kept or unchanged write was never a value of the key: it shows only in the history)."""

    current: Record | None
    entries: tuple[HistoryEntry, ...]
    outcomes: dict[str, FactOutcome]
    superseded: tuple[Record, ...]
    winner: str | None = None  # the write id holding the current value (None: the checkpoint, or no value)
    reasons: dict[str, str] = field(default_factory=dict)  # why each write did what it did (precedence's words)


def resolve(user_id: str, key: str, claims: Sequence[Claim], *, checkpoint: Record | None = None) -> Resolved:
    """Replay a key's claims in write order through precedence (see the module docstring), after its checkpoint
    (the key's slot row, when it has one: its value, if active, is where the replay starts)."""
    fid = fact_id(user_id, key)
    current: Record | None = checkpoint if checkpoint is not None and checkpoint.status is Status.ACTIVE else None
    winner: str | None = None  # the write id of the claim holding the current value
    entries: list[HistoryEntry] = []
    outcomes: dict[str, FactOutcome] = {}
    reasons: dict[str, str] = {}
    replaced_at: dict[str | None, float] = {}  # write id (None: the checkpoint) -> when its value was replaced
    for claim in sorted(claims, key=lambda c: (c.written_at, c.write_id)):
        r = claim.record
        if r.status is not Status.ACTIVE:
            continue
        if claim.op in FORCED_OPS:
            outcome = FactOutcome.UPDATED if current is not None else FactOutcome.ADDED
            reasons[claim.write_id] = "restored"
        else:
            said_at = r.created_at if claim.backdated else None
            decision = decide_fact(current, r.value, r.source, said_at=said_at)
            outcome = decision.outcome
            reasons[claim.write_id] = decision.reason
        outcomes[claim.write_id] = outcome
        if outcome is FactOutcome.UNCHANGED:  # a restatement: a use of the value (it extends a scoped window)
            assert current is not None
            if claim.written_at > current.last_used_at:
                current = replace(current, last_used_at=claim.written_at)
            continue
        if outcome is FactOutcome.KEPT:
            assert current is not None
            snap = current.snapshot()
            entries.append(_entry(claim, user_id, fid, "kept", snap, snap))
            continue
        forced = claim.op in FORCED_OPS
        op = "restore" if forced else ("add" if current is None else "update")
        if current is None:
            new = _as_slot(r, fid, r.created_at, r.updated_at if forced else r.created_at)
            if claim.op == "set" and checkpoint is not None and checkpoint.status is not Status.ACTIVE:
                new = replace(new, created_at=checkpoint.created_at)  # a forgotten fact keeps its creation time
            entries.append(_entry(claim, user_id, fid, op, None, new.snapshot()))
        else:
            new = _as_slot(r, fid, r.created_at if forced else current.created_at, claim.written_at)
            entries.append(_entry(claim, user_id, fid, op, current.snapshot(), new.snapshot()))
            replaced_at[winner] = claim.written_at
        current, winner = new, claim.write_id
    superseded = [
        replace(
            c.record,
            status=Status.ARCHIVED,
            superseded_by=fid,
            updated_at=replaced_at.get(c.write_id, c.written_at),
            derived_from=[],
        )
        for c in claims
        if c.write_id != winner and c.write_id in replaced_at and c.record.status is Status.ACTIVE
    ]
    if checkpoint is not None and winner is not None:  # the checkpoint's value, replaced by a claim
        was = checkpoint
        if was.status is Status.ACTIVE:
            was = replace(was, status=Status.ARCHIVED, superseded_by=fid, updated_at=replaced_at.get(None, 0.0))
        superseded.append(replace(was, id=checkpoint_value_id(fid)))
    return Resolved(current, tuple(entries), outcomes, tuple(superseded), winner, reasons)


def _as_slot(r: Record, fid: str, created_at: float, updated_at: float) -> Record:
    return replace(
        r,
        id=fid,
        status=Status.ACTIVE,
        superseded_by="",
        created_at=created_at,
        updated_at=updated_at,
        derived_from=[],
    )


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


# ---------------------------------------------------------------------------------------------------- presenting
@dataclass
class _Group:
    fid: str
    first: int  # where the key's first row was read (its presented rows take that place)
    checkpoint: tuple[Record, int] | None = None
    claims: list[tuple[Record, int]] | None = None
    archived: list[tuple[Record, int]] | None = None  # claims folded into the checkpoint (stored archived)


Presented = tuple[Record, int]  # a record as readers see it, and the index of the stored row holding its vector


def present(rows: Sequence[Record]) -> list[Presented]:
    """The records readers see for stored rows (in read order): a key's claims and checkpoint resolved into its
    current value (id ``fact_id``) and its archive (claims not current, archived; folded claims as stored);
    every other row as it is. Each comes with the index of the row whose vector it has."""
    groups: dict[str, _Group] = {}
    out: list[Presented | _Group] = []
    for n, record in enumerate(rows):
        fid = key_of(record.id)
        if fid is None:
            out.append((record, n))
            continue
        group = groups.get(fid)
        if group is None:
            group = groups[fid] = _Group(fid, n, claims=[], archived=[])
            out.append(group)
        if record.id == fid:
            group.checkpoint = (record, n)
        elif record.status is Status.ACTIVE:
            assert group.claims is not None
            group.claims.append((record, n))
        elif record.extra.get("archived_from") != FOLDED:  # folded, its value not an archived one: left out
            assert group.archived is not None
            group.archived.append((record, n))
    presented: list[Presented] = []
    for item in out:
        if isinstance(item, _Group):
            presented.extend(_present_group(item))
        else:
            presented.append(item)
    # a value restored by a claim lives on in that claim: the archived row it was restored from leaves the archive
    # (folded into a checkpoint since, or replaced in its turn, the restoring claim still stands for that value)
    # (a forgotten key is restored from its archived checkpoint, named by the fact id: that value leaves the archive,
    # and the key's current value, presented under the same id, stays)
    restored = {
        checkpoint_value_id(d) if d == key_of(r.id) else d
        for r in rows
        if is_claim(r.id) and write_id_of(r.id).startswith("restore-")
        for d in r.derived_from
    }
    return [p for p in presented if p[0].id not in restored] if restored else presented


def _present_group(group: _Group) -> list[Presented]:
    claims = group.claims or []
    archived = list(group.archived or [])
    if not claims:  # a legacy slot, or a checkpoint with nothing written since: as stored
        return ([group.checkpoint] if group.checkpoint is not None else []) + archived
    row_of = {write_id_of(r.id): n for r, n in claims}
    sample = claims[0][0]
    checkpoint = group.checkpoint[0] if group.checkpoint is not None else None
    resolved = resolve(sample.user_id, sample.key, [claim_of(r) for r, _ in claims], checkpoint=checkpoint)
    out: list[Presented] = []
    if resolved.current is not None:
        if resolved.winner is None:
            assert group.checkpoint is not None
            out.append(group.checkpoint)
        else:
            current = _row_free(resolved.current, checkpoint)
            current.row_id = claim_id_of(group.fid, resolved.winner)
            out.append((current, row_of[resolved.winner]))
    for record in resolved.superseded:
        if record.id == checkpoint_value_id(group.fid):
            assert group.checkpoint is not None
            out.append((record, group.checkpoint[1]))
        else:
            out.append((record, row_of[write_id_of(record.id)]))
    return out + archived


def _row_free(current: Record, checkpoint: Record | None) -> Record:
    """The current value as the slot record: no creation entry of its own (it is derived), and the metadata keys
    of the slot row when one is stored (so a write of the slot clears what the new version lacks)."""
    out = replace(current)
    out.origin = None
    out.stored_keys = checkpoint.stored_keys if checkpoint is not None else frozenset()
    out.stored_document = checkpoint.stored_document if checkpoint is not None else False
    return out


def select(presented: Sequence[Presented], ids: Iterable[str]) -> list[Presented]:
    """The presented records asked for by id: the id of the claim holding a key's current value gives the current
    value (id ``fact_id``)."""
    wanted = set(ids)
    out = [p for p in presented if p[0].id in wanted]
    have = {p[0].id for p in out}
    for p in presented:
        if p[0].row_id in wanted and p[0].id not in have:
            out.append(p)
            have.add(p[0].id)
    return out


def history(presented_rows: Sequence[Record]) -> list[HistoryEntry]:
    """The derived history entries of every key among stored rows (their active claims replayed)."""
    groups: dict[str, tuple[Record | None, list[Record]]] = {}
    for record in presented_rows:
        fid = key_of(record.id)
        if fid is None:
            continue
        checkpoint, claims = groups.get(fid, (None, []))
        if record.id == fid:
            checkpoint = record
        elif record.status is Status.ACTIVE:
            claims.append(record)
        groups[fid] = (checkpoint, claims)
    out: list[HistoryEntry] = []
    for checkpoint, claims in groups.values():
        if claims:
            out.extend(
                resolve(claims[0].user_id, claims[0].key, [claim_of(r) for r in claims], checkpoint=checkpoint).entries
            )
    return out
