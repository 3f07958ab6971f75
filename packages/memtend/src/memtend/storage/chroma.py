"""The Chroma client and the low calls every row format shares: Chroma's errors mapped to memtend's,
the embedded client, schema reads, deletes, vector blanking and index saves."""

from __future__ import annotations

import functools
import hashlib
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, TypeVar

import numpy as np
from chromadb.api import ClientAPI
from chromadb.api.models.Collection import Collection

from memtend.errors import StorageUnavailableError, StoreDamagedError

T = TypeVar("T")
Where = dict[str, Any]

# Collections without meaning (history, keyed store) carry a constant one-dimensional vector: Chroma needs one
# per row, and nothing ever searches them by similarity.
NO_VECTOR = [0.0]
WRITE_BATCH = 2_000
MAX_BATCH = 5_000  # rows per Chroma write call at most (Chroma's own limit may be lower)
UNUSED_GRAPH = {"ef_construction": 16, "max_neighbors": 4}
SMALL_SYNC_THRESHOLD = 10  # rows between index saves of the collections without meaning: such a save costs nothing
SCRUB_BATCH = 100  # record ids per history lookup when scrubbing
_CHROMA_SYNC_THRESHOLD = 1_000  # Chroma's default, for a collection whose configuration does not say
_SAVE_ID = "memtend-save-index-"  # ids that never exist: updates of them only make Chroma count log records
_SAVE_KEY = "memtend_save_index"


def _connection_errors() -> tuple[type[BaseException], ...]:
    import httpx

    return (httpx.TransportError, ConnectionError)


def guarded(fn: Callable[..., T]) -> Callable[..., T]:
    """Turn a lost connection to a Chroma server into StorageUnavailableError (nothing is silently dropped)."""

    @functools.wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> T:
        try:
            return fn(*args, **kwargs)
        except _connection_errors() as exc:
            raise StorageUnavailableError(
                f"Chroma did not answer during {fn.__name__} ({type(exc).__name__}: {exc}); the operation was "
                "not completed. Check that the Chroma server is running and retry."
            ) from exc
        except ValueError as exc:
            if "Could not connect" in str(exc):
                raise StorageUnavailableError(
                    f"Chroma is unreachable during {fn.__name__}: {exc}. Start the server or fix host/port, then retry."
                ) from exc
            raise
        except _chroma_errors() as exc:
            raise chroma_failure(fn.__name__, exc) from exc

    return wrapper


def _chroma_errors() -> type[BaseException]:
    from chromadb.errors import ChromaError

    return ChromaError


# Words in Chroma's errors that mean its files are missing or damaged (SQLite's and the vector index's own).
_DAMAGE_WORDS = (
    "malformed",
    "not a database",
    "no such table",
    "unable to open database",
    "readonly database",
    "hnsw",
    "pickle",
    "segment reader",
    "error finding id",
)


def chroma_failure(operation: str, exc: BaseException) -> StorageUnavailableError | StoreDamagedError:
    """A typed error for an error Chroma raised. Its own message is quoted only when it tells of damaged files
    (other Chroma messages may quote stored values; the cause stays chained for debugging)."""
    message = str(exc)
    if any(word in message.lower() for word in _DAMAGE_WORDS):
        return StoreDamagedError(
            f"Chroma reports missing or damaged store files during {operation} ({message[:300]}). Restore the store "
            "from a backup (for a `chroma run` server: its --path folder); move a damaged folder away to start over"
        )
    return StorageUnavailableError(
        f"Chroma failed during {operation} ({type(exc).__name__}); whether the operation took effect is unknown. "
        "Check what is stored, then retry; if it keeps failing, check the Chroma store or server"
    )


def persistent_client(folder: str) -> ClientAPI:
    """An embedded Chroma client keeping its data in ``folder``: its files checked first (a missing or damaged
    file raises StoreDamagedError), memtend's manifest written once it opens."""
    import chromadb
    from chromadb.errors import ChromaError

    from memtend.storage import files as store_files

    path = Path(folder)
    store_files.check_files(path)
    try:
        client = chromadb.PersistentClient(path=folder)
    except (ChromaError, OSError) as exc:
        raise StoreDamagedError(
            f"Chroma cannot open the store in {folder} ({type(exc).__name__}: {exc}). Its files may be damaged: "
            "restore the folder from a backup, or move it away to start over with an empty store"
        ) from None
    store_files.write_manifest(path)
    return client


def http_client(host: str, port: int, *, ssl: bool = False) -> ClientAPI:
    """A client of a ``chroma run`` server; an unreachable server raises StorageUnavailableError."""
    import chromadb

    try:
        return chromadb.HttpClient(host=host, port=port, ssl=ssl)
    except ValueError as exc:
        raise StorageUnavailableError(
            f"no Chroma server answers at {host}:{port} ({type(exc).__name__}). Start it (chroma run --path DIR "
            "--host HOST --port PORT) or fix the address, then retry"
        ) from None


def schema_read_once(collection: Collection) -> Collection:
    """``collection``, reading its schema once instead of on every write.

    Chroma's client rebuilds a collection's schema from its JSON on every add, upsert and update (with the embedding
    function it names, twice) to find metadata keys to fill with sparse embeddings, a good part of what a single
    write costs beyond Chroma's own work and the embedding. The answer is kept per schema: read again when
    this object's schema is replaced (``modify`` assigns a new one). A Chroma without the hook is left as it is."""
    read = getattr(collection, "_get_sparse_embedding_targets", None)
    if read is None or not hasattr(getattr(collection, "_model", None), "serialized_schema"):
        return collection
    seen: list[Any] = []

    def targets() -> Any:
        schema = collection._model.serialized_schema
        if not seen or seen[0] is not schema:
            seen[:] = [schema, read()]
        return seen[1]

    collection._get_sparse_embedding_targets = targets  # type: ignore[method-assign]
    return collection


def delete_existing(collection: Collection, ids: list[str], flt: Where) -> int:
    """Delete the given ids that exist under the filter; how many were deleted. (Chroma's own delete result
    counts ids that never existed.)"""
    if not ids:
        return 0
    existing = collection.get(ids=ids, where=flt, include=[])["ids"]
    if existing:
        collection.delete(ids=existing, where=flt)
    return len(existing)


def is_server(settings: Any) -> bool:
    return str(getattr(settings, "chroma_api_impl", "")).endswith("FastAPI")


def blank_vectors(collection: Collection, ids: Sequence[str]) -> None:
    """Overwrite the vectors of rows about to be deleted: Chroma's vector index marks a deleted item and keeps its
    vector in its file, which then holds this one (seeded by the row id alone, as history rows' vectors are, so
    the deleted items do not pile up on one point of the graph that searches still walk through)."""
    if not ids:
        return
    got = collection.get(ids=list(ids[:1]), include=["embeddings"])
    vectors = got.get("embeddings")
    if vectors is None or not len(vectors):
        return
    dim = len(vectors[0])
    for start in range(0, len(ids), WRITE_BATCH):
        chunk = list(ids[start : start + WRITE_BATCH])
        collection.update(ids=chunk, embeddings=np.stack([history_vector(i, dim) for i in chunk]))


def save_vector_index(collection: Collection) -> None:
    """Make Chroma save the collection's vector index now, so that its write-ahead log is purged up to here.

    A local Chroma (embedded, or a ``chroma run`` server) saves the index after every ``sync_threshold`` log
    records, and then deletes the log records the saved index and the metadata tables both hold. Updates of ids
    that do not exist are such records and change nothing, so ``sync_threshold`` of them make it save."""
    hnsw = (getattr(collection, "configuration_json", None) or {}).get("hnsw") or {}
    threshold = int(hnsw.get("sync_threshold") or _CHROMA_SYNC_THRESHOLD)
    ids = [f"{_SAVE_ID}{n}" for n in range(threshold)]
    for start in range(0, len(ids), WRITE_BATCH):
        chunk = ids[start : start + WRITE_BATCH]
        collection.update(ids=chunk, metadatas=[{_SAVE_KEY: None} for _ in chunk])


def history_vector(row_id: str, dim: int) -> np.ndarray:
    """The vector stored with a history row. Chroma needs one for every row of the memories collection and nothing
    searches history by meaning: a pseudo-random unit vector seeded by the row id (the same each time the row is
    rewritten), so history rows neither pile up on one point of Chroma's vector index nor sit near a record."""
    seed = int.from_bytes(hashlib.sha256(row_id.encode()).digest()[:8], "big")
    vector = np.random.default_rng(seed).standard_normal(dim).astype(np.float32)
    return vector / np.float32(np.linalg.norm(vector))
