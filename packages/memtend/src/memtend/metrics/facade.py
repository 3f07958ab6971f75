"""The per-user facade's metrics and call-log calls, with their async twins (``UserMemory`` inherits them, so its
module stays small): thin calls into :mod:`memtend.metrics`."""

from __future__ import annotations

import builtins
from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING, Any, Protocol

from memtend import metrics
from memtend.aio import run_io
from memtend.metrics.observe import instrumented
from memtend.metrics.report import RetrievalCheck
from memtend.metrics.tally import CallEntry
from memtend.records import check_name

if TYPE_CHECKING:
    from memtend.handle import FacadeHandle
    from memtend.results import Hit
    from memtend.transcripts.compaction import CompactionResult

__all__ = ["MetricsCalls"]


class _Recalls(Protocol):
    memory: FacadeHandle
    user_id: str

    def recall(self, query: str, k: int = 5) -> builtins.list[Hit]: ...


@instrumented
class MetricsCalls:
    """``metrics``, ``calls``, ``report_recall``, ``report_compaction`` and ``check_retrieval`` of one user."""

    memory: FacadeHandle
    user_id: str

    def metrics(self, session: str | None = None) -> dict[str, Any]:
        """The four memory metrics (None where there is no data yet) and the write counts: this user's, with each
        session's under ``sessions``; with ``session``, that session's only (see :mod:`memtend.metrics.report`)."""
        return metrics.user_metrics(self.memory, self.user_id, _session(session))

    def calls(self, session: str | None = None) -> builtins.list[CallEntry]:
        """The stored memory-call log, oldest first (op, key, outcome, time; never a value): every session's and
        long-term memory's, or one session's (``""``: long-term memory's calls only)."""
        return metrics.call_log(self.memory, self.user_id, _session(session, blank=True))

    def report_recall(self, recalled: Sequence[Any], used: Iterable[Any] | bool, *, session: str = "") -> bool:
        """Tell the metrics how a recall served: ``recalled`` what ``recall`` returned, ``used`` the hits (or record
        ids) the application used, or True / False. Counts toward ``retrieval_hit_rate``; whether it was a hit."""
        return metrics.report_recall(self.memory, self.user_id, recalled, used, _session(session, blank=True) or "")

    def report_compaction(
        self, result: CompactionResult, *, session: str = "", context_window: int | None = None
    ) -> float | None:
        """Tell the metrics a transcript compaction ran (``result``: what ``compact_transcript`` returned): the share
        of the context it fired at (tokens before / ``context_window``, default the result's ``max_tokens``) counts
        toward ``context_utilisation_at_compaction``; returns it (None when it did not compact or has no budget)."""
        sid = _session(session, blank=True) or ""
        return metrics.report_compaction(self.memory, self.user_id, result, sid, context_window)

    def check_retrieval(self: _Recalls, cases: Any, *, k: int = 5, by: str = "id") -> RetrievalCheck:
        """Run held-out queries (pairs of a query and what it should find, or a mapping: with ``by="id"`` the record
        id or ids, with ``by="text"`` a text a recalled record should contain; ``memtend.metrics.fact_cases`` builds
        them from the user's facts) through ``recall`` and count each toward ``retrieval_hit_rate`` (apart:
        ``detail.retrieval_checked_hit_rate``)."""
        return metrics.check_retrieval(self.memory, self.user_id, lambda q, n: self.recall(q, n), cases, k, by)

    # ------------------------------------------------------------------ async twins
    async def ametrics(self, session: str | None = None) -> dict[str, Any]:
        return await run_io(self.metrics, session)

    async def acalls(self, session: str | None = None) -> builtins.list[CallEntry]:
        return await run_io(self.calls, session)

    async def areport_recall(self, recalled: Sequence[Any], used: Iterable[Any] | bool, *, session: str = "") -> bool:
        return await run_io(self.report_recall, recalled, used, session=session)

    async def areport_compaction(
        self, result: CompactionResult, *, session: str = "", context_window: int | None = None
    ) -> float | None:
        return await run_io(self.report_compaction, result, session=session, context_window=context_window)

    async def acheck_retrieval(self: _Recalls, cases: Any, *, k: int = 5, by: str = "id") -> RetrievalCheck:
        return await run_io(MetricsCalls.check_retrieval, self, cases, k=k, by=by)


def _session(session: object, *, blank: bool = False) -> str | None:
    """A session id as given to a metrics call, checked (None: every session; ``""`` allowed with ``blank``)."""
    if session is None or (blank and session == ""):
        return None if session is None else ""
    return check_name(session, "session", blank=False)
