"""``MemtendMemory``: a LlamaIndex ``BaseMemory`` on memtend, for ``agent.run(msg, memory=...)``.

``get`` returns the session's chat history, compacted by memtend's core when it is over ``token_limit`` (cut only
at safe points, tool calls and their results kept together, the older part replaced by one structured summary),
with what memtend knows about the user in the system message: profile, rules, constraints of the conversation,
and the memories recalled for it, each with its date. Nothing is deleted by ``get``: ``get_all`` still returns
every stored message.

The object is a thin handle (user id, session id, settings, backend name): the history lives in memtend's document
store, so concurrent ``aput`` calls on one session each add their own document and none is lost, and a memory
restored from a serialised agent context works again once its ``Memory`` is registered (passing ``memory=`` to
any ``from_defaults`` does that).

``write_once=True`` (opt-in) makes a turn one Chroma write instead of two: a user message put alone (``aput``, as an
agent stores the question before calling the model) is held by this object, gated at once (so what is refused is
refused there, and what is shown is what will be stored), shown by ``get``, and written with the next messages put
(the answer). The price is LangGraph's ``durability="exit"``'s: a process killed before the answer is stored loses
the held question, and another ``MemtendMemory`` object on the session does not see it until then.
"""

from __future__ import annotations

from typing import Any, Literal

from llama_index.core.base.llms.types import ChatMessage, TextBlock
from llama_index.core.bridge.pydantic import Field, PrivateAttr
from llama_index.core.memory.types import BaseMemory
from memtend import DocumentStore, InvalidInputError, Memory, UserMemory
from memtend.prompt_context import UserContext, auser_context, conversation_query, user_context
from memtend.surfaces import REDACT_DEFAULT, SurfaceDocuments, mask_json
from memtend.transcripts.summary.extractive import extract_constraints

from memtend_llamaindex import compacted_view, history
from memtend_llamaindex.backends import DEFAULT_BACKEND
from memtend_llamaindex.handles import (
    STORE_ID_DESCRIPTION,
    bind,
    checked_user,
    documents_of,
    memory_of,
    user_of,
    without_live_objects,
)
from memtend_llamaindex.messages import (
    check_chat_message,
    check_chat_messages,
    dump,
    load,
    to_memtend,
    to_memtend_all,
    untrusted_calls,
)

DEFAULT_TOKEN_LIMIT = 30_000


class MemtendMemory(BaseMemory):
    """One user's session memory for a LlamaIndex agent, kept by memtend."""

    user_id: str = Field(description="The memtend user this memory belongs to.")
    session_id: str = Field(description="The conversation; its messages are kept under this id.")
    token_limit: int = Field(default=DEFAULT_TOKEN_LIMIT, gt=0, description="History above this is compacted.")
    keep_recent_turns: int | None = Field(
        default=None, gt=0, description="User turns kept verbatim when compacting (None: the core's default)."
    )
    recall_k: int = Field(default=5, ge=0, le=50, description="How many memories to recall for the system message.")
    insert_method: Literal["system", "user"] = Field(
        default="system",
        description="Where the user's context goes: the system message, or the latest user turn (for agents that "
        "replace the system message with their own, such as ReActAgent).",
    )
    backend: str = Field(
        default=DEFAULT_BACKEND, description="Name of the registered memtend Memory, for a handle built without one."
    )
    store_id: str | None = Field(default=None, description=STORE_ID_DESCRIPTION)
    redact: bool = Field(
        default=REDACT_DEFAULT, description="Mask secrets in stored messages (True) or refuse them (False)."
    )
    write_once: bool = Field(
        default=False,
        description="Hold a user message put alone and store it with the next messages put (one write a turn); a "
        "process killed before then loses it.",
    )

    untrusted_tools: list[str] = Field(
        default_factory=list,
        description="Tools whose output is untrusted content: once a call of one is stored, what the agent "
        "remembers or sets in this session is held for review (memtend_tools with the same session_id), on later "
        "turns too, until a person reviews it (user.session(session_id).clear_untrusted()).",
    )

    _memory: Memory | None = PrivateAttr(default=None)
    _held: list[ChatMessage] = PrivateAttr(default_factory=list)  # write_once: the user messages not yet stored
    _claimed: set[int] = PrivateAttr(default_factory=set)  # ids of the held messages a write under way is storing

    def __init__(
        self,
        *,
        user_id: str | None = None,
        session_id: str | None = None,
        memory: Memory | None = None,
        backend: str = DEFAULT_BACKEND,
        store_id: str | None = None,
        **kw: Any,
    ) -> None:
        user_id = checked_user(user_id, memory, type(self).__name__)
        if not isinstance(session_id, str) or not session_id.strip():
            raise InvalidInputError(f"{type(self).__name__} needs session_id=... (a non-empty str)")
        bound, store_id = bind(memory, store_id, type(self).__name__)
        super().__init__(user_id=user_id, session_id=session_id, backend=backend, store_id=store_id, **kw)
        self._memory = bound

    @classmethod
    def class_name(cls) -> str:
        return "MemtendMemory"

    @classmethod
    def from_defaults(  # type: ignore[override]
        cls,
        user_id: str | None = None,
        session_id: str | None = None,
        memory: Memory | None = None,
        token_limit: int = DEFAULT_TOKEN_LIMIT,
        recall_k: int = 5,
        backend: str = DEFAULT_BACKEND,
        chat_history: list[ChatMessage] | None = None,
        **kwargs: Any,
    ) -> MemtendMemory:
        """A memory for ``user_id``'s session ``session_id`` in ``memory`` (else in the Memory registered as
        ``backend``)."""
        handle = cls(
            user_id=user_id,
            session_id=session_id,
            memory=memory,
            token_limit=token_limit,
            recall_k=recall_k,
            backend=backend,
            **kwargs,
        )
        if chat_history is not None:
            handle.set(chat_history)
        return handle

    def __getstate__(self) -> dict[Any, Any]:  # pickling keeps the ids (the store's too), not the live Memory
        return without_live_objects(super().__getstate__(), "_memory")

    # ------------------------------------------------------------------------------------------ plumbing
    def _docs(self) -> DocumentStore:
        return documents_of(
            self._memory,
            self.backend,
            self.user_id,
            redact=self.redact,
            surface="MemtendMemory",
            store_id=self.store_id,
        )

    def _user(self) -> UserMemory:
        return user_of(self._memory, self.backend, self.user_id, self.store_id)

    def _forget_view(self) -> None:
        compacted_view.forget(memory_of(self._memory, self.backend, self.store_id), self.user_id, self.session_id)

    def _shown(self) -> history.Step[compacted_view.Shown]:
        owner = memory_of(self._memory, self.backend, self.store_id)
        return compacted_view.shown(owner, self.user_id, self.session_id, self.token_limit, self.keep_recent_turns)

    def _with_context(self, messages: list[ChatMessage], context: UserContext) -> list[ChatMessage]:
        text = context.render()
        if not text:
            return messages
        if self.insert_method == "user":
            last = next((i for i in range(len(messages) - 1, -1, -1) if messages[i].role == "user"), None)
            if last is not None:
                turn = messages[last].model_copy(deep=True)
                turn.blocks = [TextBlock(text=text + "\n\n"), *turn.blocks]
                return [*messages[:last], turn, *messages[last + 1 :]]
        if messages and messages[0].role == "system":
            first = messages[0].model_copy(deep=True)
            first.blocks = [TextBlock(text=text + "\n\n"), *first.blocks]
            return [first, *messages[1:]]
        return [ChatMessage(role="system", content=text), *messages]

    def _hold(self, message: ChatMessage) -> bool:
        """With ``write_once``, keep a user message (checked and gated as its write would be) to store with the
        next write; False when it is to be written now."""
        if not self.write_once or message.role != "user":
            return False
        checked = check_chat_messages([message])
        to_memtend_all(checked)
        docs = self._docs()
        if isinstance(docs, SurfaceDocuments):  # refused here, as its write would be
            ops: list[Any] = list(history.planned(self.session_id, checked))
            docs.check_writes(ops)
        self._held.append(load(mask_json(dump(checked[0]), surface="MemtendMemory", redact=self.redact)))
        return True

    def _with_held(self, shown: compacted_view.Shown) -> compacted_view.Shown:
        """The stored view followed by the held messages (and the constraints they state)."""
        messages, view, _ = shown
        if not self._held:
            return shown
        view = [*view, *(to_memtend(m) for m in self._held)]
        return [*messages, *(m.model_copy(deep=True) for m in self._held)], view, extract_constraints(view)

    def _unheld(self, messages: list[ChatMessage]) -> tuple[list[ChatMessage], list[ChatMessage]]:
        """The held messages no other write has taken, followed by ``messages`` (one write); and those it took
        (still shown by ``get`` until stored, and stored once however many writes run at a time)."""
        taken = [m for m in self._held if id(m) not in self._claimed]
        self._claimed.update(id(m) for m in taken)
        return [*taken, *messages], taken

    def _written(self, taken: list[ChatMessage], stored: bool) -> None:
        """After the write that took ``taken``: stored, they are no longer held; failed, another write takes them."""
        ids = {id(m) for m in taken}
        self._claimed.difference_update(ids)
        if stored:
            self._held[:] = [m for m in self._held if id(m) not in ids]

    @staticmethod
    def _input_text(input: Any) -> str | None:
        if input is None or isinstance(input, str):
            return input
        if isinstance(input, ChatMessage):
            return input.content
        raise InvalidInputError(f"input must be a str or ChatMessage, got {type(input).__name__}")

    # ------------------------------------------------------------------------------------------ async (agents)
    async def aget(self, input: str | None = None, **kwargs: Any) -> list[ChatMessage]:
        query_text = self._input_text(input)
        shown, view, constraints = self._with_held(await history.arun(self._docs(), self._shown()))
        query = conversation_query(view, query_text) if self.recall_k else None
        context = await auser_context(self._user(), query, k=max(1, self.recall_k), constraints=constraints)
        return self._with_context(shown, context)

    async def aget_all(self) -> list[ChatMessage]:
        stored = await history.arun(self._docs(), history.read(self.session_id, None))
        return [*stored, *(m.model_copy(deep=True) for m in self._held)]

    async def aput(self, message: ChatMessage) -> None:
        if not self._hold(check_chat_message(message)):
            await self.aput_messages([message])

    async def aput_messages(self, messages: list[ChatMessage]) -> None:
        checked = check_chat_messages(messages)
        to_memtend_all(checked)  # a message with no memtend form is refused before anything is stored
        batch, taken = self._unheld(checked)
        stored = False
        try:
            if batch:
                await history.arun(self._docs(), history.add(self.session_id, batch))
            stored = True
        finally:
            self._written(taken, stored)
        if calls := untrusted_calls(checked, self.untrusted_tools):
            session = self._user().session(self.session_id)
            for name, ref in calls:
                await session.amark_untrusted(name, ref=ref)

    async def aset(self, messages: list[ChatMessage]) -> None:
        checked = check_chat_messages(messages)
        to_memtend_all(checked)
        self._forget_view()
        await history.arun(self._docs(), history.replace_all(self.session_id, checked))
        self._held.clear()  # replaced with the rest, as stored messages are

    async def areset(self) -> None:
        self._forget_view()
        await history.arun(self._docs(), history.delete_all(self.session_id, None))
        self._held.clear()

    # ------------------------------------------------------------------------------------------ sync
    def get(self, input: str | None = None, **kwargs: Any) -> list[ChatMessage]:
        query_text = self._input_text(input)
        shown, view, constraints = self._with_held(history.run(self._docs(), self._shown()))
        query = conversation_query(view, query_text) if self.recall_k else None
        context = user_context(self._user(), query, k=max(1, self.recall_k), constraints=constraints)
        return self._with_context(shown, context)

    def get_all(self) -> list[ChatMessage]:
        stored = history.run(self._docs(), history.read(self.session_id, None))
        return [*stored, *(m.model_copy(deep=True) for m in self._held)]

    def put(self, message: ChatMessage) -> None:
        checked = check_chat_message(message)
        if not self._hold(checked):
            self.put_messages([checked])

    def put_messages(self, messages: list[ChatMessage]) -> None:
        checked = check_chat_messages(messages)
        to_memtend_all(checked)
        batch, taken = self._unheld(checked)
        stored = False
        try:
            if batch:
                history.run(self._docs(), history.add(self.session_id, batch))
            stored = True
        finally:
            self._written(taken, stored)
        if calls := untrusted_calls(checked, self.untrusted_tools):
            session = self._user().session(self.session_id)
            for name, ref in calls:
                session.mark_untrusted(name, ref=ref)

    def set(self, messages: list[ChatMessage]) -> None:
        checked = check_chat_messages(messages)
        to_memtend_all(checked)
        self._forget_view()
        history.run(self._docs(), history.replace_all(self.session_id, checked))
        self._held.clear()

    def reset(self) -> None:
        self._forget_view()
        history.run(self._docs(), history.delete_all(self.session_id, None))
        self._held.clear()
