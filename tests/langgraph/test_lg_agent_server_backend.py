"""The Agent Server's ``checkpointer`` factory with a delegated checkpoint backend, as docs/langgraph.md tells a
user to set it up: ``langgraph.json`` names the factory, ``MEMTEND_CHECKPOINTS`` a SQLite file. The factory is
loaded by its langgraph.json path and entered as the server does; a real graph's checkpoints land in that file
under the user's backend thread ids, memtend keeps only the registry, and each user reads back their own."""

from __future__ import annotations

import importlib.util
import json
import sqlite3
from pathlib import Path

import pytest
from _agent_server_worker import build, converse, load
from langgraph.store.memory import InMemoryStore
from memtend.errors import InvalidInputError
from memtend_langgraph.agent_server import CHECKPOINTS_VARIABLE, checkpointer_factory, open_backend
from memtend_langgraph.saver_delegated import DelegatedSaver
from memtend_langgraph.saver_registry import split_backend_thread_id

LANGGRAPH_JSON = {"dependencies": ["."], "graphs": {"agent": "./agent.py:graph"}, "checkpointer": {"path": "./s.py:cp"}}


def project(tmp_path: Path, source: str) -> Path:
    folder = tmp_path / "project"
    folder.mkdir()
    (folder / "langgraph.json").write_text(json.dumps(LANGGRAPH_JSON))
    (folder / "s.py").write_text(source)
    return folder


async def test_the_default_factory_opens_the_sqlite_file_memtend_checkpoints_names(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    folder = project(tmp_path, "from memtend_langgraph.agent_server import checkpointer as cp\n")
    backend_file = tmp_path / "checkpoints.sqlite"
    monkeypatch.delenv("MEMTEND_URL", raising=False)
    monkeypatch.setenv("MEMTEND_PATH", str(tmp_path / "memtend"))
    monkeypatch.setenv(CHECKPOINTS_VARIABLE, str(backend_file))
    factory = load(folder, json.loads((folder / "langgraph.json").read_text())["checkpointer"]["path"])
    async with factory() as saver:
        assert isinstance(saver, DelegatedSaver)
        graph = build(saver, InMemoryStore())
        for user in ("alice", "bob"):
            await converse(graph, user, "t1", 2)
        for user in ("alice", "bob"):
            state = await graph.aget_state({"configurable": {"thread_id": "t1", "user_id": user}})
            assert [m.text for m in state.values["messages"]][-1] == f"{user} heard {user}/t1 turn 1"
        held = saver.memory.document_owners(("langgraph_checkpoints",))
    with sqlite3.connect(backend_file) as conn:  # the factory closed its connection; the file holds the steps
        rows = conn.execute("select thread_id, count(*) from checkpoints group by thread_id").fetchall()
    owners = {split_backend_thread_id(thread)[0]: count for thread, count in rows}
    assert set(owners) == {"alice", "bob"} and all(count >= 4 for count in owners.values())
    assert held == []  # no checkpoint rows in Chroma: only the registry


async def test_a_factory_given_a_backend_ignores_the_variable_and_an_empty_name_keeps_chroma(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(CHECKPOINTS_VARIABLE, str(tmp_path / "not-this.sqlite"))
    chosen = tmp_path / "chosen.sqlite"
    async with checkpointer_factory(str(tmp_path / "m1"), checkpoints=str(chosen))() as saver:
        assert isinstance(saver, DelegatedSaver)
    assert chosen.exists() and not (tmp_path / "not-this.sqlite").exists()
    monkeypatch.setenv(CHECKPOINTS_VARIABLE, " ")
    async with checkpointer_factory(str(tmp_path / "m2"))() as saver:
        assert not isinstance(saver, DelegatedSaver)
    with pytest.raises(InvalidInputError, match="SQLite file path or a postgresql:// URL"):
        checkpointer_factory(checkpoints="")


@pytest.mark.skipif(
    importlib.util.find_spec("langgraph.checkpoint.postgres") is not None, reason="the Postgres saver is installed"
)
async def test_a_postgres_url_without_the_postgres_saver_says_what_to_install() -> None:
    with pytest.raises(InvalidInputError, match="pip install langgraph-checkpoint-postgres") as refused:
        async with open_backend("postgresql://app:secret@db/checkpoints"):
            pass
    assert "secret" not in str(refused.value)
