"""Read-time fact precedence (memtend.consistency.claims): replaying a key's writes in write order gives
what the slot design gives applying them one after another (outcomes, current value, history operations), and
racing writes in any order never leave a guess over the user's value."""

from __future__ import annotations

import itertools
import random
from dataclasses import replace

import numpy as np
import pytest
from memtend.consistency.claims import Claim, claim_id, present, resolve, select
from memtend.policies import changes
from memtend.policies.precedence import FactOutcome, fact_text
from memtend.records import Kind, Record, Source, Status, fact_id

USER = "ada"
KEY = "contact.method"
SOURCES = [Source.USER, Source.TOOL, Source.AGENT, Source.INFERRED]
VALUES = ["email", "EMAIL ", "phone", "sms", "slack"]


def _candidate(value: str, source: Source, said: float) -> Record:
    return Record(
        id=f"c{said}",
        user_id=USER,
        kind=Kind.FACT,
        text=fact_text(KEY, value),
        source=source,
        key=KEY,
        value=value,
        created_at=said,
        updated_at=said,
        last_used_at=said,
    )


def _slot_design(
    writes: list[tuple[str, Source, float, bool, float]],
) -> tuple[list[FactOutcome], Record | None, list[str], list[tuple[str, Source, float]]]:
    """What the slot design does with the writes applied one after another: outcomes, the slot, history ops, and
    the archive (value, source, archived at) of the values it replaced."""
    slot: Record | None = None
    outcomes, ops, archive = [], [], []
    for value, source, said, backdated, t in writes:
        result, change = changes.fact(
            USER, _candidate(value, source, said), slot, np.zeros(4), t, said_at=said if backdated else None
        )
        outcomes.append(result.outcome)
        if result.outcome is FactOutcome.UNCHANGED and slot is not None:  # a restatement is a use of the value
            slot = replace(slot, last_used_at=max(slot.last_used_at, t))  # (it extends a scoped fact's window)
        ops += [h.op for h in change.history]
        for r in change.upserts:
            if r.id == fact_id(USER, KEY):
                slot = r
            elif r.status is Status.ARCHIVED:
                archive.append((r.value, r.source, r.updated_at))
    return outcomes, slot, ops, archive


def _claims(writes: list[tuple[str, Source, float, bool, float]]) -> list[Claim]:
    return [
        Claim(_candidate(value, source, said), f"w{n:04d}", t, backdated)
        for n, (value, source, said, backdated, t) in enumerate(writes)
    ]


@pytest.mark.parametrize("seed", range(200))
def test_replaying_writes_in_order_gives_what_the_slot_design_gives(seed: int) -> None:
    rng = random.Random(seed)
    writes = []
    t = 1_000.0
    for _ in range(rng.randint(1, 8)):
        t += rng.choice([1.0, 5.0, 30.0])
        backdated = rng.random() < 0.25
        said = t - rng.choice([0.5, 10.0, 100.0]) if backdated else t
        writes.append((rng.choice(VALUES), rng.choice(SOURCES), said, backdated, t))
    outcomes, slot, ops, archive = _slot_design(writes)
    claims = _claims(writes)
    resolved = resolve(USER, KEY, list(reversed(claims)))  # stored order does not matter: write order does
    assert [resolved.outcomes[c.write_id] for c in claims] == outcomes
    assert [e.op for e in resolved.entries] == ops
    assert resolved.current is not None and slot is not None
    assert (resolved.current.value, resolved.current.source, resolved.current.id) == (slot.value, slot.source, slot.id)
    assert (resolved.current.created_at, resolved.current.updated_at) == (slot.created_at, slot.updated_at)
    assert resolved.current.snapshot() == slot.snapshot()
    assert all(e.record_id == fact_id(USER, KEY) for e in resolved.entries)
    # the archive is exactly the slot design's: each value that was current and was replaced, archived when it was
    # replaced, pointing at the fact; a kept or unchanged write was never a value (it shows in the history only)
    shown = sorted((r.value, r.source, r.updated_at) for r in resolved.superseded)
    assert shown == sorted(archive)
    assert all(r.status is Status.ARCHIVED and r.superseded_by == fact_id(USER, KEY) for r in resolved.superseded)
    assert len(resolved.superseded) == ops.count("update"), "one archived value per replaced value"
    assert resolved.winner in {c.write_id for c in claims}, "exactly one write holds the current value"


@pytest.mark.parametrize("guess", [Source.TOOL, Source.AGENT, Source.INFERRED])
def test_racing_writes_in_any_order_never_leave_a_guess_over_the_user(guess: Source) -> None:
    writes = [("Lisbon", Source.USER), ("Porto", guess), ("Faro", guess), ("Braga", Source.INFERRED)]
    for order in itertools.permutations(range(len(writes))):
        claims = [
            Claim(_candidate(writes[i][0], writes[i][1], 10.0 + n), f"w{i}", 10.0 + n) for n, i in enumerate(order)
        ]
        current = resolve(USER, KEY, claims).current
        assert current is not None and current.value == "Lisbon" and current.source is Source.USER, order


def test_two_writes_at_the_same_instant_resolve_alike_everywhere() -> None:
    a = Claim(_candidate("tea", Source.USER, 5.0), "a" * 32, 5.0)
    b = Claim(_candidate("coffee", Source.USER, 5.0), "b" * 32, 5.0)
    one, other = resolve(USER, KEY, [a, b]), resolve(USER, KEY, [b, a])
    assert one.current == other.current and one.current is not None and one.current.value == "coffee"


def test_pending_writes_take_no_part_and_a_claim_id_names_its_key() -> None:
    pending = Claim(replace(_candidate("evil", Source.EXTERNAL, 2.0), status=Status.PENDING_REVIEW), "p", 2.0)
    user = Claim(_candidate("good", Source.USER, 1.0), "u", 1.0)
    resolved = resolve(USER, KEY, [pending, user])
    assert resolved.current is not None and resolved.current.value == "good"
    assert "p" not in resolved.outcomes and resolved.superseded == ()
    assert claim_id(USER, KEY, "w1").split(":")[1] == fact_id(USER, KEY).split(":")[1]
    assert claim_id(USER, KEY, "w1") != claim_id(USER, "other.key", "w1") != claim_id("bob", KEY, "w1")


# ------------------------------------------------------------------------------------------ presenting stored rows
def _claim_row(value: str, source: Source, written: float, write_id: str, **fields: object) -> Record:
    return replace(
        _candidate(value, source, written),
        id=claim_id(USER, KEY, write_id),
        created_at=written,
        updated_at=written,
        **fields,  # type: ignore[arg-type]
    )


def test_a_slot_row_of_an_earlier_version_is_the_checkpoint_and_claims_replay_after_it() -> None:
    fid = fact_id(USER, KEY)
    slot = replace(_candidate("email", Source.USER, 1.0), id=fid)
    note = Record(id="n1", user_id=USER, kind=Kind.NOTE, text="a note")
    rows = [note, _claim_row("phone", Source.AGENT, 5.0, "g"), slot, _claim_row("sms", Source.USER, 9.0, "u")]
    shown = present(rows)
    by_id = {r.id: (r, n) for r, n in shown}
    assert shown[0][0].id == "n1", "other rows pass as they are, in read order"
    current, row = by_id[fid]
    assert (current.value, current.status, current.created_at, current.updated_at) == ("sms", Status.ACTIVE, 1.0, 9.0)
    assert row == 3 and current.row_id == claim_id(USER, KEY, "u"), "its vector is the winning claim's row"
    old = by_id[fid.replace("fact:", "fv:") + ":checkpoint"][0]
    assert (old.value, old.status, old.superseded_by, old.updated_at) == ("email", Status.ARCHIVED, fid, 9.0)
    assert claim_id(USER, KEY, "g") not in by_id, "the kept guess was never a value: not in the archive"
    assert len(shown) == 3
    picked = select(shown, [claim_id(USER, KEY, "u")])
    assert [r.id for r, _ in picked] == [fid], "the winning claim's id reads as the fact"
    assert select(shown, [claim_id(USER, KEY, "g")]) == []


def test_a_restored_row_and_folded_claims_stay_out_of_the_archive() -> None:
    fid = fact_id(USER, KEY)
    first = _claim_row("email", Source.USER, 1.0, "a")
    second = _claim_row("phone", Source.USER, 2.0, "b")
    restore = _claim_row("email", Source.USER, 3.0, "restore-c", derived_from=[first.id])
    folded = _claim_row("pager", Source.AGENT, 0.5, "d", status=Status.ARCHIVED, extra={"archived_from": "folded"})
    shown = {r.id: r for r, _ in present([first, second, restore, folded])}
    assert shown[fid].value == "email" and shown[fid].derived_from == []
    assert set(shown) == {fid, second.id}, "the restored-from row and the folded claim are not shown"
    assert shown[second.id].status is Status.ARCHIVED and shown[second.id].updated_at == 3.0
