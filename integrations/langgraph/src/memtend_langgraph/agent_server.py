"""Factories for the LangGraph Agent Server (``langgraph dev`` / ``langgraph up``), named in ``langgraph.json``.

The server takes a custom checkpointer and store as import paths to ``@asynccontextmanager`` functions of no
arguments; it enters each once per worker process and leaves it at shutdown::

    {
      "graphs": {"agent": "./src/agent.py:graph"},
      "checkpointer": {"path": "./src/memtend_server.py:checkpointer"},
      "store": {"path": "./src/memtend_server.py:store"}
    }

with ``src/memtend_server.py`` holding ``from memtend_langgraph.agent_server import checkpointer, store``.
Both open a Memory on ``MEMTEND_URL`` (a ``chroma run`` server: the Agent Server runs several worker
processes, and an embedded folder admits one) or else ``MEMTEND_PATH``. ``MEMTEND_CHECKPOINTS`` (or
``checkpointer_factory(checkpoints=...)``) names a delegated checkpoint backend, as
``MemtendSaver(memory, checkpoints=...)`` takes one: a ``postgresql://`` URL opens LangGraph's
``AsyncPostgresSaver`` (package ``langgraph-checkpoint-postgres``), anything else is a SQLite file for
``AsyncSqliteSaver``; memtend then keeps the thread-to-user registry only. For other options build the two with
``checkpointer_factory(...)`` / ``store_factory(...)``, which take ``from_conn_string``'s arguments.
"""

from __future__ import annotations

import importlib
import os
from collections.abc import AsyncIterator, Callable
from contextlib import AbstractAsyncContextManager, AsyncExitStack, asynccontextmanager
from typing import Any

from langgraph.checkpoint.base import BaseCheckpointSaver
from memtend.errors import InvalidInputError

from memtend_langgraph.saver import MemtendSaver
from memtend_langgraph.store import MemtendStore

__all__ = ["CHECKPOINTS_VARIABLE", "checkpointer", "checkpointer_factory", "open_backend", "store", "store_factory"]

CHECKPOINTS_VARIABLE = "MEMTEND_CHECKPOINTS"
POSTGRES_SCHEMES = ("postgresql://", "postgres://")


def checkpointer_factory(
    conn_string: str | None = None, *, checkpoints: str | None = None, **options: Any
) -> Callable[[], AbstractAsyncContextManager[MemtendSaver]]:
    """An Agent Server ``checkpointer`` factory: ``MemtendSaver.from_conn_string(conn_string, **options)``, with
    the checkpoints delegated to the backend ``checkpoints`` names (None: ``MEMTEND_CHECKPOINTS`` when the factory
    is entered; unset or empty keeps them in memtend). The backend is opened and set up on entry, closed on exit."""
    if checkpoints is not None and (not isinstance(checkpoints, str) or not checkpoints.strip()):
        raise InvalidInputError(
            "checkpoints names a delegated checkpoint backend: a SQLite file path or a postgresql:// URL "
            "(or leave it out to keep checkpoints in memtend)"
        )

    @asynccontextmanager
    async def factory() -> AsyncIterator[MemtendSaver]:
        named = checkpoints if checkpoints is not None else os.environ.get(CHECKPOINTS_VARIABLE, "").strip()
        async with AsyncExitStack() as stack:
            extra: dict[str, Any] = {}
            if named:
                extra["checkpoints"] = await stack.enter_async_context(open_backend(named))
            saver = await stack.enter_async_context(MemtendSaver.from_conn_string(conn_string, **options, **extra))
            await saver.asetup()
            yield saver

    return factory


@asynccontextmanager
async def open_backend(conn_string: str) -> AsyncIterator[BaseCheckpointSaver[Any]]:
    """LangGraph's async saver for ``conn_string``, closed on exit (the delegated saver's ``asetup()`` makes its
    tables): a ``postgresql://`` URL opens ``AsyncPostgresSaver``, anything else ``AsyncSqliteSaver`` on that file."""
    if conn_string.startswith(POSTGRES_SCHEMES):
        try:  # an optional package: imported by name, so its absence is this error, not the type checker's
            postgres_saver: Any = importlib.import_module("langgraph.checkpoint.postgres.aio").AsyncPostgresSaver
        except ImportError:
            raise InvalidInputError(
                "the checkpoint backend is a Postgres URL and LangGraph's Postgres saver is not installed: pip install "
                "langgraph-checkpoint-postgres (or name a SQLite file)"
            ) from None
        async with postgres_saver.from_conn_string(conn_string) as postgres:
            yield postgres
        return
    from langgraph.checkpoint.sqlite.aio import AsyncSqliteSaver

    async with AsyncSqliteSaver.from_conn_string(conn_string) as sqlite:
        yield sqlite


def store_factory(
    conn_string: str | None = None, **options: Any
) -> Callable[[], AbstractAsyncContextManager[MemtendStore]]:
    """An Agent Server ``store`` factory: ``MemtendStore.from_conn_string(conn_string, **options)``."""

    @asynccontextmanager
    async def factory() -> AsyncIterator[MemtendStore]:
        async with MemtendStore.from_conn_string(conn_string, **options) as opened:
            yield opened

    return factory


checkpointer = checkpointer_factory()
store = store_factory()
