"""The first recall of a user in a process loads the user's index in the background while its query is embedded:
it answers as a recall on a loaded index does, and never waits on a lock its own caller holds."""

from __future__ import annotations

import threading

from memtend import Memory
from memtend.records import Record

TURNS = [
    "We booked the cabin by the lake for the first week of July.",
    "Tom said the canoe needs a new paddle before the trip.",
    "My sister moved to Lisbon and started a pottery class there.",
    "The project deadline moved from 3 June to 10 June.",
    "Dinner on Friday was grilled sardines at the harbour.",
]


NOW = 1_900_000_000.0  # one clock for every recall, so scores compare exactly


def _fill(mem: Memory) -> None:
    mem.user("ann").log_many(TURNS)
    mem.user("bob").log_many(["Bob keeps bees and sells honey at the market."])


def test_a_first_recall_answers_as_a_loaded_index_does(tmp_path, embedding_function) -> None:  # type: ignore[no-untyped-def]
    with Memory(path=tmp_path / "store", embedding_function=embedding_function) as mem:
        _fill(mem)
    queries = ["where does my sister live?", "when is the deadline?", "what does the canoe need?"]
    with Memory(path=tmp_path / "store", embedding_function=embedding_function) as mem:
        first = [[(h.record.id, h.score) for h in mem.user("ann").recall(q, k=3, now=NOW)] for q in queries[:1]]
        assert "ann" in mem._indexes and "bob" not in mem._indexes
        loaded = [[(h.record.id, h.score) for h in mem.user("ann").recall(q, k=3, now=NOW)] for q in queries]
    with Memory(path=tmp_path / "store", embedding_function=embedding_function) as mem:
        mem.user_index("ann")  # loaded in the caller's thread
        direct = [[(h.record.id, h.score) for h in mem.user("ann").recall(q, k=3, now=NOW)] for q in queries]
    assert first[0] == direct[0] and loaded == direct
    assert all(len(hits) == 3 for hits in direct)


def test_a_first_recall_under_the_caller_s_own_lock_answers(ephemeral_memory: Memory) -> None:
    _fill(ephemeral_memory)
    ephemeral_memory._indexes.clear()
    answers: list[int] = []

    def recall_holding_the_lock() -> None:
        with ephemeral_memory.lock:
            answers.append(len(ephemeral_memory.user("ann").recall("the lake cabin", k=2)))

    worker = threading.Thread(target=recall_holding_the_lock, daemon=True)
    worker.start()
    worker.join(timeout=120)
    assert not worker.is_alive(), "recall waited on a lock its own caller holds"
    assert answers == [2]


def test_a_closed_memory_loads_nothing_in_the_background(tmp_path, embedding_function) -> None:  # type: ignore[no-untyped-def]
    mem = Memory(path=tmp_path / "store", embedding_function=embedding_function)
    _fill(mem)
    mem._indexes.clear()
    assert mem.preload_index("ann") is not None
    mem.close()
    assert mem.preload_index("bob") is None


def test_a_batch_embedded_while_the_gate_reads_it_stores_what_the_gate_let_through(
    ephemeral_memory: Memory,
) -> None:
    """log_many embeds a batch while the gate checks it: a text the gate masked is embedded again as stored,
    so every stored vector is the vector of its stored text."""
    texts = ["We hiked up to the glacier on Sunday.", "My card is 4111 1111 1111 1111, use it for the tickets."]
    records = ephemeral_memory.user("ann").log_many(texts, redact=True)
    assert records[1].text != texts[1] and "4111" not in records[1].text
    ids = [r.id for r in records]
    got = ephemeral_memory.storage.memories.get(ids=ids, include=["embeddings", "documents", "metadatas"])
    rows = zip(got["ids"], got["documents"], got["metadatas"], strict=True)
    kept = [Record.from_chroma(i, d, dict(m or {})).text for i, d, m in rows]  # the text is kept in the metadata
    stored = dict(zip(got["ids"], zip(kept, got["embeddings"], strict=True), strict=True))
    for record in records:
        text, vector = stored[record.id]
        assert text == record.text
        assert float(vector @ ephemeral_memory.embed([record.text])[0]) > 0.999
    assert float(stored[records[1].id][1] @ ephemeral_memory.embed([texts[1]])[0]) < 0.999
