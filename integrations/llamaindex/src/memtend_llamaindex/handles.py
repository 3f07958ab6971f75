"""What every memtend handle here shares: a user id, the store it was built with, and the way to its documents.

A handle built with ``memory=`` keeps that Memory and its ``store_id``; a handle restored from a serialised form
(a workflow ``Context``, ``to_dict``/``from_dict``, pickle) finds that same store again by its id, among the
Memory objects open in the process, and refuses when none is: it never reads or writes another store. Nothing
here registers a Memory globally; a handle built with only a ``backend`` name uses the Memory registered under
that name by ``register_memory``.
"""

from __future__ import annotations

from typing import Any

from memtend import DocumentStore, InvalidInputError, InvalidUserIdError, Memory, UserMemory
from memtend.surfaces import check_redact

from memtend_llamaindex.backends import resolve_memory

STORE_ID_DESCRIPTION = "The memtend store this object was built with; a restored object finds it again by this id."


def checked_user(user_id: Any, memory: Memory | None, owner: str) -> str:
    """``user_id`` checked by the core's rule (through ``memory.user``), or a typed error saying how to fix it."""
    if user_id is None:
        raise InvalidUserIdError(f"{owner} needs user_id=...: memtend keeps every memory per user")
    if memory is not None:
        return memory.user(user_id).user_id
    if not isinstance(user_id, str) or not user_id.strip():
        raise InvalidUserIdError(f"{owner}: user_id must be a non-empty str, got {type(user_id).__name__}")
    return user_id


def bind(memory: Memory | None, store_id: str | None, owner: str) -> tuple[Memory | None, str | None]:
    """The Memory a handle keeps and the id of its store: the given Memory's, else a restored handle's own."""
    if memory is None:
        return None, store_id
    if not isinstance(memory, Memory):
        raise InvalidInputError(f"{owner} takes memory=memtend.Memory(...), got {type(memory).__name__}")
    if store_id is not None and store_id != memory.store_id:
        raise InvalidInputError(
            f"{owner}: memory= and store_id= name different stores; pass one of them (a handle is one store's)"
        )
    return memory, memory.store_id


def memory_of(bound: Memory | None, backend: str, store_id: str | None = None) -> Memory:
    """The Memory a handle uses: the one it was built with, else an open Memory on the store it was built with,
    else (a handle given only a backend name) the Memory registered under that name."""
    if bound is not None:
        return bound
    if store_id is not None:
        found = Memory.open_on(store_id)
        if found is None:
            raise InvalidInputError(
                "this memtend object was built on a store that no open Memory of this process reaches: open a "
                "Memory on that store (the same folder, or a client of the same server) before using the restored "
                "object; it is never pointed at another store"
            )
        return found
    return resolve_memory(backend)


def user_of(bound: Memory | None, backend: str, user_id: str, store_id: str | None = None) -> UserMemory:
    return memory_of(bound, backend, store_id).user(user_id)


def documents_of(
    bound: Memory | None, backend: str, user_id: str, *, redact: bool, surface: str, store_id: str | None = None
) -> DocumentStore:
    """The user's document store; text passes the core's rule for secrets (masked with ``redact``, else refused
    naming ``surface``: see docs/secrets.md)."""
    memory = memory_of(bound, backend, store_id)
    return memory.documents(user_id, redact=check_redact(redact, surface), surface=surface)


def without_live_objects(state: dict[Any, Any], *names: str) -> dict[Any, Any]:
    """A pydantic model's pickled state with its live objects (the Memory, caches) left out: they are found or
    rebuilt again after unpickling (the store by its id)."""
    private = dict(state.get("__pydantic_private__") or {})
    for name in names:
        private[name] = None
    return {**state, "__pydantic_private__": private}
