"""``from_conn_string``'s return value: one object that is a context manager under ``with`` and ``async with``.

LangGraph's savers come in pairs (``SqliteSaver.from_conn_string`` under ``with``, ``AsyncSqliteSaver``'s under
``async with``) because their connections are sync or async. memtend's saver and store serve both kinds of call
from one object, so one opener serves both statements: under ``async with`` the Memory opens and closes off the
event loop (it connects, and on a folder takes the lock).
"""

from __future__ import annotations

import asyncio
import inspect
from collections.abc import Callable
from types import TracebackType
from typing import Any, Generic, Protocol, TypeVar


class Closable(Protocol):
    def close(self) -> None: ...

    async def aclose(self) -> None: ...


C = TypeVar("C", bound=Closable)


def split_options(cls: type, options: dict[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
    """``options`` of ``from_conn_string`` as (the class's own keyword arguments, the Memory's)."""
    init = cls.__init__  # type: ignore[misc]  # __init__'s keywords: the saver's __new__ takes any
    own = set(inspect.signature(init).parameters) - {"self", "memory"}
    return {k: v for k, v in options.items() if k in own}, {k: v for k, v in options.items() if k not in own}


class Opening(Generic[C]):
    """Opens ``C`` on entry (``with`` or ``async with``) and closes it on exit; single use."""

    def __init__(self, open_: Callable[[], C]) -> None:
        self._open = open_
        self._opened: C | None = None

    def _take(self) -> C:
        if self._opened is None:
            raise RuntimeError("from_conn_string(...) was not entered: use it as `with ... as x` or `async with`")
        opened, self._opened = self._opened, None
        return opened

    def _check_fresh(self) -> None:
        if self._opened is not None:
            raise RuntimeError("from_conn_string(...) is already entered: call it again for another one")

    def __enter__(self) -> C:
        self._check_fresh()
        self._opened = self._open()
        return self._opened

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self._take().close()

    async def __aenter__(self) -> C:
        self._check_fresh()
        self._opened = await asyncio.to_thread(self._open)
        return self._opened

    async def __aexit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        await self._take().aclose()
