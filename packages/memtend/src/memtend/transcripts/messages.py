"""Framework-neutral chat messages, and converters to the wire formats adapters meet.

A transcript is a ``list[Message]``. Roles are ``system``, ``user``, ``assistant`` and ``tool``:
an assistant turn may carry ``tool_calls``; each call is answered by a ``tool`` message whose
``tool_call_id`` names the call. That is the shape LangChain (``AIMessage.tool_calls`` /
``ToolMessage``), LlamaIndex (``ChatMessage`` with ``additional_kwargs``) and the OpenAI chat format
share, so adapters convert field by field. ``metadata`` carries whatever a framework keeps beside
the content (``additional_kwargs``, ...); memtend only reads the keys it wrote itself.

Converters:

* ``Message.to_dict`` / ``Message.from_dict`` (and ``to_dicts`` / ``from_dicts``): lossless JSON.
* ``to_openai`` / ``from_openai``: chat-completions messages. Arguments travel as a JSON string;
  a tool message's ``name`` is not sent (the API has no such field) and is recovered from the call.
* ``to_anthropic`` / ``from_anthropic``: Messages API. System text goes separately (all system
  messages are joined); tool calls become ``tool_use`` blocks and consecutive tool messages become
  one user turn of ``tool_result`` blocks. Message ids, metadata and user/assistant names have no
  place in that format and are dropped.

Non-text content parts (images, documents, ...) are out of scope: reading them yields a short
``[image]``-style placeholder in the text.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

from memtend.arguments import describe
from memtend.errors import InvalidInputError

Role = Literal["system", "user", "assistant", "tool"]
ROLES: tuple[str, ...] = ("system", "user", "assistant", "tool")

_MESSAGE_FIELDS = ("role", "content", "tool_calls", "tool_call_id", "name", "id", "metadata")
_TOOL_CALL_FIELDS = ("id", "name", "arguments")


def _fail(where: str, problem: str) -> InvalidInputError:
    return InvalidInputError(f"{where}: {problem}" if where else problem)


def _require_str(value: Any, where: str, *, non_empty: bool = True) -> str:
    if not isinstance(value, str):
        raise _fail(where, f"expected a string, got {type(value).__name__}")
    if non_empty and not value.strip():
        raise _fail(where, "must not be empty")
    return value


def _optional_str(value: Any, where: str) -> str | None:
    return None if value is None else _require_str(value, where)


def _known_fields(data: Any, allowed: tuple[str, ...], where: str) -> Mapping[str, Any]:
    """``data`` as a mapping holding only ``allowed`` fields, or a typed error saying what is wrong."""
    if not isinstance(data, Mapping):
        raise _fail(where, f"expected a dict, got {type(data).__name__}")
    unknown = sorted(set(data) - set(allowed))
    if unknown:
        raise _fail(where, f"unknown field(s) {unknown}; allowed: {list(allowed)}")
    return data


@dataclass
class ToolCall:
    """One call of a tool requested by an assistant turn."""

    id: str
    name: str
    arguments: dict[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        _require_str(self.id, "tool call id")
        _require_str(self.name, f"tool call {self.id!r} name")
        if not isinstance(self.arguments, Mapping):
            raise _fail(
                f"tool call {self.id!r} arguments",
                f"expected a dict, got {type(self.arguments).__name__}",
            )
        if not all(isinstance(key, str) for key in self.arguments):
            raise _fail(f"tool call {self.id!r} arguments", "keys must be strings")
        self.arguments = dict(self.arguments)

    def to_dict(self) -> dict[str, Any]:
        return {"id": self.id, "name": self.name, "arguments": _json_copy(self.arguments, self.id)}

    @classmethod
    def from_dict(cls, data: Any, where: str = "tool call") -> ToolCall:
        if isinstance(data, ToolCall):
            return data
        data = _known_fields(data, _TOOL_CALL_FIELDS, where)
        return cls(id=data.get("id"), name=data.get("name"), arguments=data.get("arguments", {}))


@dataclass
class Message:
    """One message of a transcript. Constructing one validates it (``InvalidInputError``)."""

    role: Role
    content: str = ""
    tool_calls: list[ToolCall] = field(default_factory=list)
    tool_call_id: str | None = None
    name: str | None = None
    id: str | None = None
    metadata: dict[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if self.role not in ROLES:
            raise InvalidInputError(f"unknown role ({describe(self.role)}); use one of: {', '.join(ROLES)}")
        where = f"{self.role} message"
        _require_str(self.content, f"{where} content", non_empty=False)
        if not isinstance(self.tool_calls, (list, tuple)):
            raise _fail(f"{where} tool_calls", f"expected a list, got {type(self.tool_calls).__name__}")
        self.tool_calls = [
            ToolCall.from_dict(call, f"{where} tool_calls[{i}]") for i, call in enumerate(self.tool_calls)
        ]
        if self.tool_calls and self.role != "assistant":
            raise _fail(where, "only assistant messages may carry tool_calls")
        ids = [call.id for call in self.tool_calls]
        if len(set(ids)) != len(ids):
            raise _fail(where, f"duplicate tool call ids {ids}")
        self.tool_call_id = _optional_str(self.tool_call_id, f"{where} tool_call_id")
        if self.role == "tool" and self.tool_call_id is None:
            raise _fail(where, "a tool message needs the tool_call_id of the call it answers")
        if self.role != "tool" and self.tool_call_id is not None:
            raise _fail(where, "only tool messages carry a tool_call_id")
        self.name = _optional_str(self.name, f"{where} name")
        self.id = _optional_str(self.id, f"{where} id")
        if not isinstance(self.metadata, Mapping):
            raise _fail(f"{where} metadata", f"expected a dict, got {type(self.metadata).__name__}")
        self.metadata = dict(self.metadata)

    # Convenience constructors, so a transcript reads like one.
    @classmethod
    def system(cls, content: str, **kwargs: Any) -> Message:
        return cls("system", content, **kwargs)

    @classmethod
    def user(cls, content: str, **kwargs: Any) -> Message:
        return cls("user", content, **kwargs)

    @classmethod
    def assistant(cls, content: str = "", tool_calls: Iterable[ToolCall] = (), **kwargs: Any) -> Message:
        return cls("assistant", content, list(tool_calls), **kwargs)

    @classmethod
    def tool(cls, content: str, tool_call_id: str, name: str | None = None, **kwargs: Any) -> Message:
        return cls("tool", content, tool_call_id=tool_call_id, name=name, **kwargs)

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict; fields left at their defaults are omitted."""
        out: dict[str, Any] = {"role": self.role, "content": self.content}
        if self.tool_calls:
            out["tool_calls"] = [call.to_dict() for call in self.tool_calls]
        for key in ("tool_call_id", "name", "id"):
            if getattr(self, key) is not None:
                out[key] = getattr(self, key)
        if self.metadata:
            out["metadata"] = _json_copy(self.metadata, f"{self.role} message metadata")
        return out

    @classmethod
    def from_dict(cls, data: Any, where: str = "message") -> Message:
        if isinstance(data, Message):
            return data
        data = _known_fields(data, _MESSAGE_FIELDS, where)
        if "role" not in data:
            raise _fail(where, "missing 'role'")
        try:
            return cls(
                role=data["role"],
                content=data.get("content", ""),
                tool_calls=data.get("tool_calls") or [],  # __post_init__ checks it is a list
                tool_call_id=data.get("tool_call_id"),
                name=data.get("name"),
                id=data.get("id"),
                metadata=data.get("metadata") or {},
            )
        except InvalidInputError as exc:
            raise _fail(where, str(exc)) from None


def _json_copy(value: Any, where: str) -> Any:
    try:
        return json.loads(json.dumps(value))
    except (TypeError, ValueError) as exc:
        raise _fail(str(where), f"not JSON-serialisable ({exc})") from None
    except RecursionError:
        raise _fail(str(where), "not JSON-serialisable (nested too deep, or a value that contains itself)") from None


def to_dicts(messages: Iterable[Message]) -> list[dict[str, Any]]:
    return [message.to_dict() for message in ensure_messages(messages)]


def from_dicts(data: Iterable[Any]) -> list[Message]:
    return [Message.from_dict(item, f"messages[{i}]") for i, item in enumerate(_as_list(data))]


def _as_list(value: Any, what: str = "messages") -> list[Any]:
    if isinstance(value, (str, bytes, Mapping)) or not isinstance(value, Iterable):
        raise InvalidInputError(f"{what}: expected a list, got {type(value).__name__}")
    return list(value)


def ensure_messages(messages: Iterable[Message]) -> list[Message]:
    """Return ``messages`` as a list, raising ``InvalidInputError`` if an item is not a Message."""
    items = _as_list(messages)
    for i, item in enumerate(items):
        if not isinstance(item, Message):
            raise InvalidInputError(
                f"messages[{i}]: expected a memtend Message, got {type(item).__name__}"
                " (use Message.from_dict / from_openai / from_anthropic to convert)"
            )
    return items


# --- structure -------------------------------------------------------------------------------------


def transcript_problems(messages: Iterable[Message]) -> list[str]:
    """Structural problems of a transcript; empty when every call/result pair is well formed.

    Checked: each tool message answers a call of the latest assistant turn that made calls, with
    nothing but tool (or system) messages in between; a call is answered at most once; tool call ids
    are unique across the transcript. A call left unanswered at the end is allowed (it is pending).
    """
    items = ensure_messages(messages)
    problems: list[str] = []
    seen_ids: set[str] = set()
    pending: set[str] = set()
    for i, message in enumerate(items):
        if message.role == "assistant":
            if pending:
                problems.append(f"messages[{i}]: assistant turn before results of calls {sorted(pending)}")
            pending = set()
            for call in message.tool_calls:
                if call.id in seen_ids:
                    problems.append(f"messages[{i}]: tool call id {call.id!r} used twice")
                seen_ids.add(call.id)
                pending.add(call.id)
        elif message.role == "tool":
            if message.tool_call_id not in pending:
                problems.append(f"messages[{i}]: tool result {message.tool_call_id!r} answers no pending call")
            pending.discard(message.tool_call_id or "")
        elif message.role == "user" and pending:
            problems.append(f"messages[{i}]: user turn before results of calls {sorted(pending)}")
            pending = set()
    return problems


def validate_transcript(messages: Iterable[Message]) -> list[Message]:
    """Return the messages as a list, or raise ``InvalidInputError`` listing structural problems."""
    items = ensure_messages(messages)
    problems = transcript_problems(items)
    if problems:
        raise InvalidInputError("invalid transcript: " + "; ".join(problems))
    return items


# --- OpenAI chat completions ---------------------------------------------------------------------


def to_openai(messages: Iterable[Message]) -> list[dict[str, Any]]:
    """Chat-completions messages (``tool_calls`` with JSON-string arguments, role ``tool``)."""
    out: list[dict[str, Any]] = []
    for message in ensure_messages(messages):
        if message.role == "tool":
            out.append({"role": "tool", "tool_call_id": message.tool_call_id, "content": message.content})
            continue
        role: str = message.role
        if role == "system" and message.metadata.get("openai_role") == "developer":
            role = "developer"
        item: dict[str, Any] = {"role": role, "content": message.content}
        if message.name is not None:
            item["name"] = message.name
        if message.tool_calls:
            if not message.content:
                item["content"] = None
            item["tool_calls"] = [
                {
                    "id": call.id,
                    "type": "function",
                    "function": {
                        "name": call.name,
                        "arguments": json.dumps(_json_copy(call.arguments, f"tool call {call.id!r}")),
                    },
                }
                for call in message.tool_calls
            ]
        out.append(item)
    return out


def from_openai(messages: Iterable[Any]) -> list[Message]:
    """Read chat-completions messages (dicts). ``developer`` reads as ``system``."""
    out: list[Message] = []
    call_names: dict[str, str] = {}
    for i, item in enumerate(_as_list(messages)):
        where = f"messages[{i}]"
        if not isinstance(item, Mapping):
            raise _fail(where, f"expected a dict, got {type(item).__name__}")
        role = item.get("role")
        metadata: dict[str, Any] = {}
        if role == "developer":
            role, metadata = "system", {"openai_role": "developer"}
        if role == "function":
            raise _fail(where, "the legacy 'function' role is not supported; use 'tool' messages")
        if role not in ROLES:
            raise _fail(where, f"unknown role ({describe(role)}); use one of: {', '.join(ROLES)}, developer")
        content = _openai_text(item.get("content"), f"{where}.content")
        try:
            if role == "tool":
                call_id = item.get("tool_call_id")
                if call_id is None:
                    raise _fail("", "a tool message needs 'tool_call_id'")
                _require_str(call_id, "tool_call_id")
                name = item.get("name") or call_names.get(call_id)
                out.append(Message.tool(content, call_id, name=name))
                continue
            calls = [
                _openai_call(raw, f"{where}.tool_calls[{j}]")
                for j, raw in enumerate(_as_list(item.get("tool_calls") or [], f"{where}.tool_calls"))
            ]
            call_names.update((call.id, call.name) for call in calls)
            out.append(Message(role, content, calls, name=item.get("name"), metadata=metadata))
        except InvalidInputError as exc:
            raise _fail(where, str(exc)) from None
    return out


def _openai_text(content: Any, where: str) -> str:
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    return _joined_text(content, where, "content part")


def _openai_call(raw: Any, where: str) -> ToolCall:
    if not isinstance(raw, Mapping):
        raise _fail(where, f"expected a dict, got {type(raw).__name__}")
    function = raw.get("function")
    if not isinstance(function, Mapping):
        raise _fail(f"{where}.function", "missing or not a dict")
    arguments = function.get("arguments") or "{}"
    if isinstance(arguments, str):
        try:
            arguments = json.loads(arguments)
        except ValueError as exc:
            raise _fail(f"{where}.function.arguments", f"not valid JSON ({exc})") from None
    if not isinstance(arguments, Mapping):
        raise _fail(f"{where}.function.arguments", "must be a JSON object")
    call_id: Any = raw.get("id")  # ToolCall checks the types
    name: Any = function.get("name")
    try:
        return ToolCall(id=call_id, name=name, arguments=dict(arguments))
    except InvalidInputError as exc:
        raise _fail(where, str(exc)) from None


# --- Anthropic Messages API ----------------------------------------------------------------------


def to_anthropic(messages: Iterable[Message]) -> tuple[str | None, list[dict[str, Any]]]:
    """Return ``(system, messages)`` for the Messages API.

    System messages are joined (blank line between) into ``system``; ``None`` when there are none.
    Consecutive tool messages become one user turn of ``tool_result`` blocks.
    """
    system_parts: list[str] = []
    out: list[dict[str, Any]] = []
    results: list[dict[str, Any]] = []

    def flush_results() -> None:
        if results:
            out.append({"role": "user", "content": list(results)})
            results.clear()

    for message in ensure_messages(messages):
        if message.role == "system":
            system_parts.append(message.content)
            continue
        if message.role == "tool":
            block: dict[str, Any] = {
                "type": "tool_result",
                "tool_use_id": message.tool_call_id,
                "content": message.content,
            }
            if message.metadata.get("is_error"):
                block["is_error"] = True
            results.append(block)
            continue
        flush_results()
        if message.role == "assistant" and message.tool_calls:
            blocks: list[dict[str, Any]] = []
            if message.content:
                blocks.append({"type": "text", "text": message.content})
            blocks.extend(
                {
                    "type": "tool_use",
                    "id": call.id,
                    "name": call.name,
                    "input": _json_copy(call.arguments, f"tool call {call.id!r}"),
                }
                for call in message.tool_calls
            )
            out.append({"role": "assistant", "content": blocks})
        else:
            out.append({"role": message.role, "content": message.content})
    flush_results()
    return ("\n\n".join(system_parts) if system_parts else None), out


def from_anthropic(messages: Iterable[Any], system: str | list[Any] | None = None) -> list[Message]:
    """Read Messages-API messages (and the optional ``system`` string or text blocks)."""
    out: list[Message] = []
    if system is not None:
        text = system if isinstance(system, str) else _anthropic_text(system, "system")
        out.append(Message.system(text))
    call_names: dict[str, str] = {}
    for i, item in enumerate(_as_list(messages)):
        where = f"messages[{i}]"
        if not isinstance(item, Mapping):
            raise _fail(where, f"expected a dict, got {type(item).__name__}")
        role = item.get("role")
        if role not in ("user", "assistant"):
            raise _fail(where, f"role must be 'user' or 'assistant' (system goes separately), got {describe(role)}")
        content = item.get("content", "")
        if isinstance(content, str):
            out.append(Message(role, content))
            continue
        try:
            if role == "assistant":
                out.append(_anthropic_assistant(content, where, call_names))
            else:
                out.extend(_anthropic_user(content, where, call_names))
        except InvalidInputError as exc:
            raise _fail(where, str(exc)) from None
    return out


def _anthropic_assistant(content: Any, where: str, call_names: dict[str, str]) -> Message:
    texts: list[str] = []
    calls: list[ToolCall] = []
    for j, block in enumerate(_as_list(content, f"{where}.content")):
        kind = block.get("type") if isinstance(block, Mapping) else None
        if kind == "tool_use":
            call = ToolCall(id=block.get("id"), name=block.get("name"), arguments=block.get("input") or {})
            call_names[call.id] = call.name
            calls.append(call)
        elif kind in ("thinking", "redacted_thinking"):
            continue
        else:
            texts.append(_anthropic_text([block], f"{where}.content[{j}]"))
    return Message("assistant", "\n".join(texts), calls)


def _anthropic_user(content: Any, where: str, call_names: dict[str, str]) -> list[Message]:
    out: list[Message] = []
    texts: list[str] = []
    for j, block in enumerate(_as_list(content, f"{where}.content")):
        if isinstance(block, Mapping) and block.get("type") == "tool_result":
            if texts:
                out.append(Message.user("\n".join(texts)))
                texts = []
            call_id = block.get("tool_use_id")
            if call_id is None:
                raise _fail(f"content[{j}]", "a tool_result block needs 'tool_use_id'")
            _require_str(call_id, f"content[{j}].tool_use_id")
            raw = block.get("content", "")
            text = raw if isinstance(raw, str) else _anthropic_text(raw, f"content[{j}].content")
            metadata = {"is_error": True} if block.get("is_error") else {}
            out.append(Message.tool(text, call_id, name=call_names.get(call_id), metadata=metadata))
        else:
            texts.append(_anthropic_text([block], f"{where}.content[{j}]"))
    if texts:
        out.append(Message.user("\n".join(texts)))
    return out


def _anthropic_text(blocks: Any, where: str) -> str:
    return _joined_text(blocks, where, "content block")


def _joined_text(parts: Any, where: str, what: str) -> str:
    """The text parts of a content list joined by newlines; any other part becomes a ``[type]`` placeholder."""
    out = []
    for j, part in enumerate(_as_list(parts, where)):
        if isinstance(part, str):
            out.append(part)
        elif isinstance(part, Mapping) and part.get("type") == "text":
            out.append(_require_str(part.get("text"), f"{where}[{j}].text", non_empty=False))
        elif isinstance(part, Mapping):
            out.append(f"[{part.get('type', 'content')}]")
        else:
            raise _fail(f"{where}[{j}]", f"expected a {what} dict, got {type(part).__name__}")
    return "\n".join(out)
