"""The gate over JSON values (documents, ledger arguments): one walker, values read beside their field names."""

from __future__ import annotations

import pytest
from memtend.errors import InvalidInputError
from memtend.policies.gate import find_sensitive, json_lines, redact_json
from memtend.records import check_name


def test_json_lines_read_each_scalar_beside_its_name() -> None:
    value = {"user": {"password": "hunter22", "pins": [1234, "x"]}, "n": 2}
    assert json_lines(value) == ["password: hunter22", "pins: 1234", "pins: x", "n: 2"]
    assert json_lines("plain") == ["plain"]


def test_redact_json_masks_values_found_only_beside_their_name() -> None:
    args = {"password": "hunter22", "card": "4111 1111 1111 1111", "amount": 5, "nested": [{"pin": 4321}]}
    masked = redact_json(args)
    assert masked == {
        "password": "[REDACTED:password]",
        "card": "[REDACTED:card]",
        "amount": 5,
        "nested": [{"pin": "[REDACTED:pin]"}],
    }
    assert not find_sensitive("\n".join(json_lines(masked)))
    assert redact_json(("a", 4111111111111111)) == ["a", "[REDACTED:card]"]  # numbers too, tuples as lists
    assert redact_json({"ok": True, "none": None}) == {"ok": True, "none": None}


def test_check_name_empty_and_blank() -> None:
    assert check_name(" ", "key", empty=False) == " "  # whitespace is a name when only emptiness is refused
    with pytest.raises(InvalidInputError, match="must not be empty"):
        check_name("", "key", empty=False)
    with pytest.raises(InvalidInputError, match="empty or blank"):
        check_name(" ", "key", blank=False)
    assert check_name("", "key") == ""
