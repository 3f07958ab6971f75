"""The inspector as a plain ASGI application over one ``Memory``: routing, the access check, form tokens.

Every read and every change goes through the core's public API (``UserMemory`` and ``Memory`` methods, their async
twins so the event loop stays free); the inspector decides nothing about memory itself.

Access: with an ``auth`` hook, each request is let in when the hook (given the ASGI scope, which carries the
headers) returns true. Without one, only loopback requests are answered: the connection on both ends and the
``Host`` header must be loopback (so a page on another site that rebinds its name to 127.0.0.1 is refused too).
POSTs carry a per-application form token that only pages of the inspector hold (a cross-site form cannot read it).
"""

from __future__ import annotations

import hmac
import inspect
import re
import secrets
from collections.abc import Awaitable, Callable, Mapping
from typing import TYPE_CHECKING, Any
from urllib.parse import parse_qs

from memtend.errors import InvalidInputError, MemtendError, RecordNotFoundError
from memtend.inspector import pages
from memtend.inspector.address import host_of, is_loopback
from memtend.records import Source

if TYPE_CHECKING:
    from memtend.memory import Memory

__all__ = ["AuthHook", "Inspector"]

Scope = Mapping[str, Any]
Receive = Callable[[], Awaitable[dict[str, Any]]]
Send = Callable[[dict[str, Any]], Awaitable[None]]
# Given the request's ASGI scope (``scope["headers"]``: the raw header pairs), whether to let the request in.
AuthHook = Callable[[Scope], "bool | Awaitable[bool]"]

CALLS_SHOWN = 200  # call-log entries on a user's page, newest first
MAX_BODY = 1 << 20  # a form larger than this is refused (a note's edit is far smaller)
SECURITY_HEADERS = [
    (b"content-security-policy", b"default-src 'none'; style-src 'self'; form-action 'self'; frame-ancestors 'none'"),
    (b"x-frame-options", b"DENY"),
    (b"x-content-type-options", b"nosniff"),
    (b"referrer-policy", b"no-referrer"),
    (b"cache-control", b"no-store"),
]
_UNSAFE_FILENAME = re.compile(r"[^A-Za-z0-9._-]+")


class _Refused(Exception):
    """A request answered with an error page (status and a message safe to show)."""

    def __init__(self, status: int, message: str, back: str = "") -> None:
        super().__init__(message)
        self.status = status
        self.message = message
        self.back = back


class Inspector:
    """The memory inspector: an ASGI callable over ``memory``. Mount it in an application (``app.mount(
    "/memory", Inspector(mem, auth=check))`` in Starlette or FastAPI) or serve it with :func:`memtend.inspector.serve`.

    ``auth``: called with each request's ASGI scope; a true result (or awaitable of one) lets the request in.
    Without it only loopback requests are answered (see the module)."""

    def __init__(self, memory: Memory, *, auth: AuthHook | None = None, title: str = "memtend inspector") -> None:
        if auth is not None and not callable(auth):
            raise InvalidInputError(f"auth must be a callable taking the request scope, got {type(auth).__name__}")
        self.memory = memory
        self.auth = auth
        self.title = title
        self.token = secrets.token_urlsafe(32)

    # ------------------------------------------------------------------ ASGI
    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "lifespan":  # served alone: nothing to set up, the Memory belongs to the caller
            while True:
                message = await receive()
                if message["type"] == "lifespan.startup":
                    await send({"type": "lifespan.startup.complete"})
                elif message["type"] == "lifespan.shutdown":
                    await send({"type": "lifespan.shutdown.complete"})
                    return
        if scope["type"] != "http":
            return
        ctx = pages.Context(root=scope.get("root_path", "").rstrip("/"), token=self.token, title=self.title)
        try:
            if not await self._allowed(scope):
                raise _Refused(403, "not allowed: this inspector's access check refused the request")
            body = await _read_body(receive) if scope["method"] == "POST" else b""
            status, headers, content = await self._route(ctx, scope, body)
        except _Refused as refused:
            status, headers = refused.status, [(b"content-type", b"text/html; charset=utf-8")]
            content = pages.error_page(ctx, refused.status, refused.message, refused.back).encode()
        except MemtendError as exc:  # a typed error's message never repeats a refused value: safe to show
            status, headers = (
                404 if isinstance(exc, RecordNotFoundError) else 400,
                [(b"content-type", b"text/html; charset=utf-8")],
            )
            content = pages.error_page(ctx, status, f"{type(exc).__name__}: {exc}", ctx.link("/")).encode()
        await send({"type": "http.response.start", "status": status, "headers": [*headers, *SECURITY_HEADERS]})
        await send({"type": "http.response.body", "body": content})

    async def _allowed(self, scope: Scope) -> bool:
        if self.auth is None:
            server, client = scope.get("server"), scope.get("client")
            ends = [server[0] if server else None, client[0] if client else None, host_of(_header(scope, b"host"))]
            return all(end is not None and is_loopback(end) for end in ends)
        try:
            verdict = self.auth(scope)
            if inspect.isawaitable(verdict):
                verdict = await verdict
        except Exception:  # a hook that fails lets nobody in
            return False
        return verdict is True

    # ------------------------------------------------------------------ routing
    async def _route(
        self, ctx: pages.Context, scope: Scope, body: bytes
    ) -> tuple[int, list[tuple[bytes, bytes]], bytes]:
        path = _relative_path(scope)
        query = _pairs(scope.get("query_string", b""))
        method = scope["method"]
        if method == "POST":
            if path != "/action":
                raise _Refused(404, "no such page")
            return await self._action(ctx, scope, _pairs(body))
        if method not in ("GET", "HEAD"):
            raise _Refused(405, "only GET and POST are answered")
        if path == "/style.css":
            return 200, [(b"content-type", b"text/css; charset=utf-8")], pages.stylesheet().encode()
        if path == "/":
            users = await self.memory.ausers()
            metrics = await self.memory.ametrics()
            return _html(pages.users_page(ctx, users, metrics, pages.DONE.get(query.get("done", ""), "")))
        if path not in ("/user", "/record", "/export", "/erase"):
            raise _Refused(404, "no such page")
        user_id = query.get("user", "")
        if not user_id:
            raise _Refused(400, "the page names no user", ctx.link("/"))
        user = self.memory.user(user_id, operator=True)
        if path == "/user":
            records = await user.alist(status=None)
            facts = await user.afacts()
            flash = pages.DONE.get(query.get("done", ""), "")
            return _html(pages.user_page(ctx, user_id, records, facts, await self._extra_sections(ctx, user_id), flash))
        if path == "/record":
            record = await user.aget(query.get("id", ""))
            return _html(pages.record_page(ctx, user_id, record, await user.ahistory(record.id)))
        if path == "/export":
            data = await user.aexport()
            name = _UNSAFE_FILENAME.sub("_", user_id)[:64] or "user"
            return (
                200,
                [
                    (b"content-type", b"application/json; charset=utf-8"),
                    (b"content-disposition", f'attachment; filename="memtend-export-{name}.json"'.encode()),
                ],
                pages.export_json(data),
            )
        if path == "/erase":
            stats = await user.astats()
            return _html(pages.erase_page(ctx, user_id, stats["stored"]))
        raise _Refused(404, "no such page")

    async def _extra_sections(self, ctx: pages.Context, user_id: str) -> list[pages.Html]:
        """The user's metrics and stored call log."""
        user = self.memory.user(user_id, operator=True)
        return [pages.metrics_section(await user.ametrics()), pages.calls_section(await user.acalls(), CALLS_SHOWN)]

    async def _action(
        self, ctx: pages.Context, scope: Scope, form: dict[str, str]
    ) -> tuple[int, list[tuple[bytes, bytes]], bytes]:
        """One POST: the form token checked, then one call of the core's public API, then back to the page."""
        if not hmac.compare_digest(form.get("csrf", "").encode(), self.token.encode()):
            raise _Refused(403, "the form token is missing or stale: reload the page and try again")
        origin = _header(scope, b"origin")
        if origin is not None and origin != "null" and host_of(origin, with_port=True) != _header(scope, b"host"):
            raise _Refused(403, "a form from another site was refused")
        op, user_id, record_id = form.get("op", ""), form.get("user", ""), form.get("id", "")
        if not user_id:
            raise _Refused(400, "the form names no user")
        user = self.memory.user(user_id, operator=True)
        back = ctx.link("/user", user=user_id, done=op)
        if op == "set_fact":
            await user.aset_fact(form.get("key", ""), form.get("value", ""), source=Source.USER)
        elif op == "revise":  # a person's new words: the old version is archived, restorable
            await user.arevise(record_id, form.get("text", ""), source=Source.USER)
        elif op == "delete":
            await user.adelete(record_id)
        elif op == "accept":  # as proposed, or as the person edited it
            text = form.get("text", "")
            edited = text if text != form.get("original", "") else None
            await user.aaccept(record_id, text=edited)
        elif op == "approve":
            await user.aapprove(record_id)
        elif op == "reject":
            await user.areject(record_id)
        elif op == "restore":
            await user.arestore(record_id)
        elif op == "erase":
            if not hmac.compare_digest(form.get("confirm", "").encode(), user_id.encode()):
                raise _Refused(
                    400, "not erased: the user id typed to confirm does not match", ctx.link("/user", user=user_id)
                )
            await self.memory.aerase_user(user_id)
            back = ctx.link("/", done="erase")
        else:
            raise _Refused(400, "unknown action")
        return 303, [(b"location", back.encode()), (b"content-type", b"text/plain")], b""


def _html(content: pages.Html) -> tuple[int, list[tuple[bytes, bytes]], bytes]:
    return 200, [(b"content-type", b"text/html; charset=utf-8")], content.encode()


def _header(scope: Scope, name: bytes) -> str | None:
    for key, value in scope.get("headers", ()):
        if key.lower() == name:
            return bytes(value).decode("latin-1")
    return None


def _relative_path(scope: Scope) -> str:
    """The path under the mount point (servers and routers differ on whether ``path`` includes ``root_path``)."""
    path: str = scope.get("path", "/") or "/"
    root: str = scope.get("root_path", "") or ""
    if root and path.startswith(root):
        path = path[len(root) :] or "/"
    return path


def _pairs(raw: bytes) -> dict[str, str]:
    """A query string or urlencoded form as one value per name (the first), refusing bytes that are not UTF-8."""
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        raise _Refused(400, "the request is not UTF-8") from None
    return {k: v[0] for k, v in parse_qs(text, keep_blank_values=True).items()}


async def _read_body(receive: Receive) -> bytes:
    chunks: list[bytes] = []
    size = 0
    while True:
        message = await receive()
        if message["type"] == "http.disconnect":
            raise _Refused(400, "the client went away")
        chunk = message.get("body", b"")
        size += len(chunk)
        if size > MAX_BODY:
            raise _Refused(413, "the form is too large")
        chunks.append(chunk)
        if not message.get("more_body", False):
            return b"".join(chunks)
