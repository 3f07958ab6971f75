"""``MemtendMiddleware``: memtend inside ``langchain.agents.create_agent``.

* before the agent: the user must be in ``runtime.context`` (field ``user_id`` unless configured), else a clear
  error before any model call;
* before each model call: when the transcript is over a turn or token budget, the core's
  ``compact_transcript`` replaces its older part with one structured summary turn (tool calls never split from
  their results); the state is updated with the compacted transcript;
* around each model call: the user's profile, standing rules, the memories recalled for the latest user message
  (dated, marked as possibly outdated) and the constraints the user set in this conversation (the core's
  ``conversation_constraints``: every turn, compaction on or off, a revised one in its latest version only) go
  into this call's system message only (``request.override``), never into the state;
* around each tool call: when a tool named untrusted returns, the core marks the thread as holding untrusted
  content (also done before the agent for such output already in the state): from then on, on this turn and
  every later one, what the agent remembers or sets in the thread is held for review until a person has
  reviewed the conversation (``user.session(thread_id).clear_untrusted()``);
* around each call of a side-effecting tool (named in ``side_effect_tools`` or marked with
  ``memtend.side_effecting``): the core's :class:`memtend.SideEffectGuard` records it in the thread's ledger with
  the ids it returned, and a repeat with the same arguments is answered from the ledger (``on_repeat="answer"``),
  refused with an error tool message (``"refuse"``) or run again (``"allow"``);
* after the agent (``capture="turn"``, the default), before compaction drops turns, and at
  :meth:`MemtendMiddleware.end_session`: the turns not captured yet go to the core's ``capture``, which keeps
  what is worth keeping (durable facts as keyed facts, preferences, decisions, corrections, unfinished work;
  never chit-chat, one-off requests or acknowledgements), written or merged with their provenance (thread,
  turn); output of tools named untrusted is logged as external content, which the core holds for review.
  ``capture="session"`` captures only before compaction and at ``end_session``; ``capture=False`` never (the
  moments are the core's, :mod:`memtend.capture.moments`). ``end_session`` also keeps the instructions the user
  left in force, each in its latest version: until then the conversation's constraints hold them.

Every hook has a sync and an async form. The middleware also registers the memory tools (``remember``,
``recall``, ``memory``) unless ``tools=False``.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Collection, Sequence
from dataclasses import replace
from typing import Annotated, Any

from langchain.agents.middleware import AgentMiddleware, AgentState, ModelRequest, ModelResponse
from langchain.agents.middleware.types import ModelCallResult, PrivateStateAttr
from langchain_core.messages import AnyMessage, BaseMessage, HumanMessage, RemoveMessage, SystemMessage, ToolMessage
from langgraph.graph.message import REMOVE_ALL_MESSAGES
from langgraph.prebuilt.tool_node import ToolCallRequest
from langgraph.runtime import Runtime
from langgraph.types import Command
from memtend import (
    CompactionResult,
    Event,
    InvalidInputError,
    Memory,
    Message,
    SideEffectGuard,
    Source,
    UserMemory,
    acompact_transcript,
    compact_transcript,
)
from memtend.capture.moments import at_end, check_capture, each_turn
from memtend.policies.proposals import WriteMode, check_write_mode
from memtend.prompt_context import conversation_constraints
from memtend.records import MAX_TEXT_CHARS, check_text
from memtend.surfaces import REDACT_DEFAULT, check_redact, refused_at
from memtend.working.side_effects import OnRepeat, Verdict
from typing_extensions import NotRequired

from memtend_langchain._context import MemoryContext, agather, gather, run_config, thread_id_of, user_id_of
from memtend_langchain._messages import from_memtend, is_summary, to_memtend
from memtend_langchain.tools import amark_untrusted, mark_untrusted, memtend_tools, untrusted_outputs

__all__ = ["MemtendMiddleware", "MemtendState"]

MEMORY_HEADER = "## Memory (from memtend)"


class MemtendState(AgentState[Any]):
    memtend_captured: NotRequired[Annotated[list[str], PrivateStateAttr]]  # ids of messages already logged


def _latest_user_text(messages: Sequence[BaseMessage]) -> str | None:
    for message in reversed(messages):
        if isinstance(message, HumanMessage) and not is_summary(message):
            return message.text
    return None


def _with_memory(system: SystemMessage | None, text: str) -> SystemMessage:
    block = f"{MEMORY_HEADER}\n{text}"
    if system is None:
        return SystemMessage(content=block)
    if isinstance(system.content, str):
        content: Any = f"{system.content}\n\n{block}" if system.content else block
    else:
        content = [*system.content, {"type": "text", "text": block}]
    return system.model_copy(update={"content": content})


def _answer(request: ToolCallRequest, verdict: Verdict) -> ToolMessage:
    """The ledger's answer to a repeated side-effecting call, as the tool message the model reads."""
    call = request.tool_call
    status = "error" if verdict.refused else "success"
    return ToolMessage(content=verdict.text, tool_call_id=call.get("id") or "", name=call.get("name"), status=status)


def _result_of(result: ToolMessage | Command[Any]) -> Any:
    """What the ledger records of a tool's output: the tool message's content (a Command's tool messages)."""
    if isinstance(result, ToolMessage):
        return result.content
    update = result.update if isinstance(result.update, dict) else {}
    texts = [m.content for m in update.get("messages") or () if isinstance(m, ToolMessage)]
    return texts[0] if len(texts) == 1 else texts or None


def _is_error(result: ToolMessage | Command[Any]) -> bool:
    return isinstance(result, ToolMessage) and result.status == "error"


class MemtendMiddleware(AgentMiddleware[MemtendState, Any, Any]):
    """``create_agent(model, tools, middleware=[MemtendMiddleware(memory)])``, run with
    ``context={"user_id": ...}`` (and a checkpointer and ``thread_id`` for per-thread working memory).

    ``max_turns`` / ``max_tokens``: the compaction budget (``None`` for both turns compaction off);
    ``keep_recent_turns``: turns kept verbatim; ``summarizer``: an LLM summariser for the core
    (``memtend.llm_summarizer(...)``), the offline extractive one by default; ``k``: memories recalled per call;
    ``untrusted_tools``: tools whose output is untrusted content; ``redact``: mask (True, the default of every
    adapter) or refuse (False) sensitive data in what is logged after the run (see docs/secrets.md);
    ``side_effect_tools``: tools whose calls the thread's ledger records and never repeats unknowingly (tools
    marked with ``memtend.side_effecting`` too), ``on_repeat``: what a repeat gets (``"answer"``, ``"refuse"``,
    ``"allow"``); ``write_mode``: ``"propose"`` makes what the agent and the capture step remember wait as
    proposals a person accepts (``UserMemory.proposals``/``accept``/``reject``), ``"direct"`` stores it at once,
    None (the default) follows the Memory's ``write_mode``.
    """

    state_schema = MemtendState

    def __init__(
        self,
        memory: Memory,
        *,
        user_field: str = "user_id",
        k: int = 5,
        max_turns: int | None = 40,
        max_tokens: int | None = 60_000,
        keep_recent_turns: int | None = None,
        summarizer: Any = None,
        untrusted_tools: Collection[str] = (),
        capture: bool | str | None = "turn",
        redact: bool = REDACT_DEFAULT,
        tools: bool = True,
        side_effect_tools: Collection[str] = (),
        on_repeat: OnRepeat = "answer",
        write_mode: WriteMode | None = None,
    ) -> None:
        super().__init__()
        if not isinstance(memory, Memory):
            raise InvalidInputError(f"memory must be a memtend Memory, got {type(memory).__name__}")
        if not isinstance(user_field, str) or not user_field:
            raise InvalidInputError("user_field must name the runtime context field holding the user id")
        self.memory = memory
        self.user_field = user_field
        self.k = k
        self.max_turns = max_turns
        self.max_tokens = max_tokens
        self.keep_recent_turns = keep_recent_turns
        self.summarizer = summarizer
        self.untrusted_tools = frozenset(untrusted_tools)
        self.capture = check_capture(capture)
        self.redact = check_redact(redact, "MemtendMiddleware")
        self.side_effects = SideEffectGuard(side_effect_tools, on_repeat=on_repeat)
        self.write_mode = None if write_mode is None else check_write_mode(write_mode)
        if isinstance(k, bool) or not isinstance(k, int) or k < 1:
            raise InvalidInputError(f"k (memories recalled per model call) must be a positive integer, got {k!r}")
        if self._compacts:  # the core checks the budget now, not at the first model call
            compact_transcript([], **self._options())
        if isinstance(untrusted_tools, str):
            raise InvalidInputError("untrusted_tools takes a list of tool names, not one string")
        self.tools = (
            memtend_tools(
                memory, user_field=user_field, untrusted_tools=self.untrusted_tools, k=k, write_mode=self.write_mode
            )
            if tools
            else []
        )

    # ------------------------------------------------------------------ helpers
    def _user(self, runtime: Any) -> UserMemory:
        context = getattr(runtime, "context", None)
        user_id = user_id_of(context, self.user_field, "MemtendMiddleware", run_config())
        return self.memory.user(user_id, write_mode=self.write_mode)

    @staticmethod
    def _thread(runtime: Any) -> str | None:
        return thread_id_of(getattr(runtime, "execution_info", None), getattr(runtime, "config", None))

    @property
    def _compacts(self) -> bool:
        return self.max_turns is not None or self.max_tokens is not None

    def _options(self) -> dict[str, Any]:
        return {
            "max_turns": self.max_turns,
            "max_tokens": self.max_tokens,
            "keep_recent_turns": self.keep_recent_turns,
            "summarizer": self.summarizer,
        }

    @staticmethod
    def _outcome(
        messages: list[AnyMessage], result: CompactionResult
    ) -> tuple[list[BaseMessage], list[str], CompactionResult | None]:
        if not result.compacted:
            return list(messages), result.constraints, None
        return from_memtend(result.messages, messages), result.constraints, result

    def _compact(self, messages: list[AnyMessage]) -> tuple[list[BaseMessage], list[str], CompactionResult | None]:
        """(messages, constraints kept, the compaction when it compacted) under the budget."""
        if not self._compacts or not messages:
            return list(messages), [], None
        return self._outcome(messages, compact_transcript(to_memtend(messages), **self._options()))

    async def _acompact(
        self, messages: list[AnyMessage]
    ) -> tuple[list[BaseMessage], list[str], CompactionResult | None]:
        if not self._compacts or not messages:
            return list(messages), [], None
        return self._outcome(messages, await acompact_transcript(to_memtend(messages), **self._options()))

    @staticmethod
    def _replace(messages: list[BaseMessage]) -> dict[str, Any]:
        return {"messages": [RemoveMessage(id=REMOVE_ALL_MESSAGES), *messages]}

    def _request(self, request: ModelRequest, found: MemoryContext) -> ModelRequest:
        text = found.render()
        return request.override(system_message=_with_memory(request.system_message, text)) if text else request

    def _capture_turns(
        self, user: UserMemory, state: dict[str, Any], session: str, *, ended: bool = False
    ) -> dict[str, Any]:
        """Hand the turns not captured yet to the core's ``capture`` (and log untrusted output for review); when
        the conversation ``ended``, the whole of it goes too (the instructions still in force are kept)."""
        turn, offset, external, ids = self._pending(state)
        whole = to_memtend(list(state.get("messages") or [])) if ended else None
        with refused_at("MemtendMiddleware"):
            if turn or whole:
                user.capture(turn, session=session, offset=offset, redact=self.redact, conversation=whole)
            if external:
                user.log_many([replace(e, session=session) for e in external], redact=self.redact)
        return {"memtend_captured": ids}

    async def _acapture_turns(
        self, user: UserMemory, state: dict[str, Any], session: str, *, ended: bool = False
    ) -> dict[str, Any]:
        turn, offset, external, ids = self._pending(state)
        whole = to_memtend(list(state.get("messages") or [])) if ended else None
        with refused_at("MemtendMiddleware"):
            if turn or whole:
                await user.acapture(turn, session=session, offset=offset, redact=self.redact, conversation=whole)
            if external:
                await user.alog_many([replace(e, session=session) for e in external], redact=self.redact)
        return {"memtend_captured": ids}

    def _pending(self, state: dict[str, Any]) -> tuple[list[Message], int, list[Event], list[str]]:
        """The turns not captured yet (from the first one on, as memtend messages, and that one's index), the
        untrusted tools' output among them, and the ids of every message now in the state."""
        messages = list(state.get("messages") or [])
        seen = set(state.get("memtend_captured") or [])
        start = next((i for i, m in enumerate(messages) if m.id is None or m.id not in seen), len(messages))
        fresh = [m for m in messages[start:] if not is_summary(m) and (m.id is None or m.id not in seen)]
        external, _ = self._events({"messages": fresh}, None)
        turn = to_memtend(fresh) if fresh else []
        return turn, start, [e for e in external if e.source is Source.EXTERNAL], [m.id for m in messages if m.id]

    @staticmethod
    def _session(runtime: Any) -> str:
        return thread_id_of(getattr(runtime, "execution_info", None), None) or ""

    def end_session(self, state: dict[str, Any] | Sequence[BaseMessage], *, user_id: str, thread_id: str = "") -> None:
        """The end of a conversation (call it when yours closes, with the agent's state or its messages): the
        turns not captured yet go to the core's ``capture``, with the middleware's ``write_mode``, and the
        instructions the user left in force are kept in their latest version (nothing is stored twice: what was
        captured already is refreshed, not added)."""
        if at_end(self.capture):
            user = self.memory.user(user_id, write_mode=self.write_mode)
            self._capture_turns(user, _state_of(state), thread_id, ended=True)

    async def aend_session(
        self, state: dict[str, Any] | Sequence[BaseMessage], *, user_id: str, thread_id: str = ""
    ) -> None:
        if at_end(self.capture):
            user = self.memory.user(user_id, write_mode=self.write_mode)
            await self._acapture_turns(user, _state_of(state), thread_id, ended=True)

    def _events(self, state: dict[str, Any], runtime: Any) -> tuple[list[Event], list[str]]:
        """What the run added that is to be logged (the user's messages; untrusted tools' output, in pieces the
        core accepts), and the ids of every message now in the state."""
        messages = state.get("messages") or []
        seen = set(state.get("memtend_captured") or [])
        session = thread_id_of(getattr(runtime, "execution_info", None), None) or ""
        events: list[Event] = []
        for message in messages:
            if message.id is not None and message.id in seen:
                continue
            if isinstance(message, HumanMessage) and not is_summary(message) and message.text.strip():
                events.append(Event(text=message.text, session=session, source=Source.USER))
            elif isinstance(message, ToolMessage) and message.name in self.untrusted_tools:
                text = message.text
                pieces = (text[i : i + MAX_TEXT_CHARS] for i in range(0, len(text), MAX_TEXT_CHARS))
                events += [Event(text=p, session=session, source=Source.EXTERNAL) for p in pieces if p.strip()]
        return events, [m.id for m in messages if m.id is not None]

    def _check_input(self, state: MemtendState, runtime: Any) -> None:
        """Before any model call: the user is known, and what the run will log is text the core accepts."""
        self._user(runtime)
        if not at_end(self.capture):
            return
        for event in self._events(dict(state), runtime)[0]:
            try:
                check_text(event.text, "the user's message")
            except InvalidInputError as exc:
                raise InvalidInputError(
                    f"MemtendMiddleware logs what the user says and cannot log this message: {exc} "
                    "(or create the middleware with capture=False)"
                ) from None

    # ------------------------------------------------------------------ before the agent: user and input checked
    def before_agent(self, state: MemtendState, runtime: Runtime[Any]) -> dict[str, Any] | None:
        self._check_input(state, runtime)
        names = untrusted_outputs(state.get("messages"), self.untrusted_tools)
        mark_untrusted(self._user(runtime), self._thread(runtime), names)
        return None

    async def abefore_agent(self, state: MemtendState, runtime: Runtime[Any]) -> dict[str, Any] | None:
        self._check_input(state, runtime)
        names = untrusted_outputs(state.get("messages"), self.untrusted_tools)
        await amark_untrusted(self._user(runtime), self._thread(runtime), names)
        return None

    # ------------------------------------------------------------------ around each tool call: untrusted output
    def _guarded(self, request: ToolCallRequest) -> bool:
        tool = request.tool
        marked = (tool, getattr(tool, "func", None), getattr(tool, "coroutine", None))
        return self.side_effects.guards(str(request.tool_call.get("name")), *marked)

    def _ledger(self, request: ToolCallRequest) -> Any:
        thread = self._thread(request.runtime)
        if thread is None:
            raise InvalidInputError(
                "MemtendMiddleware records side-effecting tool calls per thread; run the agent with a checkpointer "
                "and config={'configurable': {'thread_id': ...}}"
            )
        return self._user(request.runtime).ledger(thread)

    def _ledger_call(
        self, request: ToolCallRequest, handler: Callable[[ToolCallRequest], ToolMessage | Command[Any]]
    ) -> ToolMessage | Command[Any]:
        if not self._guarded(request):
            return handler(request)
        call = request.tool_call
        return self.side_effects.run(
            self._ledger(request),
            str(call.get("name")),
            call.get("args") or {},
            lambda: handler(request),
            answer=lambda verdict: _answer(request, verdict),
            result_of=_result_of,
            is_error=_is_error,
        )

    async def _aledger_call(
        self,
        request: ToolCallRequest,
        handler: Callable[[ToolCallRequest], Awaitable[ToolMessage | Command[Any]]],
    ) -> ToolMessage | Command[Any]:
        if not self._guarded(request):
            return await handler(request)
        call = request.tool_call
        return await self.side_effects.arun(
            self._ledger(request),
            str(call.get("name")),
            call.get("args") or {},
            lambda: handler(request),
            answer=lambda verdict: _answer(request, verdict),
            result_of=_result_of,
            is_error=_is_error,
        )

    def wrap_tool_call(
        self, request: ToolCallRequest, handler: Callable[[ToolCallRequest], ToolMessage | Command[Any]]
    ) -> ToolMessage | Command[Any]:
        result = self._ledger_call(request, handler)
        name = request.tool_call.get("name")
        if name in self.untrusted_tools:
            piece = (name, request.tool_call.get("id") or "")
            mark_untrusted(self._user(request.runtime), self._thread(request.runtime), [piece])
        return result

    async def awrap_tool_call(
        self,
        request: ToolCallRequest,
        handler: Callable[[ToolCallRequest], Awaitable[ToolMessage | Command[Any]]],
    ) -> ToolMessage | Command[Any]:
        result = await self._aledger_call(request, handler)
        name = request.tool_call.get("name")
        if name in self.untrusted_tools:
            piece = (name, request.tool_call.get("id") or "")
            await amark_untrusted(self._user(request.runtime), self._thread(request.runtime), [piece])
        return result

    # ------------------------------------------------------------------ before each model call: compaction
    def before_model(self, state: MemtendState, runtime: Runtime[Any]) -> dict[str, Any] | None:
        messages, _, compacted = self._compact(state["messages"])
        if compacted is None:
            return None
        # how full the context was when compaction fired, for the core's metrics (the thread is the session)
        self._user(runtime).report_compaction(compacted, session=self._thread(runtime) or "")
        # the turns compaction drops are captured first (a natural moment to write)
        user, session = self._user(runtime), self._session(runtime)
        captured = self._capture_turns(user, dict(state), session) if at_end(self.capture) else {}
        return {**self._replace(messages), **captured}

    async def abefore_model(self, state: MemtendState, runtime: Runtime[Any]) -> dict[str, Any] | None:
        messages, _, compacted = await self._acompact(state["messages"])
        if compacted is None:
            return None
        await self._user(runtime).areport_compaction(compacted, session=self._thread(runtime) or "")
        user, session = self._user(runtime), self._session(runtime)
        captured = await self._acapture_turns(user, dict(state), session) if at_end(self.capture) else {}
        return {**self._replace(messages), **captured}

    # ------------------------------------------------------------------ around each model call: injection
    def wrap_model_call(
        self, request: ModelRequest, handler: Callable[[ModelRequest], ModelResponse]
    ) -> ModelCallResult:
        user = self._user(request.runtime)
        constraints = conversation_constraints(to_memtend(request.messages))
        found = gather(user, _latest_user_text(request.messages), self.k, constraints)
        return handler(self._request(request, found))

    async def awrap_model_call(
        self, request: ModelRequest, handler: Callable[[ModelRequest], Awaitable[ModelResponse]]
    ) -> ModelCallResult:
        user = self._user(request.runtime)
        constraints = conversation_constraints(to_memtend(request.messages))
        found = await agather(user, _latest_user_text(request.messages), self.k, constraints)
        return await handler(self._request(request, found))

    # ------------------------------------------------------------------ after the agent: capture
    def after_agent(self, state: MemtendState, runtime: Runtime[Any]) -> dict[str, Any] | None:
        if not each_turn(self.capture):
            return None
        return self._capture_turns(self._user(runtime), dict(state), self._session(runtime))

    async def aafter_agent(self, state: MemtendState, runtime: Runtime[Any]) -> dict[str, Any] | None:
        if not each_turn(self.capture):
            return None
        return await self._acapture_turns(self._user(runtime), dict(state), self._session(runtime))


def _state_of(state: object) -> dict[str, Any]:
    if isinstance(state, dict):
        return state
    if isinstance(state, (list, tuple)):
        return {"messages": list(state)}
    raise InvalidInputError(f"end_session takes the agent's state or its messages, got {type(state).__name__}")
