"""The collections memtend keeps in Chroma (see :mod:`memtend.storage`), opened with their index settings."""

from __future__ import annotations

import re
from typing import Any

from chromadb.api import ClientAPI
from chromadb.api.models.Collection import Collection

from memtend.consistency.slots import FactSlots
from memtend.errors import EmbeddingMismatchError
from memtend.storage.chroma import MAX_BATCH, SMALL_SYNC_THRESHOLD, UNUSED_GRAPH, guarded, schema_read_once
from memtend.storage.document_rows import DocumentRows
from memtend.storage.filters import history_where, where
from memtend.storage.marks import ChangeMarks

# Chroma's refusal to open a collection with an embedding function other than the one it persisted
_EMBEDDING_CONFLICT = re.compile(
    r"Embedding function conflict: new: (?P<given>[\w.:-]{1,80}) vs persisted: (?P<stored>[\w.:-]{1,80})"
)


class StoreCollections:
    """memtend's Chroma collections, opened; the row formats build on it."""

    def __init__(
        self,
        client: ClientAPI,
        embedding_function: Any,
        *,
        prefix: str = "memtend",
        sync_threshold: int = 100,
    ) -> None:
        self.client = client
        self.prefix = prefix
        self._log_to_purge: dict[str, Collection] = {}  # collections erasure deleted rows from, by name
        # Each local write compacts, re-reading the rows written since the vector index was last saved. History
        # and keyed-store rows carry large documents and one-dimensional vectors (a save costs nothing), so they
        # save often; the memories' 384-d index is saved every ``sync_threshold`` rows.
        hnsw = {"hnsw": {"sync_threshold": SMALL_SYNC_THRESHOLD, **UNUSED_GRAPH}}
        # Recall ranks from memtend's own per-user index, never from Chroma's HNSW graph; Chroma cannot store
        # vectors without one, so it is built cheaply (few neighbours per node, a small build search), which makes
        # large writes faster. A direct Chroma query on the collection still works, with coarser neighbours.
        self.memories: Collection = self._collection(
            f"{prefix}_memories",
            embedding_function,
            {"hnsw": {"space": "cosine", "sync_threshold": sync_threshold, **UNUSED_GRAPH}},
        )
        self.history: Collection = self._collection(f"{prefix}_history", None, hnsw)
        # history rows written before they moved into the memories collection: read only when there are any
        self._legacy_history = bool(self._count(self.history))
        self._embedding_function = embedding_function
        self._dimension_seen: int | None = None
        self.write_calls = 0  # Chroma write calls sent on the memories collection (tells a failed write's stage)
        self._upkeep: Collection | None = None  # the memories collection, for clear_folds
        try:
            self.max_batch = min(int(client.get_max_batch_size()), MAX_BATCH)
        except Exception:  # a client without the call: Chroma's smallest default
            self.max_batch = 1_000
        self.kv: Collection = self._collection(f"{prefix}_kv", None, hnsw)
        # Document vectors (for ``search(query=...)``) are searched through Chroma's graph: it is built well.
        self.documents = DocumentRows(
            self._collection(f"{prefix}_documents", None, hnsw),
            self._collection(
                f"{prefix}_document_vectors", None, {"hnsw": {"space": "cosine", "sync_threshold": sync_threshold}}
            ),
        )
        # where change marks were kept before they moved into the memories collection (erasure still clears it)
        self.changes_collection: Collection = self._collection(f"{prefix}_changes", None, hnsw)
        self.changes = ChangeMarks(self.memories, self._store_dimension)
        # fact slots as stored, so set_fact need not read its slot first (enabled by Memory when no other process
        # can write the store: every write of it then passes here)
        self.slots = FactSlots()

    @guarded
    def _count(self, collection: Collection) -> int:
        return int(collection.count())

    @guarded
    def _collection(self, name: str, embedding_function: Any, configuration: dict[str, Any]) -> Collection:
        try:
            made = self.client.get_or_create_collection(
                name, embedding_function=embedding_function, configuration=configuration
            )
        except ValueError as exc:
            found = _EMBEDDING_CONFLICT.search(str(exc))
            if found is None:
                raise
            raise EmbeddingMismatchError(
                f"this store was built with the embedding function {found['stored']!r}, not {found['given']!r}: its "
                "vectors would not compare. Open it with the embedding function it was built with "
                "(Memory(embedding_function=...))."
            ) from None
        return schema_read_once(made)

    def collections(self) -> dict[str, Collection]:
        """Every collection, as Chroma's own (the document store's pending writes moved in first)."""
        documents, vectors = self.documents.raw_collections()
        return {
            "memories": self.memories,
            "history": self.history,
            "kv": self.kv,
            "documents": documents,
            "document_vectors": vectors,
            "changes": self.changes_collection,
        }

    def _dimension(self, user_id: str) -> int:
        """The length of the memories collection's vectors (for a history row written with no record)."""
        if self._dimension_seen is None:
            for flt in (where(user_id), history_where(user_id)):
                got = self.memories.get(where=flt, limit=1, include=["embeddings"])
                raw = got.get("embeddings")
                if raw is not None and len(raw):
                    self._dimension_seen = len(raw[0])
                    break
            else:
                self._dimension_seen = len(self._embedding_function(["dimension"])[0])
        return self._dimension_seen

    def _store_dimension(self) -> int:
        """The length of the memories collection's vectors, from any row (for a store-wide row)."""
        if self._dimension_seen is None:
            raw = self.memories.get(limit=1, include=["embeddings"]).get("embeddings")
            if raw is not None and len(raw):
                self._dimension_seen = len(raw[0])
            else:
                self._dimension_seen = len(self._embedding_function(["dimension"])[0])
        return self._dimension_seen
