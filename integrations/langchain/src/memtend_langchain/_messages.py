"""LangChain messages to and from memtend's framework-neutral ``Message``, and to stored JSON.

Two translations live here:

* storage: a LangChain message becomes LangChain's own lossless dict (``message_to_dict``), so every field
  (tool calls, content blocks, ``additional_kwargs``, ``response_metadata``, ids) round-trips;
* compaction: a transcript becomes ``list[memtend.Message]`` for the core's ``compact_transcript``; each
  converted message remembers the position of its original, so what compaction keeps comes back as the
  very LangChain object that went in, and only the summary turn is new.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from langchain_core.messages import (
    AIMessage,
    BaseMessage,
    ChatMessage,
    HumanMessage,
    SystemMessage,
    ToolMessage,
    message_to_dict,
    messages_from_dict,
)
from memtend import InvalidInputError, Message, ToolCall

__all__ = [
    "SUMMARY_SOURCE",
    "from_memtend",
    "is_summary",
    "message_from_value",
    "message_to_value",
    "require_messages",
    "to_memtend",
]

SUMMARY_SOURCE = "memtend_summary"  # additional_kwargs["lc_source"] of the summary turn compaction writes
_ORIGIN = "memtend_langchain_index"  # metadata key: index of the original LangChain message
_CHAT_ROLES = {"user": "user", "human": "user", "assistant": "assistant", "ai": "assistant", "system": "system"}


def require_messages(messages: object, where: str = "messages") -> list[BaseMessage]:
    """``messages`` as a list of LangChain messages, or ``InvalidInputError`` naming the first wrong item."""
    if isinstance(messages, (str, bytes, dict, BaseMessage)) or not isinstance(messages, Sequence):
        raise InvalidInputError(
            f"{where}: expected a list of LangChain messages (HumanMessage, AIMessage, ...), "
            f"got {type(messages).__name__}"
        )
    items = list(messages)
    for i, item in enumerate(items):
        if not isinstance(item, BaseMessage):
            raise InvalidInputError(
                f"{where}[{i}]: expected a LangChain message (HumanMessage, AIMessage, ToolMessage, "
                f"SystemMessage), got {type(item).__name__}; wrap text as HumanMessage(content=...)"
            )
    return items


def message_to_value(message: BaseMessage) -> dict[str, Any]:
    """The stored form: LangChain's own ``{"type", "data"}`` dict."""
    return message_to_dict(message)


def message_from_value(value: Any) -> BaseMessage:
    if not isinstance(value, dict) or "type" not in value or "data" not in value:
        raise InvalidInputError(f"stored chat message is not a LangChain message dict: {type(value).__name__}")
    return messages_from_dict([value])[0]


def is_summary(message: BaseMessage) -> bool:
    return isinstance(message, HumanMessage) and message.additional_kwargs.get("lc_source") == SUMMARY_SOURCE


def to_memtend(messages: Sequence[BaseMessage]) -> list[Message]:
    """Each LangChain message as a memtend ``Message`` (text content; tool calls and results kept)."""
    out: list[Message] = []
    for i, message in enumerate(require_messages(messages)):
        meta = {_ORIGIN: i}
        text = message.text if isinstance(message.text, str) else str(message.text)
        name = message.name or None
        ident = message.id or None
        if isinstance(message, AIMessage):
            calls = [
                ToolCall(id=call.get("id") or f"memtend_call_{i}_{j}", name=call["name"], arguments=call["args"])
                for j, call in enumerate(message.tool_calls)
            ]
            out.append(Message("assistant", text, calls, name=name, id=ident, metadata=meta))
        elif isinstance(message, ToolMessage):
            out.append(Message.tool(text, message.tool_call_id, name=name, id=ident, metadata=meta))
        elif isinstance(message, HumanMessage):
            out.append(Message("user", text, name=name, id=ident, metadata=meta))
        elif isinstance(message, SystemMessage):
            out.append(Message("system", text, name=name, id=ident, metadata=meta))
        elif isinstance(message, ChatMessage) and message.role in _CHAT_ROLES:
            out.append(Message(_CHAT_ROLES[message.role], text, name=name, id=ident, metadata=meta))  # type: ignore[arg-type]
        else:
            raise InvalidInputError(
                f"messages[{i}]: {type(message).__name__} has no place in a compacted transcript; "
                "use HumanMessage, AIMessage, ToolMessage or SystemMessage"
            )
    return out


def from_memtend(messages: Sequence[Message], originals: Sequence[BaseMessage]) -> list[BaseMessage]:
    """Back to LangChain: a message that came from ``originals`` is that original object; a new one (the
    summary turn) becomes a ``HumanMessage`` marked ``lc_source="memtend_summary"``."""
    out: list[BaseMessage] = []
    for message in messages:
        index = message.metadata.get(_ORIGIN)
        if isinstance(index, int) and 0 <= index < len(originals):
            out.append(originals[index])
            continue
        if message.role != "user":
            raise InvalidInputError(f"compaction produced an unexpected {message.role} message")
        extra = {k: v for k, v in message.metadata.items() if k != _ORIGIN}
        out.append(HumanMessage(content=message.content, additional_kwargs={**extra, "lc_source": SUMMARY_SOURCE}))
    return out
