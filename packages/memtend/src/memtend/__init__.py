"""memtend: keeps an AI agent's memory healthy.

One core implements every memory policy (gate, precedence, retrieval, compaction, forgetting, erasure) over
Chroma; the framework adapters present it to LangChain, LangGraph and LlamaIndex.
"""

from memtend.errors import (
    EmbeddingModelUnavailableError,
    InvalidInputError,
    InvalidUserIdError,
    MemtendError,
    RecordNotFoundError,
    SensitiveDataError,
    StorageUnavailableError,
    StoreLockedError,
    UnknownKindError,
    UntrustedContentError,
)
from memtend.keyed_store import KeyedStore
from memtend.ledger import Ledger, LedgerEntry
from memtend.memory import (
    CompactionReport,
    ErasureReceipt,
    Event,
    FactResult,
    ForgetReport,
    Hit,
    Memory,
    UserMemory,
)
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
from memtend.session import SessionState
from memtend.transcript import Message, ToolCall

__all__ = [
    "CompactionReport",
    "CompactionResult",
    "EmbeddingModelUnavailableError",
    "ErasureReceipt",
    "Event",
    "FactOutcome",
    "FactResult",
    "ForgetReport",
    "Hit",
    "InvalidInputError",
    "InvalidUserIdError",
    "KeyedStore",
    "Kind",
    "Ledger",
    "LedgerEntry",
    "Memory",
    "MemoryTool",
    "MemtendError",
    "Message",
    "Record",
    "RecordNotFoundError",
    "RetentionPolicy",
    "SensitiveDataError",
    "SessionState",
    "Source",
    "Status",
    "StorageUnavailableError",
    "StoreLockedError",
    "StructuredSummary",
    "SummaryValidationError",
    "ToolCall",
    "UnknownKindError",
    "UntrustedContentError",
    "UserMemory",
    "acompact_transcript",
    "allm_summarizer",
    "canonical_key",
    "clear_tool_results",
    "compact_transcript",
    "llm_summarizer",
]
