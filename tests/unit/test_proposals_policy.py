"""memtend.policies.proposals, pure: the write mode, which writes become proposals, and the accept planners."""

from __future__ import annotations

import pytest
from memtend.errors import InvalidInputError
from memtend.policies import proposals
from memtend.records import Kind, Record, Source, Status, fact_id


def _note(**fields: object) -> Record:
    base: dict[str, object] = {"id": "n1", "user_id": "alice", "kind": Kind.NOTE, "text": "Likes tea"}
    return Record(**{**base, **fields})  # type: ignore[arg-type]


@pytest.mark.parametrize("mode", ["direct", "propose"])
def test_the_two_modes_are_accepted(mode: str) -> None:
    assert proposals.check_write_mode(mode) == mode


@pytest.mark.parametrize("mode", ["PROPOSE", "review", "", None, 0, ["propose"]])
def test_anything_else_is_a_typed_error_without_the_value(mode: object) -> None:
    with pytest.raises(InvalidInputError, match="direct, propose") as refused:
        proposals.check_write_mode(mode)
    if isinstance(mode, str) and mode:
        assert mode not in str(refused.value)


@pytest.mark.parametrize(
    ("mode", "source", "gate", "expected"),
    [
        ("propose", Source.AGENT, Status.ACTIVE, Status.PROPOSED),
        ("propose", Source.INFERRED, Status.ACTIVE, Status.PROPOSED),
        ("propose", Source.USER, Status.ACTIVE, Status.ACTIVE),
        ("propose", Source.TOOL, Status.ACTIVE, Status.ACTIVE),
        ("propose", Source.EXTERNAL, Status.PENDING_REVIEW, Status.PENDING_REVIEW),
        ("direct", Source.AGENT, Status.ACTIVE, Status.ACTIVE),
        ("direct", Source.INFERRED, Status.ACTIVE, Status.ACTIVE),
    ],
)
def test_which_writes_become_proposals(
    mode: proposals.WriteMode, source: Source, gate: Status, expected: Status
) -> None:
    assert proposals.status_for(mode, source, gate) is expected


def test_accept_plans_an_active_record_with_accept_history() -> None:
    proposal = _note(status=Status.PROPOSED, source=Source.AGENT)
    accepted, change = proposals.accept("alice", proposal, None, 100.0)
    assert accepted.status is Status.ACTIVE and accepted.source is Source.AGENT and accepted.updated_at == 100.0
    assert change.upserts == (accepted,) and [h.op for h in change.history] == ["accept"]
    assert change.history[0].before is not None and change.history[0].before["status"] == "proposed"


def test_an_edited_accept_records_the_edit_first_as_the_users_words() -> None:
    proposal = _note(status=Status.PROPOSED, source=Source.AGENT)
    edit = proposals.edited(proposal, "Likes green tea", "", False, 50.0)
    accepted, change = proposals.accept("alice", proposal, edit, 100.0)
    assert accepted.text == "Likes green tea" and accepted.source is Source.USER
    assert [h.op for h in change.history] == ["edit", "accept"]
    before, after = change.history[0].before, change.history[0].after
    assert before is not None and after is not None and (before["text"], after["text"]) == ("Likes tea", accepted.text)


def test_a_fact_proposal_is_retired_pointing_at_its_key() -> None:
    proposal = _note(kind=Kind.FACT, key="diet", value="vegan", text="diet: vegan", status=Status.PROPOSED)
    change = proposals.retire_accepted("alice", proposal, None, fact_id("alice", "diet"), 100.0)
    (moved,) = change.archives
    assert moved.status is Status.ARCHIVED and moved.superseded_by == fact_id("alice", "diet")
    assert moved.extra["archived_from"] == "proposed"
    assert [h.op for h in change.history] == ["accept"] and change.upserts == ()
