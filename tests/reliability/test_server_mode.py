"""Losing the Chroma server mid-run: every call fails with StorageUnavailableError saying what to do (never a raw
httpx error, never a silent success), nothing half-done is left, and after the server comes back on the same
path and port everything acknowledged before is there.

The whole core suite also runs against a server through the ``memory`` fixture's ``server`` backend.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from conftest import ChromaServer
from memtend import Event, Memory, MemtendError, Source, StorageUnavailableError, UserMemory

pytestmark = [pytest.mark.server, pytest.mark.slow]
PREFIX = "srvmode"


@pytest.fixture
def private_server(tmp_path: Path) -> Iterator[ChromaServer]:
    server = ChromaServer(tmp_path / "data")
    server.start()
    yield server
    server.stop()


def _write_batch(mem: Memory, tag: str) -> dict[str, Any]:
    """Acknowledged writes of every kind; returns what must survive."""
    u = mem.user("alice")
    u.set_fact("colour", f"{tag} teal")
    u.remember(f"{tag} prefers short answers")
    u.log_many([Event(f"{tag} event {i}") for i in range(3)])
    u.add_rule(f"{tag} never deploy on Fridays")
    u.store("session:t1").put(f"{tag}-key", {"tag": tag})
    mem.user("bob").log(f"{tag} bob event")
    return {"colour": f"{tag} teal", "texts": {f"{tag} prefers short answers", f"{tag} never deploy on Fridays"}}


def _outage_calls(mem: Memory, u: UserMemory) -> dict[str, Callable[[], Any]]:
    return {
        "set_fact": lambda: u.set_fact("colour", "outage red", source=Source.USER),
        "remember": lambda: u.remember("outage note"),
        "log": lambda: u.log("outage event"),
        "log_many": lambda: u.log_many(["outage batch 1", "outage batch 2"]),
        "add_rule": lambda: u.add_rule("outage rule"),
        "recall": lambda: u.recall("teal colour", k=3),
        "list": lambda: u.list(status=None),
        "facts": lambda: u.facts(),
        "export": lambda: u.export(),
        "compact": lambda: u.compact(keep_recent=0),
        "forget": lambda: u.forget(),
        "store.put": lambda: u.store("session:t1").put("outage-key", 1),
        "store.get": lambda: u.store("session:t1").get("anything"),
        "erase_user": lambda: mem.erase_user("bob"),
        "users": lambda: mem.users(),
        "async log": lambda: asyncio.run(u.alog("outage async event")),
        "new Memory": lambda: Memory(client=mem.storage.client, embedding_function=mem.embedding_function,
                                     collection_prefix=PREFIX + "new"),
    }  # fmt: skip


def _assert_all_unavailable(mem: Memory) -> None:
    u = mem.user("alice")
    for name, call in _outage_calls(mem, u).items():
        try:
            call()
        except StorageUnavailableError as exc:
            message = str(exc)
            assert "server" in message and "retry" in message.lower(), f"{name}: the error says what to do"
            assert isinstance(exc, MemtendError) and isinstance(exc, ConnectionError)
        except Exception as exc:
            raise AssertionError(f"{name} raised {type(exc).__module__}.{type(exc).__name__}: {exc}") from exc
        else:
            raise AssertionError(f"{name} succeeded silently while the server was down")


def _assert_survived(mem: Memory, batches: list[dict[str, Any]], tags: list[str]) -> None:
    u = mem.user("alice")
    assert u.facts() == {"colour": batches[-1]["colour"]}, "acknowledged fact value (and no outage value)"
    texts = {r.text for r in u.list(status=None)}
    for batch, tag in zip(batches, tags, strict=True):
        assert batch["texts"] <= texts
        assert {f"{tag} event {i}" for i in range(3)} <= texts
        assert u.store("session:t1").get(f"{tag}-key") == {"tag": tag}
        assert [r.text for r in mem.user("bob").list()].count(f"{tag} bob event") == 1
    assert not any("outage" in t for t in texts), "a write that raised was applied anyway"
    assert u.store("session:t1").get("outage-key") is None
    recalled = {h.text for h in u.recall("prefers short answers", k=20)}
    assert {f"{tag} prefers short answers" for tag in tags} <= recalled


def test_losing_the_server_is_a_clear_error_and_loses_nothing(
    private_server: ChromaServer, embedding_function: Any
) -> None:
    mem = Memory(client=private_server.client(), embedding_function=embedding_function, collection_prefix=PREFIX)
    u = mem.user("alice")
    first = _write_batch(mem, "first")
    u.recall("teal", k=3)  # a loaded index and buffered usage stamps, as in a running agent

    # 1. the server crashes (SIGKILL: no clean shutdown)
    assert private_server.proc is not None
    private_server.proc.kill()
    private_server.proc.wait()
    private_server.proc = None
    _assert_all_unavailable(mem)

    private_server.start()  # same path, same port
    _assert_survived(mem, [first], ["first"])
    second = _write_batch(mem, "second")

    # 2. the server is stopped cleanly
    private_server.stop()
    _assert_all_unavailable(mem)
    private_server.start()
    _assert_survived(mem, [first, second], ["first", "second"])

    # a fresh process (a new client and Memory) sees the same
    fresh = Memory(client=private_server.client(), embedding_function=embedding_function, collection_prefix=PREFIX)
    _assert_survived(fresh, [first, second], ["first", "second"])
    assert mem.erase_user("bob").total > 0, "erasure works again once the server is back"
    fresh.close()
    mem.close()
