"""The write journal: how a change that takes more than one Chroma write is made all-or-nothing. Pure: no I/O.

A change that fits in one Chroma call needs no journal: its records, their archived copies and its history row go
in one upsert, which Chroma applies as one transaction. Any other change (a ``log_many`` stored in chunks while
the next chunk is embedded, a compaction of more rows than one batch, every change that deletes) is journaled:
a journal row holding the whole change as data goes in the same call as its first rows, and is deleted after the
last write. A journal row left behind (the process was killed, the server was lost) is rolled forward: replayed
when the store is next opened (``Memory`` does it on open), or on the next call for that user in the process that
was interrupted. Replay is idempotent: the same record ids, the same history row ids, upserts and deletes that can
be repeated; vectors are read back from the rows already stored with the same text, or embedded again from it
(the embedding of a text is what every stored vector is).

A journal row lives in the memories collection: owner field ``j_user`` (record and history reads never see it;
erasure removes it with the user), id ``j:<uuid>``, ``journal: True`` (so open finds every one with one lookup),
``at`` (when it was written), and ``change``, a metadata value (not the document, which Chroma indexes for
full-text search) holding the change as JSON: ``{"user_id", "chunk", "fresh",
"upserts": [[id, text, metadata]], "archives": [...], "deletes": [id], "history": [entry]}``. ``chunk`` is the
number of records per write the change was split into (0: one change), so a replay splits it the same way and
writes the same history rows.

The invariants this keeps between processes: docs/consistency.md."""

from __future__ import annotations

import json
from typing import Any

from memtend.policies.changes import Change
from memtend.records import Record
from memtend.results import HistoryEntry

JOURNAL_ID_PREFIX = "j:"
# A journal row another live process may still be working through is not replayed by a process that shares the
# store (a server) until it is this old; an embedded folder is exclusive, so its journals are replayed at once.
SHARED_REPLAY_AFTER = 120.0


def encode(change: Change, chunk: int) -> str:
    """The journal document of a change (its vectors left out: a replay reads or embeds them again)."""
    return json.dumps(
        {
            "user_id": change.user_id,
            "chunk": chunk,
            "fresh": change.fresh,
            "upserts": [_record(r) for r in change.upserts],
            "archives": [_record(r) for r in change.archives],
            "deletes": list(change.deletes),
            "history": [h.stored() for h in change.history],
        }
    )


def decode(document: str) -> tuple[Change, int]:
    """The change a journal document holds, and the chunk size it was written in."""
    body = json.loads(document)
    user_id = str(body["user_id"])
    change = Change(
        user_id=user_id,
        upserts=tuple(Record.from_chroma(i, t, dict(m)) for i, t, m in body["upserts"]),
        archives=tuple(Record.from_chroma(i, t, dict(m)) for i, t, m in body["archives"]),
        deletes=tuple(str(i) for i in body["deletes"]),
        history=tuple(_entry(user_id, e) for e in body["history"]),
        fresh=bool(body["fresh"]),
    )
    return change, int(body["chunk"])


def _record(record: Record) -> list[Any]:
    return [record.id, record.text, record.to_metadata()]


def _entry(user_id: str, body: dict[str, Any]) -> HistoryEntry:
    return HistoryEntry(
        id=str(body["id"]),
        user_id=user_id,
        op=str(body["op"]),
        record_id=str(body["record_id"]),
        before=body.get("before"),
        after=body.get("after"),
        source=str(body.get("source", "")),
        at=0.0,
    )
