"""The memory inspector: a small web application where a person sees, corrects and deletes what is remembered.

``memtend --path DIR inspect`` serves it; ``Inspector(memory, auth=...)`` is the same application as a plain ASGI
callable to mount in an existing one; ``InspectorServer(memory)`` serves it on a thread beside a running
application. It uses only the core's public API. docs/inspector.md says what it shows and how access is checked.
"""

from __future__ import annotations

from memtend.inspector.address import is_loopback
from memtend.inspector.app import AuthHook, Inspector
from memtend.inspector.serve import InspectorServer, serve

__all__ = ["AuthHook", "Inspector", "InspectorServer", "is_loopback", "serve"]
