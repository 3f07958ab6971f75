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
processes, and an embedded folder admits one) or else ``MEMTEND_PATH``. For other options build the two with
``checkpointer_factory(...)`` / ``store_factory(...)``, which take ``from_conn_string``'s arguments.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from typing import Any

from memtend_langgraph.saver import MemtendSaver
from memtend_langgraph.store import MemtendStore

__all__ = ["checkpointer", "checkpointer_factory", "store", "store_factory"]


def checkpointer_factory(
    conn_string: str | None = None, **options: Any
) -> Callable[[], AbstractAsyncContextManager[MemtendSaver]]:
    """An Agent Server ``checkpointer`` factory: ``MemtendSaver.from_conn_string(conn_string, **options)``."""

    @asynccontextmanager
    async def factory() -> AsyncIterator[MemtendSaver]:
        async with MemtendSaver.from_conn_string(conn_string, **options) as saver:
            await saver.asetup()
            yield saver

    return factory


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
