"""Helper threads that let one call do two things at once: load a user's index while the query is embedded, or
embed a batch while the write gate reads it. The model's run (onnxruntime) releases the GIL, so the two overlap;
a Chroma call (its Rust bindings) holds the GIL from start to end, so it overlaps only with the model's run.

A task is handed over only when a helper is free; otherwise ``submit`` returns None and the caller does the work
itself, as it would without helpers (so a busy process never queues behind them).
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Any, TypeVar

from memtend.storage.embeddings import announcing_compute

T = TypeVar("T")

__all__ = ["Helpers", "Parts", "embed_in_parts"]


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


class Parts:
    """Texts embedded in parts, one after the other, on a helper thread: ``texts[n]`` is the n-th part and
    ``futures[n]`` its vectors, set as soon as that part is done (so a writer can store one part while the next
    is embedded). An embedding error is set on the part it happened in and on every later part.

    ``computing[n]`` is set when part n's model run has started (the embedding function announced it with
    :func:`memtend.storage.embeddings.announce_compute`), or else once part n has ended. A Chroma write holds the
    GIL for its whole call, so a writer waits for it before storing: a write started while the model runs (outside
    the GIL) does not stall the embedding; one started while the helper needs the GIL (tokenizing, pooling) stalls
    it for the whole write."""

    def __init__(self, texts: list[list[str]]) -> None:
        self.texts = texts
        self.futures: list[Future[Any]] = [Future() for _ in texts]
        self.computing = [threading.Event() for _ in texts]

    def run(self, embed: Callable[[list[str]], Any]) -> None:
        for n, (texts, future) in enumerate(zip(self.texts, self.futures, strict=True)):
            try:
                with announcing_compute(self.computing[n].set):
                    vectors = embed(texts)
            except BaseException as exc:
                for later in self.futures[n:]:
                    later.set_exception(exc)
                for event in self.computing[n:]:
                    event.set()
                return
            future.set_result(vectors)  # before ``computing``: a writer that wakes on it sees the part done
            self.computing[n].set()


def embed_in_parts(helpers: Helpers, embed: Callable[[list[str]], Any], texts: list[str], size: int) -> Parts | None:
    """Embed ``texts`` on a free helper in parts of ``size``, shortest texts first; None when no helper is free.

    The parts are the batches an embedding model that pads each batch to its longest text makes of the whole
    list (sorted by length, ``size`` at a time), so embedding them one by one is the same work as one call."""
    order = sorted(range(len(texts)), key=lambda i: len(texts[i]))
    parts = Parts([[texts[i] for i in order[start : start + size]] for start in range(0, len(order), size)])
    return parts if helpers.submit(parts.run, embed) is not None else None


def embedded_ahead(ahead: Parts | None, texts: list[str]) -> dict[str, Any] | None:
    """The vectors embedded ahead (in one part), by text; None when there are none (or embedding failed: the apply
    step embeds again and reports the error)."""
    if ahead is None:
        return None
    try:
        vectors = ahead.futures[0].result()
    except Exception:
        return None
    return dict(zip(texts, vectors, strict=True)) if len(vectors) == len(texts) else None
