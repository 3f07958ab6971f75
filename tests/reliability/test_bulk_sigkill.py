"""SIGKILL between two Chroma calls of an adapter's bulk write (a LangChain history's ``add_messages``, a
LangGraph store ``batch``, one store ``batch`` reaching two users): after the store is opened again the write is
whole (its journal, sent with its first call, is rolled forward), never a first chunk alone.

A worker (``_bulk_worker.py``) starts the write on an embedded folder and says MIDWAY right after its first call to
the documents collection; the test kills it there, then a fresh process opens the folder and counts what is there.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

WORKER = Path(__file__).with_name("_bulk_worker.py")
ROWS = 1_000  # three calls of the worker's 400-row batches


def _env() -> dict[str, str]:
    return {**os.environ, "ANONYMIZED_TELEMETRY": "False", "PYTHONUNBUFFERED": "1"}


def _dump(folder: Path, mode: str = "dump") -> tuple[dict[str, Any], str]:
    out = subprocess.run(
        [sys.executable, str(WORKER), str(folder), mode], capture_output=True, text=True, env=_env(), timeout=300
    )
    assert out.returncode == 0, out.stderr[-3000:]
    line = next(x for x in out.stdout.splitlines() if x.startswith("STATE "))
    return json.loads(line.split(" ", 1)[1]), out.stderr


def _kill_midway(folder: Path, mode: str, rows: int = ROWS) -> None:
    proc = subprocess.Popen(
        [sys.executable, str(WORKER), str(folder), mode, str(rows)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=_env(),
    )
    assert proc.stdout is not None
    line = proc.stdout.readline().strip()
    assert line == "MIDWAY", proc.stderr.read() if proc.stderr else "the worker ended"
    proc.send_signal(signal.SIGKILL)
    proc.communicate(timeout=60)
    assert proc.returncode == -signal.SIGKILL


@pytest.mark.parametrize(("mode", "field"), [("history", "messages"), ("store", "items")])
def test_sigkill_between_the_calls_of_a_bulk_write_leaves_it_whole(tmp_path: Path, mode: str, field: str) -> None:
    folder = tmp_path / "store"
    _kill_midway(folder, mode)
    state, log = _dump(folder)
    assert state[field] == ROWS, f"{state[field]} of {ROWS} rows visible: not all or nothing"
    assert state["journals"] == 0, "the journal outlived the open that finished it"
    assert "finishing an interrupted document write" in log  # the kill did land between the calls
    again, _ = _dump(folder)  # a second open finds nothing to do and the same rows
    assert again == state


@pytest.mark.slow
def test_sigkill_after_acknowledged_chat_turns_keeps_every_one(tmp_path: Path) -> None:
    """What add_messages (and a write_once LlamaIndex turn's aput_messages) returned from survives a SIGKILL; the
    question a write_once memory held without an answer is the one thing lost (its documented trade)."""
    folder = tmp_path / "store"
    proc = subprocess.Popen(
        [sys.executable, str(WORKER), str(folder), "turns", "3"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=_env(),
    )
    assert proc.stdout is not None
    for _ in range(6):
        assert proc.stdout.readline().strip() == "ACK", proc.stderr.read() if proc.stderr else "the worker ended"
    proc.send_signal(signal.SIGKILL)
    proc.communicate(timeout=60)
    assert proc.returncode == -signal.SIGKILL
    state, _ = _dump(folder)
    expected = [text for i in range(3) for text in (f"question {i}", f"answer {i}")]
    assert state["turns"] == expected
    assert state["agent_turns"] == expected


def test_sigkill_inside_a_store_batch_for_two_users_leaves_both_parts_or_neither(tmp_path: Path) -> None:
    """Each user's 300 rows fit in one Chroma call, both users' do not: the batch is one journaled write (a journal
    row per user in its first call), so a kill after that call leaves neither user's part alone."""
    folder = tmp_path / "store"
    _kill_midway(folder, "users", rows=300)
    state, log = _dump(folder)
    assert (state["alice"], state["bob"]) == (300, 300), f"{state}: one user's part without the other's"
    assert state["journals"] == 0
    assert "finishing an interrupted document write" in log
    again, _ = _dump(folder)
    assert again == state


def test_a_pending_write_across_users_is_journaled_per_user_so_erasure_reaches_it(ephemeral_memory) -> None:  # type: ignore[no-untyped-def]
    """The server is lost after the first call of a two-user batch: the journal rows it left are each user's own,
    so erasing bob before the replay erases his part of the write too, and the replay finishes alice's alone."""
    from langgraph.store.base import PutOp
    from memtend.errors import StorageUnavailableError
    from memtend_langgraph import MemtendStore

    rows = ephemeral_memory.storage.documents
    rows.max_batch = 400
    store = MemtendStore(ephemeral_memory, user_label=0)
    real, calls = rows.collection.upsert, []

    def upsert(**kwargs):  # type: ignore[no-untyped-def]
        calls.append(len(kwargs["ids"]))
        if len(calls) > 1:
            raise ConnectionError("the server went away")
        return real(**kwargs)

    rows.collection.upsert = upsert
    with pytest.raises(StorageUnavailableError):
        store.batch([PutOp((user, "bulk"), f"k{i}", {"i": i}) for i in range(300) for user in ("alice", "bob")])
    rows.collection.upsert = real
    journals = rows.collection.get(where={"doc_journal": {"$eq": True}}, include=["metadatas"])["metadatas"]
    assert sorted(m["user_id"] for m in journals) == ["alice", "bob"]  # one journal row per user
    change = {m["user_id"]: str(m["change"]) for m in journals}
    assert '"bob"' not in change["alice"] and '"alice"' not in change["bob"]  # each holds its own user's rows only
    ephemeral_memory.erase_user("bob")
    assert rows.recover() == 1  # alice's part only
    assert len(store.search(("alice", "bulk"), limit=1000)) == 300
    assert store.search(("bob", "bulk"), limit=1000) == []
    assert ephemeral_memory.document_owners(("langgraph_store",)) == ["alice"]


@pytest.mark.slow
def test_sigkill_after_an_overwrites_vectors_leaves_the_stored_document_ranked_by_its_own(tmp_path: Path) -> None:
    """A document write sends its vectors before its rows (a journaled write rolled forward needs them); killed
    between the two, the stored value is what a search ranks, by its own vectors (the new ones went to the set of
    ids its row does not read), never by the text of the write that did not happen; erasure reaches both sets."""
    from _bulk_worker import OLD_TEXT, USER

    folder = tmp_path / "store"
    _kill_midway(folder, "overwrite", rows=0)
    state, _ = _dump(folder, "ranked")
    assert state["a"] == OLD_TEXT  # the write did not happen
    scores = dict(state["ranked"])
    assert scores["a"] < 0.5, f"the stored document is ranked by the killed write's text: {state}"
    assert state["vector_rows"] == 3  # a's own, b's, and a's unread new one
    from memtend import Memory
    from memtend.testing import HashEmbedder

    mem = Memory(path=folder, embedding_function=HashEmbedder())
    try:
        from _bulk_worker import NEW_TEXT

        docs = mem.user(USER).documents()
        docs.put(("notes",), "a", {"text": NEW_TEXT}, index=["text"])  # written again, whole this time
        best = docs.search(("notes",), query=NEW_TEXT, limit=1)[0]
        assert best.key == "a" and best.score is not None and best.score > 0.99
        docs.put(("notes",), "a", {"text": OLD_TEXT}, index=["text"])  # and back: each write reads its own set
        assert docs.search(("notes",), query=NEW_TEXT, limit=1)[0].key == "b"
        mem.erase_user(USER)
        assert mem.storage.documents.vectors.get(where={"user_id": {"$eq": USER}}, include=[])["ids"] == []
    finally:
        mem.close()
