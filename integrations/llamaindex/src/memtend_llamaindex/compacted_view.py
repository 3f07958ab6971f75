"""The compacted view of a session's history, kept between ``get`` calls so each call compacts only what is new.

The core's ``compact_transcript`` replaces the older part of a transcript with one summary message and accepts a
transcript that already starts with such a summary (the new summary merges the earlier one). So the view built by
the last call, followed by the messages stored since, compacts to the view for now without summarising the whole
session again. A view is reused only when the stored history still starts with the messages it covers (same count
up to there, same first and last message); anything else (``set``, ``reset``, another writer rewriting the
session) starts over from the stored messages.
"""

from __future__ import annotations

import threading
import weakref
from collections import OrderedDict
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from llama_index.core.base.llms.types import ChatMessage
from memtend import Message, compact_transcript

from memtend_llamaindex.messages import dump, from_memtend, to_memtend

MAX_VIEWS = 256


@dataclass(frozen=True)
class _View:
    covered: int
    first: dict[str, Any]
    last: dict[str, Any]
    messages: list[Message]
    constraints: list[str]


_lock = threading.Lock()
_views: weakref.WeakKeyDictionary[Any, OrderedDict[tuple[str, str], _View]] = weakref.WeakKeyDictionary()


def forget(owner: Any, key: tuple[str, str]) -> None:
    with _lock:
        views = _views.get(owner)
        if views is not None:
            views.pop(key, None)


def compacted(
    owner: Any, key: tuple[str, str], stored: Sequence[ChatMessage], max_tokens: int
) -> tuple[list[ChatMessage], list[Message], list[str]]:
    """The history as the model should see it, its memtend view, and the conversation's constraints.

    ``owner`` is the memtend ``Memory`` holding the history (views die with it), ``key`` its (user, session).
    """
    with _lock:
        views = _views.get(owner)
        view = None if views is None else views.get(key)
    start, base = 0, list[Message]()
    if view is not None and _still_starts(stored, view):
        start, base = view.covered, view.messages
    messages = [*base, *(to_memtend(m, start + i) for i, m in enumerate(stored[start:]))]
    result = compact_transcript(messages, max_tokens=max_tokens)
    if stored:
        fresh = _View(len(stored), dump(stored[0]), dump(stored[-1]), result.messages, result.constraints)
        with _lock:
            views = _views.setdefault(owner, OrderedDict())
            views[key] = fresh
            views.move_to_end(key)
            while len(views) > MAX_VIEWS:
                views.popitem(last=False)
    return [from_memtend(m, stored) for m in result.messages], result.messages, result.constraints


def _still_starts(stored: Sequence[ChatMessage], view: _View) -> bool:
    """Whether ``stored`` still begins with the messages ``view`` was built from."""
    if not 0 < view.covered <= len(stored):
        return False
    return dump(stored[0]) == view.first and dump(stored[view.covered - 1]) == view.last
