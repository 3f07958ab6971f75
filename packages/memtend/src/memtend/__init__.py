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
    EmbeddingMismatchError,
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
    UserMismatchError,
    UserNotFoundError,
    WriteInterruptedError,
)

if TYPE_CHECKING:
    from memtend.capture.extractor import allm_extractor, llm_extractor
    from memtend.capture.report import CaptureReport
    from memtend.connect import open_memory
    from memtend.documents.keyed import KeyedStore
    from memtend.documents.store import (
        DeleteDocument,
        Document,
        DocumentOp,
        DocumentStore,
        GetDocument,
        ListNamespaces,
        PutDocument,
        SearchDocuments,
    )
    from memtend.memory import Memory
    from memtend.policies.forgetting import RetentionPolicy
    from memtend.policies.precedence import FactOutcome, canonical_key
    from memtend.records import Kind, Record, Scope, Source, Status
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
    from memtend.transcripts.compaction import (
        CompactionResult,
        acompact_transcript,
        clear_tool_results,
        compact_transcript,
    )
    from memtend.transcripts.messages import Message, ToolCall
    from memtend.transcripts.summary import StructuredSummary, SummaryValidationError, allm_summarizer, llm_summarizer
    from memtend.upkeep.settings import Upkeep, UpkeepReport
    from memtend.user_memory import UserMemory
    from memtend.working.ledger import Ledger, LedgerEntry
    from memtend.working.memory_tool import MemoryTool
    from memtend.working.session import SessionState
    from memtend.working.side_effects import SideEffectGuard, side_effecting

# Where each lazily loaded name lives.
_LAZY: dict[str, str] = {
    "DeleteDocument": "memtend.documents.store",
    "Document": "memtend.documents.store",
    "DocumentOp": "memtend.documents.store",
    "DocumentStore": "memtend.documents.store",
    "GetDocument": "memtend.documents.store",
    "ListNamespaces": "memtend.documents.store",
    "PutDocument": "memtend.documents.store",
    "SearchDocuments": "memtend.documents.store",
    "KeyedStore": "memtend.documents.keyed",
    "open_memory": "memtend.connect",
    "Ledger": "memtend.working.ledger",
    "LedgerEntry": "memtend.working.ledger",
    "SideEffectGuard": "memtend.working.side_effects",
    "side_effecting": "memtend.working.side_effects",
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
    "MemoryTool": "memtend.working.memory_tool",
    "RetentionPolicy": "memtend.policies.forgetting",
    "FactOutcome": "memtend.policies.precedence",
    "canonical_key": "memtend.policies.precedence",
    "StructuredSummary": "memtend.transcripts.summary",
    "SummaryValidationError": "memtend.transcripts.summary",
    "allm_summarizer": "memtend.transcripts.summary",
    "CaptureReport": "memtend.capture.report",
    "llm_extractor": "memtend.capture.extractor",
    "allm_extractor": "memtend.capture.extractor",
    "llm_summarizer": "memtend.transcripts.summary",
    "CompactionResult": "memtend.transcripts.compaction",
    "acompact_transcript": "memtend.transcripts.compaction",
    "clear_tool_results": "memtend.transcripts.compaction",
    "compact_transcript": "memtend.transcripts.compaction",
    "Kind": "memtend.records",
    "Record": "memtend.records",
    "Scope": "memtend.records",
    "Source": "memtend.records",
    "Upkeep": "memtend.upkeep.settings",
    "UpkeepReport": "memtend.upkeep.settings",
    "Status": "memtend.records",
    "SessionState": "memtend.working.session",
    "Message": "memtend.transcripts.messages",
    "ToolCall": "memtend.transcripts.messages",
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
    "CaptureReport",
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
    "EmbeddingMismatchError",
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
    "Scope",
    "SearchDocuments",
    "SensitiveDataError",
    "SensitiveIdentifierError",
    "SessionState",
    "SideEffectGuard",
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
    "Upkeep",
    "UpkeepReport",
    "UserMemory",
    "UserMismatchError",
    "UserNotFoundError",
    "WriteInterruptedError",
    "acompact_transcript",
    "allm_extractor",
    "allm_summarizer",
    "canonical_key",
    "clear_tool_results",
    "compact_transcript",
    "llm_extractor",
    "llm_summarizer",
    "open_memory",
    "side_effecting",
]
