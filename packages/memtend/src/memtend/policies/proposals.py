"""Propose, then accept: with ``Memory(write_mode="propose")`` what the agent or an extractor wants to remember is
stored as a proposal (status ``proposed``) that no read shows until a person or the application accepts it.

Pure: the mode check, the status a new record gets, and the planners of accept (optionally edited) and of the
proposal a fact accept retires. Rejecting is :func:`memtend.policies.changes.reject` (a proposal is dropped for good).
"""

from __future__ import annotations

from dataclasses import replace
from typing import Literal

from memtend.errors import InvalidInputError, describe
from memtend.policies import changes
from memtend.policies.changes import Change
from memtend.records import Record, Source, Status
from memtend.results import HistoryEntry

__all__ = [
    "PROPOSING_SOURCES",
    "REPLACES",
    "WRITE_MODES",
    "WriteMode",
    "accept",
    "check_write_mode",
    "edited",
    "retire_accepted",
    "revise",
    "status_for",
]

WriteMode = Literal["direct", "propose"]
WRITE_MODES: tuple[WriteMode, ...] = ("direct", "propose")
# Whose writes become proposals: the model's own judgement (an agent's remember, an extractor's inference). The user's
# words are theirs to keep; a tool is a system of record ranked above the agent; external text already waits in
# review (``pending_review``, approved with ``approve``), the stronger hold, since it may carry an injection.
PROPOSING_SOURCES = frozenset({Source.AGENT, Source.INFERRED})
REPLACES = "replaces"  # extra field of a revision: the id of the record it replaces once it stands


def check_write_mode(value: object) -> WriteMode:
    """``value`` as a write mode, or a typed error naming the choices (never the value)."""
    if not isinstance(value, str) or value not in WRITE_MODES:
        raise InvalidInputError(f"write_mode must be one of {', '.join(WRITE_MODES)}; got {describe(value)}")
    return value


def status_for(mode: WriteMode, source: Source, status: Status) -> Status:
    """The status a new record of ``source`` is stored with, given the gate's (``status``) and the store's mode."""
    if mode == "propose" and source in PROPOSING_SOURCES and status is Status.ACTIVE:
        return Status.PROPOSED
    return status


def edited(proposal: Record, text: str, value: str, flagged: bool, t: float) -> Record:
    """The proposal as a person edited it: their text (for a fact: its text and value), gated; the person wrote it,
    so its source is the user's."""
    return replace(proposal, text=text, value=value, flagged=flagged, source=Source.USER, updated_at=t)


def accept(
    user_id: str, proposal: Record, edit: Record | None, t: float, replaced: Record | None = None
) -> tuple[Record, Change]:
    """Accept a proposal that is not a fact (a fact's becomes a claim of its key: :func:`retire_accepted`), with an
    ``edit`` entry first when a person changed its text; a proposed revision archives the record it replaces
    (``replaced``, when it is still active) in the same write. The caller supplies the stored vector when the text
    is unchanged; an edited text is embedded by the apply step."""
    base = edit or proposal
    accepted = replace(base, status=Status.ACTIVE, updated_at=t, last_used_at=t)
    history = _edit_entries(user_id, proposal, edit)
    history.append(changes.entry(user_id, "accept", accepted, base, Source.USER))
    change = Change(user_id, upserts=(accepted,), history=tuple(history))
    if replaced is not None and replaced.status is Status.ACTIVE:
        change = change.then(changes.retire(user_id, [replaced], "revise", t, superseded_by=accepted.id))
    return accepted, change


def revise(user_id: str, old: Record, new: Record, redacted: tuple[str, ...], t: float) -> Change:
    """A new version of a record (``new``, gated, naming ``old`` in its ``replaces`` field): stored, and ``old``
    archived with a pointer to it (restorable); a revision that waits (a proposal, or untrusted text in review)
    replaces nothing until it is accepted."""
    change = changes.add(user_id, [new], {new.id: redacted} if redacted else None)
    if new.status is Status.ACTIVE:
        change = change.then(changes.retire(user_id, [old], "revise", t, superseded_by=new.id))
    return change


def retire_accepted(user_id: str, proposal: Record, edit: Record | None, fact_id: str, t: float) -> Change:
    """A fact proposal once its value is written as a claim of its key: archived with a pointer to the key (so its
    history shows the edit and the accept), where precedence decides what the key holds."""
    base = edit or proposal
    moved = changes.archived(base, fact_id, t)
    history = _edit_entries(user_id, proposal, edit)
    history.append(changes.entry(user_id, "accept", moved, base, Source.USER))
    return Change(user_id, archives=(moved,), history=tuple(history))


def _edit_entries(user_id: str, proposal: Record, edit: Record | None) -> list[HistoryEntry]:
    if edit is None or (edit.text == proposal.text and edit.value == proposal.value):
        return []
    return [changes.entry(user_id, "edit", edit, proposal, Source.USER)]
