"""The errors the LangGraph adapters raise on top of memtend's own (each says how to fix it)."""

from __future__ import annotations

from memtend.errors import InvalidInputError


class UserNotFoundError(InvalidInputError):
    """An operation names no user (its namespace stops short of the user label, or the config has no user id).

    memtend keeps every item under one user so that isolation, export and erasure cover it. Name the user in the
    namespace (or in ``configurable.user_id``), or open the store with ``cross_user=True`` for administration.
    """
