"""The side-effect ledger around LangGraph's ``ToolNode``: a side-effecting tool call is recorded in the thread's
ledger with the ids it returned, and a repeat with the same arguments is answered from the ledger.

    node = ledger_tool_node([deploy, lookup], memory, side_effect_tools=["deploy"])
    builder.add_node("tools", node)          # run with context={"user_id": ...} and a thread_id

``LedgerToolCalls`` is the pair of ``wrap_tool_call`` / ``awrap_tool_call`` functions ``ToolNode`` takes, for a
``ToolNode`` built another way. The policy (which calls are the same, what a repeat gets: ``on_repeat="answer"``,
``"refuse"`` or ``"allow"``) is the core's :class:`memtend.SideEffectGuard`; this module only reads the user and
the thread from the run and writes the verdict as a ``ToolMessage``. Needs ``langgraph`` (``ToolNode`` is in
``langgraph.prebuilt``).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Collection, Sequence
from typing import TYPE_CHECKING, Any

from langchain_core.messages import ToolMessage
from memtend import InvalidInputError, Memory, SideEffectGuard
from memtend.identity import field_of, resolve_user
from memtend.working.ledger import Ledger
from memtend.working.side_effects import OnRepeat, Verdict

if TYPE_CHECKING:
    from langgraph.prebuilt import ToolNode
    from langgraph.prebuilt.tool_node import ToolCallRequest

__all__ = ["LedgerToolCalls", "ledger_tool_node"]

Handler = Callable[["ToolCallRequest"], Any]
AsyncHandler = Callable[["ToolCallRequest"], Awaitable[Any]]


def _answer(request: ToolCallRequest, verdict: Verdict) -> ToolMessage:
    call = request.tool_call
    status = "error" if verdict.refused else "success"
    return ToolMessage(content=verdict.text, tool_call_id=call.get("id") or "", name=call.get("name"), status=status)


def _result_of(result: Any) -> Any:
    """What the ledger records of a tool's output: the tool message's content (a Command's tool messages)."""
    if isinstance(result, ToolMessage):
        return result.content
    update = getattr(result, "update", None)
    messages = update.get("messages") if isinstance(update, dict) else None
    texts = [m.content for m in messages or () if isinstance(m, ToolMessage)]
    return texts[0] if len(texts) == 1 else texts or None


def _is_error(result: Any) -> bool:
    return isinstance(result, ToolMessage) and result.status == "error"


class LedgerToolCalls:
    """``ToolNode(tools, wrap_tool_call=calls.wrap, awrap_tool_call=calls.awrap)`` with
    ``calls = LedgerToolCalls(memory, side_effect_tools=[...])``: the user comes from ``runtime.context``
    (field ``user_field``) or ``configurable.user_id``, the conversation from ``configurable.thread_id``."""

    def __init__(
        self,
        memory: Memory,
        side_effect_tools: Collection[str] = (),
        *,
        on_repeat: OnRepeat = "answer",
        user_field: str = "user_id",
    ) -> None:
        if not isinstance(memory, Memory):
            raise InvalidInputError(f"memory must be a memtend Memory, got {type(memory).__name__}")
        if not isinstance(user_field, str) or not user_field:
            raise InvalidInputError("user_field must name the runtime context field holding the user id")
        self.memory = memory
        self.user_field = user_field
        self.guard = SideEffectGuard(side_effect_tools, on_repeat=on_repeat)

    def _guarded(self, request: ToolCallRequest) -> bool:
        tool = request.tool
        marked = (tool, getattr(tool, "func", None), getattr(tool, "coroutine", None))
        return self.guard.guards(str(request.tool_call.get("name")), *marked)

    def _ledger(self, request: ToolCallRequest) -> Ledger:
        runtime = request.runtime
        config = getattr(runtime, "config", None) or {}
        configurable = config.get("configurable") or {}
        places = [
            (f"the run's context ({self.user_field})", field_of(getattr(runtime, "context", None), self.user_field)),
            ("configurable.user_id", configurable.get("user_id")),
        ]
        user = resolve_user(
            places,
            who="the ledger's ToolNode",
            fix=f"invoke the graph with context={{{self.user_field!r}: '<user id>'}}",
        )
        thread = configurable.get("thread_id")
        if thread is None:
            raise InvalidInputError(
                "side-effecting tool calls are recorded per thread; compile the graph with a checkpointer and run "
                "it with config={'configurable': {'thread_id': ...}}"
            )
        return self.memory.user(user).ledger(str(thread))

    def wrap(self, request: ToolCallRequest, handler: Handler) -> Any:
        """The ``wrap_tool_call`` of a ``ToolNode``."""
        if not self._guarded(request):
            return handler(request)
        call = request.tool_call
        return self.guard.run(
            self._ledger(request),
            str(call.get("name")),
            call.get("args") or {},
            lambda: handler(request),
            answer=lambda verdict: _answer(request, verdict),
            result_of=_result_of,
            is_error=_is_error,
        )

    async def awrap(self, request: ToolCallRequest, handler: AsyncHandler) -> Any:
        """The ``awrap_tool_call`` of a ``ToolNode``."""
        if not self._guarded(request):
            return await handler(request)
        call = request.tool_call
        return await self.guard.arun(
            self._ledger(request),
            str(call.get("name")),
            call.get("args") or {},
            lambda: handler(request),
            answer=lambda verdict: _answer(request, verdict),
            result_of=_result_of,
            is_error=_is_error,
        )


def ledger_tool_node(
    tools: Sequence[Any],
    memory: Memory,
    *,
    side_effect_tools: Collection[str] = (),
    on_repeat: OnRepeat = "answer",
    user_field: str = "user_id",
    **tool_node_options: Any,
) -> ToolNode:
    """A ``ToolNode`` over ``tools`` whose side-effecting calls (named in ``side_effect_tools``, or marked with
    ``memtend.side_effecting``) go through the thread's ledger; other options go to ``ToolNode``."""
    from langgraph.prebuilt import ToolNode

    if "wrap_tool_call" in tool_node_options or "awrap_tool_call" in tool_node_options:
        raise InvalidInputError(
            "ledger_tool_node sets the ToolNode's tool-call wrappers; build the ToolNode with LedgerToolCalls "
            "to combine them with your own"
        )
    calls = LedgerToolCalls(memory, side_effect_tools, on_repeat=on_repeat, user_field=user_field)
    return ToolNode(list(tools), wrap_tool_call=calls.wrap, awrap_tool_call=calls.awrap, **tool_node_options)
