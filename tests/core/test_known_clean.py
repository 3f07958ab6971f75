"""``memtend.surfaces.known_clean``: a value counts as already read only when ``mask_json`` found that very JSON text
clean; a secret, a changed text or a value never read is read again."""

from __future__ import annotations

import uuid

from memtend.surfaces import known_clean, mask_json


def test_only_a_value_found_clean_is_known_clean() -> None:
    text = f"an ordinary message {uuid.uuid4()}"
    message = {"content": text, "type": "human", "tags": ["a", "b"]}
    assert not known_clean(message)  # never read
    assert mask_json(message, surface="test") is message
    assert known_clean(message)
    assert known_clean({"tags": ("a", "b"), "type": "human", "content": text})  # the same text, keys in any order
    assert not known_clean({**message, "content": text + " 4111 1111 1111 1111"})  # changed: read again
    assert not known_clean({"content": object()})  # not JSON


def test_a_value_holding_a_secret_never_becomes_known_clean() -> None:
    secret = {"content": f"card 4111 1111 1111 1111 for {uuid.uuid4()}"}
    masked = mask_json(secret, surface="test")
    assert "4111 1111 1111 1111" not in masked["content"]
    assert not known_clean(secret)
