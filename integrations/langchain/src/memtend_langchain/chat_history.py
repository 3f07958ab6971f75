"""``MemtendChatMessageHistory``: LangChain's ``BaseChatMessageHistory`` over memtend's document store.

The messages of one ``add_messages`` call are one document in the user's store under
``("langchain", "chat", session_id)`` (``{"messages": [...]}``, LangChain's own lossless message dicts; a call of
more than ``ROW_MESSAGES`` messages or ``ROW_CHARS`` characters of them takes as many documents as it needs, all in
one atomic write); a key sorts by write time, so ``messages`` is the full history in order. A document written
before, holding one message dict, still reads. One document per turn rather than per message makes a turn's write
and a long history's read carry a fraction of the rows (Chroma's cost is per row and per metadata field).

The document store's write gate sees every string of a message before anything is written (secrets are masked by
default, ``redact=True``, or refused with ``redact=False``: see docs/secrets.md), and isolation, export and erasure
cover the history with the user.

The history is the transcript, not long-term memory. With ``capture="turn"`` (``with_memtend_history``'s default)
each ``add_messages`` call (a turn) also goes to the core's ``capture``, which keeps what is worth keeping
(durable facts, preferences, decisions, corrections, unfinished work; never chit-chat or one-off requests) with
the session as provenance; ``capture="session"`` only at :meth:`MemtendChatMessageHistory.end_session`; None
never (the moments are the core's, :mod:`memtend.capture.moments`). ``end_session`` also keeps the
instructions the user left in force, each in its latest version.
"""

from __future__ import annotations

import itertools
import json
import os
import threading
import time
from collections.abc import Sequence
from typing import Any

from langchain_core.chat_history import BaseChatMessageHistory
from langchain_core.messages import BaseMessage
from langchain_core.runnables import Runnable
from langchain_core.runnables.history import RunnableWithMessageHistory
from langchain_core.runnables.utils import ConfigurableFieldSpec
from memtend import (
    Document,
    InvalidInputError,
    Memory,
    Message,
    PutDocument,
    UserMemory,
    acompact_transcript,
    compact_transcript,
)
from memtend.arguments import describe
from memtend.capture.moments import at_end, check_capture, each_turn, left_for_the_end
from memtend.documents.values import MAX_PAGE
from memtend.policies.proposals import WriteMode, check_write_mode
from memtend.surfaces import REDACT_DEFAULT, check_redact, refused_at

from memtend_langchain._messages import (
    from_memtend,
    message_from_value,
    message_to_value,
    require_messages,
    to_memtend,
)
from memtend_langchain.history_context import HistoryContext

__all__ = ["CHAT_NAMESPACE", "MemtendChatMessageHistory", "history_factory_config", "with_memtend_history"]

CHAT_NAMESPACE = ("langchain", "chat")
SURFACE = "MemtendChatMessageHistory"
ROW_MESSAGES = 100  # messages per document at most
ROW_CHARS = 128_000  # characters of message JSON per document at most (a longer message is a document alone)
_BATCH = "messages"  # the key of a document holding a list of messages

_key_lock = threading.Lock()
_last_ns = 0
_process_tag = f"{os.getpid():x}"
_counter = itertools.count()


def _keys(count: int) -> list[str]:
    """``count`` keys that sort after every key this process made before (time, then order in the batch)."""
    global _last_ns
    with _key_lock:
        stamp = max(time.time_ns(), _last_ns + 1)
        _last_ns = stamp
        serial = next(_counter)
    return [f"{stamp:020d}-{i:06d}-{_process_tag}-{serial:x}" for i in range(count)]


def _session_id(session_id: object) -> str:
    if not isinstance(session_id, str) or not session_id.strip():
        raise InvalidInputError(
            f"session_id must be a non-empty string, got {describe(session_id)}; pass the conversation's id "
            "(RunnableWithMessageHistory: config={'configurable': {'session_id': ...}})"
        )
    return session_id


class MemtendChatMessageHistory(BaseChatMessageHistory):
    """The chat history of one (user, session), stored by memtend.

    ``MemtendChatMessageHistory(user_id, session_id, memory=Memory(...))``; ``redact=True`` (the default) masks
    sensitive data the write gate finds, ``redact=False`` refuses the whole batch (``SensitiveDataError`` naming
    this surface) before any of it is written. ``capture``: "turn", "session" or None (the default: a plain
    history); ``write_mode``: "propose" makes what capture keeps in the model's words wait as proposals, None
    follows the Memory's.
    """

    def __init__(
        self,
        user_id: str,
        session_id: str,
        *,
        memory: Memory,
        redact: bool = REDACT_DEFAULT,
        capture: bool | str | None = None,
        write_mode: WriteMode | None = None,
        surface: str = SURFACE,
    ) -> None:
        if not isinstance(memory, Memory):
            raise InvalidInputError(f"memory must be a memtend Memory, got {type(memory).__name__}")
        self.write_mode = None if write_mode is None else check_write_mode(write_mode)
        self.user: UserMemory = memory.user(user_id, write_mode=self.write_mode)
        self.user_id = self.user.user_id
        self.session_id = _session_id(session_id)
        self.namespace = (*CHAT_NAMESPACE, self.session_id)
        self.redact = check_redact(redact, surface)
        self.capture = check_capture(capture)
        self.surface = surface
        self._docs = self.user.documents(redact=self.redact, surface=surface)
        self._count: int | None = None  # messages in the session, when this object knows (the next turn's index)

    def __repr__(self) -> str:
        return f"MemtendChatMessageHistory(user_id={self.user_id!r}, session_id={self.session_id!r})"

    # ------------------------------------------------------------------ reading
    @property
    def messages(self) -> list[BaseMessage]:  # type: ignore[override]
        """Every stored message of the session, oldest first (one read of the session, as SQL's one query)."""
        found = _read(self._docs.search(self.namespace, limit=MAX_PAGE))
        self._count = len(found)
        return found

    async def aget_messages(self) -> list[BaseMessage]:
        found = _read(await self._docs.asearch(self.namespace, limit=MAX_PAGE))
        self._count = len(found)
        return found

    # ------------------------------------------------------------------ writing
    def _puts(self, messages: Sequence[BaseMessage]) -> list[PutDocument]:
        items = require_messages(messages)
        rows = _rows([message_to_value(m) for m in items])
        return [
            PutDocument(self.namespace, key, {_BATCH: row}, index=False)
            for key, row in zip(_keys(len(rows)), rows, strict=True)
        ]

    def _offset(self) -> int:
        """The index of the next message in the session (read once when this object has not read it yet)."""
        if self._count is None:
            _ = self.messages
        return self._count or 0

    async def _aoffset(self) -> int:
        if self._count is None:
            await self.aget_messages()
        return self._count or 0

    def add_messages(self, messages: Sequence[BaseMessage]) -> None:
        """Store ``messages`` in one atomic write: all of them, or (on any error) none; with ``capture="turn"``
        they are then one turn for the core's ``capture``."""
        puts = self._puts(messages)
        if not puts:
            return
        offset = self._offset() if each_turn(self.capture) else 0
        self._docs.put_many(puts)
        if self._count is not None:
            self._count += len(messages)
        if each_turn(self.capture):
            with refused_at(self.surface):
                self.user.capture(to_memtend(messages), session=self.session_id, offset=offset, redact=self.redact)

    async def aadd_messages(self, messages: Sequence[BaseMessage]) -> None:
        puts = self._puts(messages)
        if not puts:
            return
        offset = await self._aoffset() if each_turn(self.capture) else 0
        await self._docs.aput_many(puts)
        if self._count is not None:
            self._count += len(messages)
        if each_turn(self.capture):
            turn = to_memtend(messages)
            with refused_at(self.surface):
                await self.user.acapture(turn, session=self.session_id, offset=offset, redact=self.redact)

    def end_session(self) -> None:
        """The conversation ended: what was not captured yet goes to the core's ``capture`` with the whole
        session, so the instructions the user left in force are kept too (each in its latest version; what was
        captured already is refreshed, never stored twice). Nothing with ``capture=None``."""
        if not at_end(self.capture):
            return
        whole = to_memtend(self.messages)
        pending = left_for_the_end(self.capture, whole)
        with refused_at(self.surface):
            self.user.capture(pending, session=self.session_id, redact=self.redact, conversation=whole)

    async def aend_session(self) -> None:
        if not at_end(self.capture):
            return
        whole = to_memtend(await self.aget_messages())
        pending = left_for_the_end(self.capture, whole)
        with refused_at(self.surface):
            await self.user.acapture(pending, session=self.session_id, redact=self.redact, conversation=whole)

    def add_message(self, message: BaseMessage) -> None:
        self.add_messages([message])

    def clear(self) -> None:
        """Delete every message of this session (other sessions and users are untouched; what capture kept in
        long-term memory stays, a memory of the user's)."""
        self._docs.delete_prefix(self.namespace)
        self._count = 0

    async def aclear(self) -> None:
        await self._docs.adelete_prefix(self.namespace)
        self._count = 0

    # ------------------------------------------------------------------ the compacted view
    def compacted_messages(
        self,
        *,
        max_turns: int | None = 40,
        max_tokens: int | None = 60_000,
        keep_recent_turns: int | None = None,
        summarizer: Any = None,
    ) -> list[BaseMessage]:
        """The history as a prompt should see it: when over ``max_turns`` user turns or ``max_tokens``, the
        older part is one summary turn (the core's structured summary: goal, facts, side effects with ids, user
        constraints, open questions) followed by the recent turns, tool calls never split from their results.
        Nothing stored changes."""
        messages = self.messages
        result = compact_transcript(
            to_memtend(messages),
            max_turns=max_turns,
            max_tokens=max_tokens,
            keep_recent_turns=keep_recent_turns,
            summarizer=summarizer,
        )
        if result.compacted:  # context use when compaction fired, for the core's metrics
            self.user.report_compaction(result, session=self.session_id)
        return from_memtend(result.messages, messages)

    async def acompacted_messages(
        self,
        *,
        max_turns: int | None = 40,
        max_tokens: int | None = 60_000,
        keep_recent_turns: int | None = None,
        summarizer: Any = None,
    ) -> list[BaseMessage]:
        messages = await self.aget_messages()
        result = await acompact_transcript(
            to_memtend(messages),
            max_turns=max_turns,
            max_tokens=max_tokens,
            keep_recent_turns=keep_recent_turns,
            summarizer=summarizer,
        )
        if result.compacted:
            await self.user.areport_compaction(result, session=self.session_id)
        return from_memtend(result.messages, messages)


def _rows(values: list[dict[str, Any]]) -> list[list[dict[str, Any]]]:
    """The messages of one write in documents of at most ``ROW_MESSAGES`` messages and ``ROW_CHARS`` characters."""
    rows: list[list[dict[str, Any]]] = []
    size = 0
    for value in values:
        chars = len(json.dumps(value, ensure_ascii=False, default=str))
        if not rows or len(rows[-1]) >= ROW_MESSAGES or (rows[-1] and size + chars > ROW_CHARS):
            rows.append([])
            size = 0
        rows[-1].append(value)
        size += chars
    return rows


def _read(docs: Sequence[Document]) -> list[BaseMessage]:
    """The messages of a session's documents in order: a list of them per document (one per document before)."""
    values: list[Any] = []
    for doc in docs:
        value = doc.value
        if isinstance(value, dict) and isinstance(value.get(_BATCH), list) and "type" not in value:
            values.extend(value[_BATCH])
        else:
            values.append(value)
    return [message_from_value(v) for v in values]


def compact_view(
    messages: Sequence[BaseMessage],
    *,
    max_turns: int | None,
    max_tokens: int | None,
    keep_recent_turns: int | None = None,
    summarizer: Any = None,
) -> list[BaseMessage]:
    converted: list[Message] = to_memtend(messages)
    result = compact_transcript(
        converted,
        max_turns=max_turns,
        max_tokens=max_tokens,
        keep_recent_turns=keep_recent_turns,
        summarizer=summarizer,
    )
    return from_memtend(result.messages, messages)


def history_factory_config() -> list[ConfigurableFieldSpec]:
    """The two configurable fields (``user_id``, ``session_id``) that key a history by user and session."""
    return [
        ConfigurableFieldSpec(
            id="user_id", annotation=str, name="User ID", description="Whose memory.", default="", is_shared=True
        ),
        ConfigurableFieldSpec(
            id="session_id",
            annotation=str,
            name="Session ID",
            description="Which conversation.",
            default="",
            is_shared=True,
        ),
    ]


def with_memtend_history(
    runnable: Runnable[Any, Any],
    memory: Memory,
    *,
    redact: bool = REDACT_DEFAULT,
    context: bool = True,
    k: int = 5,
    capture: bool | str | None = "turn",
    write_mode: WriteMode | None = None,
    **kwargs: Any,
) -> RunnableWithMessageHistory:
    """``RunnableWithMessageHistory`` keyed by user and session over memtend; call it with
    ``config={"configurable": {"user_id": ..., "session_id": ...}}``. ``kwargs`` go to RunnableWithMessageHistory
    (``input_messages_key``, ``history_messages_key``, ...).

    With ``context`` (the default) every call also gets a system message, at the head of the history, with the
    user's profile, rules, the constraints they set in this conversation and ``k`` recalled memories
    (:mod:`memtend_langchain.history_context`); none of it is stored in the history.

    ``capture="turn"`` (the default): each turn stored also goes to the core's ``capture`` (what is worth keeping
    goes to long-term memory, never the transcript itself); ``"session"``: only when the conversation ends,
    ``chain.get_session_history(user_id, session_id).end_session()`` (call that in either mode when it ends: the
    instructions the user left in force are kept then); None: never. ``write_mode``: "propose" makes what capture
    keeps in the model's words wait as proposals.

    RunnableWithMessageHistory stores a turn in an end-of-run listener and only logs an error raised there, so a
    refusal there would lose the turn: the sensitive value is masked (``redact=True``, the default). With
    ``redact=False`` such a turn is refused (logged as ``SensitiveDataError``, the value never shown) and not
    stored, while the earlier turns stay."""
    mode = check_capture(capture)
    chosen = None if write_mode is None else check_write_mode(write_mode)

    def factory(user_id: str, session_id: str) -> MemtendChatMessageHistory:
        return MemtendChatMessageHistory(
            user_id, session_id, memory=memory, redact=redact, capture=mode, write_mode=chosen
        )

    if isinstance(k, bool) or not isinstance(k, int) or k < 1:
        raise InvalidInputError(f"k (memories recalled per call) must be a positive integer, got {describe(k)}")
    if context:
        step = HistoryContext(
            memory,
            k=k,
            input_messages_key=kwargs.get("input_messages_key"),
            history_messages_key=kwargs.get("history_messages_key"),
        )
        runnable = step.runnable() | runnable
    return RunnableWithMessageHistory(runnable, factory, history_factory_config=history_factory_config(), **kwargs)
