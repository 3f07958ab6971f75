"""memtend behind LangChain's interfaces.

* ``MemtendChatMessageHistory``: a ``BaseChatMessageHistory`` (with ``with_memtend_history`` for
  ``RunnableWithMessageHistory`` keyed by user and session);
* ``MemtendMemory``: the classic chain memory (needs the ``classic`` extra: ``langchain-classic``);
* ``MemtendMiddleware``: an ``AgentMiddleware`` for ``langchain.agents.create_agent``;
* ``memtend_tools``: the ``remember``, ``recall`` and session ``memory`` tools.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from memtend_langchain.chat_history import MemtendChatMessageHistory, history_factory_config, with_memtend_history
from memtend_langchain.middleware import MemtendMiddleware, MemtendState
from memtend_langchain.tools import memtend_tools

if TYPE_CHECKING:
    from memtend_langchain.classic_memory import MemtendMemory

__all__ = [
    "MemtendChatMessageHistory",
    "MemtendMemory",
    "MemtendMiddleware",
    "MemtendState",
    "history_factory_config",
    "memtend_tools",
    "with_memtend_history",
]


def __getattr__(name: str) -> Any:
    if name == "MemtendMemory":  # langchain-classic is an optional extra: import it only when asked for
        try:
            from memtend_langchain.classic_memory import MemtendMemory
        except ModuleNotFoundError as exc:
            raise ImportError(
                "MemtendMemory needs langchain-classic: pip install 'memtend-langchain[classic]'"
            ) from exc
        return MemtendMemory
    raise AttributeError(f"module 'memtend_langchain' has no attribute {name!r}")
