"""When an adapter captures: the moments every framework adapter offers, decided here so none holds the rule.

``capture="turn"`` (the default; ``True`` too): each turn is captured when it ends (after an agent run, a chain's
``save_context``, a chat-history runnable's turn), and what compaction is about to drop first. ``"session"``: only
before compaction drops turns and when the conversation ends (the adapter's ``end_session``). ``None`` or
``False``: never. Whatever the mode, the end of a conversation also keeps the user's instructions still in force,
each in its latest version (:func:`memtend.policies.capture.standing_at_end`), which the session's constraints
held until then.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal, TypeAlias

from memtend.errors import InvalidInputError, describe
from memtend.transcripts.messages import Message, ensure_messages

__all__ = ["CaptureMode", "at_end", "check_capture", "each_turn", "left_for_the_end"]

CaptureMode: TypeAlias = Literal["turn", "session", ""]
"""A checked mode: ``"turn"``, ``"session"``, or ``""`` (capture off)."""


def check_capture(value: object) -> CaptureMode:
    """``capture=`` as a mode: "turn" (or True), "session", or None/False (off; "" too, so a checked mode
    checks again); a typed error otherwise."""
    if value is True or value == "turn":
        return "turn"
    if value == "session":
        return "session"
    if value is False or value is None or value == "":
        return ""
    raise InvalidInputError(f'capture must be "turn" (or True), "session", or None/False; got {describe(value)}')


def each_turn(mode: CaptureMode) -> bool:
    """Is each turn captured when it ends?"""
    return mode == "turn"


def at_end(mode: CaptureMode) -> bool:
    """Does the end of a conversation (and compaction, before it drops turns) capture?"""
    return mode != ""


def left_for_the_end(mode: CaptureMode, conversation: Sequence[Message]) -> list[Message]:
    """What of a conversation its end still judges, for an adapter that does not track captured turns itself:
    nothing in "turn" mode (each turn was judged when it ended), all of it in "session" mode, nothing when off."""
    return ensure_messages(conversation) if mode == "session" else []
