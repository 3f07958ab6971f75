"""Helper threads that let one call do two things at once: load a user's index while the query is embedded, or
embed a batch while the write gate reads it. The model (onnxruntime) and Chroma's reads run outside the GIL, so
the two overlap.

A task is handed over only when a helper is free; otherwise ``submit`` returns None and the caller does the work
itself, as it would without helpers (so a busy process never queues behind them).
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Any, TypeVar

T = TypeVar("T")

__all__ = ["Helpers"]


class Helpers:
    """At most ``workers`` tasks at a time, on threads started on first use; ``close`` stops taking tasks."""

    def __init__(self, workers: int = 2, name: str = "memtend-helper") -> None:
        self._workers = workers
        self._name = name
        self._free = threading.BoundedSemaphore(workers)
        self._lock = threading.Lock()
        self._pool: ThreadPoolExecutor | None = None
        self._closed = False

    def submit(self, fn: Callable[..., T], *args: Any) -> Future[T] | None:
        """Run ``fn(*args)`` on a free helper; None when none is free or the helpers are closed."""
        if not self._free.acquire(blocking=False):
            return None
        try:
            with self._lock:
                if self._closed:
                    raise RuntimeError("helpers closed")
                if self._pool is None:
                    self._pool = ThreadPoolExecutor(max_workers=self._workers, thread_name_prefix=self._name)
                future = self._pool.submit(fn, *args)
        except RuntimeError:  # closed, or the interpreter is shutting down
            self._free.release()
            return None
        future.add_done_callback(lambda _: self._free.release())
        return future

    def close(self) -> None:
        """Take no more tasks; tasks already running finish on their own."""
        with self._lock:
            self._closed = True
            if self._pool is not None:
                self._pool.shutdown(wait=False)
