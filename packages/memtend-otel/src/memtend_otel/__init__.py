"""OpenTelemetry for memtend: an observer (:class:`memtend.metrics.Observer`) that turns each memory operation into
a span and each count into OTel metrics. Plugged in by entry point (``memtend.observer``); the core never imports it.
"""

from __future__ import annotations

import threading
from collections import Counter
from collections.abc import Iterable, Mapping
from importlib.metadata import PackageNotFoundError, version
from typing import Any

from memtend.metrics import CallEntry
from opentelemetry import metrics, trace
from opentelemetry.metrics import CallbackOptions, Observation
from opentelemetry.trace import Status, StatusCode

__all__ = ["OTelObserver", "observer"]

try:
    __version__ = version("memtend-otel")
except PackageNotFoundError:  # run from a source tree
    __version__ = "0.0.0"

_WRITES = {
    "writes.refused": "refused",
    "writes.held": "held_for_review",
    "writes.proposed": "proposed",
    "writes.accepted": "accepted",
}


class OTelObserver:
    """Spans and metrics for memtend through OpenTelemetry's providers (the global ones unless given).

    ``identify``: spans also carry the user and session ids (metrics never do)."""

    def __init__(self, *, tracer_provider: Any = None, meter_provider: Any = None, identify: bool = False) -> None:
        self.identify = bool(identify)
        self._tracer = trace.get_tracer("memtend", __version__, tracer_provider=tracer_provider)
        meter = metrics.get_meter("memtend", __version__, meter_provider=meter_provider)
        self._operations = meter.create_counter("memtend.operations", unit="{operation}", description="memory calls")
        self._duration = meter.create_histogram(
            "memtend.operation.duration", unit="ms", description="how long a memory call took"
        )
        self._gets = meter.create_counter("memtend.memory.gets", unit="{get}", description="working-memory gets")
        self._compactions = meter.create_counter(
            "memtend.compactions", unit="{compaction}", description="transcript compactions reported"
        )
        self._utilisation = meter.create_histogram(
            "memtend.compaction.context_utilisation",
            unit="1",
            description="share of the context budget used when compaction fired",
        )
        self._judged = meter.create_counter(
            "memtend.retrieval.judged", unit="{recall}", description="recalls judged (reported or checked)"
        )
        self._side_effects = meter.create_counter(
            "memtend.side_effects", unit="{call}", description="side-effecting calls recorded in the ledger"
        )
        self._writes = meter.create_counter(
            "memtend.writes", unit="{write}", description="writes refused, held for review, proposed, accepted"
        )
        self._lock = threading.Lock()
        self._totals: Counter[str] = Counter()  # this process's counts, for the rate gauges
        for name, parts, description in (
            ("memtend.memory.hit_rate", ("memory.hits", "memory.gets"), "gets that found their key"),
            (
                "memtend.context.utilisation_at_compaction",
                ("compaction.utilisation", "compaction.measured"),
                "mean share of the context budget used when compaction fired",
            ),
            (
                "memtend.retrieval.hit_rate",
                ("retrieval.hits", "retrieval.judged"),
                "recalls that found what was needed",
            ),
            ("memtend.side_effect.repeat_rate", ("ledger.repeats", "ledger.calls"), "ledger calls that repeated one"),
        ):
            meter.create_observable_gauge(name, callbacks=[self._rate(*parts)], unit="1", description=description)

    # ------------------------------------------------------------------ memtend.metrics.Observer
    def operation(self, user_id: str, entry: CallEntry, started_ns: int, ended_ns: int) -> None:
        attributes: dict[str, Any] = {
            "memtend.op": entry.op,
            "memtend.outcome": entry.outcome,
            "memtend.tier": entry.tier,
        }
        if entry.key:
            attributes["memtend.key"] = entry.key
        if self.identify:
            attributes["memtend.user_id"] = user_id
            if entry.session:
                attributes["memtend.session_id"] = entry.session
        name = f"memtend.working.{entry.op}" if entry.tier == "working" else f"memtend.{entry.op}"
        span = self._tracer.start_span(name, start_time=started_ns, attributes=attributes)
        if entry.outcome.startswith("error"):
            span.set_status(Status(StatusCode.ERROR, entry.outcome))
        span.end(end_time=ended_ns)
        kind = {"memtend.op": entry.op, "memtend.tier": entry.tier}
        self._operations.add(1, {**kind, "memtend.outcome": _outcome_class(entry.outcome)})
        self._duration.record(entry.ms, kind)

    def counts(self, user_id: str, session: str, added: Mapping[str, float], peaks: Mapping[str, float]) -> None:
        c = Counter({k: v for k, v in added.items() if v})
        if not c:
            return
        if c["memory.gets"]:
            hits = int(c["memory.hits"])
            self._add(self._gets, hits, {"memtend.hit": True})
            self._add(self._gets, int(c["memory.gets"]) - hits, {"memtend.hit": False})
        if c["compaction.count"]:
            self._compactions.add(int(c["compaction.count"]))
        if c["compaction.measured"]:
            self._utilisation.record(float(c["compaction.utilisation"]))
        for source in ("reported", "checked"):
            judged, hits = int(c[f"retrieval.{source}"]), int(c[f"retrieval.{source}_hits"])
            self._add(self._judged, hits, {"memtend.source": source, "memtend.hit": True})
            self._add(self._judged, judged - hits, {"memtend.source": source, "memtend.hit": False})
        if c["ledger.calls"] or c["ledger.repeats"]:
            repeats = int(c["ledger.repeats"])
            self._add(self._side_effects, repeats, {"memtend.repeat": True})
            self._add(self._side_effects, int(c["ledger.calls"]) - repeats, {"memtend.repeat": False})
        for key, outcome in _WRITES.items():
            self._add(self._writes, int(c[key]), {"memtend.outcome": outcome})
        with self._lock:
            self._totals.update(c)
            self._totals["retrieval.judged"] += c["retrieval.reported"] + c["retrieval.checked"]
            self._totals["retrieval.hits"] += c["retrieval.reported_hits"] + c["retrieval.checked_hits"]

    # ------------------------------------------------------------------ machinery
    @staticmethod
    def _add(counter: Any, amount: int, attributes: dict[str, Any]) -> None:
        if amount > 0:
            counter.add(amount, attributes)

    def _rate(self, part: str, whole: str) -> Any:
        def observe(options: CallbackOptions) -> Iterable[Observation]:
            with self._lock:
                numerator, denominator = self._totals[part], self._totals[whole]
            return [Observation(numerator / denominator)] if denominator else []

        return observe


def _outcome_class(outcome: str) -> str:
    """An outcome as a metric attribute: few values (``3 results`` is ``ok``; ``error: X`` keeps its type)."""
    if outcome.endswith(" results") or outcome[:1].isdigit():
        return "ok"
    return outcome.split(" ")[0] if not outcome.startswith("error") else outcome


def observer() -> OTelObserver:
    """The entry point's factory: an observer on the global providers."""
    return OTelObserver()
