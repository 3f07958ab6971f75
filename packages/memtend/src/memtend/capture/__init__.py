"""Capture: what of a turn is worth keeping, decided by an extractor (offline rules or an LLM), then written or
merged through the facade's own writes with its provenance. See :mod:`memtend.policies.capture` for the rules."""

from memtend.capture.extractor import AsyncExtractor, Extractor, allm_extractor, llm_extractor, offline_extractor
from memtend.capture.report import Captured, CaptureReport

__all__ = [
    "AsyncExtractor",
    "CaptureReport",
    "Captured",
    "Extractor",
    "allm_extractor",
    "llm_extractor",
    "offline_extractor",
]
