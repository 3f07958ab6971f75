"""The compacted view of a session's history, kept between ``get`` calls so a call reads and compacts only what is
new.

The core's ``compact_transcript`` replaces the older part of a transcript with one summary message and accepts a
transcript that already starts with such a summary (the new summary merges the earlier one). So the view built by
the last call, followed by the messages stored since, compacts to the view for now. A call reads the keys of the
first stored message and of the last one the view covers, and the messages after it (one batch); the view is reused
only when those two documents are still the ones it was built from (document keys are never reused), and anything
else (``set``, ``reset``, a deletion or archive, another writer rewriting the session) reads and compacts the whole
session again.
"""

from __future__ import annotations

import threading
import weakref
from collections import OrderedDict
from dataclasses import dataclass
from typing import Any

from llama_index.core.base.llms.types import ChatMessage
from memtend import Message, compact_transcript

from memtend_llamaindex import history
from memtend_llamaindex.messages import to_memtend

MAX_VIEWS = 256
Shown = tuple[list[ChatMessage], list[Message], list[str]]


@dataclass(frozen=True)
class _View:
    covered: int  # stored (active) messages folded into the view
    first: str  # document keys of the first of them and of the last: a rewritten session no longer matches
    last: str
    messages: list[Message]  # the compacted memtend view; a kept message's id is its position in the session
    originals: dict[int, ChatMessage]  # the stored messages the view keeps verbatim, by position
    constraints: list[str]


_lock = threading.Lock()
_views: weakref.WeakKeyDictionary[Any, OrderedDict[tuple[Any, ...], _View]] = weakref.WeakKeyDictionary()


def forget(owner: Any, user_id: str, session_id: str) -> None:
    """Drop every view of the session (whatever limits it was built with)."""
    with _lock:
        views = _views.get(owner)
        for key in [k for k in views or () if k[:2] == (user_id, session_id)]:
            del views[key]  # type: ignore[union-attr]


def shown(
    owner: Any, user_id: str, session_id: str, max_tokens: int, keep_recent_turns: int | None = None
) -> history.Step[Shown]:
    """The history as the model should see it, its memtend view, and the conversation's constraints.

    ``owner`` is the memtend ``Memory`` holding the history (its views die with it); ``max_tokens`` and
    ``keep_recent_turns`` go to the core's ``compact_transcript`` (None: its default).
    """
    key = (user_id, session_id, max_tokens, keep_recent_turns)
    with _lock:
        views = _views.get(owner)
        view = None if views is None else views.get(key)
    if view is not None:
        first, last, fresh = yield from history.read_after(session_id, view.covered)
        if (first, last) == (view.first, view.last):
            return _compact(owner, key, view, fresh)
    stored = yield from history.read_keyed(session_id)
    return _compact(owner, key, None, stored)


def _compact(owner: Any, key: tuple[Any, ...], view: _View | None, fresh: history.Keyed) -> Shown:
    if view is not None and not fresh:
        return _render(view), view.messages, view.constraints
    start = view.covered if view is not None else 0
    originals = dict(view.originals) if view is not None else {}
    originals.update((start + i, m) for i, (_, m) in enumerate(fresh))
    base = view.messages if view is not None else []
    result = compact_transcript(
        [*base, *(to_memtend(m, start + i) for i, (_, m) in enumerate(fresh))],
        max_tokens=key[2],
        keep_recent_turns=key[3],
    )
    if result.compacted:  # how full the context was when compaction fired, for the core's metrics
        owner.user(key[0]).report_compaction(result, session=key[1])
    if start + len(fresh) == 0:
        return [], result.messages, result.constraints
    kept = {p: originals[p] for p in (_position(m) for m in result.messages) if p is not None}
    new = _View(
        covered=start + len(fresh),
        first=view.first if view is not None else fresh[0][0],
        last=fresh[-1][0],
        messages=result.messages,
        originals=kept,
        constraints=result.constraints,
    )
    with _lock:
        views = _views.setdefault(owner, OrderedDict())
        views[key] = new
        views.move_to_end(key)
        while len(views) > MAX_VIEWS:
            views.popitem(last=False)
    return _render(new), result.messages, result.constraints


def _position(message: Message) -> int | None:
    return int(message.id) if message.id is not None and message.id.isdigit() else None


def _render(view: _View) -> list[ChatMessage]:
    """ChatMessages for the view: copies of the stored ones it keeps (callers may change them), new summary turns."""
    out = []
    for message in view.messages:
        position = _position(message)
        if position is not None:
            out.append(view.originals[position].model_copy(deep=True))
        else:
            out.append(ChatMessage(role=message.role, content=message.content))
    return out
