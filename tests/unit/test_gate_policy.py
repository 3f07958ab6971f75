"""The gate's extension points: custom detectors and an allow-list, passed as a GatePolicy."""

from __future__ import annotations

import re
from collections.abc import Iterator

import pytest
from memtend.errors import InvalidInputError, SensitiveDataError
from memtend.policies.gate import AllowList, Finding, GatePolicy, check_write, find_sensitive, redact
from memtend.records import Source, Status

EMPLOYEE = re.compile(r"\bEMP-[0-9]{6}\b")
TEST_CARD = "4111 1111 1111 1111"  # the documented Visa test number: passes Luhn


def employee_ids(text: str) -> Iterator[Finding]:
    for match in EMPLOYEE.finditer(text):
        yield Finding("employee_id", match.start(), match.end())


def test_custom_detector_refuses_its_kind() -> None:
    policy = GatePolicy(detectors=(employee_ids,))
    text = "Badge EMP-123456 opens the lab"
    assert check_write(text, Source.USER).text == text  # not sensitive without the policy
    with pytest.raises(SensitiveDataError) as err:
        check_write(text, Source.USER, policy=policy)
    assert err.value.kinds == ["employee_id"]
    assert "EMP-123456" not in str(err.value)


def test_custom_detector_redacts_to_a_fixpoint() -> None:
    policy = GatePolicy(detectors=(employee_ids,))
    text = "EMP-123456 and EMP-654321 share card 4111-1111-1111-1111"
    decision = check_write(text, Source.AGENT, redact=True, policy=policy)
    assert decision.text == "[REDACTED:employee_id] and [REDACTED:employee_id] share card [REDACTED:card]"
    assert decision.redacted_kinds == ("card", "employee_id")
    assert find_sensitive(decision.text, policy=policy) == []
    assert redact(text, policy=policy) == decision.text


def test_custom_and_builtin_hits_on_one_span_merge() -> None:
    def whole_card(text: str) -> list[Finding]:
        start = text.find(TEST_CARD)
        return [Finding("test_card", start, start + len(TEST_CARD))] if start >= 0 else []

    findings = find_sensitive(f"card {TEST_CARD} ok", policy=GatePolicy(detectors=(whole_card,)))
    assert len(findings) == 1
    assert (findings[0].start, findings[0].end) == (5, 5 + len(TEST_CARD))


def test_allow_list_value_passes_and_others_still_refused() -> None:
    policy = GatePolicy(allow=AllowList(values={TEST_CARD}))
    stored = check_write(f"use {TEST_CARD} in the sandbox", Source.USER, policy=policy)
    assert stored.text == f"use {TEST_CARD} in the sandbox"
    assert stored.status is Status.ACTIVE
    with pytest.raises(SensitiveDataError):
        check_write(f"use {TEST_CARD} or 5500 0000 0000 0004", Source.USER, policy=policy)


def test_allow_list_patterns_match_whole_values_only() -> None:
    key = "sk-proj-" + "aB3dE5gH7jK9mN1pQ3sT5vX7zA9cE1gI3kM5"
    policy = GatePolicy(allow=AllowList(patterns=[r"sk-proj-aB3d\w+"]))
    assert find_sensitive(f"demo key {key}", policy=policy) == []
    partial = GatePolicy(allow=AllowList(patterns=[r"sk-proj-aB3d"]))  # matches a prefix, not the value
    assert [f.kind for f in find_sensitive(f"demo key {key}", policy=partial)] == ["openai_key"]


def test_allow_list_kinds() -> None:
    text = "SSN 123-45-6789, card 4111 1111 1111 1111"
    kinds = [f.kind for f in find_sensitive(text, policy=GatePolicy(allow=AllowList(kinds={"ssn"})))]
    assert kinds == ["card"]


@pytest.mark.parametrize(
    "finding",
    [Finding("Employee Id", 0, 3), Finding("employee_id", 5, 2), ("employee_id", 0, 3)],
)
def test_bad_custom_findings_are_typed_errors(finding: object) -> None:
    policy = GatePolicy(detectors=(lambda text: [finding],))  # type: ignore[list-item]
    with pytest.raises(InvalidInputError):
        find_sensitive("some text here", policy=policy)


def test_bad_policies_are_typed_errors() -> None:
    with pytest.raises(InvalidInputError):
        GatePolicy(detectors=employee_ids)  # type: ignore[arg-type]
    with pytest.raises(InvalidInputError):
        GatePolicy(detectors=("not callable",))  # type: ignore[arg-type]
    with pytest.raises(InvalidInputError):
        GatePolicy(allow={"x"})  # type: ignore[arg-type]
    with pytest.raises(InvalidInputError):
        AllowList(values="4111")
    with pytest.raises(InvalidInputError):
        AllowList(patterns=["("])
    with pytest.raises(InvalidInputError):
        check_write("x", Source.USER, policy="strict")  # type: ignore[arg-type]


def test_policies_compare_and_hash_by_value() -> None:
    assert AllowList(values=["a"]) == AllowList(values=("a",))
    assert hash(GatePolicy(allow=AllowList(kinds=["ssn"]))) == hash(GatePolicy(allow=AllowList(kinds={"ssn"})))
