"""What the layers under :class:`~memtend.memory.Memory` need of it, as protocols, so that they never import it.

The document store, working memory and guarded writes take a :class:`MemoryHandle`; the per-user facade
(:mod:`memtend.user_memory`) takes the wider :class:`FacadeHandle`. ``Memory`` is the one implementation; these
names are all that lower modules may use of it (tests/test_layers.py checks that none imports ``memtend.memory``).
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import Future
from typing import TYPE_CHECKING, Any, Protocol, TypeVar

import numpy as np

if TYPE_CHECKING:
    from memtend.helpers import Parts
    from memtend.index.user_index import UserIndex
    from memtend.policies.changes import Change
    from memtend.policies.compaction import LineSummarizer
    from memtend.policies.forgetting import RetentionPolicy
    from memtend.policies.gate import InjectionCheck
    from memtend.policies.proposals import WriteMode
    from memtend.policies.retrieval import RetrievalConfig
    from memtend.results import ChangeEvent
    from memtend.storage.document_rows import DocRow
    from memtend.storage.store import Storage

__all__ = ["FacadeHandle", "MemoryHandle"]

T = TypeVar("T")


class MemoryHandle(Protocol):
    """A store as the layers under the facade see it: its storage and settings, its lock, and the write path."""

    storage: Storage
    retention: RetentionPolicy
    lock: threading.RLock
    max_document_bytes: int  # the largest document value this store takes (memtend.documents)

    @property
    def exclusive(self) -> bool:
        """True when no other process can write the store (an embedded folder whose lock this process holds)."""
        ...

    def embed(self, texts: Sequence[str]) -> np.ndarray: ...

    def embed_query(self, text: str) -> np.ndarray:
        """One query text's vector (recent ones are kept)."""
        ...

    def apply(self, change: Change) -> list[ChangeEvent]:
        """Perform a planned change: the one write path."""
        ...

    def forget_index(self, user_id: str) -> None:
        """Drop the user's cached retrieval index: it is read again from storage on next use."""
        ...

    def emit_documents_changed(
        self,
        user_id: str,
        written: Sequence[DocRow],
        deleted: Sequence[DocRow],
        masked: Mapping[str, tuple[str, ...]],
    ) -> None:
        """Tell ``on_change`` about a document write the document store has applied."""
        ...


class FacadeHandle(MemoryHandle, Protocol):
    """A store as the per-user facade sees it: the handle, plus recall's index and the single-write pipeline."""

    retrieval: RetrievalConfig
    on_change: Callable[[ChangeEvent], None] | None
    injection_check: InjectionCheck | None  # the gate's second opinion on external text (None: patterns alone)
    write_mode: WriteMode  # "propose": the agent's and an extractor's writes wait as proposals (policies.proposals)
    extractor: Any  # what capture asks by default (None: the offline rules), see memtend.capture
    line_summarizer: LineSummarizer | None  # folds a memory whose window ended into one line (None: extractive)

    def settled_storage(self) -> Storage:
        """Storage, with buffered usage stamps written first."""
        ...

    def usage_stamps(self, user_id: str) -> dict[str, float]:
        """The user's usage stamps not yet known to be stored (record id -> time), for a read to lay over."""
        ...

    def user_index(self, user_id: str) -> UserIndex:
        """The user's retrieval index, caught up with other processes' writes (hold ``lock`` while using it)."""
        ...

    def preload_index(self, user_id: str) -> Future[UserIndex] | None: ...

    def mark_stale(self, user_id: str, fact_ids: Sequence[str]) -> None:
        """These fact keys are read again from storage when the user's cached index is next used."""
        ...

    def gated_beside_embedding(self, text: object, gate: Callable[[], T]) -> tuple[T, dict[str, np.ndarray]]: ...

    def embed_parts(self, texts: Sequence[str]) -> Parts | None: ...

    def apply_streamed(self, change: Change, parts: Parts) -> list[ChangeEvent]: ...

    def emit(self, events: list[ChangeEvent]) -> list[ChangeEvent]: ...
