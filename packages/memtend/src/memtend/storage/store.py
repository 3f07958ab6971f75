"""Storage: the record and history rows of the memories collection with the whole-user operations over every
collection (erasure, counts, the list of users)."""

from __future__ import annotations

from chromadb.api.models.Collection import Collection

from memtend.storage.chroma import WRITE_BATCH, Where, blank_vectors, guarded, is_server, save_vector_index
from memtend.storage.filters import HISTORY_OWNER, JOURNAL_OWNER, history_where, owned, where
from memtend.storage.history_rows import HistoryRows
from memtend.storage.marks import MARK_OWNER


class Storage(HistoryRows):
    """User-scoped access to memtend's Chroma collections: records, history, documents, marks and whole users."""

    # ---------------------------------------------------------------- whole users
    @guarded
    def erase_user(self, user_id: str, *, purge_log: bool = True) -> dict[str, int]:
        """Delete every row of the user from every collection; counts per collection (history rows, kept beside
        the records, are counted as ``history``).

        What Chroma keeps of deleted rows is cleared where its API reaches: the vectors of the user's rows are
        overwritten before they are deleted (the vector index keeps the vectors of deleted items), and every
        collection that held rows is made to save its vector index, which lets Chroma drop its write-ahead log
        (``embeddings_queue``) up to that point (``purge_log=False`` leaves that to a later :meth:`purge_log`, for
        erasing many users at once). What SQLite keeps in the database file is cleared by
        :mod:`memtend.storage.purge` (run by ``Memory.erase_user`` on a local folder)."""
        self.slots.drop_user(user_id)
        self.documents.rows.drop_user(user_id)
        try:
            return self._erase_user(user_id, purge_log)
        finally:
            self.slots.drop_user(user_id)
            self.documents.prefixes.drop_user(user_id)
            self.documents.rows.drop_user(user_id)

    def _erase_user(self, user_id: str, purge_log: bool) -> dict[str, int]:
        counts: dict[str, int] = {"history": self._count_creation_entries(user_id)}
        on_disk = self._keeps_files()
        for name, col, flt in self._user_rows(user_id):
            ids = col.get(where=flt, include=[])["ids"]
            if on_disk and (col is self.memories or name == "document_vectors"):  # others: one constant vector
                blank_vectors(col, ids)
            for start in range(0, len(ids), WRITE_BATCH):
                col.delete(ids=ids[start : start + WRITE_BATCH], where=flt)
            counts[name] = counts.get(name, 0) + len(ids)
            if on_disk and (ids or col.count() or self._ever_written(col)):  # rows deleted earlier: in the log
                self._log_to_purge[col.name] = col
        if purge_log:
            self.purge_log()
        return counts

    @guarded
    def purge_log(self, *, every_collection: bool = False) -> None:
        """Make each collection an erasure deleted rows from (``every_collection``: each holding rows) save its
        vector index now, so Chroma purges its write-ahead log past the deleted rows (see ``save_vector_index``)."""
        if every_collection and self._keeps_files():
            for col in self.collections().values():
                if col.count() or self._ever_written(col):
                    self._log_to_purge[col.name] = col
        while self._log_to_purge:
            _, col = self._log_to_purge.popitem()
            save_vector_index(col)

    def _ever_written(self, collection: Collection) -> bool:
        """Whether an empty collection was ever written (Chroma then knows its dimension): only then does a save
        of its index purge its log (a collection never written keeps the updates that ask for a save)."""
        try:
            return self.client.get_collection(collection.name)._model.dimension is not None
        except Exception:
            return False

    def _keeps_files(self) -> bool:
        """False for an in-memory client (``EphemeralClient``): nothing it holds reaches a file."""
        try:
            settings = self.client.get_settings()
        except Exception:
            return True
        return bool(getattr(settings, "is_persistent", True)) or is_server(settings)

    def local_folder(self) -> str | None:
        """The folder of an embedded (``PersistentClient``) store; None for an in-memory or a server client."""
        try:
            settings = self.client.get_settings()
        except Exception:
            return None
        if not getattr(settings, "is_persistent", False) or is_server(settings):
            return None
        return str(settings.persist_directory) if settings.persist_directory else None

    @guarded
    def count_user(self, user_id: str) -> dict[str, int]:
        """Rows per collection; ``history`` counts history rows and the records keeping their creation entry."""
        counts: dict[str, int] = {"history": self._count_creation_entries(user_id)}
        for name, col, flt in self._user_rows(user_id):
            ids = col.get(where=flt, include=[])["ids"]
            if name == "changes" and col is self.memories:  # records flagged by a folded write are counted as such
                ids = [i for i in ids if i.startswith("mark:")]
            counts[name] = counts.get(name, 0) + len(ids)
        return counts

    def _user_rows(self, user_id: str) -> list[tuple[str, Collection, Where]]:
        """(name, collection, filter) of every place a user's rows are kept."""
        places = [(name, col, where(user_id)) for name, col in self.collections().items()]
        journal = owned(JOURNAL_OWNER, user_id, {})
        marks = owned(MARK_OWNER, user_id, {})
        return [
            *places,
            ("history", self.memories, history_where(user_id)),
            ("memories", self.memories, journal),
            ("changes", self.memories, marks),
        ]

    @guarded
    def users(self) -> list[str]:
        """Every user id with at least one row (a full scan: for the CLI and for tests, not for hot paths)."""
        seen: set[str] = set()
        for name, col in self.collections().items():
            if name == "changes":  # marks of users with records elsewhere, and the store-wide erasure row
                continue
            got = col.get(include=["metadatas"])
            for m in got["metadatas"] or []:
                m = m or {}
                owner = m.get("user_id", m.get(HISTORY_OWNER, m.get(JOURNAL_OWNER)))
                if owner is not None:
                    seen.add(str(owner))
        return sorted(seen)
