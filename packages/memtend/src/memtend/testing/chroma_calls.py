"""Count the Chroma write calls memtend makes: the real collection methods are wrapped for the duration of a
``with`` block (they still run), so a test or benchmark can assert how many writes one operation costs."""

from __future__ import annotations

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
