"""Chat history of one user in memtend's document store: the layout every store and memory here shares.

A session's messages live under the namespace ``("llamaindex", "chat", <session key>)`` of the user's document
store, one document per message, ``{"status": "active" | "archived", "message": <ChatMessage JSON>}``, in
insertion order (an archived message keeps its place). Documents are not embedded; their text passes the core's
write gate. Isolation, export and ``Memory.erase_user`` cover them with no code here.

Each operation is written once, as a generator that yields a list of document ops and receives their results
(``DocumentStore.batch``: reads see the state before the batch's writes, writes are all-or-nothing);
:func:`run` and :func:`arun` drive it with the store's sync or async calls.
"""

from __future__ import annotations

import threading
import time
import uuid
from collections.abc import Generator, Sequence
from dataclasses import dataclass
from typing import Any, TypeVar

from llama_index.core.base.llms.types import ChatMessage
from memtend import DeleteDocument, Document, DocumentStore, ListNamespaces, PutDocument, SearchDocuments

from memtend_llamaindex.messages import dump, load

ROOT = ("llamaindex", "chat")
ACTIVE = "active"
ARCHIVED = "archived"
PAGE = 1000

T = TypeVar("T")


@dataclass(frozen=True)
class DeleteAll:
    """Every document of a namespace, deleted in one call (``DocumentStore.delete_prefix``)."""

    namespace: tuple[str, ...]


Ops = list[Any] | DeleteAll
Step = Generator[Ops, Any, T]

_clock_lock = threading.Lock()
_last_ns = 0


def new_keys(n: int) -> list[str]:
    """``n`` increasing document keys, later than any this process made before (sortable by time)."""
    global _last_ns
    with _clock_lock:
        base = max(time.time_ns(), _last_ns + 1)
        _last_ns = base + n
    suffix = uuid.uuid4().hex[:8]
    return [f"{base + i:020d}.{suffix}" for i in range(n)]


def namespace(session_key: str) -> tuple[str, str, str]:
    return (*ROOT, session_key)


def status_value(status: Any) -> str | None:
    """A MessageStatus, its string value, or None (every status)."""
    if status is None:
        return None
    value = getattr(status, "value", status)
    if value not in (ACTIVE, ARCHIVED):
        from memtend import InvalidInputError

        raise InvalidInputError(f"unknown message status {status!r}; use 'active', 'archived' or None")
    return str(value)


def run(docs: DocumentStore, step: Step[T]) -> T:
    try:
        ops = next(step)
        while True:
            ops = step.send(_apply(docs, ops))
    except StopIteration as done:
        return done.value  # type: ignore[no-any-return]


async def arun(docs: DocumentStore, step: Step[T]) -> T:
    try:
        ops = next(step)
        while True:
            if isinstance(ops, DeleteAll):
                result: Any = await docs.adelete_prefix(ops.namespace)
            else:
                result = await docs.abatch(ops)
            ops = step.send(result)
    except StopIteration as done:
        return done.value  # type: ignore[no-any-return]


def _apply(docs: DocumentStore, ops: Ops) -> Any:
    if isinstance(ops, DeleteAll):
        return docs.delete_prefix(ops.namespace)
    return docs.batch(ops)


# ---------------------------------------------------------------------------------------------- reads
def _search(
    ns: tuple[str, ...], status: str | None, limit: int | None = None, offset: int | None = None
) -> Step[list[Document]]:
    found: list[Document] = []
    start = max(0, offset or 0)
    while True:
        want = PAGE if limit is None else min(PAGE, limit - len(found))
        if want <= 0:
            return found
        flt = None if status is None else {"status": status}
        (page,) = yield [SearchDocuments(ns, filter=flt, limit=want, offset=start)]
        found.extend(page)
        start += len(page)
        if len(page) < want:
            return found


def read(
    key: str, status: str | None = ACTIVE, limit: int | None = None, offset: int | None = None
) -> Step[list[ChatMessage]]:
    docs = yield from _search(namespace(key), status, limit, offset)
    return [load(d.value["message"]) for d in docs]


Keyed = list[tuple[str, ChatMessage]]


def read_keyed(key: str) -> Step[Keyed]:
    """Every active message with its document key (unique, never reused: it tells a rewritten session apart)."""
    docs = yield from _search(namespace(key), ACTIVE)
    return [(d.key, load(d.value["message"])) for d in docs]


def read_after(key: str, n: int) -> Step[tuple[str | None, str | None, Keyed]]:
    """The document keys of the first and the ``n``-th active message, and every message after the ``n``-th with
    its key, in one batch of two reads (the first, then the ``n``-th and what follows it; more pages if needed)."""
    ns, flt = namespace(key), {"status": ACTIVE}
    start = max(0, n - 1)
    first, page = yield [
        SearchDocuments(ns, filter=flt, limit=1, offset=0),
        SearchDocuments(ns, filter=flt, limit=PAGE, offset=start),
    ]
    nth_key = page[0].key if page and n > 0 else None
    after = list(page[1:] if n > 0 else page)
    if len(page) == PAGE:
        after += yield from _search(ns, ACTIVE, None, start + PAGE)
    head = first[0].key if first else None
    return head, nth_key, [(d.key, load(d.value["message"])) for d in after]


def count(key: str, status: str | None = ACTIVE) -> Step[int]:
    docs = yield from _search(namespace(key), status)
    return len(docs)


def keys() -> Step[list[str]]:
    found: list[str] = []
    offset = 0
    while True:
        (page,) = yield [ListNamespaces(prefix=ROOT, max_depth=len(ROOT) + 1, limit=PAGE, offset=offset)]
        found.extend(ns[len(ROOT)] for ns in page if len(ns) > len(ROOT))
        offset += len(page)
        if len(page) < PAGE:
            return found


# ---------------------------------------------------------------------------------------------- writes
def _puts(ns: tuple[str, ...], messages: Sequence[ChatMessage], status: str) -> list[PutDocument]:
    return [
        PutDocument(ns, k, {"status": status, "message": dump(m)}, index=False)
        for k, m in zip(new_keys(len(messages)), messages, strict=True)
    ]


def planned(key: str, messages: Sequence[ChatMessage], status: str = ACTIVE) -> list[PutDocument]:
    """The document ops ``add`` would write (to check and gate them without writing)."""
    return _puts(namespace(key), messages, status)


def add(key: str, messages: Sequence[ChatMessage], status: str = ACTIVE) -> Step[None]:
    if messages:
        yield _puts(namespace(key), messages, status)


def replace_all(key: str, messages: Sequence[ChatMessage], status: str = ACTIVE) -> Step[None]:
    """Every message of the session (any status) replaced by ``messages``, in one atomic batch."""
    ns = namespace(key)
    existing = yield from _search(ns, None)
    ops: list[Any] = [DeleteDocument(ns, d.key) for d in existing]
    ops += _puts(ns, messages, status)
    if ops:
        yield ops


def delete_at(key: str, idx: int, status: str | None = ACTIVE) -> Step[ChatMessage | None]:
    """The ``idx``-th message (of ``status``) deleted and returned; None when out of range (negative too)."""
    if not isinstance(idx, int) or isinstance(idx, bool) or idx < 0:
        return None
    ns = namespace(key)
    found = yield from _search(ns, status, limit=1, offset=idx)
    if not found:
        return None
    yield [DeleteDocument(ns, found[0].key)]
    return load(found[0].value["message"])


def delete_all(key: str, status: str | None = None) -> Step[list[ChatMessage]]:
    ns = namespace(key)
    found = yield from _search(ns, status)
    if found:
        yield DeleteAll(ns) if status is None else [DeleteDocument(ns, d.key) for d in found]
    return [load(d.value["message"]) for d in found]


def delete_oldest(key: str, n: int) -> Step[list[ChatMessage]]:
    ns = namespace(key)
    found = yield from _search(ns, ACTIVE, limit=max(0, n))
    if found:
        yield [DeleteDocument(ns, d.key) for d in found]
    return [load(d.value["message"]) for d in found]


def archive_oldest(key: str, n: int) -> Step[list[ChatMessage]]:
    ns = namespace(key)
    found = yield from _search(ns, ACTIVE, limit=max(0, n))
    if found:
        yield [PutDocument(ns, d.key, {**d.value, "status": ARCHIVED}, index=False) for d in found]
    return [load(d.value["message"]) for d in found]


def delete_last(key: str) -> Step[ChatMessage | None]:
    ns = namespace(key)
    found = yield from _search(ns, None)
    if not found:
        return None
    yield [DeleteDocument(ns, found[-1].key)]
    return load(found[-1].value["message"])


def insert_at(key: str, idx: int, message: ChatMessage) -> Step[None]:
    """``message`` placed before the ``idx``-th message (appended when ``idx`` is past the end)."""
    ns = namespace(key)
    found = yield from _search(ns, None)
    tail = found[max(0, idx) :]
    ops: list[Any] = [DeleteDocument(ns, d.key) for d in tail]
    fresh = new_keys(len(tail) + 1)
    ops.append(PutDocument(ns, fresh[0], {"status": ACTIVE, "message": dump(message)}, index=False))
    ops += [PutDocument(ns, k, d.value, index=False) for k, d in zip(fresh[1:], tail, strict=True)]
    yield ops
