"""Erasure checked on the bytes: after ``Memory.erase_user`` no file under the store's folder holds the user's
id, any text they stored, or the byte image of any of their vectors.

The API scan (``test_erasure_scan.py``) sees only what Chroma answers. Here every file memtend or Chroma wrote
(``chroma.sqlite3`` with its write-ahead log table, free pages and full-text index, the vector index folders, the
lock file, any ``-wal``/``-journal`` file) is read as bytes. The user has data in every place: records of every
kind and status, summaries of summaries, archived fact values, history, session state and its call log, ledger,
keyed store, documents. A bystander's id and text must still be there (the control: the grep can find things).
"""

from __future__ import annotations

import sqlite3
from pathlib import Path

import numpy as np
import pytest
from memtend import Memory
from memtend.testing import HashEmbedder
from test_erasure_scan import populate

VICTIM = "zqvictimuserzq"
VICTIM_MARK = "qqvictimmarkqq"
BYSTANDER = "zqbystanderzq"
BYSTANDER_MARK = "qqbystandermarkqq"


def _fill(mem: Memory, uid: str, mark: str) -> None:
    populate(mem, uid, mark)
    u = mem.user(uid)
    u.documents().put(("notes", mark), f"doc-{mark}", {"body": f"{mark} a document value", "n": 1})
    u.set_fact("city", f"{mark} Lisbon")
    u.set_fact("city", f"{mark} Porto")  # another archived fact value
    mem.flush_usage()


def _vectors(mem: Memory, uid: str) -> list[bytes]:
    """The user's stored vectors as float32 bytes (how Chroma keeps them)."""
    got = mem.storage.memories.get(where={"user_id": uid}, include=["embeddings"])
    vectors = got["embeddings"] if got["embeddings"] is not None else []
    return [np.asarray(v, dtype=np.float32).tobytes() for v in vectors]


def _vector_images(mine: list[bytes], others: list[bytes]) -> list[bytes]:
    """For each vector, its 32-byte window with the most non-zero bytes, if no other vector holds it."""
    images = []
    for raw in mine:
        window = max(range(0, len(raw) - 32, 4), key=lambda i: sum(1 for b in raw[i : i + 32] if b))
        image = raw[window : window + 32]
        if not any(image in o for o in others):
            images.append(image)
    assert len(images) >= len(mine) // 2, "too few vectors of this user to tell apart"
    return images


def files_holding(folder: Path, needles: list[bytes]) -> dict[str, list[int]]:
    """Every file under ``folder`` whose bytes hold one of ``needles``: file -> indexes of the needles found."""
    found = {}
    for path in sorted(p for p in folder.rglob("*") if p.is_file()):
        data = path.read_bytes()
        hits = [n for n, needle in enumerate(needles) if needle in data]
        if hits:
            found[str(path.relative_to(folder))] = hits
    return found


def log_rows_holding(db: Path, needle: str) -> int:
    """Rows of Chroma's write-ahead log table whose id or metadata holds ``needle``."""
    con = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
    try:
        rows = con.execute("SELECT id, metadata FROM embeddings_queue").fetchall()
    finally:
        con.close()
    return sum(1 for rid, meta in rows if needle in str(rid) or needle in str(meta))


def _check_erased(folder: Path, victim_vectors: list[bytes], bystander_vectors: list[bytes]) -> None:
    victim = [VICTIM.encode(), VICTIM_MARK.encode()]
    assert files_holding(folder, victim) == {}, "the erased user's id or text is still on disk"
    leftover = files_holding(folder, victim_vectors)
    assert leftover == {}, f"vectors of the erased user are still on disk: {leftover}"
    # the control: the same grep finds the bystander's id, text and vectors
    assert files_holding(folder, [BYSTANDER.encode()]), "the bystander's id vanished from disk"
    assert files_holding(folder, [BYSTANDER_MARK.encode()]), "the bystander's text vanished from disk"
    assert files_holding(folder, bystander_vectors), "the bystander's vectors vanished from disk"


@pytest.mark.slow
def test_erased_user_leaves_no_byte_in_an_embedded_folder(tmp_path: Path) -> None:
    folder = tmp_path / "store"
    mem = Memory(path=folder, embedding_function=HashEmbedder())
    try:
        # the victim written last, so its rows are still in Chroma's log (a save of the vector index purges the
        # log; history rows share the memories collection with the records, so saves come every ~50 writes)
        _fill(mem, BYSTANDER, BYSTANDER_MARK)
        _fill(mem, VICTIM, VICTIM_MARK)
        victim_raw, bystander_raw = _vectors(mem, VICTIM), _vectors(mem, BYSTANDER)
        victim_vectors = _vector_images(victim_raw, bystander_raw)
        bystander_vectors = _vector_images(bystander_raw, victim_raw)
        db = folder / "chroma.sqlite3"
        # before: the user is on disk, in the log table and the database file
        assert log_rows_holding(db, VICTIM_MARK) > 0
        assert "chroma.sqlite3" in files_holding(folder, [VICTIM_MARK.encode()])

        mem.erase_user(VICTIM)

        assert log_rows_holding(db, VICTIM_MARK) == 0
        _check_erased(folder, victim_vectors, bystander_vectors)
        # the store still works for everyone else
        assert mem.user(BYSTANDER).recall(f"{BYSTANDER_MARK} billing", k=3)
        assert mem.user(BYSTANDER).get_fact("city") is not None
    finally:
        mem.close()
    _check_erased(folder, victim_vectors, bystander_vectors)  # closing writes nothing back
    with Memory(path=folder, embedding_function=HashEmbedder()) as again:  # the folder opens again
        assert again.user(BYSTANDER).recall(f"{BYSTANDER_MARK} billing", k=3)
        again.user(VICTIM).remember("a fresh start")  # and the erased user can start over
        assert [r.text for r in again.user(VICTIM).list()] == ["a fresh start"]


def test_erasing_several_users_at_once_leaves_no_byte_of_any(tmp_path: Path) -> None:
    """``erase_users`` rewrites the files once, after the last user: none of them is left on disk."""
    folder = tmp_path / "store"
    with Memory(path=folder, embedding_function=HashEmbedder()) as mem:
        mem.user(BYSTANDER).remember(f"{BYSTANDER_MARK} stays")
        victims = {f"{VICTIM}{n}": f"{VICTIM_MARK}{n}x" for n in range(3)}
        for uid, mark in victims.items():
            u = mem.user(uid)
            u.remember(f"{mark} a note")
            u.set_fact("city", f"{mark} Lisbon")
            u.session("s").set("k", f"{mark} value")
        receipts = mem.erase_users([*victims, VICTIM + "0"])  # a repeated id is erased once
        assert [r.user_id for r in receipts] == list(victims)
        assert all(r.counts["memories"] == 2 for r in receipts)
        needles = [n.encode() for pair in victims.items() for n in pair]
        assert files_holding(folder, needles) == {}
        assert files_holding(folder, [BYSTANDER_MARK.encode()])
        assert mem.users() == [BYSTANDER]


@pytest.mark.parametrize("erasures", [3])
def test_repeated_erasures_do_not_grow_the_log(tmp_path: Path, erasures: int) -> None:
    """Each erasure makes Chroma save its vector index with updates of ids that never exist: they must not pile
    up in the log, nor leave rows behind."""
    folder = tmp_path / "store"
    with Memory(path=folder, embedding_function=HashEmbedder()) as mem:
        mem.user(BYSTANDER).remember(f"{BYSTANDER_MARK} stays")
        sizes = []
        for n in range(erasures):
            mem.user(f"{VICTIM}{n}").remember(f"{VICTIM_MARK} {n}")
            mem.erase_user(f"{VICTIM}{n}")
            con = sqlite3.connect(f"file:{folder / 'chroma.sqlite3'}?mode=ro", uri=True)
            sizes.append(con.execute("SELECT COUNT(*) FROM embeddings_queue").fetchone()[0])
            con.close()
        assert sizes[-1] <= sizes[0], f"the log grows with each erasure: {sizes}"
        assert mem.storage.memories.count() == 1  # the bystander's note (keeping its creation entry in its row)
        assert mem.users() == [BYSTANDER]


@pytest.mark.slow
@pytest.mark.server
def test_erased_user_leaves_no_byte_in_a_server_folder_after_the_operator_scrub(tmp_path: Path) -> None:
    """Through a ``chroma run`` server, erasure purges the server's log through the API; what SQLite and the
    vector index files keep is removed by the operator step the README gives: stop the server, run
    ``memtend scrub --path DIR``, start it again."""
    from conftest import ChromaServer
    from memtend.cli import main

    folder = tmp_path / "server-data"
    server = ChromaServer(folder)
    server.start()
    try:
        mem = Memory(client=server.client(), embedding_function=HashEmbedder())
        _fill(mem, BYSTANDER, BYSTANDER_MARK)
        _fill(mem, VICTIM, VICTIM_MARK)  # last, so its rows are still in the server's log when it is erased
        victim_raw, bystander_raw = _vectors(mem, VICTIM), _vectors(mem, BYSTANDER)
        victim_vectors = _vector_images(victim_raw, bystander_raw)
        bystander_vectors = _vector_images(bystander_raw, victim_raw)
        db = folder / "chroma.sqlite3"
        assert log_rows_holding(db, VICTIM_MARK) > 0

        mem.erase_user(VICTIM)

        assert log_rows_holding(db, VICTIM_MARK) == 0, "the server's log still holds the erased user"
        mem.close()
    finally:
        server.stop()
    assert main(["--path", str(folder), "scrub"]) == 0  # the operator step
    _check_erased(folder, victim_vectors, bystander_vectors)
    server.start()  # the scrubbed folder serves again
    try:
        with Memory(client=server.client(), embedding_function=HashEmbedder()) as mem:
            assert mem.user(BYSTANDER).recall(f"{BYSTANDER_MARK} billing", k=3)
            assert mem.user(VICTIM).list(status=None) == []
    finally:
        server.stop()


def test_scrub_files_after_single_deletions_leaves_no_byte_of_them(tmp_path: Path) -> None:
    """Deleting one record, a document and rejecting a pending note do not rewrite the files;
    ``Memory.scrub_files`` does, and keeps everything else."""
    folder = tmp_path / "store"
    with Memory(path=folder, embedding_function=HashEmbedder()) as mem:
        u = mem.user(BYSTANDER)
        u.remember(f"{BYSTANDER_MARK} stays")
        gone = [u.remember(f"{VICTIM_MARK}1 a note to delete").id]
        pending = u.remember(f"{VICTIM_MARK}2 from a web page", source="external")
        docs = u.documents()
        docs.put(("notes",), "k", {"body": f"{VICTIM_MARK}3 a document to delete"})
        u.delete(gone[0])
        u.reject(pending.id)
        docs.delete(("notes",), "k")
        needles = [f"{VICTIM_MARK}{n}".encode() for n in (1, 2, 3)]
        assert files_holding(folder, needles), "the deleted text is still in the files before the scrub"

        mem.scrub_files()

        assert files_holding(folder, needles) == {}
        assert files_holding(folder, [BYSTANDER_MARK.encode()])
        assert [r.text for r in u.list()] == [f"{BYSTANDER_MARK} stays"]


def test_erasure_reaches_what_the_user_deleted_before(tmp_path: Path) -> None:
    """A document the user deleted earlier emptied its collection; its text is still in Chroma's log until that
    collection saves its index, which the erasure must make it do."""
    folder = tmp_path / "store"
    with Memory(path=folder, embedding_function=HashEmbedder()) as mem:
        mem.user(BYSTANDER).remember(f"{BYSTANDER_MARK} stays")
        docs = mem.user(VICTIM).documents()
        docs.put(("notes",), "k", {"body": f"{VICTIM_MARK} a document deleted before the erasure"})
        docs.delete(("notes",), "k")
        assert files_holding(folder, [VICTIM_MARK.encode()])
        mem.erase_user(VICTIM)
        assert files_holding(folder, [VICTIM_MARK.encode(), VICTIM.encode()]) == {}


def test_scrub_command_refuses_a_folder_in_use_or_without_a_store(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    import subprocess
    import sys

    from memtend.cli import main

    folder = tmp_path / "store"
    with Memory(path=folder, embedding_function=HashEmbedder()) as mem:
        mem.user(BYSTANDER).remember(f"{BYSTANDER_MARK} stays")
        other = subprocess.run(  # another process: the store is in use
            [sys.executable, "-m", "memtend.cli", "--path", str(folder), "scrub"], capture_output=True, text=True
        )
        assert other.returncode == 2 and "StoreLockedError" in other.stderr
    assert main(["--path", str(tmp_path / "nothing"), "scrub"]) == 2
    assert "StoreNotFoundError" in capsys.readouterr().err
    assert main(["--path", str(folder), "scrub"]) == 0
    with Memory(path=folder, embedding_function=HashEmbedder()) as mem:
        assert [r.text for r in mem.user(BYSTANDER).list()] == [f"{BYSTANDER_MARK} stays"]
