"""Which addresses are loopback, for the inspector's rule that it answers only on loopback without an auth hook."""

from __future__ import annotations

import ipaddress
from urllib.parse import urlsplit

from memtend.errors import InspectorUnprotectedError

LOOPBACK_NAMES = frozenset({"localhost", "localhost.localdomain", "ip6-localhost", "ip6-loopback"})


def is_loopback(host: str) -> bool:
    """True for a loopback name or address (127.0.0.0/8, ::1, localhost); false for anything else, the wildcard
    addresses (0.0.0.0, ::) and a blank host included, since those listen on every interface."""
    name = host.strip().strip("[]").lower().rstrip(".")
    if name in LOOPBACK_NAMES or name.endswith(".localhost"):
        return True
    try:
        return ipaddress.ip_address(name.split("%", 1)[0]).is_loopback
    except ValueError:
        return False


def host_of(value: str | None, *, with_port: bool = False) -> str | None:
    """The host of a ``Host`` header (``127.0.0.1:8765``, ``[::1]:80``) or of an origin URL; None when blank.
    ``with_port``: the origin's ``host[:port]`` as a ``Host`` header would say it."""
    if not value:
        return None
    if "://" in value:
        parts = urlsplit(value)
        if with_port:
            return parts.netloc or None
        return parts.hostname
    if value.startswith("["):
        return value[1:].split("]", 1)[0]
    return value.rsplit(":", 1)[0] if value.count(":") == 1 else value


def check_exposure(host: str, protected: bool) -> None:
    """Refuse to listen on an address other than loopback without an auth hook (``protected``)."""
    if not protected and not is_loopback(host):
        raise InspectorUnprotectedError(
            "the inspector listens on an address other than loopback only with an authentication hook: anyone who "
            "reaches it could read and erase every user's memory. Listen on 127.0.0.1 (and reach it through an SSH "
            "tunnel or a proxy that checks who calls), or serve Inspector(memory, auth=...) from your application"
        )
