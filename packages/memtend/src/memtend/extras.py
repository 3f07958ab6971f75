"""Optional distributions that plug into the core: found by entry point, never imported by name.

An extra (``memtend-injection``, ``memtend-conflicts``) registers a factory under an entry-point group of
:data:`GROUPS`; the core asks :func:`installed` for it when a :class:`~memtend.memory.Memory` is built with the
hook left at :data:`AUTO`. So ``pip install memtend[injection]`` is enough to use the extra, the core keeps no
import of it, and an application can still pass its own hook or ``None`` to run without one.
"""

from __future__ import annotations

from enum import Enum
from functools import cache
from typing import Any, Final

__all__ = ["AUTO", "GROUPS", "Auto", "installed", "resolve"]


class Auto(Enum):
    """The type of :data:`AUTO`: "use the installed extra for this hook, if there is one"."""

    AUTO = "auto"


AUTO: Final = Auto.AUTO

# Entry-point group per hook: an extra declares ``[project.entry-points."memtend.injection_check"]`` and so on.
GROUPS: Final = {
    "injection_check": "memtend.injection_check",
    "conflict_judge": "memtend.conflict_judge",
}


@cache
def installed(hook: str) -> Any:
    """The hook an installed extra provides for ``hook`` (its entry point's factory, called once), or None."""
    from importlib.metadata import entry_points

    found = sorted(entry_points(group=GROUPS[hook]), key=lambda ep: ep.name)
    return found[0].load()() if found else None


def resolve(hook: str, value: Any) -> Any:
    """``value`` as given, or the installed extra's hook when ``value`` is :data:`AUTO`."""
    return installed(hook) if value is AUTO else value
