"""Assembly: every detector (built-in, then the policy's own), allowed values dropped, overlapping hits merged
(the most specific kind names the merged span), and redaction to a fixpoint."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator

from memtend.errors import InvalidInputError
from memtend.policies.gate.common import OPAQUE, Finding, Hit, mask_markers
from memtend.policies.gate.credentials import credential_hits, url_password_hits
from memtend.policies.gate.normalise import normalise
from memtend.policies.gate.numbers import card_hits, iban_hits, national_id_hits
from memtend.policies.gate.passwords import password_hits
from memtend.policies.gate.policy import DEFAULT_POLICY, GatePolicy, check_custom_finding
from memtend.policies.gate.prefilter import LONG_TEXT, LongText, long_text
from memtend.policies.gate.tokens import private_key_hits, secret_hits, token_hits

__all__ = ["find_sensitive", "redact", "redact_all"]

_DETECTORS: tuple[Callable[[str, str, LongText | None], Iterator[Hit]], ...] = (
    private_key_hits,
    token_hits,
    card_hits,
    iban_hits,
    national_id_hits,
    password_hits,
    credential_hits,
    url_password_hits,
    secret_hits,
)
_GENERIC_KINDS = {"secret": 3, "password": 2, "pin": 2, "national_id": 1}
_NUMBER_DETECTORS = frozenset((card_hits, iban_hits, national_id_hits))
# Generated identifiers: a UUID (8-4-4-4-12 hex), a hex hash of 32 characters or more holding a letter, or a model
# provider's tool-call or message id (``call_``, ``toolu_``, ``fc_``, ``msg_``, ``resp_``, ``chatcmpl-``, ``run-``
# and 20 or more letters and digits, a letter among them). Their digits and letters can pass a card's Luhn check or
# an IBAN's checksum by chance (about one UUID in 20,000; ``call_`` and 24 hex digits as often), but a number inside
# one is never a card, IBAN or national id.
_GENERATED_ID = re.compile(
    r"(?<![0-9A-Za-z])(?:[0-9a-f]{8}(?:-[0-9a-f]{4}){3}-[0-9a-f]{12}|[0-9A-F]{8}(?:-[0-9A-F]{4}){3}-[0-9A-F]{12}"
    r"|(?=[0-9]*[a-f])[0-9a-f]{32,}|(?=[0-9]*[A-F])[0-9A-F]{32,}"
    r"|(?:call|toolu|fc|msg|resp|chatcmpl|run)[_-](?=[0-9]*[A-Za-z])[0-9A-Za-z]{20,})(?![0-9A-Za-z])"
)


_ID_CHARS = frozenset("0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ_-")


def _in_generated_id(text: str, start: int, end: int) -> bool:
    """The span lies inside a generated identifier. Identifiers hold only letters, digits, ``_`` and ``-``, so
    only the run of such characters around the span is searched, not the whole text."""
    if any(text[i] not in _ID_CHARS for i in range(start, end)):
        return False
    left, right = start, end
    while left > 0 and text[left - 1] in _ID_CHARS:
        left -= 1
    while right < len(text) and text[right] in _ID_CHARS:
        right += 1
    return any(m.start() <= start and end <= m.end() for m in _GENERATED_ID.finditer(text, left, right))


def _rank(kind: str) -> int:
    return _GENERIC_KINDS.get(kind, 0)


def _policy(policy: GatePolicy | None) -> GatePolicy:
    if policy is None:
        return DEFAULT_POLICY
    if not isinstance(policy, GatePolicy):
        raise InvalidInputError(f"policy must be a GatePolicy, got {type(policy).__name__}")
    return policy


def _all_hits(masked: str, policy: GatePolicy, long_at: int | None) -> Iterator[Hit]:
    """Hits as spans of ``masked``: the built-in detectors read its normal form (NFKC, invisible characters
    dropped, ASCII digits) and their spans are mapped back; custom detectors read ``masked`` itself. A normal form
    of ``long_at`` characters or more is read through the prefilter (``None``: never)."""
    normal = normalise(masked)
    scan = normal.text
    lower = scan.lower()
    long = long_text(scan, lower, long_at)
    hits: list[Hit] = []
    for detector in _DETECTORS:
        found = detector(scan, lower, long)
        if detector in _NUMBER_DETECTORS:
            found = (hit for hit in found if not _in_generated_id(scan, hit[0], hit[1]))
        hits.extend(found)
    for start, end, kind in hits:
        # Never let a span start or end inside an earlier marker.
        while start < end and scan[start] == OPAQUE:
            start += 1
        while end > start and scan[end - 1] == OPAQUE:
            end -= 1
        if start < end:
            yield (*normal.span(start, end), kind)
    for custom in policy.detectors:
        for finding in custom(masked):
            checked = check_custom_finding(custom, finding, len(masked))
            yield checked.start, checked.end, checked.kind


def _allowed(policy: GatePolicy, kind: str, value: str) -> bool:
    """An allowed value, as written or in normal form (an allowed test card written in full-width digits)."""
    return policy.allow.allows(kind, value) or policy.allow.allows(kind, normalise(value).text)


def find_sensitive(text: str, *, policy: GatePolicy | None = None) -> list[Finding]:
    """Every secret or sensitive value in ``text``, as non-overlapping findings sorted by position.

    Already redacted values (``[REDACTED:<kind>]``) are not found again. ``policy`` adds custom detectors and
    an allow-list (:class:`GatePolicy`); without it only the built-in detectors run.
    """
    if not isinstance(text, str):
        raise InvalidInputError(f"text must be a str, got {type(text).__name__}")
    return _find(text, _policy(policy), LONG_TEXT)


def _find(text: str, policy: GatePolicy, long_at: int | None) -> list[Finding]:
    """:func:`find_sensitive`, with the prefilter from ``long_at`` characters (``None``: the plain whole-text scans,
    which the tests and the benchmark compare it with)."""
    if not text:
        return []
    masked = mask_markers(text)
    hits: list[Hit] = []
    for start, end, kind in _all_hits(masked, policy, long_at):
        # Never let a span start or end inside an earlier marker.
        while start < end and masked[start] == OPAQUE:
            start += 1
        while end > start and masked[end - 1] == OPAQUE:
            end -= 1
        if start < end and not (policy.allow and _allowed(policy, kind, text[start:end])):
            hits.append((start, end, kind))
    if not hits:
        return []
    hits.sort()
    findings: list[Finding] = []
    cur_start, cur_end, cur_kind = hits[0]
    best = (_rank(cur_kind), -(cur_end - cur_start))  # the most specific kind, then the longest hit, names a span
    for start, end, kind in hits[1:]:
        if start < cur_end:  # overlaps: merge
            cur_end = max(cur_end, end)
            key = (_rank(kind), -(end - start))
            if key < best:
                best, cur_kind = key, kind
        else:
            findings.append(Finding(cur_kind, cur_start, cur_end))
            cur_start, cur_end, cur_kind = start, end, kind
            best = (_rank(kind), -(end - start))
    findings.append(Finding(cur_kind, cur_start, cur_end))
    return findings


def _apply(text: str, findings: list[Finding]) -> str:
    parts: list[str] = []
    pos = 0
    for finding in sorted(findings, key=lambda f: (f.start, f.end)):
        start = max(finding.start, pos)
        end = min(finding.end, len(text))
        if end <= start:
            continue
        parts.append(text[pos:start])
        parts.append(f"[REDACTED:{finding.kind}]")
        pos = end
    parts.append(text[pos:])
    return "".join(parts)


_MAX_PASSES = 16


def redact_all(text: str, findings: list[Finding], policy: GatePolicy | None = None) -> tuple[str, set[str]]:
    """Mask ``findings``, then rescan until nothing is found (masking can expose a neighbouring value)."""
    kinds: set[str] = set()
    for _ in range(_MAX_PASSES):
        if not findings:
            break
        kinds.update(f.kind for f in findings)
        text = _apply(text, findings)
        findings = find_sensitive(text, policy=policy)
    return text, kinds


def redact(text: str, findings: list[Finding] | None = None, *, policy: GatePolicy | None = None) -> str:
    """``text`` with each finding replaced by ``[REDACTED:<kind>]``.

    Without ``findings``, the text is scanned (and rescanned after masking) so that nothing sensitive is
    left: ``find_sensitive(redact(text)) == []``. With ``findings`` (from :func:`find_sensitive` on the same
    text), exactly those spans are masked. ``policy`` is as for :func:`find_sensitive`.
    """
    if not isinstance(text, str):
        raise InvalidInputError(f"text must be a str, got {type(text).__name__}")
    if findings is not None:
        return _apply(text, findings)
    return redact_all(text, find_sensitive(text, policy=policy), policy)[0]
