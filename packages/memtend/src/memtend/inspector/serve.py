"""Serving the inspector with uvicorn: in the foreground (the CLI), or on a thread beside a running application."""

from __future__ import annotations

import threading
import time
from typing import TYPE_CHECKING

from memtend.errors import InvalidInputError
from memtend.inspector.address import check_exposure
from memtend.inspector.app import AuthHook, Inspector

if TYPE_CHECKING:
    import uvicorn

    from memtend.memory import Memory

__all__ = ["InspectorServer", "serve"]

START_TIMEOUT = 30.0  # seconds a thread-served inspector may take to bind its port


def _config(app: Inspector, host: str, port: int, log_level: str) -> uvicorn.Config:
    import uvicorn

    if not isinstance(port, int) or isinstance(port, bool) or not 0 <= port <= 65535:
        raise InvalidInputError("port must be an int from 0 to 65535 (0: any free port)")
    check_exposure(host, app.auth is not None)
    return uvicorn.Config(app, host=host, port=port, log_level=log_level, lifespan="off", access_log=False)


def serve(
    memory: Memory, *, host: str = "127.0.0.1", port: int = 8765, auth: AuthHook | None = None, log_level: str = "info"
) -> None:
    """Serve the inspector over ``memory`` until interrupted (Ctrl-C). Refuses an address other than loopback
    without ``auth`` (InspectorUnprotectedError)."""
    import uvicorn

    uvicorn.Server(_config(Inspector(memory, auth=auth), host, port, log_level)).run()


class InspectorServer:
    """The inspector served on a thread of this process, beside the application that owns ``memory`` (an embedded
    store is held by one process: this is how to inspect it while the application runs). Use as a context manager,
    or ``start()`` and ``stop()``."""

    def __init__(
        self,
        memory: Memory,
        *,
        host: str = "127.0.0.1",
        port: int = 0,
        auth: AuthHook | None = None,
        log_level: str = "warning",
    ) -> None:
        import uvicorn

        self.app = Inspector(memory, auth=auth)
        self._server = uvicorn.Server(_config(self.app, host, port, log_level))
        self._thread: threading.Thread | None = None
        self.host = host
        self.port = port

    @property
    def url(self) -> str:
        host = f"[{self.host}]" if ":" in self.host else self.host
        return f"http://{host}:{self.port}"

    def start(self) -> InspectorServer:
        self._thread = threading.Thread(target=self._server.run, name="memtend-inspector", daemon=True)
        self._thread.start()
        deadline = time.monotonic() + START_TIMEOUT
        while not self._server.started:
            if not self._thread.is_alive() or time.monotonic() > deadline:
                raise OSError("the inspector could not listen on that address and port (is the port in use?)")
            time.sleep(0.02)
        sockets = [s for server in self._server.servers for s in server.sockets]
        if sockets:
            self.port = int(sockets[0].getsockname()[1])
        return self

    def stop(self) -> None:
        self._server.should_exit = True
        if self._thread is not None:
            self._thread.join(timeout=START_TIMEOUT)
            self._thread = None

    def __enter__(self) -> InspectorServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()
