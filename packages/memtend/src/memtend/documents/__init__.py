"""The document store adapters keep what is not a memory in (``store``), the rules for its values (``values``)
and the keyed view of one namespace (``keyed``). The store's names load on first use, so that importing a
submodule stays light; type checkers read the ``TYPE_CHECKING`` import below."""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from memtend.documents.store import (
        MAX_FILTER_FIELDS,
        MAX_VALUE_BYTES,
        DeleteDocument,
        Document,
        DocumentOp,
        DocumentStore,
        DocumentTooLargeError,
        ExportReader,
        GateMode,
        GetDocument,
        ListNamespaces,
        Namespace,
        PutDocument,
        ReservedNamespaceError,
        SearchDocuments,
        add_export_reader,
    )

__all__ = [
    "MAX_FILTER_FIELDS",
    "MAX_VALUE_BYTES",
    "DeleteDocument",
    "Document",
    "DocumentOp",
    "DocumentStore",
    "DocumentTooLargeError",
    "ExportReader",
    "GateMode",
    "GetDocument",
    "ListNamespaces",
    "Namespace",
    "PutDocument",
    "ReservedNamespaceError",
    "SearchDocuments",
    "add_export_reader",
]


def __getattr__(name: str) -> Any:
    if name not in __all__:
        raise AttributeError(f"module 'memtend.documents' has no attribute {name!r}")
    return getattr(importlib.import_module("memtend.documents.store"), name)
