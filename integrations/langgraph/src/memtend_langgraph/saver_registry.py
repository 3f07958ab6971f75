"""The thread-to-user registry of a delegated ``MemtendSaver``: memtend knows whose each thread is, the
application's own LangGraph saver (SqliteSaver, PostgresSaver, ...) holds the checkpoint bytes.

- In the backend a thread is kept under a derived id naming its user (:func:`backend_thread_id`), so alice's
  thread "1" and bob's thread "1" never meet there; the saver turns it back into the caller's id on the way out.
- In memtend, one document per thread of a user, ``(REGISTRY, thread_id)`` / ``"owner"``, written on the first put
  of the thread in a process (and on any put that starts a thread) and then remembered: no registry write per step.
  It is written by a background writer, off the step's path, which gathers the threads of ``LINGER`` seconds into
  one write per user (a Chroma write costs far more than a backend's step); every reader of the registry, the
  saver's ``close()`` and the Memory's ``close()`` write what is pending first.
- Every checkpoint's metadata carries its user under ``STAMP`` (stripped on the way out), durable with the
  checkpoint itself, so an erasure or export also finds a thread whose registry document a crash kept from being
  written, or that another process wrote after an erasure here: the backend's own metadata filter reads them.

``ThreadRegistry`` is registered with the Memory as external data (:mod:`memtend.documents.external`):
``Memory.erase_user`` deletes the user's threads from the backend, ``user.export()`` shows them readable.
"""

from __future__ import annotations

import logging
import threading
from typing import TYPE_CHECKING, Any

from langgraph.checkpoint.base import BaseCheckpointSaver

from memtend_langgraph.saver_readable import readable_checkpoint, readable_write
from memtend_langgraph.saver_text import SURFACE

if TYPE_CHECKING:
    from memtend.documents import DocumentStore

REGISTRY = "langgraph_threads"
OWNER_KEY = "owner"
STAMP = "memtend_user"  # the checkpoint metadata key naming the user, in the backend only
PREFIX = "memtend:"
EXPORT_NAME = "langgraph_checkpoints"
_log = logging.getLogger("memtend_langgraph.saver")
MAX_THREADS = 1_000_000  # threads of one user read from the registry at once
LINGER = 0.5  # seconds the background writer gathers new threads before one write


def backend_thread_id(user_id: str, thread_id: str) -> str:
    """The id the backend keeps a user's thread under: ``memtend:<len(user)>:<user>:<thread>`` (unambiguous for
    any user id and thread id, and readable by an operator looking at the backend's tables)."""
    return f"{PREFIX}{len(user_id)}:{user_id}:{thread_id}"


def split_backend_thread_id(value: object) -> tuple[str, str] | None:
    """(user id, thread id) of a derived id, or None for a thread memtend did not write."""
    if not isinstance(value, str) or not value.startswith(PREFIX):
        return None
    size, sep, rest = value[len(PREFIX) :].partition(":")
    if not sep or not size.isdigit():
        return None
    n = int(size)
    user, tail = rest[:n], rest[n:]
    if len(user) != n or not tail.startswith(":") or len(tail) < 2:
        return None
    return user, tail[1:]


def registry_ns(thread_id: str) -> tuple[str, str]:
    return (REGISTRY, thread_id)


def strip_stamp(metadata: Any) -> Any:
    """Checkpoint metadata as the caller gave it: without the user stamp the backend keeps."""
    if isinstance(metadata, dict) and STAMP in metadata:
        return {k: v for k, v in metadata.items() if k != STAMP}
    return metadata


class ThreadRegistry:
    """Which user owns which thread, for one backend saver; remembers the threads it has registered."""

    def __init__(self, backend: BaseCheckpointSaver[Any]) -> None:
        self.backend = backend
        self._known: set[tuple[str, str]] = set()
        self._lock = threading.Lock()
        self._pending: dict[tuple[str, str], Any] = {}  # (user, thread) -> the Memory to write it in
        self._writing: threading.Thread | None = None  # the background writer, while it has threads to write
        self._wake = threading.Event()  # set: write what is pending now, without lingering
        self._hurry = 0  # callers waiting in flush(): the writer does not linger meanwhile

    @staticmethod
    def documents(memory: Any, user_id: str) -> DocumentStore:
        return memory.documents(user_id, gate="off", surface=SURFACE)  # type: ignore[no-any-return]

    def is_known(self, user_id: str, thread_id: str) -> bool:
        return (user_id, thread_id) in self._known

    def register(self, memory: Any, user_id: str, thread_id: str) -> None:
        """Write the thread's owner document now (idempotent) and remember it."""
        from memtend.documents import PutDocument

        self.documents(memory, user_id).put_many([PutDocument(registry_ns(thread_id), OWNER_KEY, b"")])
        with self._lock:
            self._known.add((user_id, thread_id))

    def register_soon(self, memory: Any, user_id: str, thread_id: str) -> None:
        """Remember the thread and write its owner document off the step's path: a background writer puts every
        thread registered meanwhile in one call per user. What a crash keeps from being written is still found by
        erasure and export through the checkpoints' stamp; the registry's own readers wait for it (:meth:`flush`)."""
        with self._lock:
            self._known.add((user_id, thread_id))
            self._pending[(user_id, thread_id)] = memory
            if self._writing is None:  # it ends once nothing is pending: no thread is left idle
                self._writing = threading.Thread(target=self._write_pending, name="memtend-thread-registry")
                self._writing.start()

    def _write_pending(self) -> None:
        from memtend.documents import PutDocument

        while True:
            with self._lock:
                hurry = self._hurry > 0
            if not hurry:
                self._wake.wait(LINGER)
            with self._lock:
                self._wake.clear()
                batch, self._pending = self._pending, {}
                if not batch:
                    self._writing = None
                    return
            by_user: dict[tuple[int, str], tuple[Any, list[Any]]] = {}
            for (user_id, thread_id), memory in batch.items():
                by_user.setdefault((id(memory), user_id), (memory, []))[1].append(
                    PutDocument(registry_ns(thread_id), OWNER_KEY, b"")
                )
            for (_, user_id), (memory, puts) in by_user.items():
                try:
                    self.documents(memory, user_id).put_many(puts)
                except Exception as exc:  # the next put of these threads registers them again
                    _log.warning("the thread registry could not be written (%s)", type(exc).__name__)
                    with self._lock:
                        self._known.difference_update((user_id, p.namespace[1]) for p in puts)

    def flush(self) -> None:
        """Write every thread registered so far now (the writer stops lingering) and wait until it is written."""
        with self._lock:
            self._hurry += 1
            self._wake.set()
        try:
            while True:
                with self._lock:
                    writing = self._writing
                if writing is None or writing is threading.current_thread():
                    return
                writing.join()
        finally:
            with self._lock:
                self._hurry -= 1

    def unregister(self, memory: Any, user_id: str, thread_id: str) -> None:
        self.flush()
        with self._lock:
            self._known.discard((user_id, thread_id))
        self.documents(memory, user_id).delete(registry_ns(thread_id), OWNER_KEY)

    def forget_user(self, user_id: str) -> None:
        with self._lock:
            self._known = {k for k in self._known if k[0] != user_id}

    def owners(self, memory: Any, thread_id: str) -> list[str]:
        """The users holding a thread of this id (an admin lookup)."""
        self.flush()
        return list(memory.document_owners(registry_ns(thread_id)))

    def threads_of(self, memory: Any, user_id: str) -> list[str]:
        """Every thread of the user: the registry's, and any the backend holds stamped with the user."""
        self.flush()
        docs = self.documents(memory, user_id)
        threads = {ns[1] for ns in docs.list_namespaces(prefix=(REGISTRY,), max_depth=2, limit=MAX_THREADS)}
        for found in self.backend.list(None, filter={STAMP: user_id}):
            split = split_backend_thread_id(found.config["configurable"].get("thread_id"))
            if split is not None and split[0] == user_id:
                threads.add(split[1])
        return sorted(threads)

    # ------------------------------------------------------------------ memtend.documents.external
    def export_user(self, memory: Any, user_id: str) -> list[dict[str, Any]]:
        """Each checkpoint of the user's threads, readable (messages, plain values, pending writes)."""
        out: list[dict[str, Any]] = []
        for thread_id in self.threads_of(memory, user_id):
            config: Any = {"configurable": {"thread_id": backend_thread_id(user_id, thread_id)}}
            for found in self.backend.list(config):
                configurable = found.config["configurable"]
                checkpoint_ns = configurable.get("checkpoint_ns", "")
                checkpoint_id = configurable["checkpoint_id"]
                parent = (found.parent_config or {}).get("configurable", {}).get("checkpoint_id")
                entry = readable_checkpoint(
                    thread_id,
                    checkpoint_ns,
                    checkpoint_id,
                    parent,
                    found.checkpoint,
                    found.metadata or {},
                    hidden=("user_id", STAMP),
                )
                entry["pending_writes"] = [
                    readable_write(thread_id, checkpoint_ns, checkpoint_id, task_id, channel, value)
                    for task_id, channel, value in found.pending_writes or []
                ]
                out.append(entry)
        return out

    def erase_user(self, memory: Any, user_id: str) -> int:
        """Delete every thread of the user from the backend (memtend's erasure then deletes the registry)."""
        threads = self.threads_of(memory, user_id)
        for thread_id in threads:
            self.backend.delete_thread(backend_thread_id(user_id, thread_id))
        self.forget_user(user_id)
        return len(threads)
