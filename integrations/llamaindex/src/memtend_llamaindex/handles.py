"""What every memtend handle here shares: a user id, a backend name, and the way to its ``DocumentStore``."""

from __future__ import annotations

from typing import Any

from memtend import DocumentStore, InvalidUserIdError, Memory, UserMemory

from memtend_llamaindex.backends import DEFAULT_BACKEND, register_memory, resolve_memory


def checked_user(user_id: Any, memory: Memory | None, owner: str) -> str:
    """``user_id`` checked by the core's rule (through ``memory.user``), or a typed error saying how to fix it."""
    if user_id is None:
        raise InvalidUserIdError(f"{owner} needs user_id=...: memtend keeps every memory per user")
    if memory is not None:
        return memory.user(user_id).user_id
    if not isinstance(user_id, str) or not user_id.strip():
        raise InvalidUserIdError(f"{owner}: user_id must be a non-empty str, got {user_id!r:.40}")
    return user_id


def bind(memory: Memory | None, backend: str) -> Memory | None:
    """Register ``memory`` under ``backend`` (when given) so a restored handle finds it again."""
    return None if memory is None else register_memory(memory, backend or DEFAULT_BACKEND)


def memory_of(bound: Memory | None, backend: str) -> Memory:
    return bound if bound is not None else resolve_memory(backend)


def user_of(bound: Memory | None, backend: str, user_id: str) -> UserMemory:
    return memory_of(bound, backend).user(user_id)


def documents_of(bound: Memory | None, backend: str, user_id: str, *, redact: bool = False) -> DocumentStore:
    """The user's document store; text passes the core's write gate (secrets refused, or masked with redact)."""
    return memory_of(bound, backend).documents(user_id, redact=redact)
