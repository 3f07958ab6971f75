"""The side-effect ledger around LlamaIndex tools: a side-effecting tool call is recorded in the session's ledger
with the ids it returned, and a repeat with the same arguments is answered from the ledger.

    tools = ledger_tools([deploy, lookup], memory, user_id="alice", session_id="s1", side_effect_tools=["deploy"])
    agent = FunctionAgent(tools=tools, llm=llm)

Tools named in ``side_effect_tools`` or marked (``memtend.side_effecting`` on the function, or on the tool) are
wrapped; the others come back as they were. A wrapped ``FunctionTool`` stays a ``FunctionTool`` (an agent still
hands it the workflow ``Context`` when its function takes one). The policy (which calls are the same, what a
repeat gets: ``on_repeat="answer"``, ``"refuse"`` or ``"allow"``) is the core's :class:`memtend.SideEffectGuard`;
this module only turns the verdict into a ``ToolOutput``.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from typing import Any

from llama_index.core.tools import FunctionTool
from llama_index.core.tools.types import AsyncBaseTool, BaseTool, ToolMetadata, ToolOutput, adapt_to_async_tool
from memtend import InvalidInputError, Memory, SideEffectGuard
from memtend.working.ledger import Ledger
from memtend.working.side_effects import OnRepeat, Verdict

__all__ = ["ledger_tools"]

_JSON = (dict, list, str, int, float, bool)


class _Guarded:
    """One tool's side of the ledger: its name, the session's ledger and the core's guard."""

    def __init__(self, name: str, ledger: Ledger, guard: SideEffectGuard, ctx_param: str | None) -> None:
        self.name = name
        self.ledger = ledger
        self.guard = guard
        self.ctx_param = ctx_param

    def args(self, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
        """The call's arguments as the ledger compares them (the workflow Context left out)."""
        named = {k: v for k, v in kwargs.items() if k != self.ctx_param}
        return {"args": list(args), **named} if args else named

    def answer(self, verdict: Verdict, raw_input: dict[str, Any]) -> ToolOutput:
        return ToolOutput(
            content=verdict.text,
            tool_name=self.name,
            raw_input=raw_input,
            raw_output=verdict.text,
            is_error=verdict.refused,
        )

    @staticmethod
    def result_of(output: ToolOutput) -> Any:
        raw = output.raw_output
        return raw if isinstance(raw, _JSON) else output.content

    def run(self, call: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> ToolOutput:
        key_args = self.args(args, kwargs)
        return self.guard.run(
            self.ledger,
            self.name,
            key_args,
            lambda: call(*args, **kwargs),
            answer=lambda verdict: self.answer(verdict, {"args": args, "kwargs": key_args}),
            result_of=self.result_of,
            is_error=lambda output: bool(output.is_error),
        )

    async def arun(self, call: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> ToolOutput:
        key_args = self.args(args, kwargs)
        return await self.guard.arun(
            self.ledger,
            self.name,
            key_args,
            lambda: call(*args, **kwargs),
            answer=lambda verdict: self.answer(verdict, {"args": args, "kwargs": key_args}),
            result_of=self.result_of,
            is_error=lambda output: bool(output.is_error),
        )


class LedgerFunctionTool(FunctionTool):
    """A ``FunctionTool`` whose calls go through the session's ledger (the same function, schema and context
    parameter as the tool it wraps)."""

    def __init__(self, inner: FunctionTool, guarded: _Guarded) -> None:
        self.__dict__.update(inner.__dict__)  # function, metadata, context parameter, callbacks, partial params
        self._memtend_inner = inner
        self._memtend_guarded = guarded

    def call(self, *args: Any, **kwargs: Any) -> ToolOutput:
        return self._memtend_guarded.run(self._memtend_inner.call, args, kwargs)

    async def acall(self, *args: Any, **kwargs: Any) -> ToolOutput:
        return await self._memtend_guarded.arun(self._memtend_inner.acall, args, kwargs)


class LedgerTool(AsyncBaseTool):
    """Any other LlamaIndex tool, its calls through the session's ledger."""

    def __init__(self, inner: BaseTool, guarded: _Guarded) -> None:
        self._inner = inner
        self._async = adapt_to_async_tool(inner)
        self._guarded = guarded

    @property
    def metadata(self) -> ToolMetadata:
        return self._inner.metadata

    def call(self, input: Any) -> ToolOutput:
        return self._guarded.run(self._async.call, (input,), {})

    async def acall(self, input: Any) -> ToolOutput:
        return await self._guarded.arun(self._async.acall, (input,), {})


def ledger_tools(
    tools: Sequence[BaseTool],
    memory: Memory,
    *,
    user_id: str,
    session_id: str,
    side_effect_tools: Collection[str] = (),
    on_repeat: OnRepeat = "answer",
) -> list[BaseTool]:
    """``tools`` with each side-effecting one wrapped so its calls go through the ledger of
    ``(user_id, session_id)``; build them per conversation, as the ``MemtendMemory`` it runs with."""
    if not isinstance(memory, Memory):
        raise InvalidInputError(f"memory must be a memtend Memory, got {type(memory).__name__}")
    guard = SideEffectGuard(side_effect_tools, on_repeat=on_repeat)
    ledger = memory.user(user_id).ledger(session_id)
    out: list[BaseTool] = []
    for tool in tools:
        if not isinstance(tool, BaseTool):
            raise InvalidInputError(f"ledger_tools takes LlamaIndex tools, got {type(tool).__name__}")
        name = tool.metadata.get_name()
        if not guard.guards(name, tool, getattr(tool, "real_fn", None)):
            out.append(tool)
        elif isinstance(tool, FunctionTool):
            out.append(LedgerFunctionTool(tool, _Guarded(name, ledger, guard, tool.ctx_param_name)))
        else:
            out.append(LedgerTool(tool, _Guarded(name, ledger, guard, None)))
    return out
