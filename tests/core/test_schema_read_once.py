"""memtend's collections read their schema once instead of on every write (storage._schema_read_once): the answer
Chroma's client looks for in it must stay the one Chroma gives, and follow a schema that is replaced."""

from __future__ import annotations

from typing import Any

from memtend import Memory


def test_sparse_targets_read_once_as_chroma_reads_them(ephemeral_memory: Memory) -> None:
    for collection in ephemeral_memory.storage.collections().values():
        assert "_get_sparse_embedding_targets" in vars(collection)  # the per-object hook is in place
        assert collection._get_sparse_embedding_targets() == type(collection)._get_sparse_embedding_targets(collection)


def test_a_replaced_schema_is_read_again(ephemeral_memory: Memory) -> None:
    collection: Any = ephemeral_memory.storage.memories
    first = collection._get_sparse_embedding_targets()
    assert collection._get_sparse_embedding_targets() is first  # kept
    model = collection._model
    model.serialized_schema = dict(model.serialized_schema or {})  # what ``modify`` does: a new schema object
    again = collection._get_sparse_embedding_targets()
    assert again is not first and again == first
    ephemeral_memory.user("dana").remember("a note after the schema was replaced")
    assert len(ephemeral_memory.user("dana").list()) == 1
