"""Several Memory handles on one store in one process share one state (index cache, folder exclusivity, session
tallies, usage stamps): what one handle writes or erases, the others see at once, whichever closes first. A
closed handle refuses every call with a typed error. The embedded folder lock survives its lock file being
deleted.
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import chromadb
import pytest
from conftest import ChromaServer, unique_prefix
from memtend import Memory, MemoryClosedError, StoreLockedError

BACKENDS = ["ephemeral", "persistent", pytest.param("server", marks=[pytest.mark.server, pytest.mark.slow])]
Opener = Callable[[], Memory]


@pytest.fixture(params=BACKENDS)
def opener(request: pytest.FixtureRequest, tmp_path: Path, embedding_function: Any) -> Iterator[Opener]:
    """Opens handles on one store: one shared EphemeralClient, one folder, or one server with one prefix
    (each server handle with its own HttpClient, as separate parts of an application would build them)."""
    opened: list[Memory] = []
    prefix = unique_prefix()
    if request.param == "ephemeral":
        client = chromadb.EphemeralClient()

        def make() -> Memory:
            return Memory(client=client, embedding_function=embedding_function, collection_prefix=prefix)
    elif request.param == "persistent":

        def make() -> Memory:
            return Memory(path=tmp_path / "store", embedding_function=embedding_function, collection_prefix=prefix)
    else:
        server: ChromaServer = request.getfixturevalue("chroma_server")

        def make() -> Memory:
            return Memory(client=server.client(), embedding_function=embedding_function, collection_prefix=prefix)

    def tracked() -> Memory:
        mem = make()
        opened.append(mem)
        return mem

    yield tracked
    for mem in opened:
        mem.close()


def test_an_erasure_through_one_handle_reaches_the_other_after_it_closes(opener: Opener) -> None:
    a, b = opener(), opener()
    a.user("u").remember("shmarkx pelicans nest on the pier")
    assert [h.text for h in a.user("u").recall("pelicans", k=5)] == ["shmarkx pelicans nest on the pier"]
    assert [h.text for h in b.user("u").recall("pelicans", k=5)] == ["shmarkx pelicans nest on the pier"]
    b.erase_user("u")
    b.close()
    assert a.user("u").recall("pelicans", k=5) == [], "the other handle still recalls the erased text"
    assert a.user("u").list(status=None) == []
    assert "u" not in a.users()


def test_session_tallies_are_shared_and_dropped_by_an_erasure(opener: Opener) -> None:
    a, b = opener(), opener()
    state = a.user("u").session("s1")
    state.set("branch", "main")
    for _ in range(5):
        state.get("branch")  # counted in this process, not yet stored
    assert b.user("u").session("s1").stats()["calls"]["get"] == 5, "the other handle sees the same tally"
    b.erase_user("u")
    b.close()
    state.set("branch", "dev")  # the user starts again: only what was called since the erasure counts
    assert a.user("u").session("s1").stats()["calls"] == {"get": 0, "set": 1, "list": 0, "delete": 0}


def test_a_write_through_one_handle_is_recalled_through_the_other(opener: Opener) -> None:
    a, b = opener(), opener()
    assert a.user("u").recall("heron", k=5) == []  # cached, empty
    b.user("u").remember("shmarkx a heron fishing at dawn")
    assert [h.text for h in a.user("u").recall("heron", k=5)] == ["shmarkx a heron fishing at dawn"]
    note = a.user("u").list()[0]
    b.user("u").delete(note.id)
    assert a.user("u").recall("heron", k=5) == []


CLOSED_CALLS: dict[str, Callable[[Memory], Any]] = {
    "remember": lambda m: m.user("u").remember("after close"),
    "set_fact": lambda m: m.user("u").set_fact("colour", "teal"),
    "recall": lambda m: m.user("u").recall("anything", k=3),
    "list": lambda m: m.user("u").list(),
    "erase_user": lambda m: m.erase_user("u"),
    "session set": lambda m: m.user("u").session("s1").set("k", "v"),
    "store put": lambda m: m.user("u").store("notes").put("k", 1),
    "documents put": lambda m: m.documents("u").put(("a",), "k", {"v": 1}),
    "users": lambda m: m.users(),
}


@pytest.mark.parametrize("call", CLOSED_CALLS.values(), ids=list(CLOSED_CALLS))
def test_a_closed_handle_refuses_every_call(opener: Opener, call: Callable[[Memory], Any]) -> None:
    a, keeper = opener(), opener()
    a.user("u").remember("before close")
    a.close()
    a.close()  # closing twice is harmless
    with pytest.raises(MemoryClosedError) as info:
        call(a)
    assert "open a new Memory" in str(info.value), "the error says what to do"
    assert [r.text for r in keeper.user("u").list()] == ["before close"], "nothing was written"


# what is obtained from the handle while it is open -> what is then done with it after close()
OBTAINED_BEFORE_CLOSE: dict[str, tuple[Callable[[Memory], Any], Callable[[Any], Any]]] = {
    "documents put": (lambda m: m.documents("u"), lambda d: d.put(("a",), "k", {"v": 1})),
    "user documents put": (lambda m: m.user("u").documents(), lambda d: d.put(("a",), "k", {"v": 1})),
    "store put": (lambda m: m.user("u").store("notes"), lambda s: s.put("k", 1)),
    "session set": (lambda m: m.user("u").session("s1"), lambda s: s.set("k", "v")),
    "user remember": (lambda m: m.user("u"), lambda u: u.remember("after close")),
}


@pytest.mark.parametrize("obtain,use", OBTAINED_BEFORE_CLOSE.values(), ids=list(OBTAINED_BEFORE_CLOSE))
def test_what_was_obtained_from_a_handle_refuses_after_it_closed(
    opener: Opener, obtain: Callable[[Memory], Any], use: Callable[[Any], Any]
) -> None:
    a, keeper = opener(), opener()
    obtained = obtain(a)  # the store, session or user object is made while the handle is open
    a.close()
    with pytest.raises(MemoryClosedError):
        use(obtained)
    assert keeper.documents("u").get(("a",), "k") is None, "nothing was written"
    assert keeper.user("u").store("notes").get("k") is None
    assert keeper.user("u").list() == []


def test_closing_every_handle_frees_the_folder(tmp_path: Path, embedding_function: Any) -> None:
    a = Memory(path=tmp_path / "store", embedding_function=embedding_function)
    b = Memory(path=tmp_path / "store", embedding_function=embedding_function)
    a.user("u").remember("kept across reopen")
    a.close()
    b.user("u").remember("written after the first closed")
    b.close()
    c = Memory(path=tmp_path / "store", embedding_function=embedding_function)
    try:
        assert sorted(r.text for r in c.user("u").list()) == ["kept across reopen", "written after the first closed"]
    finally:
        c.close()


# ------------------------------------------------------------------------------------------ the folder lock
_PROBE = """
import sys
from memtend import Memory, StoreLockedError
try:
    Memory(path=sys.argv[1]).close()
    print("OPENED", flush=True)
except StoreLockedError:
    print("LOCKED", flush=True)
"""


def _probe(folder: Path) -> str:
    env = {**os.environ, "ANONYMIZED_TELEMETRY": "False"}
    done = subprocess.run(
        [sys.executable, "-c", _PROBE, str(folder)], capture_output=True, text=True, timeout=300, env=env
    )
    assert done.returncode == 0, done.stderr[-2000:]
    return done.stdout.strip()


@pytest.mark.slow
def test_deleting_the_lock_file_does_not_let_a_second_process_in(tmp_path: Path, embedding_function: Any) -> None:
    folder = tmp_path / "store"
    mem = Memory(path=folder, embedding_function=embedding_function)
    try:
        mem.user("u").remember("held by this process")
        (folder / "memtend.lock").unlink()
        assert _probe(folder) == "LOCKED", "a second process opened the folder once the lock file was gone"
        mem.user("u").remember("still writable by the holder")
    finally:
        mem.close()
    assert _probe(folder) == "OPENED", "the folder is free once this process closes it"


def test_a_closed_handle_cannot_write_while_another_process_holds_the_folder(
    tmp_path: Path, embedding_function: Any
) -> None:
    folder = tmp_path / "store"
    mem = Memory(path=folder, embedding_function=embedding_function)
    mem.close()
    env = {**os.environ, "ANONYMIZED_TELEMETRY": "False"}
    holder = subprocess.Popen(
        [sys.executable, "-c", "import sys; from memtend import Memory; m = Memory(path=sys.argv[1]); "
         "print('HELD', flush=True); sys.stdin.readline(); m.close()", str(folder)],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env,
    )  # fmt: skip
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "HELD"
        with pytest.raises(MemoryClosedError):
            mem.user("u").remember("written through a closed handle")
        with pytest.raises(StoreLockedError):
            Memory(path=folder, embedding_function=embedding_function)
    finally:
        holder.communicate("\n", timeout=60)
