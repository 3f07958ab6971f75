"""Memory tools for LangChain agents: ``remember``, ``recall``, the session ``memory`` tool, and the user's controls
``memories`` ("what do you remember about me?") and ``forget_memory`` ("forget that").

They reach memtend through LangChain's ``ToolRuntime`` (hidden from the model's schema): the user id comes from
``runtime.context`` and the session from the run's thread, so the model never sees or chooses whose memory it
touches. Answers are short strings; what the core refuses comes back as ``refused: ...`` or ``error: ...``.
"""

from __future__ import annotations

from collections.abc import Callable, Collection
from typing import Any, Literal

from langchain.tools import ToolRuntime
from langchain_core.messages import HumanMessage, ToolMessage
from langchain_core.tools import BaseTool, StructuredTool
from memtend import Hit, Memory, MemoryTool, MemtendError, Record, SensitiveDataError, Source, Status, UserMemory
from memtend.policies.proposals import WriteMode, check_write_mode
from memtend.working import user_controls as controls
from memtend.working.memory_tool import tool_definition

from memtend_langchain._context import thread_id_of, user_id_of

__all__ = ["TOOL_NAMES", "memtend_tools"]

TOOL_NAMES = ("remember", "recall", "memory", "memories", "forget_memory")

_REMEMBER = (
    "Save one durable fact or preference about the user for future conversations (one short sentence). "
    "Never pass secrets such as passwords, card numbers or API keys: they are refused."
)
_NO_THREAD = (
    "error: the memory tool keeps state per conversation thread and this run has none; "
    "run the agent with a checkpointer and config={'configurable': {'thread_id': ...}}"
)
_RECALL = "Search what you remembered about the user in earlier conversations; returns dated memories, best first."


def _user(
    memory: Memory, runtime: ToolRuntime[Any, Any], user_field: str, tool: str, write_mode: WriteMode | None = None
) -> UserMemory:
    user_id = user_id_of(runtime.context, user_field, f"the {tool!r} tool", runtime.config)
    return memory.user(user_id, write_mode=write_mode)


def _thread(runtime: ToolRuntime[Any, Any]) -> str | None:
    return thread_id_of(runtime.execution_info, runtime.config)


def read_untrusted(messages: Any, untrusted_tools: Collection[str]) -> bool:
    """Whether the current run (the messages after the latest user turn) holds output of an untrusted tool."""
    if not untrusted_tools or not isinstance(messages, list):
        return False
    for message in reversed(messages):
        if isinstance(message, HumanMessage):
            return False
        if isinstance(message, ToolMessage) and message.name in untrusted_tools:
            return True
    return False


def untrusted_outputs(messages: Any, untrusted_tools: Collection[str]) -> list[tuple[str, str]]:
    """(tool name, tool call id) of every untrusted tool output anywhere in ``messages`` (earlier turns too)."""
    if not untrusted_tools or not isinstance(messages, list):
        return []
    found = (
        (m.name, m.tool_call_id or "")
        for m in messages
        if isinstance(m, ToolMessage) and m.name and m.name in untrusted_tools
    )
    return list(dict.fromkeys(found))


def mark_untrusted(user: UserMemory, thread: str | None, pieces: Collection[tuple[str, str]]) -> None:
    """Tell the core that untrusted output (tool name, call id) entered the conversation ``thread``: the core then
    holds for review what the agent remembers or sets in it, on this turn and every later one, until a person has
    reviewed it (``user.session(thread).clear_untrusted()``)."""
    if thread:
        session = user.session(thread)
        for name, ref in pieces:
            session.mark_untrusted(name, ref=ref)


async def amark_untrusted(user: UserMemory, thread: str | None, pieces: Collection[tuple[str, str]]) -> None:
    if thread:
        session = user.session(thread)
        for name, ref in pieces:
            await session.amark_untrusted(name, ref=ref)


def _remembered(record: Record) -> str:
    if record.status is Status.PROPOSED:
        return "proposed: the user reviews it before it is remembered (nothing recalls it until accepted)"
    if record.status is Status.PENDING_REVIEW:
        return "held for review: this conversation holds untrusted content, so a person approves it before it is used"
    return "remembered"


def _refused(exc: SensitiveDataError) -> str:
    return (
        f"refused: it holds sensitive data ({', '.join(exc.kinds)}); nothing was stored. "
        "Remember a reference instead (e.g. 'card on file')"
    )


def _hits(hits: list[Hit]) -> str:
    if not hits:
        return "nothing remembered matches"
    return "\n".join(hit.label() for hit in hits)


def memtend_tools(
    memory: Memory,
    *,
    user_field: str = "user_id",
    untrusted_tools: Collection[str] = (),
    k: int = 5,
    write_mode: WriteMode | None = None,
    user_controls: bool = True,
) -> list[BaseTool]:
    """The tools, bound to ``memory``. ``untrusted_tools``: names of tools whose output is untrusted
    content (web pages, mail, documents). Once such output is in the conversation the core marks the thread as
    holding untrusted content, and every later ``remember`` or ``memory`` set in it, on this turn or a later one,
    is held for review; without a thread, a call made after such output in the same run is.
    ``write_mode``: ``"propose"`` makes ``remember`` store a proposal the user accepts (``"direct"``: at once;
    None: as the Memory is opened). ``user_controls``: add ``memories`` (lists what is remembered about the user,
    with ids) and ``forget_memory`` (deletes one by id; refused in a conversation holding untrusted content)."""
    untrusted = frozenset(untrusted_tools)
    mode = None if write_mode is None else check_write_mode(write_mode)

    def source_of(runtime: ToolRuntime[Any, Any], user: UserMemory) -> Source:
        state = runtime.state if isinstance(runtime.state, dict) else {}
        messages = state.get("messages")
        mark_untrusted(user, _thread(runtime), untrusted_outputs(messages, untrusted))
        return Source.EXTERNAL if read_untrusted(messages, untrusted) else Source.AGENT

    async def asource_of(runtime: ToolRuntime[Any, Any], user: UserMemory) -> Source:
        state = runtime.state if isinstance(runtime.state, dict) else {}
        messages = state.get("messages")
        await amark_untrusted(user, _thread(runtime), untrusted_outputs(messages, untrusted))
        return Source.EXTERNAL if read_untrusted(messages, untrusted) else Source.AGENT

    def remember(text: str, runtime: ToolRuntime[Any, Any]) -> str:
        user = _user(memory, runtime, user_field, "remember", mode)
        try:
            record = user.remember(text, source=source_of(runtime, user), session=_thread(runtime) or "")
        except SensitiveDataError as exc:
            return _refused(exc)
        except MemtendError as exc:
            return f"error: {exc}"
        return _remembered(record)

    async def aremember(text: str, runtime: ToolRuntime[Any, Any]) -> str:
        user = _user(memory, runtime, user_field, "remember", mode)
        try:
            source = await asource_of(runtime, user)
            record = await user.aremember(text, source=source, session=_thread(runtime) or "")
        except SensitiveDataError as exc:
            return _refused(exc)
        except MemtendError as exc:
            return f"error: {exc}"
        return _remembered(record)

    def recall(query: str, runtime: ToolRuntime[Any, Any]) -> str:
        user = _user(memory, runtime, user_field, "recall")
        try:
            return _hits(user.recall(query, k=k))
        except MemtendError as exc:
            return f"error: {exc}"

    async def arecall(query: str, runtime: ToolRuntime[Any, Any]) -> str:
        user = _user(memory, runtime, user_field, "recall")
        try:
            return _hits(await user.arecall(query, k=k))
        except MemtendError as exc:
            return f"error: {exc}"

    def memories(runtime: ToolRuntime[Any, Any]) -> str:
        return controls.list_memories(_user(memory, runtime, user_field, "memories"))

    async def amemories(runtime: ToolRuntime[Any, Any]) -> str:
        return await controls.alist_memories(_user(memory, runtime, user_field, "memories"))

    def forget(memory_id: str, runtime: ToolRuntime[Any, Any]) -> str:
        user = _user(memory, runtime, user_field, "forget_memory")
        return controls.forget_memory(user, memory_id, session=_thread(runtime) or "")

    async def aforget(memory_id: str, runtime: ToolRuntime[Any, Any]) -> str:
        user = _user(memory, runtime, user_field, "forget_memory")
        return await controls.aforget_memory(user, memory_id, session=_thread(runtime) or "")

    def session_tool(runtime: ToolRuntime[Any, Any]) -> MemoryTool | str:
        user = _user(memory, runtime, user_field, "memory")
        thread = _thread(runtime)
        if thread is None:
            return _NO_THREAD
        return MemoryTool(user.session(thread), source=source_of(runtime, user))

    async def asession_tool(runtime: ToolRuntime[Any, Any]) -> MemoryTool | str:
        user = _user(memory, runtime, user_field, "memory")
        thread = _thread(runtime)
        if thread is None:
            return _NO_THREAD
        return MemoryTool(user.session(thread), source=await asource_of(runtime, user))

    def call_of(op: str, key: str | None, value: Any) -> dict[str, Any]:
        call: dict[str, Any] = {"op": op}
        if key is not None:
            call["key"] = key
        if value is not None:
            call["value"] = value
        return call

    def memory_op(
        op: Literal["get", "set", "list", "delete", "forget"],
        runtime: ToolRuntime[Any, Any],
        key: str | None = None,
        value: Any = None,
    ) -> str:
        tool = session_tool(runtime)
        return tool if isinstance(tool, str) else tool.handle(call_of(op, key, value))

    async def amemory_op(
        op: Literal["get", "set", "list", "delete", "forget"],
        runtime: ToolRuntime[Any, Any],
        key: str | None = None,
        value: Any = None,
    ) -> str:
        tool = await asession_tool(runtime)
        return tool if isinstance(tool, str) else await tool.ahandle(call_of(op, key, value))

    def make(name: str, func: Callable[..., str], coroutine: Callable[..., Any], description: str) -> BaseTool:
        return StructuredTool.from_function(func=func, coroutine=coroutine, name=name, description=description)

    tools = [
        make("remember", remember, aremember, _REMEMBER),
        make("recall", recall, arecall, _RECALL),
        make("memory", memory_op, amemory_op, tool_definition()["description"]),
    ]
    if user_controls:
        tools.append(make("memories", memories, amemories, controls.MEMORIES_DESCRIPTION))
        tools.append(make("forget_memory", forget, aforget, controls.FORGET_DESCRIPTION))
    return tools
