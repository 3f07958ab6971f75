"""Count the Chroma write (and read) calls memtend makes: the real collection methods are wrapped for the duration of
a ``with`` block (they still run), so a test or benchmark can assert how many writes one operation costs and how
much of its time its reads take."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from memtend.memory import Memory

WRITE_CALLS = ("add", "upsert", "update", "delete")
READ_CALLS = ("get", "query", "count")


@contextmanager
def _wrapped(memory: Memory, methods: tuple[str, ...], wrap: Callable[[Any, str], Any]) -> Iterator[None]:
    """Replace ``methods`` of memtend's collections by ``wrap(real method, "collection.method")`` while the block
    runs, then restore them."""
    wrapped: list[tuple[Any, str]] = []
    for name, col in memory.storage.collections().items():
        for method in methods:
            setattr(col, method, wrap(getattr(col, method), f"{name}.{method}"))
            wrapped.append((col, method))
    try:
        yield
    finally:
        for col, method in wrapped:
            delattr(col, method)


@contextmanager
def counting_writes(memory: Memory) -> Iterator[list[str]]:
    """Names (``collection.method``) of the Chroma write calls made on memtend's collections while the block runs."""
    calls: list[str] = []

    def wrap(real: Any, what: str) -> Any:
        def counted(*args: Any, **kwargs: Any) -> Any:
            calls.append(what)
            return real(*args, **kwargs)

        return counted

    with _wrapped(memory, WRITE_CALLS, wrap):
        yield calls


@contextmanager
def counting_reads(memory: Memory) -> Iterator[list[tuple[str, float]]]:
    """(``collection.method``, seconds it took) of the Chroma read calls made on memtend's collections while the
    block runs (so a benchmark can tell what share of a write its reads take)."""
    calls: list[tuple[str, float]] = []

    def wrap(real: Any, what: str) -> Any:
        def timed(*args: Any, **kwargs: Any) -> Any:
            start = time.perf_counter()
            try:
                return real(*args, **kwargs)
            finally:
                calls.append((what, time.perf_counter() - start))

        return timed

    with _wrapped(memory, READ_CALLS, wrap):
        yield calls
