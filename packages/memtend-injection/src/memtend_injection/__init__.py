"""memtend-injection: a learned second opinion for memtend's write gate on external text.

memtend flags text that reads like an order aimed at the AI agent (prompt injection) by patterns; installed
beside it (``pip install memtend[injection]``), this distribution adds a classifier over a multilingual sentence
encoder that catches orders no pattern lists. ``Memory()`` finds it through the ``memtend.injection_check`` entry
point and asks it about external text the patterns passed; ``Memory(injection_check=None)`` runs without it, and
:func:`reads_like_injection` can be passed to ``memtend.policies.gate.check_write(..., meaning=...)`` directly.
"""

from __future__ import annotations

from collections.abc import Callable

from memtend_injection.classifier import reads_like_injection, score

__all__ = ["injection_check", "reads_like_injection", "score"]


def injection_check() -> Callable[[str], bool]:
    """The entry point's factory: the check ``Memory`` uses (the encoder loads on its first call, not here)."""
    return reads_like_injection
