"""Where the user is in a LangGraph namespace or config: a label position or a function of the caller's."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from memtend_langgraph.errors import UserNotFoundError

Namespace = tuple[str, ...]
NamespaceUser = Callable[[Namespace], "str | None"]
ConfigUser = Callable[[Mapping[str, Any]], "str | None"]

WILDCARD = "*"


@dataclass(frozen=True)
class UserInNamespace:
    """Finds the user of a namespace: the label at ``position`` or what ``function`` returns (None = no user).

    For a prefix (search, list_namespaces) the user is known only when the prefix reaches that label (before any
    ``"*"`` wildcard of a listing); a function sees the prefix and returns None when it cannot tell.
    """

    position: int = 0
    function: NamespaceUser | None = None

    def of(self, namespace: Namespace) -> str | None:
        """The user of an item's namespace or of a search prefix (labels are literal there, ``"*"`` too)."""
        if self.function is not None:
            user = self.function(tuple(namespace))
            return user if user else None
        if len(namespace) > self.position:
            return namespace[self.position]
        return None

    def of_pattern(self, prefix: Namespace) -> str | None:
        """The user named by a listing prefix, where ``"*"`` matches any label and so names nobody."""
        if WILDCARD in prefix:
            prefix = prefix[: prefix.index(WILDCARD)]  # only the labels before the first wildcard are known
        return self.of(prefix)

    def describe(self) -> str:
        if self.function is not None:
            return f"the user function {getattr(self.function, '__name__', repr(self.function))}"
        return f"label {self.position} of the namespace"


def user_from_config(config: Mapping[str, Any] | None, resolver: ConfigUser | None, default: str | None) -> str:
    """The user a checkpoint belongs to: ``resolver(config)``, else ``configurable.user_id``, else ``default``."""
    user: str | None = None
    if resolver is not None and config is not None:
        user = resolver(config)
    if not user and config is not None:
        configurable = config.get("configurable") or {}
        found = configurable.get("user_id")
        user = str(found) if found not in (None, "") else None
    if not user:
        user = default
    if not user:
        raise UserNotFoundError(
            "the checkpoint's config names no user: pass config={'configurable': {'thread_id': ..., "
            "'user_id': ...}}, give MemtendSaver(user_resolver=...) or MemtendSaver(default_user=...)"
        )
    return user
