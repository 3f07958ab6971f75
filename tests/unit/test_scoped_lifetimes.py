"""The pure part of scoped lifetimes: which records a window ends for, which fold into one line first, the line
itself, and the settings' checks (no Chroma, no model)."""

from __future__ import annotations

import pytest
from memtend.errors import InvalidInputError
from memtend.policies import changes, compaction, forgetting
from memtend.policies.forgetting import RetentionPolicy
from memtend.records import DAY, Kind, Record, Scope, Status
from memtend.upkeep.settings import Upkeep

T0 = 1_800_000_000.0
LONG = "We chose Postgres 16 for the billing service. Logical replication and the team's experience decided it."


def _rec(rid: str, kind: Kind = Kind.NOTE, scope: Scope | None = None, **kw: object) -> Record:
    fields: dict[str, object] = {"text": LONG, "created_at": T0, "updated_at": T0, "last_used_at": T0, **kw}
    return Record(id=rid, user_id="u", kind=kind, scope=scope, **fields)  # type: ignore[arg-type]


def test_each_scope_keeps_its_own_window_and_user_scope_never_ends() -> None:
    policy = RetentionPolicy()
    records = [
        _rec("task", scope=Scope.TASK),
        _rec("session", scope=Scope.SESSION),
        _rec("project", scope=Scope.PROJECT),
        _rec("user", scope=Scope.USER),
        _rec("plain"),  # a note without a scope: 180 days idle, as before
    ]
    gone = {d.record.id for d in forgetting.plan_forget(records, policy, T0 + 8 * DAY)}
    assert gone == {"task", "session"}
    gone = {d.record.id for d in forgetting.plan_forget(records, policy, T0 + 91 * DAY)}
    assert gone == {"task", "session", "project"}
    gone = {d.record.id for d in forgetting.plan_forget(records, policy, T0 + 10_000 * DAY)}
    assert gone == {"task", "session", "project", "plain"}, "a user-scoped memory stays until superseded"
    assert policy.window_end(records[0]) == T0 + 7 * DAY
    assert policy.window_end(records[3]) is None


def test_use_and_restatement_extend_the_window() -> None:
    policy = RetentionPolicy(scope_days={Scope.TASK: 7.0})
    used = _rec("used", scope=Scope.TASK, last_used_at=T0 + 5 * DAY)
    restated = _rec("restated", scope=Scope.TASK)
    restated, _ = changes.refresh("u", restated, _rec("again", scope=Scope.TASK), None, T0 + 6 * DAY)
    idle = _rec("idle", scope=Scope.TASK)
    gone = {d.record.id for d in forgetting.plan_forget([used, restated, idle], policy, T0 + 8 * DAY)}
    assert gone == {"idle"}
    gone = {d.record.id for d in forgetting.plan_forget([used, restated, idle], policy, T0 + 13.5 * DAY)}
    assert gone == {"idle", "used", "restated"}


def test_only_active_scoped_notes_fold_and_a_folded_line_is_archived_at_its_end() -> None:
    policy = RetentionPolicy()
    at = T0 + 8 * DAY
    note = _rec("note", scope=Scope.TASK)
    event = _rec("event", Kind.EVENT, scope=Scope.TASK)
    line = _rec("line", scope=Scope.TASK, extra={forgetting.FOLDED: True})
    pending = _rec("pending", scope=Scope.TASK, status=Status.PENDING_REVIEW)
    explicit = _rec("explicit", expires_at=T0 + DAY)
    rule = _rec("rule", Kind.RULE, expires_at=T0 + DAY)
    decisions = {
        d.record.id: d for d in forgetting.plan_forget([note, event, line, pending, explicit, rule], policy, at)
    }
    assert decisions["note"].fold and not decisions["event"].fold and not decisions["line"].fold
    assert "pending" not in decisions, "a pending record keeps the review limit (30 days)"
    assert decisions["explicit"].reason == "expired" and not decisions["explicit"].fold
    assert "rule" not in decisions, "rules are pinned, an expiry included"


def test_the_fold_plan_keeps_provenance_and_archives_the_long_version_in_the_same_change() -> None:
    note = _rec("n1", scope=Scope.PROJECT, session="s1", extra={"team": "billing"})
    line = compaction.fold_line(note, None)
    assert line == "[2027-01-15] We chose Postgres 16 for the billing service."
    assert compaction.shortens(note, line)
    folded, change = changes.fold("u", note, line, False, T0 + 100 * DAY)
    assert folded.derived_from == ["n1"] and folded.scope is Scope.PROJECT and folded.created_at == T0
    assert folded.extra == {"team": "billing", forgetting.FOLDED: True} and folded.session == "s1"
    assert [r.id for r in change.upserts] == [folded.id]
    assert [(r.id, r.status, r.superseded_by) for r in change.archives] == [("n1", Status.ARCHIVED, folded.id)]
    assert [h.op for h in change.history] == ["fold", "forget"]
    assert forgetting.derives_from(folded, "n1") and not forgetting.derives_from(note, "n1")
    # a restore claim of a fact derives from the value it restored: it does not hold that value's text
    claim = _rec("fv:x:restore-1", Kind.FACT, derived_from=["n1"])
    assert not forgetting.derives_from(claim, "n1")


def test_a_line_summariser_is_made_one_line_and_falls_back_when_it_fails() -> None:
    note = _rec("n1", scope=Scope.TASK)

    def broken(record: Record) -> str:
        raise RuntimeError("model down")

    assert compaction.fold_line(note, lambda r: "Billing DB:\n Postgres 16 ") == "Billing DB: Postgres 16"
    assert compaction.fold_line(note, broken) == compaction.one_line(note)
    assert compaction.fold_line(note, lambda r: "   ") == compaction.one_line(note)
    assert len(compaction.fold_line(note, lambda r: "x " * 1_000)) == compaction.MAX_LINE_CHARS
    short = _rec("n2", scope=Scope.TASK, text="Use staging")
    assert not compaction.shortens(short, compaction.fold_line(short, None)), "one short line: archived as it is"


def test_settings_refuse_bad_values_without_repeating_them() -> None:
    with pytest.raises(InvalidInputError, match="scope"):
        RetentionPolicy(scope_days={"sprint": 3.0})  # type: ignore[dict-item]
    with pytest.raises(InvalidInputError, match="history_days"):
        RetentionPolicy(history_days=-1.0)
    assert RetentionPolicy(scope_days={"task": 3.0}).scope_limit(Scope.TASK) == 3 * DAY  # type: ignore[dict-item]
    with pytest.raises(InvalidInputError, match="users_per_pass"):
        Upkeep(users_per_pass=0)
    with pytest.raises(InvalidInputError, match="every_seconds"):
        Upkeep(every_seconds=float("nan"))
    with pytest.raises(InvalidInputError, match="keep_recent"):
        Upkeep(compact_over=10, keep_recent=20)
    with pytest.raises(InvalidInputError, match="line_summarizer"):
        Upkeep(line_summarizer="llm")  # type: ignore[arg-type]
    assert Upkeep(every_seconds=None).every_seconds is None
