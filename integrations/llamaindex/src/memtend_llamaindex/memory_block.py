"""``MemtendMemoryBlock``: long-term memory for LlamaIndex's own ``Memory``, kept by memtend.

    memory = Memory.from_defaults(session_id="s1", memory_blocks=[MemtendMemoryBlock(user_id="alice", memory=mem)])

* put: the messages ``Memory`` flushes out of short-term history (the moment turns leave the window) go to the
  core's ``capture``, which keeps what is worth keeping (durable facts as keyed facts, preferences, decisions,
  corrections, unfinished work; not chit-chat, one-off requests or acknowledgements), through the write gate
  (secrets masked by default: a flush cannot stop to ask), with the session id and turn as provenance; an
  assistant turn after a tool's output (which it may repeat) is held for review as external content.
  :meth:`MemtendMemoryBlock.aend_session` does the same for the turns still in the window when a conversation
  ends (``await block.aend_session(await memory.aget_all())``).
* get: the constraints the user set in the session (every turn, kept by the core per session so they outlive the
  turns ``Memory`` flushes; a revised one in its latest version only), then the memories recalled for the
  conversation, one dated line each, best first, cut to ``max_tokens``;
  when ``Memory`` must shrink blocks (lower ``priority`` first, 0 never), ``atruncate`` drops the least relevant
  lines rather than the whole block.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from llama_index.core.base.llms.types import ChatMessage
from llama_index.core.bridge.pydantic import Field, PrivateAttr
from llama_index.core.memory.memory import BaseMemoryBlock
from llama_index.core.utils import get_tokenizer
from memtend import InvalidInputError, Memory, Message, Source, UserMemory
from memtend.policies.proposals import check_write_mode
from memtend.prompt_context import conversation_constraints, conversation_query, transcript_events
from memtend.surfaces import REDACT_DEFAULT, refused_at
from memtend.transcripts.summary import is_summary_message

from memtend_llamaindex.backends import DEFAULT_BACKEND
from memtend_llamaindex.handles import (
    STORE_ID_DESCRIPTION,
    bind,
    checked_user,
    memory_of,
    user_of,
    without_live_objects,
)
from memtend_llamaindex.messages import to_memtend

DEFAULT_NAME = "memtend"
CONSTRAINTS_HEADER = "Constraints the user set in this conversation (follow them; the latest version counts):"


class MemtendMemoryBlock(BaseMemoryBlock[str]):
    """Memories recalled from memtend for the conversation; flushed history captured into memtend."""

    name: str = Field(default=DEFAULT_NAME, description="The block's name in the memory template.")
    description: str | None = Field(default="Memories recalled from memtend, with their dates.")
    user_id: str = Field(description="The memtend user this block reads and writes.")
    backend: str = Field(
        default=DEFAULT_BACKEND, description="Name of the registered memtend Memory, for a block built without one."
    )
    store_id: str | None = Field(default=None, description=STORE_ID_DESCRIPTION)
    k: int = Field(default=5, ge=1, le=50, description="How many memories to recall.")
    max_tokens: int | None = Field(default=None, gt=0, description="Token budget of the block's text.")
    redact: bool = Field(
        default=REDACT_DEFAULT, description="Mask secrets in captured messages (True) or refuse them (False)."
    )
    write_mode: str | None = Field(
        default=None,
        description="'propose': what capture keeps in a model's words waits as a proposal; None: the Memory's mode.",
    )

    _memory: Memory | None = PrivateAttr(default=None)
    _tokenizer: Callable[[str], list[Any]] | None = PrivateAttr(default=None)

    def __init__(
        self,
        *,
        user_id: str,
        memory: Memory | None = None,
        backend: str = DEFAULT_BACKEND,
        store_id: str | None = None,
        **kw: Any,
    ):
        user_id = checked_user(user_id, memory, type(self).__name__)
        bound, store_id = bind(memory, store_id, type(self).__name__)
        if kw.get("write_mode") is not None:
            kw["write_mode"] = check_write_mode(kw["write_mode"])
        super().__init__(user_id=user_id, backend=backend, store_id=store_id, **kw)
        self._memory = bound

    def __getstate__(self) -> dict[Any, Any]:  # pickling keeps the ids (the store's too), not the live Memory
        return without_live_objects(super().__getstate__(), "_memory", "_tokenizer")

    def _user(self) -> UserMemory:
        if self.write_mode is None:
            return user_of(self._memory, self.backend, self.user_id, self.store_id)
        mode = check_write_mode(self.write_mode)
        return memory_of(self._memory, self.backend, self.store_id).user(self.user_id, write_mode=mode)

    def _tokens(self, text: str) -> int:
        if self._tokenizer is None:
            self._tokenizer = get_tokenizer()
        return len(self._tokenizer(text))

    async def _aget(self, messages: list[ChatMessage] | None = None, **block_kwargs: Any) -> str:
        view = [to_memtend(m) for m in _readable(messages or [])]
        user = self._user()
        lines = await self._constraint_lines(user, view, block_kwargs.get("session_id"))
        query = conversation_query(view)
        if query is not None:
            lines += [f"- {hit.label()}" for hit in await user.arecall(query, k=self.k)]
        if self.max_tokens is not None:
            lines = self._fit(lines, self.max_tokens)
        return "\n".join(lines)

    @staticmethod
    async def _constraint_lines(user: UserMemory, view: list[Message], session: object) -> list[str]:
        """The constraints the user set in the session (kept by the core, so they outlive the turns ``Memory``
        flushes), first: truncation drops recalled memories before them."""
        if isinstance(session, str) and session.strip():
            said = [m.content for m in view if m.role == "user" and not is_summary_message(m)]
            constraints = await user.constraints(session).anote(said)
        else:
            constraints = conversation_constraints(view)
        if not constraints:
            return []
        return [CONSTRAINTS_HEADER, *(f"- {c}" for c in constraints)]

    async def _aput(self, messages: list[ChatMessage]) -> None:
        readable = _readable(messages)
        if not readable:
            return
        session = next(
            (str(m.additional_kwargs.get("session_id")) for m in readable if m.additional_kwargs.get("session_id")), ""
        )
        await self._acapture(readable, session, ended=False)

    async def aend_session(self, messages: list[ChatMessage], *, session_id: str = "") -> None:
        """Capture what a conversation's messages hold that is worth keeping (call it when one ends, with the
        messages still in the window), and keep the instructions the user left in force, each in its latest
        version (the session's constraints held them, flushed turns' too); what was captured already is
        refreshed, never stored twice."""
        await self._acapture(_readable(messages), session_id, ended=True)

    async def _acapture(self, messages: list[ChatMessage], session_id: str, *, ended: bool) -> None:
        turn = _with_tool_turns(messages)
        untrusted = [e for e in transcript_events(turn, session=session_id) if e.source is Source.EXTERNAL]
        user = self._user()
        whole: list[Message] | None = None
        if ended:  # the session's constraints in force (they outlive flushed turns), then the window
            held = await user.constraints(session_id).acurrent() if session_id.strip() else []
            whole = [*(Message.user(text) for text in held), *turn]
        with refused_at("MemtendMemoryBlock"):
            await user.acapture(turn, session=session_id, redact=self.redact, conversation=whole)
            if untrusted:
                await user.alog_many(untrusted, redact=self.redact)

    async def atruncate(self, content: str, tokens_to_truncate: int) -> str | None:
        lines = [line for line in content.split("\n") if line] if isinstance(content, str) else []
        budget = self._tokens(content) - max(0, tokens_to_truncate) if lines else 0
        kept = self._fit(lines, budget) if budget > 0 else []
        return "\n".join(kept) or None

    def _fit(self, lines: list[str], budget: int) -> list[str]:
        """The best-ranked lines whose text stays within ``budget`` tokens (lines are best first)."""
        kept: list[str] = []
        for line in lines:
            if self._tokens("\n".join([*kept, line])) > budget:
                break
            kept.append(line)
        return kept


def _with_tool_turns(messages: list[ChatMessage]) -> list[Message]:
    """The memtend view of flushed messages. An assistant message naming a tool call (``additional_kwargs
    ["tool_call_id"]``: what LlamaIndex agents write for a ``return_direct`` tool) is that tool's output: it is
    preceded by the tool turn it repeats, so the core captures it as untrusted content even when the tool's own
    message was flushed earlier."""
    out: list[Message] = []
    for message in messages:
        call_id = (message.additional_kwargs or {}).get("tool_call_id")
        view = to_memtend(message)
        if view.role == "assistant" and isinstance(call_id, str) and call_id.strip():
            out.append(Message.tool("", tool_call_id=call_id))
        out.append(view)
    return out


def _readable(messages: list[ChatMessage]) -> list[ChatMessage]:
    """The messages that have a memtend form; ``Memory`` hands blocks whatever it flushed, so none is refused."""
    out = []
    for message in messages:
        try:
            to_memtend(message)
        except InvalidInputError:
            continue
        out.append(message)
    return out
