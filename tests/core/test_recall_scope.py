"""recall narrowed by session, caller metadata and a token budget, besides k (real Chroma, real model)."""

from __future__ import annotations

import pytest
from memtend import Event, InvalidInputError, Memory
from memtend.policies import recall_filters
from memtend.records import Kind, Record

T0 = 1_700_000_000.0


@pytest.fixture
def user(ephemeral_memory: Memory):  # type: ignore[no-untyped-def]
    u = ephemeral_memory.user("scoped")
    u.log_many(
        [
            Event("Deployed the billing service to staging", at=T0, session="t1", metadata={"team": "pay", "p": 1}),
            Event(
                "Deployed the search service to production", at=T0 + 1, session="t2", metadata={"team": "find", "p": 3}
            ),
            Event(
                "Deployed the billing service to production", at=T0 + 2, session="t2", metadata={"team": "pay", "p": 2}
            ),
            Event("Rolled back the billing deploy on staging", at=T0 + 3, session="t1"),
        ]
    )
    u.remember("Deploys happen on Tuesdays", metadata={"team": "pay"})
    return u


def test_session_scope_returns_only_that_thread(user) -> None:  # type: ignore[no-untyped-def]
    hits = user.recall("billing deploy", k=10, session="t1")
    assert {h.text for h in hits} == {
        "Deployed the billing service to staging",
        "Rolled back the billing deploy on staging",
    }
    everything = user.recall("billing deploy", k=10)
    assert len(everything) == 5, "without a scope every record can be recalled"
    assert user.recall("billing deploy", k=10, session="nope") == []


def test_metadata_filter_on_caller_fields(user) -> None:  # type: ignore[no-untyped-def]
    pay = user.recall("deployed service", k=10, where={"team": "pay"})
    assert {h.text for h in pay} == {
        "Deployed the billing service to staging",
        "Deployed the billing service to production",
        "Deploys happen on Tuesdays",
    }
    high = user.recall("deployed service", k=10, where={"p": {"$gte": 2}})
    assert {h.text for h in high} == {
        "Deployed the search service to production",
        "Deployed the billing service to production",
    }
    both = user.recall("deployed service", k=10, session="t2", where={"team": {"$in": ["pay"]}, "p": {"$lt": 3}})
    assert [h.text for h in both] == ["Deployed the billing service to production"]
    unset = user.recall("deployed service", k=10, where={"team": {"$ne": "pay"}}, kinds=[Kind.EVENT])
    assert {h.text for h in unset} == {
        "Deployed the search service to production",
        "Rolled back the billing deploy on staging",  # has no team: $ne matches a missing field
    }


def test_filters_select_before_k_is_counted(user) -> None:  # type: ignore[no-untyped-def]
    """k best among the matching records, not the k best overall filtered afterwards."""
    hits = user.recall("search service production", k=1, where={"team": "pay"})
    assert len(hits) == 1 and hits[0].record.extra["team"] == "pay"


def test_token_budget_keeps_the_best_that_fit(user) -> None:  # type: ignore[no-untyped-def]
    ranked = user.recall("billing deploy", k=5)
    sizes = [recall_filters.estimate_tokens(h.label()) for h in ranked]
    budget = sizes[0] + sizes[1]
    capped = user.recall("billing deploy", k=5, max_tokens=budget)
    assert [h.record.id for h in capped] == [h.record.id for h in ranked[:2]]
    assert user.recall("billing deploy", k=5, max_tokens=sizes[0] - 1) == []
    assert len(user.recall("billing deploy", k=2, max_tokens=10_000)) == 2, "k still caps"


@pytest.mark.parametrize(
    "kwargs",
    [
        {"where": {"team": {"$regex": "p.*"}}},
        {"where": {"team": {"$in": "pay"}}},
        {"where": {"team": {"a": 1}}},
        {"where": {"team": [1, 2]}},
        {"where": {"p": float("nan")}},
        {"where": "team=pay"},
        {"where": {"": 1}},
        {"max_tokens": 0},
        {"max_tokens": True},
        {"max_tokens": 2.5},
        {"session": 5},
        {"session": "x" * 300},
    ],
)
def test_bad_scopes_are_typed_errors(user, kwargs) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(InvalidInputError):
        user.recall("billing", **kwargs)


def test_filter_matching_is_pure_and_type_strict() -> None:
    record = Record(id="r", user_id="u", kind=Kind.NOTE, text="x", extra={"n": 2, "s": "b", "flag": True})
    check = recall_filters.check_filter
    assert recall_filters.matches(record, check({"n": 2, "s": "b"}))
    assert not recall_filters.matches(record, check({"n": "2"})), "a str never equals a number"
    assert not recall_filters.matches(record, check({"s": {"$gt": 1}})), "str and number do not compare"
    assert recall_filters.matches(record, check({"s": {"$gt": "a", "$lte": "b"}}))
    assert not recall_filters.matches(record, check({"flag": 1})), "a bool is not a number here"
    assert recall_filters.matches(record, check({"missing": {"$nin": [1]}}))
    assert not recall_filters.matches(record, check({"missing": {"$in": [1]}}))
    assert recall_filters.within_budget(["a" * 8, "b" * 8, "c" * 8], 5) == 2
    assert recall_filters.within_budget(["a" * 8], None) == 1
