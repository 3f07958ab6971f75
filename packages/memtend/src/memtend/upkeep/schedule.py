"""Upkeep that runs by itself: store-wide passes of retention (with the fold of scoped memories), log compaction,
purge after grace, history pruning and document expiry, on a schedule, on close and by hand.

A pass is bounded: it visits at most ``users_per_pass`` users found in at most ``rows_per_pass`` rows of the
memories collection, from the cursor the previous pass left (stored in the store, so any process resumes it), and
removes at most ``documents_per_pass`` expired documents. Each user's step takes the memory's lock for that user
only, so live calls interleave with a pass. Between processes sharing a server, a lease stored in the store lets one
process at a time run a pass (:mod:`memtend.storage.upkeep_rows`); another process finding it held skips its turn.
"""

from __future__ import annotations

import logging
import threading
import time
import uuid
import weakref
from collections.abc import Callable
from typing import TYPE_CHECKING

from memtend.errors import MemoryClosedError
from memtend.records import now as real_clock
from memtend.upkeep import user_upkeep
from memtend.upkeep.settings import Upkeep, UpkeepReport, from_environment

if TYPE_CHECKING:
    from memtend.handle import FacadeHandle
    from memtend.storage.upkeep_rows import UpkeepRows

__all__ = ["Upkeep", "UpkeepReport", "UpkeepRunner", "from_environment"]

_log = logging.getLogger("memtend")
_PAGE = 500  # rows read per call while looking for users


class UpkeepRunner:
    """Runs passes for one Memory handle: on its timer thread, on close and when asked."""

    def __init__(self, memory: FacadeHandle, settings: Upkeep, sweep: Callable[[float, int], int]) -> None:
        self.memory = memory
        self.settings = settings
        self._sweep = sweep  # removes up to n expired documents at a time: how many went
        self._holder = uuid.uuid4().hex  # names this runner's lease
        self._running = threading.Lock()  # one pass at a time per handle
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self.last: UpkeepReport | None = None  # the latest pass's report

    def start(self) -> None:
        """Start the timer thread (when the settings have an interval)."""
        if self.settings.every_seconds is None or self._thread is not None:
            return
        # the thread holds the runner weakly: a Memory the application drops without closing can still be collected
        self._thread = threading.Thread(
            target=_loop,
            args=(weakref.ref(self), self._stop, self.settings.every_seconds),
            name="memtend-upkeep",
            daemon=True,
        )
        self._thread.start()

    def stop(self) -> None:
        """Stop the timer thread, waiting for a pass under way to end."""
        self._stop.set()
        thread, self._thread = self._thread, None
        if thread is not None and thread is not threading.current_thread():
            thread.join()

    def run(self, at: float | None = None) -> UpkeepReport:
        """One bounded pass at time ``at`` (default the settings' clock)."""
        with self._running:
            t = self.settings.clock() if at is None else at
            started = time.perf_counter()
            from memtend.storage.upkeep_rows import UpkeepRows  # (chromadb loads with the first store, not before)

            storage = self.memory.settled_storage()
            rows = UpkeepRows(storage.changes_collection, storage.memories)
            token = rows.take_lease(self._holder, t, self.settings.lease_seconds)
            if token is None:
                self.last = UpkeepReport(ran=False, at=t)
                return self.last
            try:
                report = self._pass(rows, t)
            finally:
                rows.release(token)
            self.last = UpkeepReport(**{**report, "seconds": time.perf_counter() - started})  # type: ignore[arg-type]
            return self.last

    def _pass(self, rows: UpkeepRows, t: float) -> dict[str, float | int | bool]:
        from memtend.storage.upkeep_rows import Cursor

        settings = self.settings
        cursor = rows.cursor()
        users, advance, end = self._users(rows, cursor.offset)
        out: dict[str, float | int | bool] = {"ran": True, "at": t, "users": len(users)}
        for key in ("archived", "folded", "compacted", "purged", "history_pruned", "session_items", "errors"):
            out[key] = 0
        # expired documents first, store-wide and bounded: each user's step then finds few left to sweep
        out["documents"] = self._sweep(t, settings.documents_per_pass)
        for user_id in users:
            try:
                forgot = user_upkeep.forget(self.memory, user_id, t, dry_run=False, clock=real_clock())
                compacted = user_upkeep.compact(
                    self.memory, user_id, settings.keep_recent, settings.summarizer, at=t, over=settings.compact_over
                )
                out["archived"] += len(forgot.archived)
                out["folded"] += len(forgot.folded)
                out["session_items"] += forgot.session_items
                out["compacted"] += compacted.replaced
                out["purged"] += user_upkeep.purge(self.memory, user_id, t, None)
                out["history_pruned"] += user_upkeep.prune_history(self.memory, user_id, t)
            except MemoryClosedError:
                raise
            except Exception:
                out["errors"] += 1
                _log.warning("memtend: upkeep of one user failed; the pass goes on", exc_info=True)
        out["round_done"] = end
        rows.save_cursor(Cursor(0, cursor.rounds + 1) if end else Cursor(cursor.offset + advance, cursor.rounds), t)
        return out

    def _users(self, rows: UpkeepRows, offset: int) -> tuple[list[str], int, bool]:
        """Up to ``users_per_pass`` users from ``offset``: the users, how many rows the cursor moves past them, and
        whether the end of the store was reached."""
        settings = self.settings
        users: list[str] = []
        read = 0
        while read < settings.rows_per_pass:
            ask = min(_PAGE, settings.rows_per_pass - read)
            page, n = rows.owners(offset + read, ask)
            for user_id, first in page:
                if user_id in users:
                    continue
                if len(users) == settings.users_per_pass:  # the next pass starts at this user's first row here
                    return users, read + first, False
                users.append(user_id)
            read += n
            if n < ask:
                return users, read, True
        return users, read, False


def _loop(ref: weakref.ref[UpkeepRunner], stop: threading.Event, every: float) -> None:
    """The timer thread: a pass every ``every`` seconds until stopped, or until its runner is gone."""
    while not stop.wait(every):
        runner = ref()
        if runner is None:
            return
        try:
            runner.run()
        except MemoryClosedError:
            return
        except Exception:  # a scheduled pass never raises into the application; the next one tries again
            _log.warning("memtend: a scheduled upkeep pass failed", exc_info=True)
        del runner
