"""``MemtendMemory``: the classic chain memory (``langchain_classic.base_memory.BaseMemory``) over memtend.

Needs the ``classic`` extra (``pip install memtend-langchain[classic]``). ``load_memory_variables`` returns the
user's profile, standing rules and the memories recalled for the input (each labelled with its date), and on every
turn the constraints the user set in the session (kept by the core, ``user.constraints(session_id)``: a revised
one replaces the earlier, a request is not a constraint), listed under the rules;
``save_context`` logs the turn (what the user said, what the chain answered) through the core's write gate.

With ``memory_key="history"`` it offers one variable instead, as ``ConversationBufferMemory`` does, so it drops
into ``ConversationChain``: the same profile, rules and recalled memories, then the session's latest turns
verbatim (``Human: ...`` / ``AI: ...``, or messages with ``return_messages=True`` for a chat prompt).
"""

from __future__ import annotations

from typing import Any

from langchain_classic.base_memory import BaseMemory
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, SystemMessage
from memtend import Event, InvalidInputError, Kind, Memory, Message, Record, Source, UserMemory
from memtend.prompt_context import conversation_constraints
from memtend.surfaces import REDACT_DEFAULT, refused_at
from pydantic import ConfigDict, Field

from memtend_langchain._context import MemoryContext, agather, gather

__all__ = ["MemtendMemory"]

_SURFACE = "MemtendMemory (langchain classic)"


class MemtendMemory(BaseMemory):
    """Chain memory for one user (and optionally one session, which the logged turns carry).

    ``MemtendMemory(memory=Memory(...), user_id="alice", session_id="chat-1")``: three variables (``profile``,
    ``rules``, ``memories``) for a prompt that names them. ``memory_key="history"``: one variable for
    ``ConversationChain`` and other prompts written for ``ConversationBufferMemory``, ending with the session's
    last ``recent_turns`` logged messages.
    """

    model_config = ConfigDict(arbitrary_types_allowed=True)

    memory: Memory = Field(exclude=True)
    user_id: str
    session_id: str = ""
    k: int = 5
    input_key: str | None = None
    output_key: str | None = None
    profile_key: str = "profile"
    rules_key: str = "rules"
    memories_key: str = "memories"
    memory_key: str | None = None
    return_messages: bool = False
    recent_turns: int = Field(default=10, ge=0)
    human_prefix: str = "Human"
    ai_prefix: str = "AI"
    redact: bool = REDACT_DEFAULT  # mask secrets in the logged turn (True) or refuse it (False): docs/secrets.md

    def model_post_init(self, context: Any, /) -> None:
        self._user()  # a bad user id fails here, not at the first chain call
        if self.memory_key is not None and not (isinstance(self.memory_key, str) and self.memory_key.strip()):
            raise InvalidInputError("memory_key names the one prompt variable (ConversationChain's is 'history')")

    def _user(self) -> UserMemory:
        return self.memory.user(self.user_id)

    @property
    def memory_variables(self) -> list[str]:
        if self.memory_key is not None:
            return [self.memory_key]
        return [self.profile_key, self.rules_key, self.memories_key]

    # ------------------------------------------------------------------ load
    def _query(self, inputs: dict[str, Any], *, optional: bool = False) -> str | None:
        """The user's message in ``inputs``; with ``optional`` (loading a history) None when there is none."""
        if not isinstance(inputs, dict):
            raise InvalidInputError(f"inputs must be a dict, got {type(inputs).__name__}")
        key = self.input_key
        if key is None:
            candidates = [k for k in inputs if k not in (*self.memory_variables, "stop")]
            if optional and not candidates:
                return None
            if len(candidates) != 1:
                raise InvalidInputError(
                    f"MemtendMemory cannot tell which input is the user's message among {sorted(candidates)}; "
                    "set input_key"
                )
            key = candidates[0]
        if key not in inputs:
            raise InvalidInputError(f"input {key!r} is missing from the chain inputs {sorted(inputs)}")
        value = inputs[key]
        if not isinstance(value, str):
            raise InvalidInputError(f"input {key!r} must be text, got {type(value).__name__}")
        return value

    def _variables(self, found: MemoryContext) -> dict[str, Any]:
        return {
            self.profile_key: found.profile_text(),
            self.rules_key: found.rules_and_constraints_text(),
            self.memories_key: found.memories_text(),
        }

    def _constraints(self, user: UserMemory, query: str | None) -> list[str]:
        """The session's constraints in force after this turn's message (the message alone without a session)."""
        said = [query] if query else []
        if not self.session_id:
            return conversation_constraints([Message.user(text) for text in said])
        return user.constraints(self.session_id).note(said)

    async def _aconstraints(self, user: UserMemory, query: str | None) -> list[str]:
        said = [query] if query else []
        if not self.session_id:
            return conversation_constraints([Message.user(text) for text in said])
        return await user.constraints(self.session_id).anote(said)

    def load_memory_variables(self, inputs: dict[str, Any]) -> dict[str, Any]:
        user = self._user()
        if self.memory_key is not None:
            query = self._query(inputs, optional=True)
            recent = self._recent(user.list(kinds=[Kind.EVENT]))
            rules = self._constraints(user, query)
            return self._history(gather(user, query, self.k, rules, exclude=[r.id for r in recent]), recent)
        query = self._query(inputs)
        return self._variables(gather(user, query, self.k, self._constraints(user, query)))

    async def aload_memory_variables(self, inputs: dict[str, Any]) -> dict[str, Any]:
        user = self._user()
        if self.memory_key is not None:
            query = self._query(inputs, optional=True)
            recent = self._recent(await user.alist(kinds=[Kind.EVENT]))
            rules = await self._aconstraints(user, query)
            found = await agather(user, query, self.k, rules, exclude=[r.id for r in recent])
            return self._history(found, recent)
        query = self._query(inputs)
        return self._variables(await agather(user, query, self.k, await self._aconstraints(user, query)))

    # ------------------------------------------------------------------ the one-variable history
    def _recent(self, events: list[Record]) -> list[Record]:
        """The session's last ``recent_turns`` logged messages, oldest first."""
        mine = [e for e in events if e.session == self.session_id and e.source in (Source.USER, Source.AGENT)]
        return mine[len(mine) - self.recent_turns :] if self.recent_turns else []

    def _history(self, found: MemoryContext, recent: list[Record]) -> dict[str, Any]:
        assert self.memory_key is not None
        context = found.render()
        if self.return_messages:
            messages: list[BaseMessage] = [SystemMessage(content=context)] if context else []
            messages.extend(
                HumanMessage(content=r.text) if r.source is Source.USER else AIMessage(content=r.text) for r in recent
            )
            return {self.memory_key: messages}
        turns = "\n".join(
            f"{self.human_prefix if r.source is Source.USER else self.ai_prefix}: {r.text}" for r in recent
        )
        return {self.memory_key: "\n\n".join(part for part in (context, turns) if part)}

    # ------------------------------------------------------------------ save
    def _turn(self, inputs: dict[str, Any], outputs: dict[str, Any]) -> list[Event]:
        said = self._query(inputs) or ""
        if not isinstance(outputs, dict):
            raise InvalidInputError(f"outputs must be a dict, got {type(outputs).__name__}")
        key = self.output_key
        if key is None:
            if len(outputs) != 1:
                raise InvalidInputError(
                    f"MemtendMemory cannot tell which output is the answer among {sorted(outputs)}; set output_key"
                )
            key = next(iter(outputs))
        answer = outputs.get(key)
        if not isinstance(answer, str):
            raise InvalidInputError(f"output {key!r} must be text, got {type(answer).__name__}")
        events = [Event(text=said, session=self.session_id, source=Source.USER)] if said.strip() else []
        if answer.strip():
            events.append(Event(text=answer, session=self.session_id, source=Source.AGENT))
        return events

    def save_context(self, inputs: dict[str, Any], outputs: dict[str, str]) -> None:
        """Log the turn; the write gate checks both texts before either is stored."""
        events = self._turn(inputs, outputs)
        if events:
            with refused_at(_SURFACE):
                self._user().log_many(events, redact=self.redact)

    async def asave_context(self, inputs: dict[str, Any], outputs: dict[str, str]) -> None:
        events = self._turn(inputs, outputs)
        if events:
            with refused_at(_SURFACE):
                await self._user().alog_many(events, redact=self.redact)

    # ------------------------------------------------------------------ clear
    def _check_session(self) -> None:
        if not self.session_id:
            raise InvalidInputError(
                "MemtendMemory.clear removes the turns of its session; set session_id "
                "(to remove everything about a user, call Memory.erase_user)"
            )

    def clear(self) -> None:
        """Delete the turns this memory logged in its session (the user's other memories stay)."""
        self._check_session()
        user = self._user()
        for record in user.list(kinds=[Kind.EVENT]):
            if record.session == self.session_id:
                user.delete(record.id)

    async def aclear(self) -> None:
        self._check_session()
        user = self._user()
        for record in await user.alist(kinds=[Kind.EVENT]):
            if record.session == self.session_id:
                await user.adelete(record.id)
