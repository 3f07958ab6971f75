"""The gate's decision on one write: refuse or mask sensitive values, flag injection, hold external text."""

from __future__ import annotations

from dataclasses import dataclass

from memtend.errors import InvalidInputError, SensitiveDataError
from memtend.policies.gate.injection import InjectionCheck, looks_like_injection
from memtend.policies.gate.policy import GatePolicy
from memtend.policies.gate.sensitive import find_sensitive, redact_all
from memtend.records import Source, Status

__all__ = ["GateDecision", "check_write"]


@dataclass(frozen=True)
class GateDecision:
    """What the gate decided about one write."""

    text: str  # the text to store: the input, or the input with sensitive values masked
    status: Status  # ACTIVE, or PENDING_REVIEW for external text
    flagged: bool  # the text reads like an instruction to the agent (prompt injection)
    redacted_kinds: tuple[str, ...]  # kinds masked in ``text``, sorted; empty if nothing was masked


def check_write(
    text: str,
    source: Source,
    *,
    redact: bool = False,
    policy: GatePolicy | None = None,
    meaning: InjectionCheck | None = None,
) -> GateDecision:
    """Decide how ``text`` from ``source`` may be stored.

    Raises :class:`SensitiveDataError` (naming the kinds found, never the values) if the text holds a secret
    or sensitive value, unless ``redact=True``, in which case the values are masked as
    ``[REDACTED:<kind>]``. Text from ``Source.EXTERNAL`` is stored as ``PENDING_REVIEW``; other sources as
    ``ACTIVE``. ``flagged`` is set for any source when the text reads like a prompt injection: by patterns, and
    for external text also by ``meaning`` when given (an :class:`InjectionCheck`, such as the one the optional
    ``memtend-injection`` distribution provides).
    """
    if not isinstance(text, str):
        raise InvalidInputError(f"text must be a str, got {type(text).__name__}")
    source = Source.parse(source)
    findings = find_sensitive(text, policy=policy)
    kinds: tuple[str, ...] = ()
    stored = text
    if findings:
        if not redact:
            raise SensitiveDataError([f.kind for f in findings])
        stored, found = redact_all(text, findings, policy)
        kinds = tuple(sorted(found))
    return GateDecision(
        text=stored,
        status=Status.PENDING_REVIEW if source is Source.EXTERNAL else Status.ACTIVE,
        # meaning is checked for external text only (an encoding); other sources get the patterns (microseconds)
        flagged=looks_like_injection(text, meaning=meaning if source is Source.EXTERNAL else None),
        redacted_kinds=kinds,
    )
