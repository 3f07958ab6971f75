"""Which memtend ``Memory`` a LlamaIndex object talks to, by name, so the object itself stays a thin handle.

LlamaIndex serialises an agent's context (``ctx.to_dict``) with the memory object in it. A memtend handle keeps
only its ids and a backend name there; after ``Context.from_dict`` (or a process restart) it finds its ``Memory``
again under that name. Passing ``memory=`` to any ``from_defaults`` registers it (as ``"default"`` unless told),
so re-attaching needs nothing beyond the ids.
"""

from __future__ import annotations

import threading
from typing import Any

from memtend import InvalidInputError, Memory

DEFAULT_BACKEND = "default"

_lock = threading.Lock()
_backends: dict[str, Memory] = {}


def register_memory(memory: Memory, name: str = DEFAULT_BACKEND) -> Memory:
    """Make ``memory`` the backend that handles named ``name`` use (replacing an earlier one of that name)."""
    if not isinstance(memory, Memory):
        raise InvalidInputError(f"register_memory takes a memtend.Memory, got {type(memory).__name__}")
    if not isinstance(name, str) or not name:
        raise InvalidInputError("a backend name must be a non-empty str")
    with _lock:
        _backends[name] = memory
    return memory


def unregister_memory(name: str = DEFAULT_BACKEND) -> None:
    with _lock:
        _backends.pop(name, None)


def resolve_memory(name: str) -> Memory:
    with _lock:
        memory = _backends.get(name)
    if memory is None:
        raise InvalidInputError(
            f"no memtend Memory is registered as {name!r}; pass memory=Memory(...) to from_defaults, or call "
            f"memtend_llamaindex.register_memory(memory, {name!r}) before using a restored memory object"
        )
    return memory


def attach(memory: Any, name: str) -> Memory | None:
    """Register ``memory`` under ``name`` when given; returns it (or None)."""
    return None if memory is None else register_memory(memory, name)
