"""Capture and secrets (pure): a candidate the write gate masks down to nothing is dropped with its reason, never
stored as a fact of redaction markers; and the counts a capture call gives the memory-call log."""

from __future__ import annotations

from typing import Any

import pytest
from memtend import Kind, Message, Record, SensitiveDataError
from memtend.capture import run as capture_run
from memtend.capture.report import Captured, CaptureReport
from memtend.policies import gate
from memtend.policies.capture import Candidate, CandidateKind, Dropped, judge_turns, secret_only
from memtend.policies.precedence import FactOutcome
from memtend.results import FactResult

CARD = "4111 1111 1111 1111"


def _masked(candidate: Candidate) -> gate.GateDecision:
    return gate.check_write(capture_run._text(candidate), candidate.source, redact=True)


def _fact(key: str, value: str, text: str) -> Candidate:
    return Candidate(CandidateKind.FACT, text, "the user states", 0, "m1", key=key, value=value)


@pytest.mark.parametrize(
    ("candidate", "kind"),
    [
        (_fact("card", CARD, f"My card is {CARD}"), "card"),
        (_fact("payment.card", f"{CARD}.", f"My payment card is {CARD}."), "card"),
        (Candidate(CandidateKind.STATEMENT, f"{CARD} !", "said", 2), "card"),
    ],
)
def test_a_candidate_that_is_all_secret_is_dropped_with_a_reason_that_never_shows_it(
    candidate: Candidate, kind: str
) -> None:
    decision = _masked(candidate)
    dropped = secret_only(candidate, decision.text, decision.redacted_kinds)
    assert isinstance(dropped, Dropped)
    assert kind in dropped.reason and "secret" in dropped.reason
    assert "4111" not in dropped.text and "[REDACTED:card]" in dropped.text
    assert (dropped.turn, dropped.turn_id) == (candidate.turn, candidate.turn_id)


@pytest.mark.parametrize(
    "candidate",
    [
        Candidate(CandidateKind.STATEMENT, f"I pay with {CARD} for the gym", "said", 0),  # words are left
        _fact("home.city", "Porto", "I live in Porto"),  # nothing masked
        _fact("card_note", "the blue one", "My card note is the blue one"),
    ],
)
def test_a_candidate_with_something_left_is_not_dropped(candidate: Candidate) -> None:
    decision = _masked(candidate)
    assert secret_only(candidate, decision.text, decision.redacted_kinds) is None


class Writers:
    """The facade's two writes, recorded (capture.run is pure but for them)."""

    def __init__(self) -> None:
        self.calls: list[tuple[str, Any]] = []

    def note(self, text: str, **given: Any) -> tuple[Record, str]:
        self.calls.append(("note", text))
        return Record("n1", "alice", Kind.NOTE, text, session=given["session"]), "added"

    def fact(self, key: str, value: str, **given: Any) -> FactResult:
        self.calls.append(("fact", (key, value)))
        return FactResult(FactOutcome.ADDED, Record("fact:x", "alice", Kind.FACT, f"{key}: {value}"), "")


def test_capture_drops_the_masked_card_and_keeps_the_rest_of_the_turn() -> None:
    turn = [Message("user", f"My card is {CARD}. I live in Porto.")]
    writers = Writers()
    report = capture_run.write(judge_turns(turn), "offline", writers.note, writers.fact, session="s1", redact=True)
    assert writers.calls == [("fact", ("home.city", "Porto"))]
    assert [c.candidate.key for c in report.captured] == ["home.city"]
    (dropped,) = [d for d in report.dropped if "secret" in d.reason]
    assert "card" in dropped.reason and "4111" not in repr(report.dropped)


def test_with_redact_false_the_secret_is_refused_before_anything_is_written() -> None:
    writers = Writers()
    with pytest.raises(SensitiveDataError):
        capture_run.write(
            judge_turns([Message("user", f"I live in Porto. My card is {CARD}.")]),
            "offline",
            writers.note,
            writers.fact,
            session="s1",
            redact=False,
        )
    assert writers.calls == []


def test_a_capture_report_counts_the_fates_of_its_candidates_for_the_call_log() -> None:
    def captured(action: str) -> Captured:
        return Captured(Candidate(CandidateKind.STATEMENT, "I keep bees on the roof", "said", 0), action)

    actions = ("added", "updated", "duplicate", "refreshed", "unchanged", "kept", "proposed", "held", "skipped")
    report = CaptureReport(
        captured=[captured(a) for a in actions], dropped=[Dropped("Tell me a joke", "a one-off request", 1)]
    )
    assert report.tally() == {"kept": 2, "merged": 4, "proposed": 2, "dropped": 2}
    assert CaptureReport().tally() == {"kept": 0, "merged": 0, "proposed": 0, "dropped": 0}
