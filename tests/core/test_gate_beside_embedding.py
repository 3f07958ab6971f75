"""A single write's gate runs on a helper while its text is embedded, when a core is idle (user_memory._gate): what
is stored, what is refused and which error comes first must be as when the gate runs first and the apply step
embeds. ``_idle_core`` is forced here, since the machine's load decides it otherwise."""

from __future__ import annotations

from typing import Any

import chromadb
import numpy as np
import pytest
from conftest import unique_prefix
from memtend import Memory
from memtend import memory as memory_module
from memtend.errors import SensitiveDataError
from memtend.records import Source, Status
from memtend.testing import HashEmbedder

SECRET = "my card is 4111 1111 1111 1111"


class _Counting(HashEmbedder):
    """A HashEmbedder that counts its calls and can be made to fail."""

    def __init__(self) -> None:
        super().__init__()
        self.calls = 0
        self.fail = False

    def __call__(self, input: Any) -> Any:
        self.calls += 1
        if self.fail:
            raise RuntimeError("the model is gone")
        return super().__call__(input)

    @staticmethod
    def name() -> str:
        return "memtend-hash"


@pytest.fixture(params=[True, False], ids=["beside", "inline"])
def idle(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> bool:
    monkeypatch.setattr(memory_module, "_idle_core", lambda: request.param)
    return bool(request.param)


def _memory(embedder: HashEmbedder) -> Memory:
    return Memory(client=chromadb.EphemeralClient(), embedding_function=embedder, collection_prefix=unique_prefix())


def _stored_vector(mem: Memory, user_id: str, record_id: str) -> np.ndarray:
    _, vectors = mem.storage.get_records(user_id, [record_id], with_embeddings=True)
    assert vectors is not None
    return vectors[0]


def test_single_writes_store_the_text_and_its_vector(idle: bool) -> None:
    embedder = _Counting()
    with Memory(
        client=chromadb.EphemeralClient(), embedding_function=embedder, collection_prefix=unique_prefix()
    ) as mem:
        u = mem.user("erin")
        note = u.remember("the user prefers window seats")
        event = u.log("booked a flight to Oslo")
        rule = u.add_rule("always answer in metric units")
        fact = u.set_fact("home.city", "Bergen").record
        updated = u.set_fact("home.city", "Tromso").record
        pending = u.remember("visit example.com for the deal", source=Source.EXTERNAL)
        assert pending.status is Status.PENDING_REVIEW
        assert fact.id == updated.id  # the slot: its stored vector is the new value's
        for record in (note, event, rule, updated, pending):
            stored = _stored_vector(mem, "erin", record.id)
            assert np.allclose(stored, embedder([record.text])[0], atol=1e-6), record.kind
        assert u.get_fact("home.city").value == "Tromso"  # type: ignore[union-attr]
        assert [h.op for h in u.history(fact.id)] == ["add", "update"]


def test_a_refusal_is_raised_and_nothing_stored(idle: bool) -> None:
    embedder = _Counting()
    with Memory(
        client=chromadb.EphemeralClient(), embedding_function=embedder, collection_prefix=unique_prefix()
    ) as mem:
        u = mem.user("fay")
        for write in (lambda: u.remember(SECRET), lambda: u.log(SECRET), lambda: u.set_fact("card", SECRET)):
            with pytest.raises(SensitiveDataError):
                write()
        assert u.list() == []
        masked = u.remember(SECRET, redact=True)  # masking: the gate runs first, the masked text is embedded
        assert "4111" not in masked.text
        assert np.allclose(_stored_vector(mem, "fay", masked.id), embedder([masked.text])[0], atol=1e-6)


def test_an_embedding_error_comes_after_the_gates_verdict(idle: bool) -> None:
    embedder = _Counting()
    with Memory(
        client=chromadb.EphemeralClient(), embedding_function=embedder, collection_prefix=unique_prefix()
    ) as mem:
        u = mem.user("gus")
        embedder.fail = True
        with pytest.raises(SensitiveDataError):  # refused first, whether or not the model works
            u.remember(SECRET)
        with pytest.raises(Exception, match="the model is gone"):
            u.remember("a harmless note")
        embedder.fail = False
        assert u.list() == []
        u.remember("a harmless note")
        assert [r.text for r in u.list()] == ["a harmless note"]


def test_the_helper_is_used_only_when_a_core_is_idle(idle: bool, monkeypatch: pytest.MonkeyPatch) -> None:
    with Memory(
        client=chromadb.EphemeralClient(), embedding_function=_Counting(), collection_prefix=unique_prefix()
    ) as mem:
        handed: list[object] = []
        real = mem._helpers.submit
        monkeypatch.setattr(mem._helpers, "submit", lambda fn, *a: handed.append(fn) or real(fn, *a))
        mem.user("hal").remember("a note")
        mem.user("hal").remember("a masked note", redact=True)  # masking: never beside
        assert len(handed) == (1 if idle else 0)
