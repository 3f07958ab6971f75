"""LangGraph adapters on memtend: ``MemtendStore`` (a ``BaseStore``) and ``MemtendSaver`` (a checkpointer).

Swap them in with one line each::

    graph = builder.compile(checkpointer=MemtendSaver(memory), store=MemtendStore(memory))
"""

from memtend_langgraph.embeddings import embedding_function
from memtend_langgraph.errors import UserMismatchError, UserNotFoundError
from memtend_langgraph.saver import MemtendSaver
from memtend_langgraph.store import MemtendStore

__all__ = ["MemtendSaver", "MemtendStore", "UserMismatchError", "UserNotFoundError", "embedding_function"]
