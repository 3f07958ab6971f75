"""The apply step: the one write path. Every change to stored data (planned as data by
:mod:`memtend.policies.changes`) is performed here, all or nothing (one Chroma call, or journaled), with the
cached index kept in step, change marks for other processes, and ``on_change`` told (see docs/consistency.md).
:class:`~memtend.memory.Memory` inherits it."""

from __future__ import annotations

import logging
import threading
from collections import OrderedDict
from collections.abc import Callable, Iterator, Mapping, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import replace
from typing import Any, TypeVar

import numpy as np

from memtend.arguments import check_texts, describe
from memtend.consistency import claims as fact_claims
from memtend.consistency import fold as fact_fold
from memtend.consistency import journal
from memtend.errors import InvalidInputError, MemoryClosedError, StorageUnavailableError, WriteInterruptedError
from memtend.helpers import Helpers, Parts, embed_in_parts
from memtend.index.synced import SyncedIndex
from memtend.metrics import tally as metrics_tally
from memtend.policies import changes
from memtend.policies.changes import Change
from memtend.records import Record, Status, new_id, now
from memtend.results import ChangeEvent
from memtend.storage.document_rows import DocRow
from memtend.storage.embeddings import BATCH_SIZE
from memtend.storage.state import StoreState
from memtend.storage.store import Storage
from memtend.writing.usage import UsageWriter

_PIPELINE_CHUNK = 256  # a fresh change with more new records than this is embedded and written in a pipeline
_log = logging.getLogger("memtend")
ChangeHook = Callable[[ChangeEvent], None]
T = TypeVar("T")
QUERY_VECTORS = 64  # recent query texts whose vectors a Memory keeps (an agent's turn often asks one twice)
_query_lock = threading.Lock()
CLOSED_MESSAGE = "this Memory was closed; open a new Memory (or use one that is still open) to go on"


class Applier:
    """The write path of a :class:`~memtend.memory.Memory` (which sets the attributes below when it opens)."""

    storage: Storage
    embedding_function: Any
    on_change: ChangeHook | None
    lock: threading.RLock
    _state: StoreState
    _usage: UsageWriter
    _helpers: Helpers
    _batch: threading.local
    _closed: bool
    _unfinished: dict[str, list[tuple[Change, int, str | None]]]
    _journal_thread: ThreadPoolExecutor | None
    _query_vectors: OrderedDict[str, tuple[Any, np.ndarray]] | None = None  # text -> (model, vector), made on use

    @property
    def _indexes(self) -> OrderedDict[str, SyncedIndex]:
        """The per-user index cache this store's handles share."""
        return self._state.indexes

    def _check_open(self) -> None:
        if self._closed:
            raise MemoryClosedError(CLOSED_MESSAGE)

    def _scrub_files(self) -> None:
        """Chroma's log purged past what erasure deleted, then what the files of an embedded folder keep of it
        (a server's folder is its operator's: see README)."""
        with self.lock:
            self.storage.purge_log()
            folder = self.storage.local_folder()
            if folder is not None:
                from memtend.storage.purge import scrub_files

                with self.storage.documents.lock:  # no document write saves a vector index meanwhile
                    scrub_files(folder)

    @property
    def exclusive(self) -> bool:
        """True when no other process can write the store: an embedded folder whose lock this process holds (its
        handles share one index cache). Its indexes need no catching up."""
        return self._state.exclusive

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        texts = check_texts(texts)
        if not texts:
            return np.zeros((0, 0), dtype=np.float32)
        vectors = self.embedding_function(list(texts))
        return np.asarray(vectors, dtype=np.float32)

    def embed_query(self, text: str) -> np.ndarray:
        """The vector of one query text. The last ``QUERY_VECTORS`` texts' vectors are kept with the model that made
        them (a model gives a text the same vector every time), so a turn that gathers its context twice, as a
        LlamaIndex agent does, embeds its question once."""
        model = self.embedding_function
        with _query_lock:
            if self._query_vectors is None:
                self._query_vectors = OrderedDict()
            cache = self._query_vectors
            found = cache.get(text)
            if found is not None and found[0] is model:
                cache.move_to_end(text)
                return found[1].copy()
        vector = self.embed([text])[0]
        with _query_lock:
            cache[text] = (model, vector.copy())
            cache.move_to_end(text)
            while len(cache) > QUERY_VECTORS:
                cache.popitem(last=False)
        return vector

    # ------------------------------------------------------------------ the apply step
    def apply(self, change: Change) -> list[ChangeEvent]:
        """Perform a planned change (see :class:`~memtend.policies.changes.Change` for what and in which order),
        keep the cached index in step, buffer usage stamps, tell ``on_change``; returns the events."""
        self._check_open()
        if not isinstance(change, Change):
            raise InvalidInputError(f"apply takes a Change (memtend.policies.changes), got {describe(change)}")
        if change.erase:
            return self.emit(self._erase(change))
        if not change.writes:
            self._usage.note(change.user_id, change.used)
            return []
        self._settle_journal_ends()
        self._finish_interrupted(change.user_id)
        planned = change
        with self.lock:  # a change of a fact key as readers see it names the rows that hold the key
            change = fact_fold.expand(self.storage, change, now(), shared=not self.exclusive)
        missing = [r for r in change.upserts if r.id not in change.vectors]
        chunk = _PIPELINE_CHUNK if change.fresh and len(missing) > _PIPELINE_CHUNK else 0
        rows = len(change.upserts) + len(change.archives) + 1
        jid = journal.JOURNAL_ID_PREFIX + new_id() if chunk or change.deletes or rows > self.storage.max_batch else None
        started = self.storage.write_calls
        marked = False
        try:
            if chunk:
                assert jid is not None
                self._apply_pipelined(change, jid)
            else:
                marked = self._apply_whole(change, jid)
        except StorageUnavailableError as exc:
            self._interrupted(change, chunk, jid, exc, self.storage.write_calls - started)
        if not marked:
            self._mark_changed(change)
        self._usage.note(change.user_id, change.used)
        return self.emit(changes.events(planned, now()))

    # ------------------------------------------------------------------ all or nothing
    # A change that fits in one Chroma call is written in one (one transaction). Any other is journaled (see
    # memtend.consistency.journal): its journal row goes in its first call and is deleted after its last; one left
    # behind is rolled forward on open, or on the user's next call in this process.
    def _apply_whole(self, change: Change, jid: str | None) -> bool:
        """Write a change that is not pipelined; True when its change mark went with it (one call, no journal)."""
        vectors = self._vectors(change)
        if jid is None:
            self._write(change, vectors, mark=True)
            return True
        self._write(change, vectors, (jid, journal.encode(change, 0)))
        self.storage.end_journal(change.user_id, jid)
        return False

    def _interrupted(
        self, change: Change, chunk: int, jid: str | None, exc: StorageUnavailableError, attempted: int
    ) -> None:
        """A write failed because Chroma stopped answering: finish it now if Chroma answers again, else keep it
        for the user's next call and raise WriteInterruptedError (or the plain error when nothing was sent)."""
        if attempted == 0 or (attempted == 1 and _never_sent(exc)):
            raise exc  # no write reached Chroma: nothing of the change is stored, and the error says so
        try:
            self._replay(change, chunk, jid)
            return
        except StorageUnavailableError:
            pass
        with self.lock:
            self._unfinished.setdefault(change.user_id, []).append((change, chunk, jid))
        ids = tuple(r.id for r in change.upserts) or tuple(r.id for r in change.archives) or change.deletes
        whole = (
            "journaled: finished when the store is next opened if this process ends first"
            if jid is not None
            else "stored whole or not at all: one Chroma transaction"
        )
        cause = type(exc.__cause__ or exc).__name__
        raise WriteInterruptedError(
            f"Chroma stopped answering during a write for user {change.user_id!r} ({len(ids)} records, e.g. "
            f"{ids[0] if ids else '-'}; {cause}): it may be stored only in part so far ({whole}). memtend keeps the "
            "write and finishes it, with the same ids so nothing is stored twice, on this user's next call once the "
            "Chroma server answers again. Do not make the call again; check that the server is running.",
            ids,
        ) from exc

    def _finish_interrupted(self, user_id: str) -> None:
        """Finish the user's interrupted writes (in order) before anything else is written for them."""
        with self.lock:
            todo = self._unfinished.get(user_id)
            while todo:
                change, chunk, jid = todo[0]
                self._replay(change, chunk, jid)
                todo.pop(0)
                self.emit(changes.events(change, now()))
            self._unfinished.pop(user_id, None)

    def _replay(self, change: Change, chunk: int, journal_id: str | None = None) -> None:
        """Write a change again, whole (idempotent: the same ids and history rows; vectors read back where the
        stored text matches, else embedded again), then drop its journal row."""
        uid = change.user_id
        with self.lock:
            known = self.storage.stored_vectors(uid, [r for r in change.upserts if r.id not in change.vectors])
            full = replace(change, vectors={**known, **change.vectors})
            parts = list(_chunks(full, chunk)) if chunk else [full]
            for part in parts:
                self._write(part, self._vectors(part))
            if journal_id is not None:
                self.storage.end_journal(uid, journal_id)
        self._mark_changed(change)

    def _recover_journals(self) -> None:
        """Roll forward the journaled changes a killed process or a lost server left half written (all of them on
        an exclusive folder; on a shared store, those older than journal.SHARED_REPLAY_AFTER)."""
        for jid, uid, at in self.storage.journals():
            if not self.exclusive and now() - at < journal.SHARED_REPLAY_AFTER:
                continue
            document = self.storage.read_journal(uid, jid)
            if document is None:
                continue
            try:
                change, chunk = journal.decode(document)
            except (ValueError, KeyError, TypeError):
                _log.error("memtend: journal row %s cannot be read; left in place", jid)
                continue
            _log.warning("memtend: finishing an interrupted write for user %r (%d records)", uid, len(change.upserts))
            self._replay(change, chunk, jid)
        # the document store's multi-call writes (adapters' bulk writes: histories, store batches, checkpoints)
        self.storage.documents.recover(older_than=None if self.exclusive else journal.SHARED_REPLAY_AFTER)

    def _vectors(self, change: Change) -> np.ndarray | None:
        """One vector per upsert, in order: the change's own, the others embedded in one call."""
        if not change.upserts:
            return None
        missing = [r for r in change.upserts if r.id not in change.vectors]
        embedded = iter(self.embed([r.text for r in missing])) if missing else iter(())
        return np.vstack([change.vectors[r.id] if r.id in change.vectors else next(embedded) for r in change.upserts])

    def _apply_pipelined(self, change: Change, jid: str) -> None:
        """A large batch of new records: embed the next chunk while a writer thread stores the previous one, so
        ingest runs at close to the embedding model's own speed. Journaled: the journal row goes with the first
        chunk and is deleted after the last."""
        entry: tuple[str, str] | None = (jid, journal.encode(change, _PIPELINE_CHUNK))
        with ThreadPoolExecutor(max_workers=1, thread_name_prefix="memtend-writer") as writer:
            pending: Future[None] | None = None
            for part in _chunks(change, _PIPELINE_CHUNK):
                vectors = self._vectors(part)
                if pending is not None:
                    pending.result()
                pending = writer.submit(self._write, part, vectors, entry)
                entry = None
            assert pending is not None
            pending.result()
        self.storage.end_journal(change.user_id, jid)

    # ------------------------------------------------------------------ a single write's gate beside its embedding
    def gated_beside_embedding(self, text: object, gate: Callable[[], T]) -> tuple[T, dict[str, np.ndarray]]:
        """A single write's gate (``gate()``, which validates and checks the text) run on a helper while this thread
        embeds ``text``; returns the gate's result and {text: vector}, which the write reuses when the gate left
        the text as it is (a masked text is embedded again). The model's run holds no GIL, so the gate runs beside
        it, and this thread never waits for the helper to start (it starts while the model runs): a single write
        does not wait for its gate after its embedding.

        Only with a model that runs in this process: the text has not passed the gate yet and must not leave the
        process (another embedding function may send it away). Otherwise, or when no helper is free, the gate runs
        here first and nothing is embedded ahead. The gate's error is raised as it is; an embedding error is left
        to the write, which embeds again (and raises it)."""
        if not isinstance(text, str) or not _runs_here(self.embedding_function):
            return gate(), {}
        future = self._helpers.submit(gate)
        if future is None:
            return gate(), {}
        try:
            vectors = {text: self.embed([text])[0]}
        except Exception:
            vectors = {}
        return future.result(), vectors

    # ------------------------------------------------------------------ a batch stored while it is embedded
    # log_many embeds a batch on a helper in the model's own batches of texts (memtend.helpers.embed_in_parts)
    # and stores each part while the next is embedded, so that only the last, small write is left when the
    # embedding ends. A change written in more than one call is journaled as any other: the journal row goes
    # in the first call; it is deleted in the background once the last call is made (see _end_journal_later).
    def embed_parts(self, texts: Sequence[str]) -> Parts | None:
        """Start embedding a batch on a helper, part by part (None when no helper is free)."""
        return embed_in_parts(self._helpers, self.embed, list(texts), BATCH_SIZE)

    def apply_streamed(self, change: Change, parts: Parts) -> list[ChangeEvent]:
        """``apply`` for a change of new records (``fresh``, nothing archived or deleted) whose texts ``parts`` is
        embedding: the records of each part are stored as soon as it is embedded, while the next part is (parts
        that are ready together are stored together), and the rest with the history row in a last call. All or
        nothing: when there is more than one call, the first carries the journal row. A record whose text is in
        no part (the gate changed it) is embedded for the last call; an embedding error takes back what was
        stored and is raised, as when the batch is embedded before any write."""
        self._check_open()
        if not (change.fresh and change.upserts) or change.archives or change.deletes or change.erase:
            raise InvalidInputError("a streamed change stores new records only")
        running = next((n for n, f in enumerate(parts.futures) if not f.done()), None)
        if running is not None and self._state.journal_ends:
            parts.computing[running].wait()  # an earlier batch's journal row is deleted beside this model run
        self._settle_journal_ends()
        self._finish_interrupted(change.user_id)
        jid = journal.JOURNAL_ID_PREFIX + new_id()
        sent: list[str] = []  # ids of the records sent in calls before the last (the first carried the journal)
        started = self.storage.write_calls
        marked = False
        try:
            marked = self._write_streamed(change, parts, jid, sent)
        except StorageUnavailableError as exc:
            self._interrupted(change, 0, jid if sent else None, exc, self.storage.write_calls - started)
        except Exception:  # (not a KeyboardInterrupt: that leaves the journal row to finish the batch on open)
            if sent:
                self._take_back(change.user_id, sent, jid)
            raise
        if sent:
            self._end_journal_later(change.user_id, jid)
        if not marked:
            self._mark_changed(change)
        self._usage.note(change.user_id, change.used)
        return self.emit(changes.events(change, now()))

    def _write_streamed(self, change: Change, parts: Parts, jid: str, sent: list[str]) -> bool:
        """The calls of ``_apply_streamed``; True when there was one, which carried the change mark too."""
        by_text: dict[str, list[Record]] = {}
        for r in change.upserts:
            by_text.setdefault(r.text, []).append(r)
        vectors = dict(change.vectors)
        last = len(parts.futures) - 1
        for n, (texts, future) in enumerate(zip(parts.texts, parts.futures, strict=True)):
            try:
                got = np.asarray(future.result(), dtype=np.float32)
            except Exception:
                break  # the records left are embedded for the last call, which raises if it fails again
            if len(got) != len(texts):
                break
            for text, vector in zip(texts, got, strict=True):
                for r in by_text.get(text, ()):
                    vectors[r.id] = vector
            if n == last:
                continue
            parts.computing[n + 1].wait()  # the next part's model run holds no GIL: a write now does not stall it
            if parts.futures[n + 1].done():
                continue  # the next part is ready too (its run was not announced): stored together
            done = set(sent)
            ready = tuple(r for r in change.upserts if r.id in vectors and r.id not in done)
            if not ready:
                continue
            entry = None if sent else (jid, journal.encode(change, 0))
            sent.extend(r.id for r in ready)  # before the call: a call that fails may still have been applied
            self._write(_part(change, ready, {}), np.vstack([vectors[r.id] for r in ready]), entry)
        if not sent:  # one call: the whole change, with its change mark
            whole = replace(change, vectors=vectors)
            self._write(whole, self._vectors(whole), mark=True)
            return True
        done = set(sent)
        final = _part(change, tuple(r for r in change.upserts if r.id not in done), vectors)
        self._write(final, self._vectors(final))
        return False

    def _take_back(self, user_id: str, ids: list[str], jid: str) -> None:
        """Delete what a streamed change stored before it failed, and its journal row (if this fails too, the
        journal row rolls the change forward on the next open)."""
        with self.lock:
            self.storage.delete_records(user_id, ids)
            synced = self._indexes.get(user_id)
            if synced is not None:
                synced.index.remove(ids)
            self.storage.end_journal(user_id, jid)

    def _end_journal_later(self, user_id: str, jid: str) -> None:
        """Delete the journal row of a change stored whole later: the call returns without waiting. On a store only
        this process writes, it is deleted beside the model run of the next streamed batch (a Chroma call holds the
        GIL, so beside anything else it would stall it), or before any other write, on close, or at exit; on a
        shared store, at once on a background thread. A row a crash leaves meanwhile is replayed on open, which
        writes nothing new (the same ids, added only where missing). Every later write of the store in this
        process first waits for the deletion (:meth:`_settle_journal_ends`), so nothing is written between the
        change and it."""
        with self.lock:
            future: Future[None] | None = None
            if not self.exclusive:
                if self._journal_thread is None:
                    self._journal_thread = ThreadPoolExecutor(max_workers=1, thread_name_prefix="memtend-journal")
                future = self._journal_thread.submit(self.storage.end_journal, user_id, jid)
            self._state.journal_ends.append((user_id, jid, future))

    def _settle_journal_ends(self, on_close: bool = False) -> None:
        """Delete the journal rows left to delete now (waiting for those being deleted in the background); one whose
        deletion failed is deleted again (raising StorageUnavailableError when Chroma still does not answer; logged
        on close)."""
        with self.lock:
            ends = self._state.journal_ends
            while ends:
                user_id, jid, future = ends[0]
                try:
                    if future is None:
                        self.storage.end_journal(user_id, jid)
                    else:
                        future.result()
                except Exception:
                    try:
                        self.storage.end_journal(user_id, jid)
                    except StorageUnavailableError:
                        if not on_close:
                            raise
                        _log.warning("memtend: journal row %s of a finished write is left for the next open", jid)
                ends.pop(0)

    def _write(
        self,
        change: Change,
        vectors: np.ndarray | None,
        journal_row: tuple[str, str] | None = None,
        *,
        mark: bool = False,
    ) -> None:
        """Write a change's records and history (``mark``: and, on a store other processes share, its change mark,
        in the same Chroma call: a reader sees the write and its mark together or neither)."""
        uid = change.user_id
        with self.lock:
            # history entries are stamped when they are written
            stamp = now()
            history = [replace(h, at=stamp) if not h.at else h for h in change.history]  # (a fold keeps its own)
            # on a shared store, a write of new rows in one call may carry its mark in its own rows (folded)
            foldable = (
                change.fresh
                and not change.archives
                and not change.deletes
                and journal_row is None
                and len(change.upserts) + len(history) < self.storage.max_batch
            )
            note = self._mark_note(change, foldable) if mark and not self.exclusive else None
            mark_row = None if note is None or note[1] is None else self._state.marks().row(uid, *self._mark_of(note))
            # records, archives and the history row: one Chroma upsert (one transaction) when they fit in a batch
            self.storage.write_records(
                uid,
                change.upserts,
                vectors,
                history,
                archives=change.archives,
                fresh=change.fresh,
                journal=journal_row,
                known=change.stored,
                deleting=change.deletes,
                mark=mark_row,
                shared=not self.exclusive,
                fold=note is not None and mark_row is None,
            )
            if note is not None and mark_row is not None:
                self._state.clear_folds(self._state.marked(uid, note[0]))
            if change.deletes:
                self.storage.delete_records(uid, change.deletes)
            if change.deletes:  # what was deleted for good no longer speaks through the history
                self.storage.scrub_history(uid, change.deletes)
            synced = self._indexes.get(uid)
            if synced is not None:
                rows = [
                    i
                    for i, r in enumerate(change.upserts)
                    if r.status is not Status.ARCHIVED and not fact_claims.is_claim(r.id)
                ]
                if rows:
                    assert vectors is not None
                    synced.index.upsert([change.upserts[i] for i in rows], vectors[rows])
                leaving = change.leaving_index()
                if leaving:
                    synced.index.remove(leaving)
                self._index_claims(synced, change, vectors)

    @staticmethod
    def _index_claims(synced: SyncedIndex, change: Change, vectors: np.ndarray | None) -> None:
        """The index follows what a change's fact claims made of their keys: known (``change.resolved``: the
        folder-lock holder), the new current value is indexed under the fact id with its claim's vector; else the
        key is re-read when the index is next used (one read, moved from the write to the reader)."""
        for n, record in enumerate(change.upserts):
            fid = fact_claims.key_of(record.id) if fact_claims.is_claim(record.id) else None
            if fid is None:
                continue
            if fid not in change.resolved:
                synced.stale.add(fid)
                continue
            current = change.resolved[fid]
            if current is not None:
                assert vectors is not None
                synced.index.upsert([current], vectors[n : n + 1])

    def _erase(self, change: Change) -> list[ChangeEvent]:
        uid = change.user_id
        self._settle_journal_ends()
        with self.lock:
            self._usage.drop_user(uid)  # a stamp write in flight lands first, so nothing touches the user after
            batch = getattr(self._batch, "erasing", False)  # erase_users rewrites the files once, at its end
            if not self.exclusive:  # before anything goes: a call of another process that overlaps it sees it
                self._state.marks().erasing(uid, new_id())
            counts = self.storage.erase_user(uid, purge_log=False)  # purged by _scrub_files, after the marks
            self._indexes.pop(uid, None)
            if not self.exclusive:  # after the records: a reader that sees the marks move finds them gone
                self._state.marks().erased(uid, new_id())
            self._state.forget_writes(uid)
            from memtend.working.session import drop_user_tallies

            drop_user_tallies(self.storage, uid)
            metrics_tally.drop_user(self.storage, uid)
            if not batch:
                self._scrub_files()
        return changes.events(change, now(), counts)

    def emit_documents_changed(
        self,
        user_id: str,
        written: Sequence[DocRow],
        deleted: Sequence[DocRow],
        masked: Mapping[str, tuple[str, ...]],
    ) -> None:
        """Tell ``on_change`` about a document write that the document store has just applied (its own one
        Chroma write; see :mod:`memtend.documents.store`)."""
        if self.on_change is not None:
            ids = [r.id for r in written], [r.id for r in deleted]
            self.emit(changes.document_events(user_id, *ids, masked, now()))

    def emit(self, events: list[ChangeEvent]) -> list[ChangeEvent]:
        metrics_tally.note_events(self, events)  # held, proposed, accepted (memtend.metrics)
        hook = self.on_change
        if hook is not None:
            for event in events:
                try:
                    hook(event)
                except Exception:
                    _log.exception("memtend: the on_change hook failed on a %s event", event.type.value)
        return events

    def _mark_changed(self, change: Change) -> None:
        """Tell other processes this one changed the user's records, and which (after the write, so a reader that
        sees the mark move finds the write): on its own, for a write of several calls."""
        if not self.exclusive:
            with self.lock:  # (in write order with the folded writes it lists)
                note = self._mark_note(change, foldable=False)
                self._state.marks().put(*self._state.marks().row(change.user_id, *self._mark_of(note)))
                self._state.clear_folds(self._state.marked(change.user_id, note[0]))

    def _mark_note(self, change: Change, foldable: bool) -> tuple[str, str | None]:
        """This process's change mark of the user moved for ``change``: (token, its recent writes as JSON, or None
        when the write is folded into its record rows; see :class:`~memtend.storage.marks.ChangeMarks`)."""
        ids = [r.id for r in change.upserts] + [r.id for r in change.archives] + list(change.deletes)
        return self._state.note_write(change.user_id, ids, foldable)

    def _mark_of(self, note: tuple[str, str | None]) -> tuple[str, str, str]:
        """(writer, token, recent) of a mark row for ``note``."""
        return self._state.writer_id, note[0], note[1] or ""


_LOCAL_MODEL = ("chromadb.utils.embedding_functions.onnx_mini_lm_l6_v2", "ONNXMiniLM_L6_V2")


def _runs_here(embedding_function: object) -> bool:
    """Whether the embedding function is Chroma's in-process model (memtend's default is one), or built on it: a
    text it embeds stays in this process. (Told by its class, without importing Chroma here.)"""
    return any((c.__module__, c.__name__) == _LOCAL_MODEL for c in type(embedding_function).__mro__)


def _never_sent(exc: BaseException) -> bool:
    """Whether the failed call never reached the server (the connection was refused or never made)."""
    import httpx

    return isinstance(exc.__cause__, httpx.ConnectError)


def _part(change: Change, upserts: tuple[Record, ...], vectors: Mapping[str, np.ndarray]) -> Change:
    """The part of a change of new records that stores ``upserts``, with their history entries (a record keeps its
    creation entry in its own row) and those of ``vectors`` that are theirs."""
    ids = {r.id for r in upserts}
    return replace(
        change,
        upserts=upserts,
        vectors={rid: v for rid, v in vectors.items() if rid in ids},
        history=tuple(h for h in change.history if h.record_id in ids),
        used={},
    )


def _chunks(change: Change, size: int) -> Iterator[Change]:
    """A change of new records split into changes of at most ``size`` records, each with its history entries."""
    entries: dict[str, list[Any]] = {}
    for h in change.history:
        entries.setdefault(h.record_id, []).append(h)
    for start in range(0, len(change.upserts), size):
        part = change.upserts[start : start + size]
        ids = {r.id for r in part}
        yield replace(
            change,
            upserts=part,
            vectors={rid: v for rid, v in change.vectors.items() if rid in ids},
            history=tuple(h for r in part for h in entries.get(r.id, ())),
            used={},
        )
