"""What of a delegated checkpoint memtend's rule for secrets has already read, so a put reads only what is new.

A checkpoint repeats every channel of the graph's state at every step; most of them did not change since the
thread's previous checkpoint. For each thread (and namespace) this process remembers, per channel of its newest
checkpoints, the version it had, the value the graph held and what the rule let the backend store (the same value,
or its masked copy). A put whose parent is remembered hands the rule only the channels that moved: a channel is
taken as read when its version is the parent's, it is not among the put's new versions, and its value is the very
object read then (so a value swapped in under an old version is read again); its stored form (masked, if it was)
is reused. A channel that moved and holds a list the rule reads item by item (messages, not plain JSON) has only
its items that are not the very objects read in the parent's list read (``add_messages`` keeps the earlier
messages' objects). A put whose parent this process has not seen (a new thread, another process's checkpoint, a restart,
a remembered thread pushed out) reads every channel. A checkpoint read back from the backend (``get_tuple``) holds
what the rule let through when it was put, so its channels count as read.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from typing import Any, NamedTuple

from langgraph.checkpoint.base import ChannelVersions, Checkpoint

from memtend_langgraph.saver_text import _jsonable, masked

THREADS = 256  # threads remembered (newest used first); each holds references to its newest checkpoints' values
PER_THREAD = 2  # checkpoints remembered per thread: the newest put and the newest read back


class _Read(NamedTuple):
    """One channel as the rule read it: its version, the value the graph held, what the backend was given."""

    version: Any
    given: Any
    stored: Any
    items: tuple[tuple[Any, Any], ...] | None  # a list read item by item: (given, stored) per item, as read then


def _read(version: Any, given: Any, stored: Any) -> _Read:
    """A channel's read; for a list the rule reads item by item, its items as they were (the list may change)."""
    items = None
    if isinstance(given, list) and isinstance(stored, list) and len(given) == len(stored) and not _jsonable(given, 0):
        items = tuple(zip(given, stored, strict=True))
    return _Read(version, given, stored, items)


class GatedChannels:
    """The channels the rule has read, per (backend thread id, namespace) and checkpoint id, in this process."""

    def __init__(self, threads: int = THREADS) -> None:
        self._threads_max = threads
        self._lock = threading.Lock()
        self._threads: OrderedDict[tuple[str, str], OrderedDict[str, dict[str, _Read]]] = OrderedDict()

    def gated(
        self,
        key: tuple[str, str],
        parent_id: str | None,
        checkpoint: Checkpoint,
        new_versions: ChannelVersions,
        redact: bool,
    ) -> Checkpoint:
        """``checkpoint`` as the backend may store it: the rule applied to the channels new since ``parent_id``."""
        values = checkpoint.get("channel_values")
        versions = checkpoint.get("channel_versions") or {}
        if not isinstance(values, dict):
            gated = masked(values, redact)
            return checkpoint if gated is values else {**checkpoint, "channel_values": gated}  # type: ignore[typeddict-item]
        before = self._reads_of(key, parent_id) if parent_id else None
        reads: dict[str, _Read] = {}
        fresh: dict[str, Any] = {}  # what the rule reads: whole channels, or a list's new items
        grown: dict[str, dict[int, Any]] = {}  # a list's items read before: id(item) -> its stored form
        for channel, value in values.items():
            read = before.get(channel) if before else None
            if read is None:
                fresh[channel] = value
            elif (
                channel in versions
                and channel not in (new_versions or {})
                and read.version == versions[channel]
                and read.given is value
                and (read.items is None or len(value) == len(read.items))
            ):
                reads[channel] = read
            elif read.items is not None and isinstance(value, list) and not _jsonable(value, 0):
                known = {id(given): stored for given, stored in read.items}  # the items are held: ids are theirs
                new = [item for item in value if id(item) not in known]
                fresh[channel] = new if len(new) < len(value) else value
                if len(new) < len(value):
                    grown[channel] = known
            else:
                fresh[channel] = value
        if fresh:
            checked = masked(fresh, redact)
            for channel, value in values.items():
                if channel not in fresh:
                    continue
                stored = checked[channel]
                earlier = grown.get(channel)
                if earlier is not None and not (isinstance(stored, list) and len(stored) == len(fresh[channel])):
                    stored = masked(value, redact)  # not item by item after all: the whole list
                elif earlier is not None:
                    new_items = iter(stored)
                    merged = [earlier[id(item)] if id(item) in earlier else next(new_items) for item in value]
                    stored = value if all(a is b for a, b in zip(merged, value, strict=True)) else merged
                reads[channel] = _read(versions.get(channel), value, stored)
        self._remember(key, checkpoint["id"], {c: r for c, r in reads.items() if c in versions})
        if all(reads[c].stored is v for c, v in values.items()):
            return checkpoint
        return {**checkpoint, "channel_values": {c: reads[c].stored for c in values}}  # type: ignore[typeddict-item]

    def loaded(self, key: tuple[str, str], checkpoint: Checkpoint) -> None:
        """Remember a checkpoint read back from the backend: what it holds passed the rule when it was put."""
        values = checkpoint.get("channel_values")
        versions = checkpoint.get("channel_versions") or {}
        if isinstance(values, dict):
            reads = {c: _read(versions[c], v, v) for c, v in values.items() if c in versions}
            self._remember(key, checkpoint["id"], reads)

    def forget(self, backend_thread_id: str) -> None:
        """Drop what is remembered of a thread (deleted, or its user erased)."""
        with self._lock:
            for key in [k for k in self._threads if k[0] == backend_thread_id]:
                del self._threads[key]

    def _reads_of(self, key: tuple[str, str], checkpoint_id: str) -> dict[str, _Read] | None:
        with self._lock:
            held = self._threads.get(key)
            return None if held is None else held.get(checkpoint_id)

    def _remember(self, key: tuple[str, str], checkpoint_id: str, reads: dict[str, _Read]) -> None:
        with self._lock:
            held = self._threads.get(key)
            if held is None:
                held = self._threads[key] = OrderedDict()
            self._threads.move_to_end(key)
            held[checkpoint_id] = reads
            held.move_to_end(checkpoint_id)
            while len(held) > PER_THREAD:
                held.popitem(last=False)
            while len(self._threads) > self._threads_max:
                self._threads.popitem(last=False)
