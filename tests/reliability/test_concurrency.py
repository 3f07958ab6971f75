"""Concurrency: threads on one Memory, coroutines on the async twins, processes on a ``chroma run`` server, and
processes contending for one embedded folder. No update is lost, precedence holds, reads never fail, and each
process sees the others' writes.
"""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import memtend.memory
import memtend.writing.apply
import pytest
from conftest import ChromaServer, unique_prefix
from memtend import Event, Memory, Source, Status
from memtend.policies.precedence import fact_text

HERE = Path(__file__).parent
T0 = 1_700_000_000.0
# Two threads per source, so the final value's writer is not decided by the thread scheduler alone.
THREAD_SOURCES = [Source.USER, Source.TOOL, Source.AGENT, Source.INFERRED] * 2
KEYS = ["colour", "contact.method", "city"]
ROUNDS = 10


def _run_threads(targets: list[Any]) -> list[BaseException]:
    errors: list[BaseException] = []

    def guard(fn: Any) -> Any:
        def run() -> None:
            try:
                fn()
            except BaseException as exc:
                errors.append(exc)

        return run

    threads = [threading.Thread(target=guard(t)) for t in targets]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=300)
        assert not t.is_alive(), "a thread hung"
    return errors


@pytest.mark.slow
def test_threads_lose_no_update_and_keep_precedence(ephemeral_memory: Memory) -> None:
    mem = ephemeral_memory
    u, other = mem.user("concurrent"), mem.user("concurrent ")  # near-identical ids, separate users
    done = threading.Event()
    recalls: list[int] = []

    def writer(t: int) -> Any:
        def run() -> None:
            for r in range(ROUNDS):
                for key in KEYS:
                    u.set_fact(key, f"t{t} r{r}", source=THREAD_SOURCES[t])
                u.log(f"thread {t} event {r}", session=f"s{t}")
                if r == ROUNDS // 2:
                    u.log_many([Event(f"thread {t} batch {j}", session=f"s{t}") for j in range(3)])

        return run

    def bystander() -> None:
        for r in range(ROUNDS):
            other.set_fact("colour", f"bystander {r}", source=Source.INFERRED)
            other.log(f"bystander event {r}")

    def compactor() -> None:
        while not done.is_set():
            u.compact(keep_recent=5)
            time.sleep(0.05)

    def reader() -> None:
        while not done.is_set():
            hits = u.recall("thread event colour city", k=20)
            assert all(h.record.user_id == "concurrent" for h in hits)
            assert all("bystander" not in h.text for h in hits)
            recalls.append(len(hits))
            other.recall("bystander colour", k=5)

    writers = [writer(t) for t in range(len(THREAD_SOURCES))]

    def writers_then_stop() -> None:
        try:
            assert not _run_threads([*writers, bystander]), "a writer failed"
        finally:
            done.set()

    errors = _run_threads([writers_then_stop, compactor, reader, reader])
    assert not errors, errors
    assert recalls, "the readers ran"

    # precedence: the final value comes from the highest-trust source, and is the last value one of its writers
    # wrote (a later write by the other user-source thread would have replaced an earlier one)
    user_threads = [t for t, s in enumerate(THREAD_SOURCES) if s is Source.USER]
    facts = u.facts()
    for key in KEYS:
        record = u.get_fact(key)
        assert record is not None and record.source is Source.USER, f"{key}: {record}"
        assert facts[key] in {f"t{t} r{ROUNDS - 1}" for t in user_threads}, (key, facts[key])
        assert record.text == fact_text(key, record.value), "text and value of a fact disagree"
    records = u.list(status=None)
    active_facts = [r for r in records if r.kind.value == "fact" and r.status is Status.ACTIVE]
    assert sorted(r.key for r in active_facts) == sorted(KEYS), "one active record per key"
    # history: no update ever let a lower-trust source replace a higher one
    trust = {s.value: s.trust for s in Source}
    for entry in u.history():
        if entry.op == "update":
            assert entry.after is not None and entry.before is not None, entry
            assert trust[entry.after["source"]] >= trust[entry.before["source"]], entry
    # every event, exactly once, active or archived behind an existing summary
    texts = [r.text for r in records if r.kind.value == "event"]
    expected = {f"thread {t} event {r}" for t in range(len(THREAD_SOURCES)) for r in range(ROUNDS)}
    expected |= {f"thread {t} batch {j}" for t in range(len(THREAD_SOURCES)) for j in range(3)}
    assert sorted(texts) == sorted(expected), "events lost or duplicated"
    by_id = {r.id: r for r in records}
    for r in records:
        if r.status is Status.ARCHIVED and r.kind.value in ("event", "summary"):
            assert by_id[r.superseded_by].kind.value == "summary"
    active_log = [r for r in records if r.kind.value in ("event", "summary") and r.status is Status.ACTIVE]
    covered = {i for r in active_log for i in [r.id, *r.derived_from]}
    assert {r.id for r in records if r.kind.value == "event"} <= covered, "an event is neither active nor summarised"
    # the bystander was left alone
    assert other.facts() == {"colour": f"bystander {ROUNDS - 1}"}
    assert len(other.list(kinds=["event"])) == ROUNDS


async def test_async_twins_run_concurrently_without_loss(ephemeral_memory: Memory) -> None:
    u = ephemeral_memory.user("async-user")
    await asyncio.gather(
        *(u.alog(f"async event {i}") for i in range(20)),
        *(u.aset_fact(f"key{i % 4}", f"value {i}", source=Source.USER) for i in range(12)),
        *(u.arecall("async event", k=5) for _ in range(6)),
    )
    assert sorted(r.text for r in await u.alist(kinds=["event"])) == sorted(f"async event {i}" for i in range(20))
    facts = await u.afacts()
    assert sorted(facts) == [f"key{i}" for i in range(4)]
    for k in range(4):
        assert facts[f"key{k}"] in {f"value {i}" for i in range(12) if i % 4 == k}


# ------------------------------------------------------------------------------------------ processes, server
def _start(args: list[str]) -> subprocess.Popen[str]:
    env = {**os.environ, "ANONYMIZED_TELEMETRY": "False"}
    return subprocess.Popen(
        [sys.executable, *args],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
    )


def _expect(proc: subprocess.Popen[str], prefix: str) -> str:
    assert proc.stdout is not None
    line = proc.stdout.readline()
    if not line.startswith(prefix):
        proc.kill()
        _, err = proc.communicate(timeout=30)
        raise AssertionError(f"expected {prefix!r}, got {line[:300]!r}; stderr:\n{err[-3000:]}")
    return line[len(prefix) :].strip()


def _say(procs: list[subprocess.Popen[str]], word: str) -> None:
    for p in procs:
        assert p.stdin is not None
        p.stdin.write(word + "\n")
        p.stdin.flush()


@pytest.fixture
def workers() -> Iterator[list[subprocess.Popen[str]]]:
    procs: list[subprocess.Popen[str]] = []
    yield procs
    for p in procs:
        if p.poll() is None:
            p.kill()
        p.communicate(timeout=30)


@pytest.mark.server
@pytest.mark.slow
def test_processes_share_a_server_without_loss(
    chroma_server: ChromaServer, workers: list[subprocess.Popen[str]]
) -> None:
    n, prefix = 3, unique_prefix()
    # create the collections first, so the workers do not race to create them
    Memory(client=chroma_server.client(), collection_prefix=prefix).close()
    for i in range(n):
        args = [str(HERE / "_server_worker.py"), "127.0.0.1", str(chroma_server.port), prefix, str(i), str(n)]
        workers.append(_start(args))
    for p in workers:
        _expect(p, "READY")
    _say(workers, "WRITE")
    for p in workers:
        _expect(p, "WROTE")
    _say(workers, "CHECK")
    results = [json.loads(_expect(p, "RESULT ")) for p in workers]

    rounds = 4
    shared_events = {f"p{i}mk shared event {r}" for i in range(n) for r in range(rounds)}
    shared_events |= {f"p{i}mk shared batch event {j}" for i in range(n) for j in range(3)}
    for i, res in enumerate(results):
        assert sorted(res["shared_events"]) == sorted(shared_events), f"process {i}: shared events lost or doubled"
        recalled_shared = {line.split("|", 1)[1] for line in res["recall"]["shared"]}
        missing = shared_events - recalled_shared
        assert not missing, f"process {i} does not recall the others' writes: {sorted(missing)[:4]}"
        facts = res["shared_facts"]
        assert {f"from.p{j}" for j in range(n)} <= set(facts), f"process {i}: a process's fact was lost"
        assert facts["winner"] in {f"p{j}mk round {rounds - 1}" for j in range(n)}
        assert res["winner_records"].count("active") == 1, "one current value for a key all processes wrote"
        for j in range(n):
            seen = res["recall"][f"proc-{j}"]
            assert seen, f"process {i} sees nothing of proc-{j}"
            for line in seen:
                owner, text = line.split("|", 1)
                assert owner == f"proc-{j}" and f"p{j}mk" in text, f"process {i} leaks into proc-{j}"
                assert not any(f"p{x}mk" in text for x in range(n) if x != j), f"proc-{j} holds another's text"
            assert {f"p{j}mk own event {r}" for r in range(rounds)} <= {line.split("|", 1)[1] for line in seen}


# ------------------------------------------------------------------------------------------ embedded lock
_LOCK_PROBE = """
import sys
from memtend import Memory, StoreLockedError
for attempt in (1, 2):
    try:
        Memory(path=sys.argv[1]).close()
        print("OPENED", flush=True)
    except StoreLockedError as exc:
        print("LOCKED " + str(exc).replace("\\n", " "), flush=True)
    except Exception as exc:
        print("OTHER " + type(exc).__name__ + " " + str(exc), flush=True)
    if attempt == 1:
        sys.stdin.readline()
"""


def test_second_process_on_embedded_folder_gets_store_locked(
    tmp_path: Path, embedding_function: Any, workers: list[subprocess.Popen[str]]
) -> None:
    folder = tmp_path / "store"
    mem = Memory(path=folder, embedding_function=embedding_function)
    mem.user("lock-user").remember("written while the other process is refused")
    workers.append(_start(["-c", _LOCK_PROBE, str(folder)]))
    first = _expect(workers[0], "")
    assert first.startswith("LOCKED "), first
    assert "chroma run" in first and str(folder.resolve()) in first, "the error says what to do"
    mem.close()
    _say(workers, "go")
    assert _expect(workers[0], "") == "OPENED", "the folder is free once this process closes it"
    reopened = Memory(path=folder, embedding_function=embedding_function)
    try:
        assert [r.text for r in reopened.user("lock-user").list()] == ["written while the other process is refused"]
    finally:
        reopened.close()


# ------------------------------------------------------------------------------------------ catch-up between indexes
def test_other_process_sees_writes_updates_and_deletes(two_processes: tuple[Memory, Memory]) -> None:
    writer, reader = two_processes
    wu, ru = writer.user("u"), reader.user("u")
    assert ru.recall("kayak", k=5) == []  # the reader's index is loaded, and empty
    note = wu.remember("catchmarkx kayak trip to the lake")
    wu.set_fact("boat", "catchmarkx kayak")
    assert {h.text for h in ru.recall("kayak lake boat", k=10)} == {note.text, "boat: catchmarkx kayak"}
    wu.set_fact("boat", "catchmarkx canoe")
    wu.delete(note.id)
    assert [h.text for h in ru.recall("kayak lake boat canoe", k=10)] == ["boat: catchmarkx canoe"]


def test_other_process_does_not_recall_what_compaction_archived(two_processes: tuple[Memory, Memory]) -> None:
    writer, reader = two_processes
    wu, ru = writer.user("u"), reader.user("u")
    ids = [wu.log(f"cmpmark{i}x kayak outing number {i}", at=T0 + i).id for i in range(6)]
    assert len(ru.recall("kayak outing", k=10)) == 6  # cached in the reader
    report = wu.compact(keep_recent=1)
    assert report.summary is not None
    live = {r.id for r in wu.list()}  # active records
    assert live == {ids[-1], report.summary.id}
    got = {h.record.id: h.record.status for h in ru.recall("kayak outing", k=10)}
    stale = set(got) - live
    assert not stale, f"another process recalls {len(stale)} archived events as if active"


def test_other_process_sees_a_write_that_landed_late(
    two_processes: tuple[Memory, Memory], monkeypatch: pytest.MonkeyPatch
) -> None:
    """A write is stamped (history ``at``) before its embedding is computed; a big batch or a slow machine
    lands it seconds later. A reader that syncs in between must still pick it up afterwards."""
    clock = [time.time()]
    monkeypatch.setattr(memtend.writing.apply, "now", lambda: clock[0])  # the write path's clock
    writer, reader = two_processes
    wu, ru = writer.user("u"), reader.user("u")
    assert ru.recall("kayak", k=5) == []
    real_embed = writer.embed

    def slow_embed(texts: Any) -> Any:
        clock[0] += 10.0  # ten seconds of embedding, during which the reader syncs
        ru.recall("kayak", k=5)
        return real_embed(texts)

    monkeypatch.setattr(writer, "embed", slow_embed)
    wu.log("latemarkx kayak trip to the lake")
    monkeypatch.setattr(writer, "embed", real_embed)
    clock[0] += 1.0
    assert any("latemarkx" in h.text for h in ru.recall("kayak trip lake", k=5)), "the late write is never seen"


def test_two_memories_on_one_embedded_folder_see_each_other(tmp_path: Path, embedding_function: Any) -> None:
    """The folder lock is shared by every Memory of one process, so a second Memory on the same folder is
    allowed: its writes must reach the first one's recall, and its erasure too."""
    a = Memory(path=tmp_path / "store", embedding_function=embedding_function)
    b = Memory(path=tmp_path / "store", embedding_function=embedding_function)
    try:
        assert a.user("u").recall("pelican", k=5) == []
        b.user("u").remember("twomarkx pelicans nest on the pier")
        assert [h.text for h in a.user("u").recall("pelicans", k=5)] == ["twomarkx pelicans nest on the pier"]
        b.erase_user("u")
        assert a.user("u").recall("pelicans", k=5) == [], "erased data still recalled through the other Memory"
    finally:
        a.close()
        b.close()
