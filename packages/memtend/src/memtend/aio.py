"""How the async twins run blocking I/O: in a worker thread, so the event loop stays free.

Local Chroma clients are synchronous. Each ``a<name>`` method is declared in its class, next to its sync twin, with
the same parameters and return type, and awaits :func:`run_io` of the sync method (which validates, plans and
applies: the twins share every line of it). Sync methods never start or need an event loop, so they work inside a
running one too (a notebook, an async test), at the cost of blocking it while they wait on storage.
Methods that do no I/O (building a handle such as ``user.session(id)``) are marked :func:`no_io` and have no twin.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import ParamSpec, TypeVar

P = ParamSpec("P")
T = TypeVar("T")
F = TypeVar("F", bound=Callable[..., object])

NO_IO_ATTRIBUTE = "__memtend_no_io__"


async def run_io(fn: Callable[P, T], /, *args: P.args, **kwargs: P.kwargs) -> T:
    """``fn(*args, **kwargs)`` in a worker thread (contextvars carried over)."""
    return await asyncio.to_thread(fn, *args, **kwargs)


def no_io(fn: F) -> F:
    """Mark a public sync method that does no I/O (so needs no async twin)."""
    setattr(fn, NO_IO_ATTRIBUTE, True)
    return fn
