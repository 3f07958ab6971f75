"""LlamaIndex memory on memtend.

* :class:`MemtendMemory`: a ``BaseMemory`` for ``agent.run(msg, memory=...)`` (history compacted by memtend, the
  user's profile, rules and recalled memories in the system message).
* :class:`MemtendMemoryBlock`: a long-term block for LlamaIndex's own ``Memory``.
* :class:`MemtendChatStore`: the ``AsyncDBChatStore`` behind LlamaIndex's ``Memory``; :class:`MemtendLegacyChatStore`:
  the legacy ``BaseChatStore``. Both keep one user's sessions in memtend, erased with the user.
* :func:`ledger_tools`: side-effecting tools wrapped so a repeated call is answered from the session's ledger.
"""

from memtend_llamaindex.backends import register_memory, resolve_memory, unregister_memory
from memtend_llamaindex.chat_store import MemtendChatStore
from memtend_llamaindex.legacy_chat_store import MemtendLegacyChatStore
from memtend_llamaindex.memory import MemtendMemory
from memtend_llamaindex.memory_block import MemtendMemoryBlock
from memtend_llamaindex.side_effects import ledger_tools

__all__ = [
    "MemtendChatStore",
    "MemtendLegacyChatStore",
    "MemtendMemory",
    "MemtendMemoryBlock",
    "ledger_tools",
    "register_memory",
    "resolve_memory",
    "unregister_memory",
]
