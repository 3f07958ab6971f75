"""A single write (remember, log, set_fact) runs its gate beside its embedding when the model runs in this process:
what is stored is what the gate let through, with the vector of the text stored (a masked text is embedded again,
never stored with the vector of what the caller wrote); a refused text is refused as before and stores nothing; and
with an embedding function that may send texts away, a text reaches it only after the gate."""

from __future__ import annotations

import json
from typing import Any

import chromadb
import numpy as np
import pytest
from conftest import unique_prefix
from memtend import InvalidInputError, Memory, SensitiveDataError, SensitiveIdentifierError
from memtend.testing import HashEmbedder

CARD = "4111 1111 1111 1111"


def _stored_rows(memory: Memory, user_id: str) -> list[tuple[str, np.ndarray]]:
    """(text, vector) of every record row of the user, as Chroma holds them."""
    got = memory.storage.memories.get(where={"user_id": user_id}, include=["metadatas", "embeddings"])
    texts = [json.loads(str(m["r"]))["text"] for m in got["metadatas"] or []]
    return list(zip(texts, np.asarray(got["embeddings"], dtype=np.float32), strict=True))


@pytest.fixture(params=["ephemeral", "persistent"])
def local_memory(request: pytest.FixtureRequest, tmp_path: Any, embedding_function: Any) -> Any:
    if request.param == "ephemeral":
        memory = Memory(
            client=chromadb.EphemeralClient(), embedding_function=embedding_function, collection_prefix=unique_prefix()
        )
    else:
        memory = Memory(path=tmp_path / "store", embedding_function=embedding_function)
    yield memory
    memory.close()


def test_each_row_holds_the_vector_of_its_stored_text(local_memory: Memory) -> None:
    u = local_memory.user("gated")
    u.remember("Prefers green tea in the morning")
    u.log("Deployed the billing service to staging")
    u.set_fact("drink", "green tea")
    masked = u.remember(f"My card is {CARD}, charge it monthly", redact=True)
    u.set_fact("card", CARD, redact=True)
    assert "4111" not in masked.text and "[REDACTED:" in masked.text
    rows = _stored_rows(local_memory, "gated")
    assert len(rows) == 5
    texts = [text for text, _ in rows]
    assert not any("4111" in text for text in texts)
    expected = local_memory.embed(texts)
    for (text, vector), want in zip(rows, expected, strict=True):
        assert np.allclose(vector, want, atol=1e-5), text  # the stored text's vector, not the caller's text's


def test_refused_texts_are_refused_as_before_and_store_nothing(local_memory: Memory) -> None:
    u = local_memory.user("refused")
    with pytest.raises(SensitiveDataError):
        u.remember(f"My card is {CARD}")
    with pytest.raises(SensitiveDataError):
        u.log(f"Paid with {CARD}")
    with pytest.raises(SensitiveDataError):
        u.set_fact("card", CARD)
    with pytest.raises(InvalidInputError):
        u.remember("")
    with pytest.raises(InvalidInputError):
        u.log(42)  # type: ignore[arg-type]
    assert _stored_rows(local_memory, "refused") == []
    assert u.remember("Still writes after refusals").text == "Still writes after refusals"


def test_a_fact_key_is_checked_once_per_process_but_a_refused_key_every_time(local_memory: Memory) -> None:
    u = local_memory.user("keys")
    for value in ("green tea", "black coffee"):
        assert u.set_fact("Morning Drink", value).record.key == "morning_drink"
    for _ in range(2):  # a refusal is not remembered as a pass
        with pytest.raises(SensitiveIdentifierError):
            u.set_fact(f"card {CARD}", "main")
        with pytest.raises(InvalidInputError):
            u.set_fact(" - ", "main")
    with pytest.raises(InvalidInputError):
        u.set_fact(42, "main")  # type: ignore[arg-type]
    stored = sorted(text for text, _ in _stored_rows(local_memory, "keys"))
    assert stored == ["morning drink: black coffee", "morning drink: green tea"]


class _Recording(HashEmbedder):
    """An embedding function that could send what it is given anywhere: it records it."""

    def __init__(self) -> None:
        super().__init__()
        self.seen: list[str] = []

    def __call__(self, input: list[str]) -> Any:  # Chroma calls it with input=
        self.seen.extend(input)
        return super().__call__(input)


def test_a_text_reaches_an_embedding_function_of_unknown_reach_only_after_the_gate() -> None:
    recording = _Recording()
    memory = Memory(client=chromadb.EphemeralClient(), embedding_function=recording, collection_prefix=unique_prefix())
    try:
        u = memory.user("remote")
        with pytest.raises(SensitiveDataError):
            u.remember(f"My card is {CARD}")
        with pytest.raises(SensitiveDataError):
            u.set_fact("card", CARD)
        u.remember(f"My card is {CARD}", redact=True)
        u.log(f"Paid with {CARD}", redact=True)
        assert recording.seen and not any("4111" in text for text in recording.seen)
    finally:
        memory.close()
