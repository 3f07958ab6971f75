"""The document store adapters keep what is not a memory in (``store``), the rules for its values (``values``)
and the keyed view of one namespace (``keyed``). The store's names load on first use, so that importing a
submodule stays light."""

from __future__ import annotations

import importlib
from typing import Any

_STORE_NAMES = frozenset(
    "DeleteDocument Document DocumentOp DocumentStore GetDocument ListNamespaces PutDocument SearchDocuments".split()
)


def __getattr__(name: str) -> Any:
    if name not in _STORE_NAMES:
        raise AttributeError(f"module 'memtend.documents' has no attribute {name!r}")
    return getattr(importlib.import_module("memtend.documents.store"), name)


__all__ = sorted(_STORE_NAMES)
