"""Safe HTML building for the inspector: every value is escaped unless it is already :class:`Html`.

Pages are built from small templates filled with :func:`fill`, which escapes each argument that is not markup the
inspector itself built, so stored text (a note holding ``<script>``) is always shown as text.
"""

from __future__ import annotations

import html
import time
from collections.abc import Iterable
from urllib.parse import urlencode


class Html(str):
    """Markup built by the inspector (never stored text): inserted as it is."""


def esc(value: object) -> Html:
    """``value`` as HTML text: markup the inspector built stays, anything else is escaped (quotes included)."""
    if isinstance(value, Html):
        return value
    return Html(html.escape("" if value is None else str(value), quote=True))


def fill(template: str, *args: object) -> Html:
    """``template`` (inspector-written markup with ``{}`` places) with each argument escaped into its place."""
    return Html(template.format(*(esc(a) for a in args)))


def join(parts: Iterable[object]) -> Html:
    return Html("".join(esc(p) for p in parts))


def href(base: str, path: str, **query: str) -> str:
    """A link under the inspector's mount point, its query percent-encoded (escaped later, as any value)."""
    return f"{base}{path}" + (f"?{urlencode(query)}" if query else "")


def when(epoch: float | None) -> str:
    """An epoch time as a UTC date a person reads; blank for none."""
    if not epoch:
        return ""
    return time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime(epoch))


STYLE = """
body { font-family: system-ui, sans-serif; margin: 1.5rem auto; max-width: 72rem; padding: 0 1rem; color: #222; }
h1 { font-size: 1.4rem; } h2 { font-size: 1.15rem; margin-top: 1.8rem; border-bottom: 1px solid #ddd; }
table { border-collapse: collapse; width: 100%; margin: .5rem 0; font-size: .9rem; }
th, td { text-align: left; padding: .3rem .5rem; border-bottom: 1px solid #eee; vertical-align: top; }
th { background: #f6f6f6; }
td.text { white-space: pre-wrap; word-break: break-word; max-width: 30rem; }
form.inline { display: inline; margin: 0; }
button { cursor: pointer; margin: 0 .15rem; }
.danger { color: #a00; } .note { color: #555; font-size: .9rem; }
.flash { background: #eef7ee; border: 1px solid #9c9; padding: .5rem; }
.error { background: #fbeeee; border: 1px solid #c99; padding: .5rem; }
.flagged { color: #a00; font-weight: bold; }
nav a { margin-right: 1rem; }
pre { background: #f6f6f6; padding: .5rem; overflow-x: auto; white-space: pre-wrap; word-break: break-word; }
"""
