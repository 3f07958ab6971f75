"""The gate's shortcuts on long text decide exactly as the whole-text scans they replace: a number run too short to
hold a card is skipped, and a number is checked against generated ids only in the run of id characters around it."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st
from memtend.policies.gate import find_sensitive
from memtend.policies.gate.numbers import card_hits
from memtend.policies.gate.sensitive import _GENERATED_ID, _in_generated_id

# Characters that build cards, UUIDs, hex hashes, provider ids and the separators between them.
PIECES = st.sampled_from(
    ["4111", "1111", "5555", "4444", "0", "9", "a", "f", "e", "B", "call_", "run-", "-", " ", "_", ".", "\n", "x"]
)
TEXTS = st.lists(PIECES, max_size=40).map("".join)


@given(TEXTS, st.integers(0, 200), st.integers(0, 40))
def test_the_local_generated_id_check_agrees_with_a_whole_text_scan(text: str, start: int, width: int) -> None:
    if not text:
        return
    start = start % len(text)
    end = min(len(text), start + 1 + width)
    whole = any(m.start() <= start and end <= m.end() for m in _GENERATED_ID.finditer(text))
    assert _in_generated_id(text, start, end) == whole


@given(TEXTS)
def test_short_number_runs_never_were_cards(text: str) -> None:
    # Every card the detector finds spans at least 13 characters, so skipping shorter runs loses none.
    for start, end, _ in card_hits(text, text.lower()):
        assert end - start >= 13


def test_a_card_after_a_uuid_in_long_text_is_still_found() -> None:
    text = "filler 12 and 345. " * 20_000 + "id 123e4567-e89b-12d3-a456-426614174000 then card 4111 1111 1111 1111"
    kinds = [f.kind for f in find_sensitive(text)]
    assert kinds == ["card"]
