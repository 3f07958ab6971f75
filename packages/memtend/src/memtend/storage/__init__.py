"""The only package that talks to Chroma and the only place a where-filter is built.

Three collections hold everything memtend keeps about users:

- ``<prefix>_memories``: every memory record (facts, events, rules, notes, summaries), active, archived
  or pending review, with its embedding (metadata: ``user_id``, ``last_used_at`` and ``r``, the other fields as
  one JSON value; see ``Record.to_metadata``); and the history: one row per write, listing its changes (operation,
  record id, before, after, source), stamped with the time it was written, except that a new record keeps its
  creation entry in its own row until the row is first replaced or deleted (see ``write_records``; a fact's slot
  row keeps it through updates, whole, and a fact update's entry rides in the archived old value's row). History is
  written in the same Chroma call as the records it describes (one call is one transaction), so a single
  ``remember`` is one write and a write never lands without its history. History rows are told apart by their
  owner field: ``h_user`` instead of ``user_id`` (record reads filter on ``user_id``, so they never see a history
  row and cost no more), ids ``h:<first entry id>``, and a vector no search is meant to find (see
  ``history_vector``); change marks for processes sharing the store are rows of this collection too
  (:class:`ChangeMarks`, owner field ``m_user``), so a write's mark goes in the write's own call, or is the
  write's own record rows (a folded write: they carry ``m_user`` too, see :class:`ChangeMarks`);
- ``<prefix>_history``: where history rows were kept before they moved beside the records; read (and erased)
  when an older store holds any, never written;
- ``<prefix>_kv``: where keyed stores and working memory were kept before the document store; nothing writes it
  any more, erasure still clears it (stores written by earlier versions);
- ``<prefix>_documents``: the document store (:mod:`memtend.documents.store`), rows written by :class:`DocumentRows`;
- ``<prefix>_document_vectors``: embeddings of the indexed fields of documents, for ``search(query=...)``;
- ``<prefix>_changes``: where change marks were kept before they moved into the memories collection; nothing
  writes it any more, erasure still clears it.

Every read, write and delete takes a ``user_id`` and carries a ``user_id`` clause, so no caller can reach
another user's rows by accident.
"""
