"""memtend: keeps an AI agent's memory healthy.

One core implements every memory policy (gate, precedence, retrieval, compaction, forgetting, erasure) over
Chroma; the framework adapters present it to LangChain, LangGraph and LlamaIndex.

``import memtend`` loads only the errors; every other name is imported on first use (module ``__getattr__``), so
``from memtend import Message`` or ``memtend --help`` never load chromadb or the embedding model. Type checkers
read the ``TYPE_CHECKING`` imports below; ``_LAZY`` must name the same module for each (a test checks both).
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from memtend.errors import (
    DocumentTooLargeError,
    EmbeddingModelUnavailableError,
    InvalidInputError,
    InvalidUserIdError,
    MemoryClosedError,
    MemtendError,
    RecordNotFoundError,
    ReservedNamespaceError,
    SensitiveDataError,
    SensitiveIdentifierError,
    StorageUnavailableError,
    StoreDamagedError,
    StoreLockedError,
    StoreNotFoundError,
    UnknownKindError,
    UntrustedContentError,
    WriteInterruptedError,
)

if TYPE_CHECKING:
    from memtend.documents import (
        DeleteDocument,
        Document,
        DocumentOp,
        DocumentStore,
        GetDocument,
        ListNamespaces,
        PutDocument,
        SearchDocuments,
    )
    from memtend.keyed_store import KeyedStore
    from memtend.ledger import Ledger, LedgerEntry
    from memtend.memory import Memory
    from memtend.memory_tool import MemoryTool
    from memtend.policies.forgetting import RetentionPolicy
    from memtend.policies.precedence import FactOutcome, canonical_key
    from memtend.policies.summary import StructuredSummary, SummaryValidationError, allm_summarizer, llm_summarizer
    from memtend.policies.transcript_compaction import (
        CompactionResult,
        acompact_transcript,
        clear_tool_results,
        compact_transcript,
    )
    from memtend.records import Kind, Record, Source, Status
    from memtend.results import (
        ChangeEvent,
        ChangeType,
        CompactionReport,
        DeleteReport,
        ErasureReceipt,
        Event,
        FactResult,
        ForgetReport,
        HistoryEntry,
        Hit,
    )
    from memtend.session import SessionState
    from memtend.transcript import Message, ToolCall
    from memtend.user_memory import UserMemory

# Where each lazily loaded name lives.
_LAZY: dict[str, str] = {
    "DeleteDocument": "memtend.documents",
    "Document": "memtend.documents",
    "DocumentOp": "memtend.documents",
    "DocumentStore": "memtend.documents",
    "GetDocument": "memtend.documents",
    "ListNamespaces": "memtend.documents",
    "PutDocument": "memtend.documents",
    "SearchDocuments": "memtend.documents",
    "KeyedStore": "memtend.keyed_store",
    "Ledger": "memtend.ledger",
    "LedgerEntry": "memtend.ledger",
    "Memory": "memtend.memory",
    "ChangeEvent": "memtend.results",
    "ChangeType": "memtend.results",
    "CompactionReport": "memtend.results",
    "DeleteReport": "memtend.results",
    "ErasureReceipt": "memtend.results",
    "Event": "memtend.results",
    "FactResult": "memtend.results",
    "ForgetReport": "memtend.results",
    "HistoryEntry": "memtend.results",
    "Hit": "memtend.results",
    "UserMemory": "memtend.user_memory",
    "MemoryTool": "memtend.memory_tool",
    "RetentionPolicy": "memtend.policies.forgetting",
    "FactOutcome": "memtend.policies.precedence",
    "canonical_key": "memtend.policies.precedence",
    "StructuredSummary": "memtend.policies.summary",
    "SummaryValidationError": "memtend.policies.summary",
    "allm_summarizer": "memtend.policies.summary",
    "llm_summarizer": "memtend.policies.summary",
    "CompactionResult": "memtend.policies.transcript_compaction",
    "acompact_transcript": "memtend.policies.transcript_compaction",
    "clear_tool_results": "memtend.policies.transcript_compaction",
    "compact_transcript": "memtend.policies.transcript_compaction",
    "Kind": "memtend.records",
    "Record": "memtend.records",
    "Source": "memtend.records",
    "Status": "memtend.records",
    "SessionState": "memtend.session",
    "Message": "memtend.transcript",
    "ToolCall": "memtend.transcript",
}


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'memtend' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value  # later lookups skip __getattr__
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *_LAZY})


__all__ = [
    "ChangeEvent",
    "ChangeType",
    "CompactionReport",
    "CompactionResult",
    "DeleteDocument",
    "DeleteReport",
    "Document",
    "DocumentOp",
    "DocumentStore",
    "DocumentTooLargeError",
    "EmbeddingModelUnavailableError",
    "ErasureReceipt",
    "Event",
    "FactOutcome",
    "FactResult",
    "ForgetReport",
    "GetDocument",
    "HistoryEntry",
    "Hit",
    "InvalidInputError",
    "InvalidUserIdError",
    "KeyedStore",
    "Kind",
    "Ledger",
    "LedgerEntry",
    "ListNamespaces",
    "Memory",
    "MemoryClosedError",
    "MemoryTool",
    "MemtendError",
    "Message",
    "PutDocument",
    "Record",
    "RecordNotFoundError",
    "ReservedNamespaceError",
    "RetentionPolicy",
    "SearchDocuments",
    "SensitiveDataError",
    "SensitiveIdentifierError",
    "SessionState",
    "Source",
    "Status",
    "StorageUnavailableError",
    "StoreDamagedError",
    "StoreLockedError",
    "StoreNotFoundError",
    "StructuredSummary",
    "SummaryValidationError",
    "ToolCall",
    "UnknownKindError",
    "UntrustedContentError",
    "UserMemory",
    "WriteInterruptedError",
    "acompact_transcript",
    "allm_summarizer",
    "canonical_key",
    "clear_tool_results",
    "compact_transcript",
    "llm_summarizer",
]
