"""``MemtendMemory``: the classic chain memory (``langchain_classic.base_memory.BaseMemory``) over memtend.

Needs the ``classic`` extra (``pip install memtend-langchain[classic]``). ``load_memory_variables`` returns the
user's profile, standing rules and the memories recalled for the input (each labelled with its date), and on every
turn the constraints the user set in the session (kept by the core, ``user.constraints(session_id)``: a revised
one replaces the earlier, a request is not a constraint), listed under the rules.

``save_context`` stores the turn verbatim in the session's transcript, the same documents
``MemtendChatMessageHistory`` keeps for that session (``("langchain", "chat", session_id)``), through the write
gate; long-term memory gets only what the core's ``capture`` keeps of it (durable facts as keyed facts,
preferences, decisions, corrections, unfinished work; never chit-chat, one-off requests or the chain's answers).
``capture="turn"`` (the default) captures each turn, ``"session"`` only at :meth:`MemtendMemory.end_session`,
None never; ``end_session`` also keeps the instructions the user left in force, in their latest version.

With ``memory_key="history"`` it offers one variable instead, as ``ConversationBufferMemory`` does, so it drops
into ``ConversationChain``: the same profile, rules and recalled memories, then the session's latest turns
verbatim from its transcript (``Human: ...`` / ``AI: ...``, or messages with ``return_messages=True`` for a chat
prompt); it needs a ``session_id``.
"""

from __future__ import annotations

import uuid
from typing import Any

from langchain_classic.base_memory import BaseMemory
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, SystemMessage
from memtend import InvalidInputError, Memory, Message, UserMemory
from memtend.capture.moments import CaptureMode, at_end, check_capture, each_turn
from memtend.policies.proposals import WriteMode, check_write_mode
from memtend.prompt_context import conversation_constraints
from memtend.surfaces import REDACT_DEFAULT, refused_at
from pydantic import ConfigDict, Field, PrivateAttr

from memtend_langchain._context import MemoryContext, agather, gather
from memtend_langchain._messages import to_memtend
from memtend_langchain.chat_history import MemtendChatMessageHistory

__all__ = ["MemtendMemory"]

_SURFACE = "MemtendMemory (langchain classic)"


class MemtendMemory(BaseMemory):
    """Chain memory for one user (and optionally one session, whose transcript holds the turns verbatim).

    ``MemtendMemory(memory=Memory(...), user_id="alice", session_id="chat-1")``: three variables (``profile``,
    ``rules``, ``memories``) for a prompt that names them. ``memory_key="history"``: one variable for
    ``ConversationChain`` and other prompts written for ``ConversationBufferMemory``, ending with the session's
    last ``recent_turns`` messages. ``capture``: "turn" (default), "session" or None; ``write_mode``: "propose"
    makes what capture keeps in a model's words wait as proposals, None follows the Memory's.
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
    redact: bool = REDACT_DEFAULT  # mask secrets in the stored turn (True) or refuse it (False): docs/secrets.md
    capture: bool | str | None = "turn"
    write_mode: WriteMode | None = None

    _kept_transcript: MemtendChatMessageHistory | None = PrivateAttr(default=None)

    def __init__(self, **data: Any) -> None:
        key = data.get("memory_key")
        if isinstance(key, str) and key.strip() and not data.get("session_id"):  # before pydantic: not wrapped
            raise InvalidInputError(
                "MemtendMemory(memory_key=...) shows the session's latest turns, read from its transcript; "
                "set session_id (the conversation's id)"
            )
        super().__init__(**data)

    def model_post_init(self, context: Any, /) -> None:
        self.capture = check_capture(self.capture)
        if self.write_mode is not None:
            self.write_mode = check_write_mode(self.write_mode)
        self._user()  # a bad user id fails here, not at the first chain call
        if self.memory_key is not None and not (isinstance(self.memory_key, str) and self.memory_key.strip()):
            raise InvalidInputError("memory_key names the one prompt variable (ConversationChain's is 'history')")

    @property
    def _mode(self) -> CaptureMode:
        return check_capture(self.capture)

    def _user(self) -> UserMemory:
        return self.memory.user(self.user_id, write_mode=self.write_mode)

    def _transcript(self) -> MemtendChatMessageHistory | None:
        """The session's transcript (``MemtendChatMessageHistory``'s documents), None without a session; one
        object kept, so the message count a load read gives the next turn's index without another read."""
        if not self.session_id:
            return None
        if self._kept_transcript is None:
            self._kept_transcript = self._new_transcript()
        return self._kept_transcript

    def _new_transcript(self) -> MemtendChatMessageHistory:
        return MemtendChatMessageHistory(
            self.user_id,
            self.session_id,
            memory=self.memory,
            redact=self.redact,
            capture=self._mode,
            write_mode=self.write_mode,
            surface=_SURFACE,
        )

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
        transcript = self._transcript()
        if self.memory_key is not None and transcript is not None:
            query = self._query(inputs, optional=True)
            recent = self._recent(transcript.messages)
            rules = self._constraints(user, query)
            return self._history(gather(user, query, self.k, rules, exclude=_ids(recent)), recent)
        query = self._query(inputs)
        return self._variables(gather(user, query, self.k, self._constraints(user, query)))

    async def aload_memory_variables(self, inputs: dict[str, Any]) -> dict[str, Any]:
        user = self._user()
        transcript = self._transcript()
        if self.memory_key is not None and transcript is not None:
            query = self._query(inputs, optional=True)
            recent = self._recent(await transcript.aget_messages())
            rules = await self._aconstraints(user, query)
            found = await agather(user, query, self.k, rules, exclude=_ids(recent))
            return self._history(found, recent)
        query = self._query(inputs)
        return self._variables(await agather(user, query, self.k, await self._aconstraints(user, query)))

    # ------------------------------------------------------------------ the one-variable history
    def _recent(self, messages: list[BaseMessage]) -> list[BaseMessage]:
        """The session's last ``recent_turns`` messages (the user's and the chain's), oldest first."""
        mine: list[BaseMessage] = [m for m in messages if isinstance(m, (HumanMessage, AIMessage))]
        return mine[len(mine) - self.recent_turns :] if self.recent_turns else []

    def _history(self, found: MemoryContext, recent: list[BaseMessage]) -> dict[str, Any]:
        assert self.memory_key is not None
        context = found.render()
        if self.return_messages:
            messages: list[BaseMessage] = [SystemMessage(content=context)] if context else []
            messages.extend(recent)
            return {self.memory_key: messages}
        turns = "\n".join(
            f"{self.human_prefix if isinstance(m, HumanMessage) else self.ai_prefix}: {m.text}" for m in recent
        )
        return {self.memory_key: "\n\n".join(part for part in (context, turns) if part)}

    # ------------------------------------------------------------------ save
    def _turn(self, inputs: dict[str, Any], outputs: dict[str, Any]) -> list[BaseMessage]:
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
        turn: list[BaseMessage] = [HumanMessage(content=said, id=_new_id())] if said.strip() else []
        if answer.strip():
            turn.append(AIMessage(content=answer, id=_new_id()))
        return turn

    def save_context(self, inputs: dict[str, Any], outputs: dict[str, str]) -> None:
        """Store the turn in the session's transcript (the write gate checks both texts before either is stored)
        and hand it to the core's ``capture``, which keeps in long-term memory what is worth keeping."""
        turn = self._turn(inputs, outputs)
        if not turn:
            return
        transcript = self._transcript()
        if transcript is not None:
            with refused_at(_SURFACE):
                transcript.add_messages(turn)  # captures the turn too, with capture="turn"
        elif each_turn(self._mode):
            with refused_at(_SURFACE):
                self._user().capture(to_memtend(turn), redact=self.redact)

    async def asave_context(self, inputs: dict[str, Any], outputs: dict[str, str]) -> None:
        turn = self._turn(inputs, outputs)
        if not turn:
            return
        transcript = self._transcript()
        if transcript is not None:
            with refused_at(_SURFACE):
                await transcript.aadd_messages(turn)
        elif each_turn(self._mode):
            with refused_at(_SURFACE):
                await self._user().acapture(to_memtend(turn), redact=self.redact)

    # ------------------------------------------------------------------ the end of the conversation
    def _ending(self) -> MemtendChatMessageHistory | None:
        transcript = self._transcript()
        if transcript is None and at_end(self._mode):
            raise InvalidInputError(
                "MemtendMemory.end_session captures the session's transcript; set session_id (without one, "
                "capture='turn' captures each turn as it is saved)"
            )
        return transcript

    def end_session(self) -> None:
        """The conversation ended: what was not captured yet goes to the core's ``capture`` with the whole
        transcript, so the instructions the user left in force are kept too (in their latest version; what was
        captured already is refreshed, never stored twice)."""
        transcript = self._ending()
        if transcript is not None:
            transcript.end_session()

    async def aend_session(self) -> None:
        transcript = self._ending()
        if transcript is not None:
            await transcript.aend_session()

    # ------------------------------------------------------------------ clear
    def _check_session(self) -> MemtendChatMessageHistory:
        transcript = self._transcript()
        if transcript is None:
            raise InvalidInputError(
                "MemtendMemory.clear removes the turns of its session; set session_id "
                "(to remove everything about a user, call Memory.erase_user)"
            )
        return transcript

    def clear(self) -> None:
        """Delete the session's transcript and constraints (what capture kept in long-term memory stays: forget it
        with the user's controls, or erase the user)."""
        self._check_session().clear()
        self._user().constraints(self.session_id).clear()

    async def aclear(self) -> None:
        await self._check_session().aclear()
        await self._user().constraints(self.session_id).aclear()


def _new_id() -> str:
    """An id for a message this memory writes, so what capture keeps of it names it (``capture_turn_id``)."""
    return f"memtend-{uuid.uuid4().hex}"


def _ids(messages: list[BaseMessage]) -> list[str]:
    """The ids of messages a prompt shows verbatim: what capture kept of them is not recalled beside them."""
    return [m.id for m in messages if m.id]
