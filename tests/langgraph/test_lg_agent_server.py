"""The ``langgraph.json`` entry for the LangGraph Agent Server, as docs/langgraph.md documents it, in several
worker processes on one ``chroma run`` server: each process loads the factories by their langgraph.json paths
and enters them as the server does, every process writes at once (threads and store items of its own users, and
one thread id every user has), and nothing is lost or crossed: each worker reads back exactly its own, and a
fresh process afterwards finds every user's threads whole."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from _agent_server_worker import threads_of, users_of
from conftest import ChromaServer
from memtend_langgraph import MemtendSaver, MemtendStore

pytestmark = [pytest.mark.server, pytest.mark.slow]

WORKER = Path(__file__).with_name("_agent_server_worker.py")
WORKERS = 3
TURNS = 3

# What docs/langgraph.md tells a user to write: langgraph.json and the file it points at.
LANGGRAPH_JSON = {
    "dependencies": ["."],
    "graphs": {"agent": "./agent.py:graph"},
    "checkpointer": {"path": "./memtend_server.py:checkpointer"},
    "store": {"path": "./memtend_server.py:store"},
}
MEMTEND_SERVER_PY = "from memtend_langgraph.agent_server import checkpointer, store\n"


@pytest.fixture
def server(tmp_path: Path) -> Iterator[ChromaServer]:
    started = ChromaServer(tmp_path / "chroma")
    started.start()
    yield started
    started.stop()


def expected_messages(user: str, thread: str) -> list[str]:
    out = []
    for turn in range(TURNS):
        said = f"{user}/{thread} turn {turn}"
        out += [said, f"{user} heard {said}"]
    return out


def test_several_worker_processes_share_one_server_and_nothing_is_lost_or_crossed(
    server: ChromaServer, tmp_path: Path
) -> None:
    project = tmp_path / "project"
    project.mkdir()
    (project / "langgraph.json").write_text(json.dumps(LANGGRAPH_JSON))
    (project / "memtend_server.py").write_text(MEMTEND_SERVER_PY)
    url = f"http://127.0.0.1:{server.port}"
    env = {**os.environ, "MEMTEND_URL": url}
    env.pop("MEMTEND_PATH", None)
    workers = [
        subprocess.Popen(
            [sys.executable, str(WORKER), str(project), str(i), str(TURNS)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env=env,
        )
        for i in range(WORKERS)
    ]
    try:
        for worker in workers:
            assert worker.stdout is not None
            line = worker.stdout.readline().strip()
            assert line == "READY", f"a worker did not start: {line!r} {worker.stderr.read() if worker.stderr else ''}"
        outputs = [worker.communicate("GO\n", timeout=600) for worker in workers]
    finally:
        for worker in workers:
            if worker.poll() is None:
                worker.kill()
    results = {}
    for i, (out, err) in enumerate(outputs):
        assert workers[i].returncode == 0, f"worker {i} failed: {err[-3000:]}"
        (line,) = [x for x in out.splitlines() if x.startswith("RESULT ")]
        results[i] = json.loads(line[len("RESULT ") :])

    for i, result in results.items():  # each worker read back exactly what its users wrote
        assert sorted(result) == users_of(i)
        for user in users_of(i):
            for thread in threads_of(i):
                seen = result[user][thread]
                assert seen["messages"] == expected_messages(user, thread)
                assert seen["checkpoints"] == 3 * TURNS  # input, reply, and the loop's step per turn
                assert seen["owners"] == [user]
            assert result[user]["store"] == sorted(
                f"{user} said {user}/{thread} turn {turn}" for thread in threads_of(i) for turn in range(TURNS)
            )

    with MemtendSaver.from_conn_string(url) as saver, MemtendStore.from_conn_string(url) as store:
        everyone = [user for i in range(WORKERS) for user in users_of(i)]
        assert sorted(saver.memory.document_owners(("langgraph_checkpoints", "shared"))) == sorted(everyone)
        for i in range(WORKERS):
            for user in users_of(i):
                for thread in threads_of(i):
                    config = {"configurable": {"thread_id": thread, "user_id": user}}
                    latest = saver.get_tuple(config)
                    assert latest is not None
                    texts = [m.text for m in latest.checkpoint["channel_values"]["messages"]]
                    assert texts == expected_messages(user, thread)
                assert len(store.search(("memories", user), limit=100)) == 2 * TURNS
