"""Where LangGraph holds the user of a call, handed to memtend's one identity rule (:mod:`memtend.identity`).

A run's config carries its ``Runtime`` (``context=`` of ``invoke``) among its ``configurable`` values and, the
older way, ``configurable.user_id``; a node or tool reaches its run's config through ``langgraph.config``. The
store names the user by namespace templates (``("memories", "{user_id}")``) or, the earlier layouts, a label
position or a function of the namespace.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from memtend.identity import (
    SHARED_OWNER,
    NamespaceTemplate,
    Place,
    as_prefixes,
    as_templates,
    field_of,
    starts_with,
)

Namespace = tuple[str, ...]
NamespaceUser = Callable[[Namespace], "str | None"]
ConfigUser = Callable[[Mapping[str, Any]], "str | None"]

WILDCARD = "*"
DEFAULT_TEMPLATES: tuple[tuple[str, ...], ...] = (("memories", "{user_id}"),)  # LangGraph's how-to and LangMem


def runtime_of(config: Mapping[str, Any] | None) -> Any:
    """The run's ``langgraph.runtime.Runtime`` a config carries (LangGraph puts it among ``configurable``'s
    values for the checkpointer and every node), or None outside a run."""
    if not config:
        return None
    from langgraph.runtime import Runtime

    configurable = config.get("configurable") or {}
    for value in configurable.values():
        if isinstance(value, Runtime):
            return value
    return None


def run_places(config: Mapping[str, Any] | None, context_field: str = "user_id") -> list[Place]:
    """A run's places for its user, the framework's own first: ``runtime.context`` then ``configurable``."""
    runtime = runtime_of(config)
    context = None if runtime is None else runtime.context
    configurable = (config or {}).get("configurable") or {}
    return [
        (f"the run's context ({context_field})", field_of(context, context_field)),
        ("configurable.user_id", configurable.get("user_id")),
    ]


def current_config() -> Mapping[str, Any] | None:
    """The config of the run this code is called from (a node, a task, a tool), or None outside one."""
    from langgraph.config import get_config

    try:
        return get_config()
    except RuntimeError:
        return None


@dataclass(frozen=True)
class UserInNamespace:
    """How a store namespace names its owner: a shared prefix (no one user's), the first template matching it,
    else the legacy ``position`` / ``function`` when the store was opened with one. None = it names no user."""

    templates: tuple[NamespaceTemplate, ...] = ()
    shared: tuple[Namespace, ...] = ()
    position: int | None = None
    function: NamespaceUser | None = None
    legacy: bool = field(default=False)

    @classmethod
    def build(
        cls,
        templates: Sequence[object] | None,
        shared: Sequence[object],
        position: int | None,
        function: NamespaceUser | None,
    ) -> UserInNamespace:
        legacy = position is not None or function is not None
        default: Sequence[object] = () if legacy else DEFAULT_TEMPLATES  # a label position or function alone
        parsed = as_templates(templates) if templates is not None else (as_templates(default) if default else ())
        return cls(parsed, as_prefixes(shared, "shared_namespaces"), position, function, legacy)

    def is_shared(self, namespace: Namespace) -> bool:
        return any(starts_with(namespace, prefix) for prefix in self.shared)

    def of(self, namespace: Namespace) -> str | None:
        """The owner of an item's namespace or of a search prefix: ``SHARED_OWNER`` for a shared one."""
        namespace = tuple(namespace)
        if self.is_shared(namespace):
            return SHARED_OWNER
        for template in self.templates:
            user = template.user_of(namespace)
            if user is not None:
                return user
        if self.function is not None:
            user = self.function(namespace)
            return user if user else None
        if self.position is not None and len(namespace) > self.position:
            return namespace[self.position]
        return None

    def of_pattern(self, prefix: Namespace) -> str | None:
        """The owner named by a listing prefix, where ``"*"`` matches any label and so names nobody."""
        if WILDCARD in prefix:
            prefix = prefix[: prefix.index(WILDCARD)]  # only the labels before the first wildcard are known
        return self.of(prefix)

    def describe(self) -> str:
        parts = [f"the templates {', '.join(t.describe() for t in self.templates)}"] if self.templates else []
        if self.function is not None:
            parts.append(f"the user function {getattr(self.function, '__name__', repr(self.function))}")
        elif self.position is not None:
            parts.append(f"label {self.position} of the namespace")
        if self.shared:
            parts.append(f"{len(self.shared)} shared prefix(es)")
        return "; ".join(parts)
