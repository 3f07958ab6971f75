"""The memory metrics: memory hit rate, context utilisation at compaction, retrieval hit rate and side-effect
repeat rate, with counts of writes refused, held, proposed and accepted, per session, per user and store-wide; the
stored memory-call log; and the observers (``memtend[otel]``) told about each operation.

:mod:`~memtend.metrics.tally` counts as calls happen, :mod:`~memtend.metrics.report` reads and computes,
:mod:`~memtend.metrics.observe` sees each facade call. The facade's calls (``UserMemory.metrics``, ``calls``,
``report_recall``, ``report_compaction``, ``check_retrieval``; ``Memory.metrics``) are thin calls into these.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from memtend.metrics.observe import recall_counts, utilisation_counts
from memtend.metrics.report import (
    RetrievalCheck,
    call_log,
    checked_cases,
    fact_cases,
    run_check,
    store_metrics,
    user_metrics,
)
from memtend.metrics.tally import CallEntry, Observer, by_operator, note_counts, observers, set_observers

if TYPE_CHECKING:
    from memtend.handle import MemoryHandle

__all__ = [
    "CallEntry",
    "Observer",
    "RetrievalCheck",
    "by_operator",
    "call_log",
    "check_retrieval",
    "fact_cases",
    "observers",
    "report_compaction",
    "report_recall",
    "set_observers",
    "store_metrics",
    "user_metrics",
]


def report_recall(memory: MemoryHandle, user_id: str, recalled: Any, used: Any, session: str) -> bool:
    """Count one recall the application judged; whether it was a hit."""
    counts = recall_counts(recalled, used)
    note_counts(memory, user_id, counts, session=session)
    return bool(counts["retrieval.reported_hits"])


def report_compaction(
    memory: MemoryHandle, user_id: str, result: Any, session: str, context_window: int | None
) -> float | None:
    """Count one transcript compaction an adapter or application ran; the share of the budget it fired at."""
    counts, peaks = utilisation_counts(result, context_window)
    if counts:
        note_counts(memory, user_id, counts, session=session, peaks=peaks)
    return counts.get("compaction.utilisation")


def check_retrieval(
    memory: MemoryHandle, user_id: str, recall: Any, cases: Any, k: int, by: str = "id"
) -> RetrievalCheck:
    """Run held-out queries through ``recall`` and count each as a checked recall, hit or missed."""
    checked = run_check(recall, checked_cases(cases, by), k, by)
    counts = {"retrieval.checked": checked.cases, "retrieval.checked_hits": checked.hits}
    note_counts(memory, user_id, counts)
    return checked
