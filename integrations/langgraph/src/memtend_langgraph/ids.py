"""The ids LangGraph hands the saver (thread ids), checked before anything is read or written.

LangGraph documents ``thread_id`` as a str; an int is read as its decimal text (as LangGraph's own savers do).
Anything else (None, a dict, a list) would be turned into a string naming no real thread, so it is refused with
:class:`~memtend.errors.InvalidInputError`, which says what was given without repeating it.
"""

from __future__ import annotations

from memtend.arguments import describe
from memtend.errors import InvalidInputError
from memtend.records import check_encodable


def thread_label(value: object, what: str = "thread_id") -> str:
    """``value`` as the thread's label: a non-empty str (valid unicode) or an int."""
    if isinstance(value, int) and not isinstance(value, bool):
        return str(value)
    if not isinstance(value, str):
        raise InvalidInputError(
            f"{what} must be a str (or an int), got {describe(value)}: "
            "pass config={'configurable': {'thread_id': '<the conversation>', ...}}"
        )
    if not value:
        raise InvalidInputError(f"{what} must not be empty")
    check_encodable(value, what)
    return value
