"""How the async twins run blocking I/O: in a worker thread, so the event loop stays free.

Local Chroma clients are synchronous; each ``a<name>`` method is declared in its class with its sync twin's
signature and return type and awaits :func:`run_io` of the sync method (which validates, plans and applies).
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import ParamSpec, TypeVar

P = ParamSpec("P")
T = TypeVar("T")


async def run_io(fn: Callable[P, T], /, *args: P.args, **kwargs: P.kwargs) -> T:
    """``fn(*args, **kwargs)`` in a worker thread (contextvars carried over)."""
    return await asyncio.to_thread(fn, *args, **kwargs)
