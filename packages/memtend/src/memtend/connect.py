"""Open a Memory from one string: a store folder, or the URL of a ``chroma run`` server.

The frameworks' convention (``SqliteSaver.from_conn_string("checkpoints.sqlite")``, a ``langgraph.json`` factory
configured by the environment) names a store with one string; this is the one place that reads it, so every
adapter accepts the same strings. ``http://host:port`` and ``https://host[:port]`` name a server (several
processes share it); anything else is a folder (embedded Chroma, one process). With no string, ``MEMTEND_URL``
names a server, else ``MEMTEND_PATH`` (or ``./.memtend``) the folder, as ``Memory()`` does.
"""

from __future__ import annotations

import inspect
import os
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

from memtend.errors import InvalidInputError

if TYPE_CHECKING:
    from memtend.memory import Memory

__all__ = ["ServerAddress", "open_memory", "server_address"]

URL_VARIABLE = "MEMTEND_URL"
DEFAULT_PORTS = {"http": 8000, "https": 443}  # 8000 is chroma run's own default


@dataclass(frozen=True)
class ServerAddress:
    host: str
    port: int
    ssl: bool


def server_address(target: str) -> ServerAddress | None:
    """The server a string names, None for a folder; a URL memtend cannot use raises InvalidInputError (the
    message never repeats the URL: it may carry credentials)."""
    if "://" not in target:
        return None
    parts = urlsplit(target)
    scheme = parts.scheme.lower()
    if scheme not in DEFAULT_PORTS:
        raise InvalidInputError(
            f"a store URL starts with http:// or https:// (a Chroma server), got a {scheme or 'blank'}:// URL; "
            "a folder is given as a plain path"
        )
    if parts.username is not None or parts.password is not None or parts.query or parts.fragment:
        raise InvalidInputError(
            "a Chroma server URL is scheme://host:port only (no credentials, query or fragment); pass a client "
            "with its own settings as Memory(client=chromadb.HttpClient(...)) for anything more"
        )
    if parts.path not in ("", "/"):
        raise InvalidInputError("a Chroma server URL has no path: use scheme://host:port")
    try:
        port = parts.port
    except ValueError:
        raise InvalidInputError("the port of a Chroma server URL must be a number from 1 to 65535") from None
    if not parts.hostname:
        raise InvalidInputError("a Chroma server URL names a host: http://HOST:PORT")
    return ServerAddress(parts.hostname, port or DEFAULT_PORTS[scheme], ssl=scheme == "https")


def open_memory(target: str | os.PathLike[str] | None = None, **options: Any) -> Memory:
    """A Memory on ``target`` (a folder or a server URL; see the module) with ``Memory``'s other options.

    A folder is locked for this process until the Memory closes (``StoreLockedError`` in another process);
    a server takes many processes."""
    from memtend.memory import Memory

    if "client" in options or "path" in options:
        raise InvalidInputError("open_memory takes the store as its URL or path: pass no client or path with it")
    unknown = sorted(set(options) - set(inspect.signature(Memory).parameters))
    if unknown:
        raise InvalidInputError(f"Memory takes no option {unknown[0]!r} (see help(memtend.Memory))")
    if target is None:
        target = os.environ.get(URL_VARIABLE) or None
        if target is None:
            return Memory(**options)
    if isinstance(target, os.PathLike):
        return Memory(path=target, **options)
    if not isinstance(target, str) or not target.strip():
        raise InvalidInputError(
            f"a store is named by a folder path or a Chroma server URL (http://host:port), got "
            f"{'a blank string' if isinstance(target, str) else type(target).__name__}"
        )
    address = server_address(target.strip())
    if address is None:
        return Memory(path=target, **options)
    from memtend.storage.chroma import http_client

    return Memory(client=http_client(address.host, address.port, ssl=address.ssl), **options)
