"""Async twins: every public call of the core has an ``a<name>`` coroutine, so adapters can be async end to end.

Local Chroma clients are synchronous; a twin runs its sync method in a worker thread and keeps the event loop free.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any, TypeVar

T = TypeVar("T")


def _async_twin(name: str) -> Callable[..., Any]:
    async def twin(self: Any, *args: Any, **kwargs: Any) -> Any:
        return await asyncio.to_thread(getattr(self, name), *args, **kwargs)

    twin.__name__ = twin.__qualname__ = "a" + name
    twin.__doc__ = f"Async twin of ``{name}``: runs it in a worker thread."
    return twin


def with_async_twins(*names: str) -> Callable[[type[T]], type[T]]:
    """Give a class ``a<name>`` coroutine twins of the named methods."""

    def decorate(cls: type[T]) -> type[T]:
        for name in names:
            if not callable(getattr(cls, name, None)):
                raise TypeError(f"{cls.__name__}.{name} is not a method; cannot make an async twin of it")
            setattr(cls, "a" + name, _async_twin(name))
        return cls

    return decorate
