"""What ``with_memtend_history`` puts in front of the wrapped runnable on every call: a system message with the
user's profile, standing rules, the constraints they set in this conversation (the core's
``conversation_constraints`` over the loaded history and the new input: a revised one in its latest version only)
and the memories recalled for the latest user message.

It runs inside ``RunnableWithMessageHistory``, after the history is loaded and before the wrapped runnable; the
history's end-of-run listener reads the input as it was before this step, so nothing it adds is stored.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from langchain_core.messages import BaseMessage, HumanMessage, SystemMessage
from langchain_core.runnables import Runnable, RunnableConfig, RunnableLambda
from memtend import Memory, UserMemory
from memtend.prompt_context import conversation_constraints

from memtend_langchain._context import MemoryContext, agather, gather
from memtend_langchain._messages import is_summary, to_memtend

__all__ = ["HistoryContext"]


def _messages(value: Any) -> list[BaseMessage]:
    if isinstance(value, BaseMessage):
        return [value]
    if isinstance(value, str):
        return [HumanMessage(value)]
    if isinstance(value, list | tuple):
        return [m for m in value if isinstance(m, BaseMessage)]
    return []


class HistoryContext:
    """The step ``with_memtend_history`` runs before the wrapped runnable (``context=True``)."""

    def __init__(
        self, memory: Memory, *, k: int, input_messages_key: str | None, history_messages_key: str | None
    ) -> None:
        self.memory = memory
        self.k = k
        self.input_key = input_messages_key
        self.history_key = history_messages_key

    def runnable(self) -> Runnable[Any, Any]:
        return RunnableLambda(self.inject, self.ainject).with_config(run_name="memtend_context")

    # ------------------------------------------------------------------ reading the call
    def _user(self, config: RunnableConfig) -> UserMemory:
        configurable: Mapping[str, Any] = config.get("configurable") or {}
        return self.memory.user(configurable.get("user_id"))  # type: ignore[arg-type]  # checked by Memory.user

    def _conversation(self, value: Any) -> list[BaseMessage]:
        """The history and the new input, oldest first."""
        if not isinstance(value, Mapping):
            return _messages(value)
        if self.history_key is not None:
            history = _messages(value.get(self.history_key))
            said = value.get(self.input_key) if self.input_key is not None else None
            return [*history, *_messages(said)]
        return _messages(value.get(self.input_key)) if self.input_key is not None else []

    @staticmethod
    def _said(messages: list[BaseMessage]) -> tuple[list[str], str | None]:
        users = [m for m in messages if isinstance(m, HumanMessage)]
        latest = next((m.text for m in reversed(users) if not is_summary(m)), None)
        return conversation_constraints(to_memtend(users)), latest

    # ------------------------------------------------------------------ adding the system message
    def _with(self, value: Any, found: MemoryContext) -> Any:
        text = found.render()
        if not text:
            return value
        block = SystemMessage(content=f"## Memory (from memtend)\n{text}")
        if isinstance(value, Mapping) and self.history_key is not None:
            return {**value, self.history_key: [block, *_messages(value.get(self.history_key))]}
        if isinstance(value, Mapping) and self.input_key is not None:
            return {**value, self.input_key: [block, *_messages(value.get(self.input_key))]}
        if isinstance(value, list | tuple):
            return [block, *value]
        return value

    def inject(self, value: Any, config: RunnableConfig) -> Any:
        constraints, latest = self._said(self._conversation(value))
        return self._with(value, gather(self._user(config), latest, self.k, constraints))

    async def ainject(self, value: Any, config: RunnableConfig) -> Any:
        constraints, latest = self._said(self._conversation(value))
        return self._with(value, await agather(self._user(config), latest, self.k, constraints))
