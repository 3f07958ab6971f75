"""Last-used stamps, written in the background.

A metadata write per recall would triple its cost, so stamps are buffered and written in one batch every
``FLUSH_SECONDS`` or ``FLUSH_SIZE`` records by a background writer (recall does not wait for it), before any read
that shows them (or laid over what such a read returns, see ``stamps``), and on close. A crash loses at most the
unwritten stamps: usage is advisory (it only delays forgetting), never data.
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Callable, Mapping
from concurrent.futures import Future, ThreadPoolExecutor

from memtend.records import now

FLUSH_SECONDS = 2.0
FLUSH_SIZE = 512


class UsageWriter:
    """Buffers (record id -> (user id, time)) stamps and hands them to ``write`` in batches."""

    def __init__(self, write: Callable[[dict[str, float]], None]) -> None:
        self._write = write
        self._lock = threading.Lock()
        self._pending: dict[str, tuple[str, float]] = {}
        self._in_flight: dict[str, tuple[str, float]] = {}  # taken for a write not yet known to have landed
        self._flushed = now()
        self._writer: ThreadPoolExecutor | None = None
        self._writing: Future[None] | None = None

    def note(self, user_id: str, used: Mapping[str, float]) -> None:
        """Buffer stamps; start a background write when due (one write at a time)."""
        if not used:
            return
        with self._lock:
            for rid, at in used.items():
                self._pending[rid] = (user_id, at)
            latest = max(used.values())
            due = len(self._pending) >= FLUSH_SIZE or latest - self._flushed >= FLUSH_SECONDS
            if not due or (self._writing is not None and not self._writing.done()):
                return  # what gathers meanwhile goes with the next write
            pending = self._take()
            if self._writer is None:
                self._writer = ThreadPoolExecutor(max_workers=1, thread_name_prefix="memtend-usage")
            try:
                self._writing = self._writer.submit(self._write_batch, pending)
            except RuntimeError:  # interpreter shutting down: the exit flush writes them
                self._give_back(pending)
                for rid in pending:
                    self._in_flight.pop(rid, None)

    def flush(self) -> None:
        """Write buffered stamps now (errors are raised; the stamps stay buffered)."""
        self.wait()
        with self._lock:
            pending = self._take()
        if pending:
            self._write_batch(pending, raise_errors=True)

    def wait(self) -> None:
        """Wait for a write in flight (a failed one put its stamps back)."""
        with self._lock:
            writing = self._writing
        if writing is not None:
            with contextlib.suppress(Exception):
                writing.result()

    def stamps(self, user_id: str) -> dict[str, float]:
        """The user's stamps not known to be written yet (buffered or being written), record id -> time. A read
        taken after this call shows every stamp noted before it once these are laid over what it read."""
        with self._lock:
            out = {rid: at for rid, (uid, at) in self._in_flight.items() if uid == user_id}
            out.update((rid, at) for rid, (uid, at) in self._pending.items() if uid == user_id)
        return out

    def settled(self) -> bool:
        """True when nothing is buffered or being written."""
        with self._lock:
            return not self._pending and (self._writing is None or self._writing.done())

    def drop_user(self, user_id: str) -> None:
        """Forget an erased user's buffered stamps, and let a write in flight land first."""
        with self._lock:
            self._pending = {rid: (uid, t) for rid, (uid, t) in self._pending.items() if uid != user_id}
        self.wait()

    def close(self) -> None:
        self.flush()
        if self._writer is not None:
            self._writer.shutdown(wait=True)
            self._writer = None

    def _take(self) -> dict[str, tuple[str, float]]:
        pending, self._pending = self._pending, {}
        self._in_flight.update(pending)
        self._flushed = now()
        return pending

    def _give_back(self, pending: dict[str, tuple[str, float]]) -> None:
        """Put unwritten stamps back, under any newer ones."""
        for rid, stamp in pending.items():
            self._pending.setdefault(rid, stamp)

    def _write_batch(self, pending: dict[str, tuple[str, float]], *, raise_errors: bool = False) -> None:
        try:
            self._write({rid: t for rid, (_, t) in pending.items()})
        except Exception:
            with self._lock:
                self._give_back(pending)
            if raise_errors:
                raise
        finally:
            with self._lock:
                for rid, stamp in pending.items():
                    if self._in_flight.get(rid) == stamp:
                        del self._in_flight[rid]
