"""One rule for secrets on every adapter surface: its default, its option and its error (see docs/secrets.md).

Every adapter surface that stores what a person or a model wrote (LangGraph checkpoints and store values,
LangChain chat histories and the memories the middleware logs, LlamaIndex memories, memory blocks and chat
stores) takes one option, ``redact``, whose default is :data:`REDACT_DEFAULT` (True): a secret the write gate
finds is stored masked (``[REDACTED:<kind>]``), because the frameworks make these writes where they cannot take a
refusal (a checkpoint after every step, a history in an end-of-run listener, a memory flush inside a run). With
``redact=False`` the surface refuses instead: :class:`~memtend.errors.SensitiveDataError` names the surface and the
option, and nothing of the call is written. Identifiers (keys, namespace labels, thread and session ids) name
what is stored and cannot be masked: they are refused whatever ``redact`` says. Pure: no I/O.
"""

from __future__ import annotations

import hashlib
import json
import threading
from collections import OrderedDict
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from memtend.aio import no_io
from memtend.arguments import describe
from memtend.documents.store import DeleteDocument, DocumentStore, PutDocument
from memtend.documents.values import Namespace, check_label, check_namespace, gated_json
from memtend.errors import InvalidInputError, SensitiveDataError
from memtend.records import now

__all__ = ["OPTION", "REDACT_DEFAULT", "SurfaceDocuments", "check_redact", "mask_json", "refused_at"]

REDACT_DEFAULT = True
OPTION = "redact"


def check_redact(redact: object, surface: str) -> bool:
    """``redact`` as given to ``surface``: a bool, else :class:`InvalidInputError` naming the option."""
    if not isinstance(redact, bool):
        raise InvalidInputError(
            f"{surface}: {OPTION} must be True (mask secrets) or False (refuse them), got {describe(redact)}"
        )
    return redact


def mask_json(value: Any, *, surface: str, redact: bool = REDACT_DEFAULT) -> Any:
    """``value`` (JSON: a str, a message as a dict, ...) as the write gate lets ``surface`` store it: unchanged
    when it holds no secret, masked with ``redact``, else :class:`SensitiveDataError` naming the surface.

    A checkpoint repeats the whole conversation at every step, so values found clean are remembered by a digest
    of their JSON text (the newest ``CLEAN_CACHE`` of them) and not read again."""
    digest = _digest(value)
    if digest is not None:
        with _clean_lock:
            if digest in _clean:
                _clean.move_to_end(digest)
                return value
    with refused_at(surface):
        out, kinds = gated_json(value, redact=redact)
    if digest is not None and not kinds:
        with _clean_lock:
            _clean[digest] = None
            while len(_clean) > CLEAN_CACHE:
                _clean.popitem(last=False)
    return out


def known_clean(value: Any) -> bool:
    """Whether ``value`` has the JSON text of a value :func:`mask_json` already found clean (so it needs no walk:
    a saver asks this of each message before taking it apart). False for anything not JSON, or not seen."""
    digest = _digest(value)
    if digest is None:
        return False
    with _clean_lock:
        if digest in _clean:
            _clean.move_to_end(digest)
            return True
    return False


def _digest(value: Any) -> bytes | None:
    """The digest of ``value``'s JSON text (keys sorted), or None when it is not JSON. Tuples and int keys read as
    lists and str keys: the same text, the same words, so the same finding."""
    try:
        text = json.dumps(value, ensure_ascii=False, sort_keys=True, allow_nan=False)
    except (TypeError, ValueError):
        return None
    return hashlib.blake2b(text.encode("utf-8", "surrogatepass"), digest_size=16).digest() if text else None


CLEAN_CACHE = 65_536
_clean: OrderedDict[bytes, None] = OrderedDict()
_clean_lock = threading.Lock()


@contextmanager
def refused_at(surface: str) -> Iterator[None]:
    """A refusal of the write gate raised inside names ``surface`` (unless an inner surface already named one)."""
    try:
        yield
    except SensitiveDataError as exc:
        if exc.surface is not None:
            raise
        raise exc.at(surface) from None


class SurfaceDocuments(DocumentStore):
    """A user's document store as one adapter surface writes it (``memory.documents(uid, surface=...)``): what the
    gate refuses is refused naming ``surface``, and ``check_writes`` gates a write without writing it."""

    def __init__(self, memory: Any, user_id: str, *, surface: str, **options: Any) -> None:
        super().__init__(memory, user_id, **options)
        self.surface = surface

    def _planned_row(self, ns: Namespace, key: str, op: PutDocument, t: float) -> Any:
        with refused_at(self.surface):
            return super()._planned_row(ns, key, op, t)

    @no_io
    def check_writes(self, ops: list[PutDocument | DeleteDocument]) -> None:
        """Validate and gate writes without writing anything: a caller writing to several users' stores in one
        call runs it on each first, so what one of them refuses is refused before anything is written."""
        t = now()
        for op in ops:
            if not isinstance(op, PutDocument | DeleteDocument):
                raise InvalidInputError(f"check_writes takes PutDocument and DeleteDocument items, got {describe(op)}")
            ns, key = check_namespace(op.namespace), check_label(op.key, "key")
            if isinstance(op, PutDocument):
                self._planned_row(ns, key, op, t)
