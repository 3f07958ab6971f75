"""Times kept as Chroma floats read back exactly: the record a write returns equals the one read back."""

from __future__ import annotations

import chromadb
from memtend import Memory
from memtend.records import chroma_float


def test_a_time_rounded_to_the_microsecond_survives_chroma(ephemeral_memory: Memory) -> None:
    client = chromadb.EphemeralClient()
    times = [1_796_062_292.4328165 + i * 0.0137 for i in range(400)]
    raw = client.get_or_create_collection("float_times_raw", embedding_function=None)
    raw.add(
        ids=[str(i) for i in range(400)],
        embeddings=[[0.0, 1.0]] * 400,
        metadatas=[{"t": chroma_float(t)} for t in times],
    )
    got = raw.get(ids=[str(i) for i in range(400)], include=["metadatas"])
    assert all(m["t"] == chroma_float(times[int(i)]) for i, m in zip(got["ids"], got["metadatas"], strict=True))


def test_every_written_record_reads_back_equal(ephemeral_memory: Memory) -> None:
    u = ephemeral_memory.user("float-times")
    written = [u.remember(f"note number {i} about the garden", metadata={"n": i}) for i in range(60)]
    written += [u.log(f"event {i} in the shed", at=1_700_000_000.123456789 + i) for i in range(20)]
    for record in written:
        assert u.get(record.id) == record
