"""Count the Chroma write (and read) calls memtend makes: the real collection methods are wrapped for the duration of
a ``with`` block (they still run), so a test or benchmark can assert how many writes one operation costs and how
much of its time its reads take."""

from __future__ import annotations

import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from memtend.memory import Memory

WRITE_CALLS = ("add", "upsert", "update", "delete")


@contextmanager
def counting_writes(memory: Memory) -> Iterator[list[str]]:
    """Names (``collection.method``) of the Chroma write calls made on memtend's collections while the block runs."""
    calls: list[str] = []
    wrapped: list[tuple[Any, str]] = []
    for name, col in memory.storage.collections().items():
        for method in WRITE_CALLS:
            real = getattr(col, method)

            def counted(*args: Any, _real: Any = real, _what: str = f"{name}.{method}", **kwargs: Any) -> Any:
                calls.append(_what)
                return _real(*args, **kwargs)

            setattr(col, method, counted)
            wrapped.append((col, method))
    try:
        yield calls
    finally:
        for col, method in wrapped:
            delattr(col, method)


READ_CALLS = ("get", "query", "count")


@contextmanager
def counting_reads(memory: Memory) -> Iterator[list[tuple[str, float]]]:
    """(``collection.method``, seconds it took) of the Chroma read calls made on memtend's collections while the
    block runs (so a benchmark can tell what share of a write its reads take)."""
    calls: list[tuple[str, float]] = []
    wrapped: list[tuple[Any, str]] = []
    for name, col in memory.storage.collections().items():
        for method in READ_CALLS:
            real = getattr(col, method)

            def timed(*args: Any, _real: Any = real, _what: str = f"{name}.{method}", **kwargs: Any) -> Any:
                start = time.perf_counter()
                try:
                    return _real(*args, **kwargs)
                finally:
                    calls.append((_what, time.perf_counter() - start))

            setattr(col, method, timed)
            wrapped.append((col, method))
    try:
        yield calls
    finally:
        for col, method in wrapped:
            delattr(col, method)
