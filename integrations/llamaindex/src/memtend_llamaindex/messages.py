"""LlamaIndex ``ChatMessage`` -> memtend ``Message`` (what the core compacts), and ``ChatMessage`` <-> stored JSON.

Stored history keeps each ``ChatMessage`` whole (``model_dump(mode="json")``), so nothing LlamaIndex carries is
lost. The memtend view (role, text, tool calls, tool call id) is what the core's compaction reads; a message's id
in that view is its position in the session, so the messages compaction keeps are given back as stored.

Roles: ``developer`` reads as system, ``chatbot`` and ``model`` as assistant, ``function`` as tool. A tool result
names its call in ``additional_kwargs["tool_call_id"]`` (what LlamaIndex's agents write); tool calls are read from
``ToolCallBlock`` blocks and from ``additional_kwargs["tool_calls"]`` (OpenAI-style dicts or objects, or
LlamaIndex ``ToolSelection``).
"""

from __future__ import annotations

import json
from collections.abc import Collection, Sequence
from typing import Any

from llama_index.core.base.llms.types import ChatMessage, MessageRole, TextBlock, ToolCallBlock
from memtend import InvalidInputError, Message, ToolCall

ROLES = {
    "system": "system",
    "developer": "system",
    "user": "user",
    "assistant": "assistant",
    "chatbot": "assistant",
    "model": "assistant",
    "tool": "tool",
    "function": "tool",
}


def check_chat_message(message: Any, where: str = "message") -> ChatMessage:
    if not isinstance(message, ChatMessage):
        raise InvalidInputError(
            f"{where}: expected a llama_index ChatMessage, got {type(message).__name__}; "
            "wrap text as ChatMessage(role='user', content=...)"
        )
    return message


def check_chat_messages(messages: Any, what: str = "messages") -> list[ChatMessage]:
    if isinstance(messages, (str, bytes, ChatMessage)) or not isinstance(messages, Sequence):
        raise InvalidInputError(f"{what} must be a list of ChatMessage, got {type(messages).__name__}")
    return [check_chat_message(m, f"{what}[{i}]") for i, m in enumerate(messages)]


def to_memtend(message: ChatMessage, index: int | None = None) -> Message:
    """The memtend view of one message; ``index`` becomes its id so the original can be found again.

    Raises ``InvalidInputError`` naming the message and the fix when the message has no memtend form (a tool
    result that names no call, tool calls on a non-assistant message).
    """
    where = "message" if index is None else f"message {index}"
    check_chat_message(message, where)
    role_name = getattr(message.role, "value", message.role)
    role = ROLES.get(str(role_name))
    if role is None:  # MessageRole is a closed enum; kept for subclasses and future roles
        raise InvalidInputError(f"{where}: role {role_name!r} has no memtend form; use one of {sorted(ROLES)}")
    kwargs = message.additional_kwargs or {}
    calls = _tool_calls(message, kwargs) if role == "assistant" else []
    if role != "assistant" and (_block_calls(message) or kwargs.get("tool_calls")):
        raise InvalidInputError(f"{where}: only assistant messages may carry tool calls (role is {role_name!r})")
    tool_call_id = kwargs.get("tool_call_id") if role == "tool" else None
    if role == "tool" and not (isinstance(tool_call_id, str) and tool_call_id.strip()):
        raise InvalidInputError(
            f"{where}: a {role_name} message must name the call it answers in additional_kwargs['tool_call_id']"
        )
    name = kwargs.get("name") if isinstance(kwargs.get("name"), str) and kwargs.get("name", "").strip() else None
    try:
        return Message(
            role=role,  # type: ignore[arg-type]
            content=_text(message),
            tool_calls=calls,
            tool_call_id=tool_call_id,
            name=name,
            id=None if index is None else str(index),
        )
    except InvalidInputError as exc:
        raise InvalidInputError(f"{where}: {exc}") from None


def to_memtend_all(messages: Sequence[ChatMessage]) -> list[Message]:
    return [to_memtend(m, i) for i, m in enumerate(messages)]


def dump(message: ChatMessage) -> dict[str, Any]:
    """A ChatMessage as JSON for storage."""
    return message.model_dump(mode="json")


def load(data: Any) -> ChatMessage:
    return ChatMessage.model_validate(data)


def _text(message: ChatMessage) -> str:
    parts: list[str] = []
    for block in message.blocks:
        if isinstance(block, TextBlock):
            parts.append(block.text)
        elif isinstance(block, ToolCallBlock):
            continue
        else:
            kind = getattr(block, "block_type", type(block).__name__)
            parts.append(f"[{kind}]")
    return "".join(parts) if all(isinstance(b, TextBlock) for b in message.blocks) else " ".join(parts)


def _block_calls(message: ChatMessage) -> list[ToolCallBlock]:
    return [b for b in message.blocks if isinstance(b, ToolCallBlock)]


def _tool_calls(message: ChatMessage, kwargs: dict[str, Any]) -> list[ToolCall]:
    calls: list[ToolCall] = []
    for block in _block_calls(message):
        calls.append(_call(block.tool_call_id, block.tool_name, block.tool_kwargs, len(calls)))
    raw = kwargs.get("tool_calls")
    if isinstance(raw, Sequence) and not isinstance(raw, (str, bytes)):
        seen = {c.id for c in calls}
        for item in raw:
            call = _call_from_kwargs(item, len(calls))
            if call is not None and call.id not in seen:
                calls.append(call)
                seen.add(call.id)
    return calls


def _call_from_kwargs(item: Any, position: int) -> ToolCall | None:
    """An OpenAI-style call (dict or object with ``function``) or a LlamaIndex ``ToolSelection``."""
    get = item.get if isinstance(item, dict) else lambda key, default=None: getattr(item, key, default)
    if get("tool_name") is not None:  # ToolSelection
        return _call(get("tool_id"), get("tool_name"), get("tool_kwargs"), position)
    function = get("function")
    if function is None:
        return None
    fget = function.get if isinstance(function, dict) else lambda key, default=None: getattr(function, key, default)
    return _call(get("id"), fget("name"), fget("arguments"), position)


def _call(call_id: Any, name: Any, arguments: Any, position: int) -> ToolCall:
    if isinstance(arguments, str):
        try:
            arguments = json.loads(arguments) if arguments.strip() else {}
        except ValueError:
            arguments = {"arguments": arguments}
    if not isinstance(arguments, dict):
        arguments = {"arguments": arguments}
    call_id = call_id if isinstance(call_id, str) and call_id.strip() else f"call-{position}"
    name = name if isinstance(name, str) and name.strip() else "unknown_tool"
    return ToolCall(id=call_id, name=name, arguments={str(k): v for k, v in arguments.items()})


def untrusted_calls(messages: Sequence[ChatMessage], untrusted_tools: Collection[str]) -> list[tuple[str, str]]:
    """(tool name, call id) of each call of an untrusted tool among ``messages``: an assistant's ``ToolCallBlock``
    (its output follows it into the conversation), or a tool message naming its tool."""
    if not untrusted_tools:
        return []
    found: list[tuple[str, str]] = []
    for message in messages:
        for block in message.blocks:
            if isinstance(block, ToolCallBlock) and block.tool_name in untrusted_tools:
                found.append((block.tool_name, str(block.tool_call_id or "")))
        name = message.additional_kwargs.get("name") or message.additional_kwargs.get("tool_name")
        if message.role == MessageRole.TOOL and isinstance(name, str) and name in untrusted_tools:
            found.append((name, str(message.additional_kwargs.get("tool_call_id") or "")))
    return list(dict.fromkeys(found))
