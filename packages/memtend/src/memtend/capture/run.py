"""One ``capture`` call: the extractor judges the turn, the gate reads every candidate before any is stored, and
each candidate is written or merged through the facade's own writes (a keyed fact through fact precedence, the
rest as notes through write-or-merge), with where it came from in its metadata.

Provenance on every captured memory: the record's ``session`` (the thread or session), and in its metadata
``capture_kind``, ``capture_turn`` (the turn's index in the conversation), ``capture_turn_id`` (the message's id,
when it has one) and ``capture_reason``.
"""

from __future__ import annotations

import inspect
from collections.abc import Awaitable, Callable, Iterable
from typing import Any

from memtend.capture.extractor import ORIGIN_FALLBACK, ORIGIN_LLM, ORIGIN_OFFLINE, offline_extractor
from memtend.capture.report import Captured, CaptureReport
from memtend.errors import InvalidInputError
from memtend.policies import gate
from memtend.policies.capture import (
    STANDING_REASON,
    Candidate,
    CandidateKind,
    Dropped,
    Judgement,
    is_standing_instruction,
    revised_instruction,
    secret_only,
    standing_at_end,
)
from memtend.policies.precedence import FactOutcome, canonical_key, fact_text
from memtend.records import Record, Status, check_name
from memtend.results import FactResult
from memtend.transcripts.messages import Message, ensure_messages

__all__ = ["FactWriter", "NoteWriter", "Reviser", "ajudge", "check_offset", "closing", "judge", "provenance", "write"]

NoteWriter = Callable[..., tuple[Record, str]]
"""The facade's note write: ``(text, *, source, metadata, redact, session, at)`` -> (record stored or refreshed,
added / duplicate / refreshed)."""
FactWriter = Callable[..., FactResult]
"""The facade's fact write: ``(key, value, *, source, redact, at, session, metadata)`` -> its result."""
Reviser = Callable[..., Record]
"""The facade's revision: ``(record_id, text, *, source, session, redact, metadata)`` -> the new version."""

_REASON_CHARS = 200
_WAITING = {Status.PENDING_REVIEW: "held", Status.PROPOSED: "proposed"}  # stored, but not in memory until accepted


def check_offset(offset: object) -> int:
    """The index of a turn's first message in its conversation, checked."""
    if isinstance(offset, bool) or not isinstance(offset, int) or offset < 0:
        raise InvalidInputError("offset (the index of the first message in the conversation) must be an int >= 0")
    return offset


def _origin(judgements: list[Judgement], extractor: object) -> str:
    if extractor is None or extractor is offline_extractor:
        return ORIGIN_OFFLINE
    failed = any(isinstance(j, Dropped) and ORIGIN_FALLBACK in j.reason for j in judgements)
    return ORIGIN_FALLBACK if failed else ORIGIN_LLM


def _checked(result: object) -> list[Judgement]:
    if not isinstance(result, list) or not all(isinstance(j, (Candidate, Dropped)) for j in result):
        raise InvalidInputError("an extractor must return a list of Candidate and Dropped (memtend.policies.capture)")
    return result


def closing(judgements: list[Judgement], conversation: Iterable[Message] | None) -> list[Judgement]:
    """``judgements`` and, when the whole conversation is given (it ended), the instructions still in force at its
    end (:func:`memtend.policies.capture.standing_at_end`), which the session's constraints held until then."""
    if conversation is None:
        return judgements
    return [*judgements, *standing_at_end(ensure_messages(conversation))]


def judge(
    messages: Iterable[Message], offset: int, extractor: Any, conversation: Iterable[Message] | None = None
) -> tuple[list[Judgement], str]:
    """The extractor's judgements on the messages (the offline rules when ``extractor`` is None), and its origin;
    ``conversation``: the whole conversation when it ended (see :func:`closing`)."""
    items, offset = ensure_messages(messages), check_offset(offset)
    run = extractor or offline_extractor
    if not items:  # nothing left to judge (the conversation's end alone): no extractor call
        return closing([], conversation), _origin([], extractor)
    result = run(items, offset)
    if inspect.isawaitable(result):
        close = getattr(result, "close", None)
        if callable(close):
            close()
        raise InvalidInputError("the extractor is async: use acapture")
    judgements = _checked(result)
    return closing(judgements, conversation), _origin(judgements, extractor)


async def ajudge(
    messages: Iterable[Message], offset: int, extractor: Any, conversation: Iterable[Message] | None = None
) -> tuple[list[Judgement], str]:
    """:func:`judge` for an async extractor (a sync one is called as it is)."""
    items, offset = ensure_messages(messages), check_offset(offset)
    run = extractor or offline_extractor
    if not items:
        return closing([], conversation), _origin([], extractor)
    result = run(items, offset)
    if inspect.isawaitable(result):
        result = await result
    judgements = _checked(result)
    return closing(judgements, conversation), _origin(judgements, extractor)


def provenance(candidate: Candidate) -> dict[str, Any]:
    """Where a captured memory came from, as the metadata it is stored with."""
    out: dict[str, Any] = {
        "capture_kind": candidate.kind.value,
        "capture_turn": candidate.turn,
        "capture_reason": candidate.reason[:_REASON_CHARS],
    }
    if candidate.turn_id:
        out["capture_turn_id"] = candidate.turn_id[:_REASON_CHARS]
    return out


def _text(candidate: Candidate) -> str:
    if candidate.kind is CandidateKind.FACT and candidate.key:
        return fact_text(canonical_key(candidate.key), candidate.value)
    return candidate.text


def write(
    judgements: list[Judgement],
    origin: str,
    note: NoteWriter,
    fact: FactWriter,
    *,
    session: str,
    redact: bool,
    notes: Callable[[], list[Record]] | None = None,
    revise: Reviser | None = None,
) -> CaptureReport:
    """Write each candidate (the gate reads them all first, so a refused one stores nothing of the turn; one it
    masked down to nothing is dropped: :func:`memtend.policies.capture.secret_only`). An instruction kept at a
    session's end that revises one kept before (``notes``: the user's active notes, oldest first) is stored with
    ``revise``, so the old version is archived, restorable, never active beside it (issue 31)."""
    session = check_name(session, "session")
    kept: list[Candidate] = []
    secrets: list[Dropped] = []
    for candidate in (j for j in judgements if isinstance(j, Candidate)):
        # refuses (SensitiveDataError) before anything is written, or passes, maybe masked
        decision = gate.check_write(_text(candidate), candidate.source, redact=redact)
        secret = secret_only(candidate, decision.text, decision.redacted_kinds)
        if secret is None:
            kept.append(candidate)
        else:
            secrets.append(secret)
    captured: list[Captured] = []
    standing: list[Record] | None = None  # the instructions in long-term memory, read once when needed
    for candidate in kept:
        meta = provenance(candidate)
        if candidate.reason == STANDING_REASON and notes is not None and revise is not None:
            if standing is None:
                standing = [r for r in notes() if is_standing_instruction(r.text)]
            which = revised_instruction([r.text for r in standing], candidate.text)
            if which is not None:
                old = standing.pop(which)
                record = revise(
                    old.id, candidate.text, source=candidate.source, session=session, redact=redact, metadata=meta
                )
                captured.append(Captured(candidate, _WAITING.get(record.status, "revised"), "", record))
                continue
        if candidate.kind is CandidateKind.FACT and candidate.key and candidate.value:
            result = fact(
                candidate.key,
                candidate.value,
                source=candidate.source,
                redact=redact,
                at=None,
                session=session,
                metadata=meta,
            )
            outcome = result.outcome  # resolved here, in the thread that wrote it
            if result.record.status in _WAITING:
                captured.append(Captured(candidate, _WAITING[result.record.status], result.reason, result.record))
            elif outcome is FactOutcome.KEPT:
                captured.append(Captured(candidate, "kept", result.reason, result.record))
            else:
                captured.append(Captured(candidate, str(outcome), result.reason, result.record))
            continue
        record, action = note(
            candidate.text, source=candidate.source, metadata=meta, redact=redact, session=session, at=None
        )
        captured.append(Captured(candidate, _WAITING.get(record.status, action), "", record))
    dropped = [*(j for j in judgements if isinstance(j, Dropped)), *secrets]
    return CaptureReport(captured=captured, dropped=dropped, origin=origin)


AsyncJudge = Callable[[list[Message], int], Awaitable[list[Judgement]]]
