"""Whose subgraph state ``graph.get_state(config, subgraphs=True)`` reads, when LangGraph's config for it names no one.

LangGraph reads a parent's state, then each pending subgraph's, building the subgraph's config from the thread id
and the subgraph's namespace only. A ``checkpointer=True`` subgraph's namespace carries no task id either, so two
users' thread "1" hold checkpoints under the same (thread, namespace): nothing in that config tells them apart. The
user named for the parent's read is therefore carried, in the caller's execution context, to the reads LangGraph
makes inside the same call (``get_state`` reads its subgraphs before it returns), under these limits: the same
Memory and thread, outside a graph run, a subgraph namespace each read once, and only while the call that made the
parent's read is still running (once it has returned, a read naming no user is refused as any other).
"""

from __future__ import annotations

from collections.abc import Mapping
from contextvars import ContextVar
from dataclasses import dataclass, field
from types import FrameType
from typing import Any

from memtend_langgraph.users import runtime_of


@dataclass
class _StateRead:
    """A state read that named its user: its Memory, thread and user, and the subgraph namespaces it has served."""

    memory: Any
    thread_id: str
    user: str
    caller: FrameType | None  # the frame that made the read (LangGraph's get_state): valid while it runs
    served: set[str] = field(default_factory=set)

    def running(self, frame: FrameType | None) -> bool:
        """Whether the call that made this read is still running: its frame is among ``frame``'s callers."""
        while frame is not None:
            if frame is self.caller:
                return True
            frame = frame.f_back
        return False


_LAST_READ: ContextVar[_StateRead | None] = ContextVar("memtend_langgraph_state_read", default=None)


def state_read_user(memory: Any, config: Mapping[str, Any], named: str | None, caller: FrameType | None) -> str | None:
    """The user of a checkpoint read made from ``caller`` (the frame calling the saver): ``named`` (the identity
    rule's answer) when there is one, which also opens a read its subgraph reads follow; else the user of that
    read, for a subgraph namespace it has not yet served, while its caller is still running."""
    configurable = config.get("configurable") or {}
    if runtime_of(config) is not None:  # a graph run: its config names the user, nothing is carried
        return named
    thread_id = str(configurable.get("thread_id"))
    checkpoint_ns = str(configurable.get("checkpoint_ns") or "")
    if named is not None:
        _LAST_READ.set(_StateRead(memory, thread_id, named, caller))
        return named
    last = _LAST_READ.get()
    _LAST_READ.set(None)
    if (
        last is None
        or last.memory is not memory
        or last.thread_id != thread_id
        or not checkpoint_ns
        or checkpoint_ns in last.served
        or not last.running(caller)
    ):
        return None
    last.served.add(checkpoint_ns)
    _LAST_READ.set(last)  # its nested subgraphs are read next
    return last.user
