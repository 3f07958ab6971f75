"""LangGraph adapters on memtend: ``MemtendStore`` (a ``BaseStore``) and ``MemtendSaver`` (a checkpointer).

Swap them in with one line each::

    graph = builder.compile(checkpointer=MemtendSaver(memory), store=MemtendStore(memory))
"""

from memtend_langgraph.context_prompt import MemtendPrompt
from memtend_langgraph.embeddings import embedding_function
from memtend_langgraph.errors import UserMismatchError, UserNotFoundError
from memtend_langgraph.memory_tools import (
    create_manage_memory_tool,
    create_search_memory_tool,
    create_user_memory_tools,
)
from memtend_langgraph.saver import MemtendSaver
from memtend_langgraph.side_effects import LedgerToolCalls, ledger_tool_node
from memtend_langgraph.store import MemtendStore

__all__ = [
    "LedgerToolCalls",
    "MemtendPrompt",
    "MemtendSaver",
    "MemtendStore",
    "UserMismatchError",
    "UserNotFoundError",
    "create_manage_memory_tool",
    "create_search_memory_tool",
    "create_user_memory_tools",
    "embedding_function",
    "ledger_tool_node",
]
