"""The system message a LangGraph model call gets from memtend on every turn: the user's profile, rules, the
constraints they set in this conversation and the memories recalled for their latest message.

In a ``StateGraph`` node::

    prompt = MemtendPrompt(memory, system_prompt="You are a release assistant.")

    def call_model(state: MessagesState) -> dict:
        return {"messages": [model.invoke(prompt(state))]}   # run with context={"user_id": ...}

With ``create_agent``, as a dynamic prompt (``langchain.agents.middleware.dynamic_prompt``)::

    @dynamic_prompt
    def with_memory(request):
        return prompt.text(request.state["messages"], base=request.system_prompt)

What goes in is the core's (``memtend.prompt_context``: profile, rules, recalled memories dated, and
``conversation_constraints`` over the thread's messages, so a revised constraint shows in its latest version only
and a request is never a constraint); this module reads the user from the run and lays the text out.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from langchain_core.messages import BaseMessage, SystemMessage
from memtend import InvalidInputError, Memory, Message, UserMemory
from memtend.identity import resolve_user
from memtend.prompt_context import auser_context, conversation_constraints, conversation_query, user_context

from memtend_langgraph.users import current_config, run_places

__all__ = ["MemtendPrompt"]


def _text_of(message: Any) -> tuple[str, str] | None:
    """(role, text) of a LangChain message or a ``{"role", "content"}`` dict, for the user's turns only."""
    if isinstance(message, BaseMessage):
        return ("user", message.text) if message.type == "human" else None
    if isinstance(message, Mapping) and message.get("role") in ("user", "human"):
        content = message.get("content")
        return ("user", content) if isinstance(content, str) else None
    return None


class MemtendPrompt:
    """``prompt(state)`` -> ``[SystemMessage, *messages]``; ``prompt.text(messages)`` -> the system text alone.

    ``system_prompt``: the application's own instructions, first; ``k``: memories recalled per call; the user is
    the run's ``runtime.context`` field ``user_field`` (or ``configurable.user_id``), or ``user_id=`` on a call.
    """

    def __init__(
        self,
        memory: Memory,
        *,
        system_prompt: str = "",
        k: int = 5,
        user_field: str = "user_id",
        messages_key: str = "messages",
    ) -> None:
        if not isinstance(memory, Memory):
            raise InvalidInputError(f"memory must be a memtend Memory, got {type(memory).__name__}")
        if isinstance(k, bool) or not isinstance(k, int) or k < 1:
            raise InvalidInputError(f"k (memories recalled per call) must be a positive integer, got {k!r}")
        if not isinstance(system_prompt, str):
            raise InvalidInputError(f"system_prompt must be text, got {type(system_prompt).__name__}")
        self.memory = memory
        self.system_prompt = system_prompt
        self.k = k
        self.user_field = user_field
        self.messages_key = messages_key

    # ------------------------------------------------------------------ reading the run
    def _user(self, user_id: str | None, config: Mapping[str, Any] | None) -> UserMemory:
        if user_id is not None:
            return self.memory.user(user_id)
        places = run_places(config if config is not None else current_config(), self.user_field)
        fix = f"invoke the graph with context={{{self.user_field!r}: '<user id>'}}, or pass user_id="
        return self.memory.user(resolve_user(places, who="MemtendPrompt", fix=fix))

    def _messages(self, state: Any) -> list[Any]:
        if isinstance(state, Mapping):
            return list(state.get(self.messages_key) or [])
        if isinstance(state, Sequence) and not isinstance(state, str):
            return list(state)
        found = getattr(state, self.messages_key, None)
        if found is None:
            raise InvalidInputError(
                f"MemtendPrompt reads the conversation from the state's {self.messages_key!r}; "
                f"got {type(state).__name__}"
            )
        return list(found)

    @staticmethod
    def _said(messages: Sequence[Any]) -> list[Message]:
        return [Message.user(text) for role, text in filter(None, map(_text_of, messages)) if role == "user"]

    def _join(self, base: str | None, memory_text: str) -> str:
        head = self.system_prompt if base is None else base
        return "\n\n".join(
            part for part in (head, f"## Memory (from memtend)\n{memory_text}" if memory_text else "") if part
        )

    # ------------------------------------------------------------------ the text
    def text(
        self,
        messages: Sequence[Any],
        *,
        base: str | None = None,
        user_id: str | None = None,
        config: Mapping[str, Any] | None = None,
    ) -> str:
        """The system text for a call over ``messages``: ``base`` (or ``system_prompt``) then memtend's part."""
        said = self._said(messages)
        context = user_context(
            self._user(user_id, config), conversation_query(said), k=self.k, constraints=conversation_constraints(said)
        )
        return self._join(base, context.render())

    async def atext(
        self,
        messages: Sequence[Any],
        *,
        base: str | None = None,
        user_id: str | None = None,
        config: Mapping[str, Any] | None = None,
    ) -> str:
        said = self._said(messages)
        user = self._user(user_id, config)
        context = await auser_context(
            user, conversation_query(said), k=self.k, constraints=conversation_constraints(said)
        )
        return self._join(base, context.render())

    # ------------------------------------------------------------------ the messages for a model call
    def _with(self, messages: list[Any], text: str) -> list[Any]:
        rest = messages
        if rest and isinstance(rest[0], SystemMessage):  # the state's own system message stays, after ours
            text = "\n\n".join(p for p in (text, rest[0].text) if p)
            rest = rest[1:]
        return [SystemMessage(content=text), *rest] if text else list(rest)

    def __call__(self, state: Any, config: Mapping[str, Any] | None = None, *, user_id: str | None = None) -> list[Any]:
        """The messages to send the model: memtend's system message, then the state's messages."""
        messages = self._messages(state)
        return self._with(messages, self.text(messages, user_id=user_id, config=config))

    async def acall(
        self, state: Any, config: Mapping[str, Any] | None = None, *, user_id: str | None = None
    ) -> list[Any]:
        messages = self._messages(state)
        return self._with(messages, await self.atext(messages, user_id=user_id, config=config))
