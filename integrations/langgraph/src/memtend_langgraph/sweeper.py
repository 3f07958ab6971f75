"""A background thread that deletes expired documents every few minutes, started and stopped with its store."""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable

logger = logging.getLogger(__name__)


class Sweeper:
    def __init__(self, sweep: Callable[[], int], interval_seconds: float, name: str) -> None:
        if interval_seconds <= 0:
            raise ValueError(f"sweep interval must be positive, got {interval_seconds} s")
        self._sweep = sweep
        self._interval = interval_seconds
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._loop, name=name, daemon=True)

    def start(self) -> None:
        self._thread.start()

    @property
    def running(self) -> bool:
        return self._thread.is_alive()

    def stop(self, timeout: float | None = None) -> bool:
        """Stop sweeping; True when the thread has ended within ``timeout`` seconds."""
        self._stop.set()
        if self._thread.is_alive() and threading.current_thread() is not self._thread:
            self._thread.join(timeout)
        return not self._thread.is_alive()

    def _loop(self) -> None:
        while not self._stop.wait(self._interval):
            try:
                swept = self._sweep()
                if swept:
                    logger.debug("swept %d expired documents", swept)
            except Exception:  # a failed sweep is retried at the next interval; the store stays usable
                logger.exception("expired-document sweep failed")
