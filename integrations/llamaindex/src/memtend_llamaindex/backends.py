"""A registry of memtend ``Memory`` objects by name, for LlamaIndex objects built with a ``backend`` name only.

A handle built with ``memory=`` needs none of this: it keeps its Memory, and once restored from a serialised form
finds the same store again by its ``store_id`` (see :mod:`memtend_llamaindex.handles`); no constructor registers
anything. A handle built with only ``backend="name"`` uses what ``register_memory(memory, "name")`` registered.
"""

from __future__ import annotations

import threading

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
