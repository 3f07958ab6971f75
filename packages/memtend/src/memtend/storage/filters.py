"""Every where-filter memtend sends to Chroma, and the owner fields they filter on: each starts with its owner's
clause, so no read, write or delete can reach another user's rows."""

from __future__ import annotations

from typing import Any

from memtend.storage.chroma import Where

HISTORY_OWNER = "h_user"  # the owner field of history rows in the memories collection
HISTORY_ID_PREFIX = "h:"
KEPT_FOR = "h_record"  # on an archived record row keeping another record's history entry: that record's id
JOURNAL_OWNER = "j_user"  # the owner field of journal rows (see memtend.consistency.journal)


def where(user_id: str, **clauses: Any) -> Where:
    """Build a where-filter that always starts with the user clause.

    A clause value that is a dict is passed as an operator expression (``{"$in": [...]}``); anything else is
    an equality. User ids and values are never interpreted as operators.
    """
    return owned("user_id", user_id, clauses)


def history_where(user_id: str, **clauses: Any) -> Where:
    """The where-filter of a user's history rows (owner field ``h_user``), built as :func:`where` builds it."""
    return owned(HISTORY_OWNER, user_id, clauses)


def owned(owner: str, user_id: str, clauses: dict[str, Any]) -> Where:
    parts: list[Where] = [{owner: {"$eq": user_id}}]
    for name, value in clauses.items():
        if value is None:
            continue
        parts.append({name: value if isinstance(value, dict) else {"$eq": value}})
    return parts[0] if len(parts) == 1 else {"$and": parts}
