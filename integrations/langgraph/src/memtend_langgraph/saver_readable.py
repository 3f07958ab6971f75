"""A checkpoint as a person reads it, for ``user.export()``: decoded through the saver's own serializer.

The core keeps checkpoints as the serializer's bytes (they are LangGraph's, and may be encrypted); the saver
registers this reader with the core (:func:`memtend.documents.add_export_reader`), so an export shows, beside
the bytes, each checkpoint's messages as the core's neutral ``Message`` dicts (role, content, tool calls, the
tool call a result answers) and its other channel values where they are plain JSON. Only the export reads
this: nothing more is stored.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from langgraph.checkpoint.base import SerializerProtocol

from memtend_langgraph.saver_codec import CHECKPOINTS, WRITES, StoredCheckpoint, StoredWrite, checkpoint_ns_of

Namespace = tuple[str, ...]
ROOTS = (CHECKPOINTS, WRITES)


class ReadableCheckpoints:
    """The export reader for a saver's checkpoints and pending writes; it holds the serializer only.

    A checkpoint's metadata copies the run's ``configurable``, ``user_id`` included, as LangGraph cleans it (NUL
    characters dropped): the copy is left out, so an export names its user once, as the owner it is stored under.
    """

    def __init__(self, serde: SerializerProtocol) -> None:
        self.serde = serde

    def __call__(self, namespace: Namespace, key: str, value: bytes) -> dict[str, Any] | None:
        if namespace[0] == CHECKPOINTS and len(namespace) == 3:
            return self.checkpoint(namespace, key, value)
        if namespace[0] == WRITES and len(namespace) == 4:
            return self.write(namespace, value)
        return None

    def checkpoint(self, namespace: Namespace, key: str, value: bytes) -> dict[str, Any]:
        stored = StoredCheckpoint.decode(value)
        checkpoint = self.serde.loads_typed(stored.checkpoint)
        metadata = self.serde.loads_typed(stored.metadata)
        return readable_checkpoint(
            namespace[1], checkpoint_ns_of(namespace[2]), key, stored.parent_id, checkpoint, metadata
        )

    def write(self, namespace: Namespace, value: bytes) -> dict[str, Any]:
        stored = StoredWrite.decode(value)
        written = self.serde.loads_typed(stored.value)
        return readable_write(
            namespace[1], checkpoint_ns_of(namespace[2]), namespace[3], stored.task_id, stored.channel, written
        )


def readable_checkpoint(
    thread_id: str,
    checkpoint_ns: str,
    checkpoint_id: str,
    parent_id: str | None,
    checkpoint: Mapping[str, Any],
    metadata: Mapping[str, Any],
    hidden: tuple[str, ...] = ("user_id",),
) -> dict[str, Any]:
    """A decoded checkpoint as the export shows it: its messages, its other plain channel values, its metadata
    without the ``hidden`` keys (copies of the user it is stored under)."""
    messages: list[dict[str, Any]] = []
    values: dict[str, Any] = {}
    for channel, channel_value in (checkpoint.get("channel_values") or {}).items():
        found = messages_of(channel_value)
        if found is not None:
            messages.extend(found)
        else:
            values[channel] = plain(channel_value)
    return {
        "thread_id": thread_id,
        "checkpoint_ns": checkpoint_ns,
        "checkpoint_id": checkpoint_id,
        "parent_checkpoint_id": parent_id,
        "metadata": plain({k: v for k, v in metadata.items() if k not in hidden}),
        "messages": messages,
        "values": values,
    }


def readable_write(
    thread_id: str, checkpoint_ns: str, checkpoint_id: str, task_id: str, channel: str, written: Any
) -> dict[str, Any]:
    """A decoded pending write as the export shows it: its messages, else its value where it is plain."""
    found = messages_of(written)
    if found is None and _is_message(written):
        found = [_message(written)]
    out: dict[str, Any] = {
        "thread_id": thread_id,
        "checkpoint_ns": checkpoint_ns,
        "checkpoint_id": checkpoint_id,
        "task_id": task_id,
        "channel": channel,
    }
    if found is not None:
        out["messages"] = found
    else:
        out["value"] = plain(written)
    return out


def _is_message(value: Any) -> bool:
    from langchain_core.messages import BaseMessage

    return isinstance(value, BaseMessage)


def messages_of(value: Any) -> list[dict[str, Any]] | None:
    """A channel value that is a list of LangChain messages, as the core's message dicts; None otherwise."""
    if not isinstance(value, (list, tuple)) or not value or not all(_is_message(item) for item in value):
        return None
    return [_message(item) for item in value]


def _message(message: Any) -> dict[str, Any]:
    """One LangChain message as ``memtend.Message.to_dict()`` lays a message out."""
    from langchain_core.messages import AIMessage, ChatMessage, HumanMessage, SystemMessage, ToolMessage
    from memtend import Message, ToolCall

    text = message.text if isinstance(message.text, str) else str(message.text)
    common: dict[str, Any] = {"name": message.name or None, "id": message.id or None}
    if isinstance(message, AIMessage):
        calls = [
            ToolCall(id=call.get("id") or f"call_{i}", name=call["name"], arguments=call["args"])
            for i, call in enumerate(message.tool_calls)
        ]
        return Message("assistant", text, calls, **common).to_dict()
    if isinstance(message, ToolMessage):
        return Message.tool(text, message.tool_call_id, **common).to_dict()
    if isinstance(message, HumanMessage):
        return Message("user", text, **common).to_dict()
    if isinstance(message, SystemMessage):
        return Message("system", text, **common).to_dict()
    role = message.role if isinstance(message, ChatMessage) else message.type
    return {"role": str(role), "content": text, **{k: v for k, v in common.items() if v is not None}}


def plain(value: Any) -> Any:
    """``value`` when it is JSON as it is; otherwise its type, so the export names what it cannot show."""
    if isinstance(value, Mapping):
        return {str(k): plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [plain(v) for v in value]
    if value is None or isinstance(value, (str, int, float, bool)):
        try:
            json.dumps(value, allow_nan=False)
        except ValueError:
            return {"type": type(value).__name__}
        return value
    if _is_message(value):
        return _message(value)
    return {"type": type(value).__name__}
