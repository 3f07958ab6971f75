"""The errors the LangGraph adapters raise on top of memtend's own (each says how to fix it).

``UserNotFoundError`` (a call names no user) and ``UserMismatchError`` (two places name different users) are the
core's identity errors, re-exported here where the adapters' users have imported them from.
"""

from __future__ import annotations

from memtend.errors import UserMismatchError, UserNotFoundError

__all__ = ["UserMismatchError", "UserNotFoundError"]
