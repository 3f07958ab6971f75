"""Every error memtend raises. Each one says what went wrong and how to fix it."""

from __future__ import annotations

import math


class MemtendError(Exception):
    """Base class of every error memtend raises."""


class InvalidInputError(MemtendError, ValueError):
    """An argument is of the wrong type, empty, too large, or not storable."""


class InvalidUserIdError(InvalidInputError):
    """A user id that is empty, not a string, or too long."""


class UserNotFoundError(InvalidUserIdError):
    """A call names no user: none of the places an adapter reads (the framework's run context, its config, the
    adapter's own setting) holds one. memtend keeps everything under one user, so a call without one is refused
    rather than given someone's data; the message names the places read and how to name the user."""


class UserMismatchError(InvalidUserIdError):
    """Two places of one call name different users (say the run's context and its config). The call is refused,
    not given either user's data; ``places`` names the places that disagree (never the user ids)."""

    def __init__(self, message: str, places: tuple[str, ...] = ()) -> None:
        super().__init__(message)
        self.places = places


class DocumentTooLargeError(InvalidInputError):
    """A document value is larger than the document store's limit (named in the message)."""


class ReservedNamespaceError(InvalidInputError):
    """A namespace reserved for memtend's own data was named from outside."""


class UnknownKindError(InvalidInputError):
    """A record kind memtend does not know."""


class SensitiveDataError(MemtendError):
    """The write gate refused text holding a secret or sensitive value.

    ``kinds`` names what was found (``card``, ``aws_access_key``, ...). The value itself is never
    part of the message, so the error can be logged safely. ``surface`` names the adapter surface that refused
    it (``MemtendStore``, ``MemtendSaver``, ...) when one did; nothing of that call was written.
    """

    def __init__(self, kinds: list[str], *, can_redact: bool = True, surface: str | None = None) -> None:
        self.kinds = sorted(set(kinds))
        self.can_redact = can_redact
        self.surface = surface
        if surface is not None:
            fix = (
                "nothing of the call was written; remove the value, or open it with redact=True (the adapters' "
                "default, see docs/secrets.md) to store the text with the value masked"
            )
        elif can_redact:
            fix = "remove the value, or pass redact=True to store the text with it masked"
        else:
            fix = "remove the value or store a reference to it instead (this call has no redact option)"
        who = f"{surface} refused" if surface is not None else "refused"
        super().__init__(f"{who} to store text holding sensitive data (" + ", ".join(self.kinds) + "); " + fix)

    def at(self, surface: str) -> SensitiveDataError:
        """The same refusal, naming the adapter ``surface`` that made it."""
        return SensitiveDataError(self.kinds, can_redact=self.can_redact, surface=surface)


class SensitiveIdentifierError(SensitiveDataError):
    """An identifier (session id, namespace label, key, tool name, metadata key) holds a secret or sensitive value.

    An identifier names what is stored and cannot be masked, so ``redact=True`` does not help. ``what`` names the
    identifier; neither the message nor the attributes hold its value.
    """

    def __init__(self, what: str, kinds: list[str], *, surface: str | None = None) -> None:
        super().__init__(kinds, surface=surface)
        self.what = what
        who = f"{surface} refused" if surface is not None else "refused"
        self.args = (
            f"{who} {what}: it holds sensitive data ({', '.join(self.kinds)}). An identifier cannot be masked "
            "(redact=True does not apply to it); name it without the value, e.g. with a reference or a hash",
        )

    def at(self, surface: str) -> SensitiveIdentifierError:
        return SensitiveIdentifierError(self.what, self.kinds, surface=surface)


class UntrustedContentError(MemtendError):
    """Text from an untrusted source was asked to become a rule or trusted fact without review."""


class RecordNotFoundError(MemtendError, KeyError):
    """No record with that id exists for this user."""

    def __str__(self) -> str:  # KeyError quotes its argument; keep the message readable
        return str(self.args[0]) if self.args else "record not found"


class EmbeddingModelUnavailableError(MemtendError, RuntimeError):
    """No embedding model could be prepared offline."""


class StorageUnavailableError(MemtendError, ConnectionError):
    """The Chroma backend could not be reached or failed mid-operation."""


class WriteInterruptedError(StorageUnavailableError):
    """Chroma stopped answering after a write had begun, so part of it may be stored. memtend keeps the write and
    finishes it with the same ids (nothing stored twice) on the user's next call once Chroma answers, or when the
    store is next opened; do not call it again. ``record_ids`` names the records it writes."""

    def __init__(self, message: str, record_ids: tuple[str, ...] = ()) -> None:
        super().__init__(message)
        self.record_ids = record_ids


class EmbeddingMismatchError(MemtendError, ValueError):
    """The store was built with another embedding function than the one given: its vectors would not compare.
    Open it with the embedding function it was built with (the message names both)."""


class StoreLockedError(MemtendError, RuntimeError):
    """Another process already holds this embedded Chroma directory."""


class StoreNotFoundError(MemtendError, FileNotFoundError):
    """A folder named as an existing store holds none (a typo in the path?); the message says how to create one."""


class StoreDamagedError(MemtendError, RuntimeError):
    """A store's files are missing or damaged; the message names the file and what to do."""


class InspectorUnprotectedError(MemtendError, RuntimeError):
    """The memory inspector was asked to listen on (or answer from) an address other than loopback without an
    authentication hook: anyone who reaches it could read and erase every user's memory."""


class MemoryClosedError(MemtendError, RuntimeError):
    """A call through a Memory (or a handle obtained from it) after ``Memory.close()``."""


_SHOWN_NUMBER = 1_000_000  # numbers below this are shown in messages (k=0, ttl=-1); larger ones only described


def describe(value: object) -> str:
    """What a refused value is, without its content: ``a str of 12 characters``, ``an int of 16 digits``, ``-1``."""
    if isinstance(value, bool) or value is None:
        return repr(value)
    if isinstance(value, int):
        return repr(value) if abs(value) < _SHOWN_NUMBER else f"an int of about {_digits(value)} digits"
    if isinstance(value, float):
        return repr(value) if not math.isfinite(value) or abs(value) < _SHOWN_NUMBER else "a large float"
    if isinstance(value, str | bytes):
        return f"a {type(value).__name__} of {len(value)} {'characters' if isinstance(value, str) else 'bytes'}"
    return f"a {type(value).__name__}"


def _digits(value: int) -> int:
    return int(value.bit_length() * math.log10(2)) + 1  # str() of a huge int is slow, and refused past 4300 digits
