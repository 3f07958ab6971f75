"""The write gate's reading of JSON values and identifiers (memtend.documents.values), without Chroma: every JSON
shape is read whole, masking keeps the shape, and the identifiers memtend and the adapters generate pass."""

from __future__ import annotations

import hashlib
import uuid
from typing import Any

import pytest
from memtend.documents.values import gate_identifier, gated_json, gated_metadata, gated_value
from memtend.errors import SensitiveDataError, SensitiveIdentifierError

CARD = "4111 1111 1111 1111"
PASSWORD = "Tr0ub4dor&3x"
GH_TOKEN = "ghp_MFLZDe1f8rESQedUStPKR0CsTy4Qwb8DwkNh"  # fake, from the gate corpus

SPLIT: list[tuple[str, Any]] = [
    ("x", ["password", PASSWORD]),
    ("x", "4111\n1111\n1111\n1111"),
    ("x", "4111\t1111  1111\n\n1111"),
    ("x", ["4111", "1111", "1111", "1111"]),
    ("x", {"a": ["4111 1111", "1111 1111"], "b": "x"}),
    ("password", PASSWORD),
    ("password", [PASSWORD]),
    ("x", {CARD: "visa"}),
    ("x", {"n": 4111111111111111}),
    ("x", {"a": [{"password": PASSWORD}]}),
]


@pytest.mark.parametrize(("name", "value"), SPLIT)
def test_a_secret_in_any_json_shape_is_found_and_masked(name: str, value: Any) -> None:
    with pytest.raises(SensitiveDataError) as caught:
        gated_json(value, name, redact=False)
    assert PASSWORD not in str(caught.value) and "4111" not in str(caught.value)
    masked, kinds = gated_json(value, name, redact=True)
    assert kinds
    text = str(masked)
    assert PASSWORD not in text and "4111" not in text and "[REDACTED:" in text
    assert type(masked) is type(value) or isinstance(value, tuple)
    assert gated_json(masked, name, redact=False) == (masked, ())  # masked values pass as they are


def test_masking_keeps_what_is_not_sensitive() -> None:
    value = {"title": "deploy", "steps": ["build", "test"], "login": ["password", PASSWORD], "n": 3, "ok": None}
    masked, kinds = gated_json(value, redact=True)
    assert kinds == ("password",)
    assert masked["title"] == "deploy" and masked["steps"] == ["build", "test"]
    assert masked["n"] == 3 and masked["ok"] is None
    assert masked["login"][0] == "password" and masked["login"][1].startswith("[REDACTED:")


def test_strings_of_different_fields_are_not_joined() -> None:
    """Only siblings in a list are read joined: four 4-digit fields of an object are not a card split in four."""
    value = {"a": "4111", "b": "1111", "c": "1111", "d": "1111"}
    assert gated_json(value, redact=False) == (value, ())


def test_ordinary_shapes_pass_unchanged() -> None:
    for value in (
        ["step one", "step two"],
        {"years": [2020, 2021, 2022, 2023], "ok": True},
        [4111, 1111, 1111, 1111],
        "line one\nline two\n\n  indented",
        ["password reset link sent", "tomorrow at 10"],
        {"password_hint": "the usual", "token_count": 12},
    ):
        assert gated_json(value, "v", redact=False) == (value, ())


def test_identifiers_are_refused_never_echoed() -> None:
    for name in (GH_TOKEN, f"card {CARD}", f"user password: {PASSWORD}"):
        with pytest.raises(SensitiveIdentifierError) as caught:
            gate_identifier(name, "the session id")
        assert "the session id" in str(caught.value)
        assert name not in str(caught.value) and GH_TOKEN not in str(caught.value)
        assert isinstance(caught.value, SensitiveDataError) and caught.value.kinds
    with pytest.raises(SensitiveIdentifierError):
        gated_value({"a": 1}, "k", "text", redact=True, namespace=("chat", GH_TOKEN))
    with pytest.raises(SensitiveIdentifierError):
        gated_value(b"opaque", GH_TOKEN, "text", redact=True)
    with pytest.raises(SensitiveIdentifierError):  # gate="off" leaves values unread; names are gated in every mode
        gated_value({"a": 1}, "k", "off", redact=False, namespace=("chat", GH_TOKEN))
    assert gated_value({"a": GH_TOKEN}, "k", "off", redact=False, namespace=("chat",)) == ({"a": GH_TOKEN}, ())
    assert gated_value({"a": GH_TOKEN}, GH_TOKEN, "off", redact=False, names=False) == ({"a": GH_TOKEN}, ())


def test_generated_identifiers_pass() -> None:
    """uuids, hashes, ledger call keys and the adapters' time-ordered message keys are not secrets."""
    for n in range(300):
        u = uuid.uuid4()
        digest = hashlib.sha256(str(n).encode()).hexdigest()
        for name in (
            str(u),
            u.hex,
            str(uuid.uuid1()),
            f"call:{digest[:40]}",
            f"call_{u.hex[:24]}",
            f"{1_764_500_000_000_000_000 + n * 7_919_000_003:020d}-{n:06d}-{n * 977:x}-{n:x}",
            f"{1_764_500_000_000_000_000 + n * 7_919_000_003:020d}.{u.hex[:8]}",
        ):
            assert gate_identifier(name, "a key") == name


def test_metadata_keys_are_identifiers_and_values_are_masked() -> None:
    with pytest.raises(SensitiveIdentifierError):
        gated_metadata({GH_TOKEN: "x"}, redact=True)
    masked, kinds = gated_metadata({"card": CARD, "n": 4111111111111111, "env": "prod", "k": 3}, redact=True)
    assert masked == {"card": "[REDACTED:card]", "n": "[REDACTED:card]", "env": "prod", "k": 3}
    assert kinds == ("card",)
    assert gated_metadata({}, redact=False) == ({}, ())
