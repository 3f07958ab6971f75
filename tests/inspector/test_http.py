"""The inspector over HTTP: who is let in, forms from elsewhere, escaping, the mount point, the CLI command."""

from __future__ import annotations

import re
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from conftest import free_port
from memtend import Memory, Source
from memtend.errors import InspectorUnprotectedError, InvalidInputError
from memtend.inspector import Inspector, InspectorServer, is_loopback
from memtend.inspector.address import check_exposure


def _token(html: str) -> str:
    found = re.search(r'name="csrf" value="([^"]+)"', html)
    assert found is not None
    return found.group(1)


@pytest.fixture
def served(ephemeral_memory: Memory) -> Iterator[tuple[Memory, InspectorServer]]:
    with InspectorServer(ephemeral_memory) as server:
        yield ephemeral_memory, server


def test_stored_markup_is_shown_as_text(served: tuple[Memory, InspectorServer]) -> None:
    mem, server = served
    alice = mem.user("alice")
    note = alice.remember('<script>alert("x")</script> & <img src=x onerror=alert(1)>')
    alice.set_fact("nick<b>name</b>", "a\"b'c<i>")
    mem.user('<script>bad("user")</script>').remember("hello")
    home = httpx.get(server.url + "/").text
    assert "<script>bad" not in home and "&lt;script&gt;bad(&quot;user&quot;)&lt;/script&gt;" in home
    page = httpx.get(server.url + "/user", params={"user": "alice"})
    assert page.status_code == 200
    assert "<script>" not in page.text and "<img" not in page.text and "<i>" not in page.text
    assert "&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt; &amp; &lt;img src=x onerror=alert(1)&gt;" in page.text
    assert "a&quot;b&#x27;c&lt;i&gt;" in page.text
    record = httpx.get(server.url + "/record", params={"user": "alice", "id": note.id}).text
    assert "<script>" not in record and "&lt;script&gt;" in record
    policy = page.headers["content-security-policy"]
    assert "default-src 'none'" in policy and "script-src" not in policy  # no script runs, whatever slips through
    assert page.headers["x-frame-options"] == "DENY"


def test_posts_need_the_form_token(served: tuple[Memory, InspectorServer]) -> None:
    mem, server = served
    alice = mem.user("alice")
    note = alice.remember("Keep me")
    token = _token(httpx.get(server.url + "/user", params={"user": "alice"}).text)
    form = {"op": "delete", "user": "alice", "id": note.id}
    for bad in ({}, {"csrf": ""}, {"csrf": token[:-1] + ("A" if token[-1] != "A" else "B")}):
        refused = httpx.post(server.url + "/action", data={**form, **bad})
        assert refused.status_code == 403
        assert "form token" in refused.text
    # a form posted from a page of another site, even with the token, is refused
    other = httpx.post(server.url + "/action", data={**form, "csrf": token}, headers={"Origin": "http://evil.test"})
    assert other.status_code == 403
    assert alice.get(note.id).text == "Keep me"
    done = httpx.post(server.url + "/action", data={**form, "csrf": token}, headers={"Origin": server.url})
    assert done.status_code == 303 and done.headers["location"].startswith("/user?user=alice")
    assert alice.list() == []
    # another inspector (another start of the application) has another token
    assert Inspector(mem).token != Inspector(mem).token


def test_loopback_only_without_an_auth_hook(served: tuple[Memory, InspectorServer]) -> None:
    _, server = served
    assert httpx.get(server.url + "/").status_code == 200
    # a page on another site whose name was rebound to 127.0.0.1 sends its own Host
    rebound = httpx.get(server.url + "/", headers={"Host": f"attacker.test:{server.port}"})
    assert rebound.status_code == 403
    assert httpx.get(server.url + "/", headers={"Host": f"localhost:{server.port}"}).status_code == 200


def test_auth_hook_decides(ephemeral_memory: Memory) -> None:
    seen: list[dict[bytes, bytes]] = []

    def check(scope: Any) -> bool:
        headers = dict(scope["headers"])
        seen.append(headers)
        return headers.get(b"authorization") == b"Bearer let-me-in"

    ephemeral_memory.user("alice").remember("private note")
    with InspectorServer(ephemeral_memory, auth=check) as server:
        refused = httpx.get(server.url + "/user", params={"user": "alice"})
        assert refused.status_code == 403 and "private note" not in refused.text
        ok = httpx.get(server.url + "/user", params={"user": "alice"}, headers={"Authorization": "Bearer let-me-in"})
        assert ok.status_code == 200 and "private note" in ok.text
        # with a hook, the Host header is the hook's business (a proxy may send its public name)
        proxied = httpx.get(
            server.url + "/", headers={"Authorization": "Bearer let-me-in", "Host": "memory.example.com"}
        )
        assert proxied.status_code == 200
    assert len(seen) == 3


def test_auth_hook_async_and_failing(ephemeral_memory: Memory) -> None:
    async def allow(scope: Any) -> bool:
        return dict(scope["headers"]).get(b"x-operator") == b"yes"

    def broken(scope: Any) -> bool:
        raise RuntimeError("the session store is down")

    with InspectorServer(ephemeral_memory, auth=allow) as server:
        assert httpx.get(server.url + "/").status_code == 403
        assert httpx.get(server.url + "/", headers={"X-Operator": "yes"}).status_code == 200
    with InspectorServer(ephemeral_memory, auth=broken) as server:
        assert httpx.get(server.url + "/").status_code == 403  # a hook that fails lets nobody in
    with pytest.raises(InvalidInputError):
        Inspector(ephemeral_memory, auth="secret")  # type: ignore[arg-type]


def test_refuses_other_addresses_without_a_hook(ephemeral_memory: Memory) -> None:
    for host in ("0.0.0.0", "::", "", "192.0.2.7", "example.com"):
        assert not is_loopback(host)
        with pytest.raises(InspectorUnprotectedError) as refused:
            InspectorServer(ephemeral_memory, host=host, port=free_port())
        assert "authentication hook" in str(refused.value)
    for host in ("127.0.0.1", "127.8.9.10", "::1", "[::1]", "localhost", "LOCALHOST."):
        assert is_loopback(host)
        check_exposure(host, protected=False)
    check_exposure("0.0.0.0", protected=True)  # with a hook the application may listen where it likes


def test_mounted_under_a_prefix(ephemeral_memory: Memory) -> None:
    """Mounted in another ASGI app, links and redirects stay under the mount point (root_path), as a router such
    as Starlette's Mount passes it."""
    import uvicorn

    inspector = Inspector(ephemeral_memory)

    async def app(scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] == "http" and scope["path"].startswith("/admin/memory"):
            await inspector({**scope, "root_path": "/admin/memory"}, receive, send)
            return
        if scope["type"] == "http":
            await send({"type": "http.response.start", "status": 200, "headers": [(b"content-type", b"text/plain")]})
            await send({"type": "http.response.body", "body": b"the application"})

    ephemeral_memory.user("alice").remember("a note")
    port = free_port()
    server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning", lifespan="off"))
    import threading

    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    try:
        while not server.started:
            time.sleep(0.02)
        base = f"http://127.0.0.1:{port}"
        assert httpx.get(base + "/").text == "the application"
        home = httpx.get(base + "/admin/memory/").text
        assert 'href="/admin/memory/user?user=alice"' in home and 'href="/admin/memory/style.css"' in home
        page = httpx.get(base + "/admin/memory/user", params={"user": "alice"}).text
        assert 'action="/admin/memory/action"' in page
        note = ephemeral_memory.user("alice").list()[0]
        done = httpx.post(
            base + "/admin/memory/action",
            data={"op": "delete", "user": "alice", "id": note.id, "csrf": _token(page)},
        )
        assert done.status_code == 303 and done.headers["location"].startswith("/admin/memory/user?")
        assert ephemeral_memory.user("alice").list() == []
    finally:
        server.should_exit = True
        thread.join(timeout=30)


def test_errors_are_pages_not_tracebacks(served: tuple[Memory, InspectorServer]) -> None:
    mem, server = served
    alice = mem.user("alice")
    note = alice.remember("a note")
    page = httpx.get(server.url + "/user", params={"user": "alice"}).text
    token = _token(page)
    # a secret typed into a fact is refused by the write gate; the page names the error, never the value
    refused = httpx.post(
        server.url + "/action",
        data={"op": "set_fact", "user": "alice", "key": "card", "value": "4111 1111 1111 1111", "csrf": token},
    )
    assert refused.status_code == 400 and "SensitiveDataError" in refused.text and "4111" not in refused.text
    assert alice.facts() == {}
    missing = httpx.get(server.url + "/record", params={"user": "alice", "id": "no-such-id"})
    assert missing.status_code == 404 and "RecordNotFoundError" in missing.text
    wrong = httpx.post(server.url + "/action", data={"op": "erase", "user": "alice", "confirm": "ALICE", "csrf": token})
    assert wrong.status_code == 400 and [r.id for r in alice.list()] == [note.id]
    assert httpx.get(server.url + "/nowhere").status_code == 404
    assert httpx.post(server.url + "/action", data={"op": "nope", "user": "alice", "csrf": token}).status_code == 400
    big = httpx.post(server.url + "/action", content=b"x" * (2 << 20))
    assert big.status_code == 413


def test_export_is_a_json_download(served: tuple[Memory, InspectorServer]) -> None:
    mem, server = served
    mem.user("alice").set_fact("timezone", "Europe/Paris", source=Source.USER)
    got = httpx.get(server.url + "/export", params={"user": "alice"})
    assert got.status_code == 200
    assert got.headers["content-disposition"] == 'attachment; filename="memtend-export-alice.json"'
    assert [r["text"] for r in got.json()["records"]] == ["timezone: Europe/Paris"]


def _cli(*args: str) -> list[str]:
    return [sys.executable, "-m", "memtend.cli", *args]


def _wait_for(url: str, proc: subprocess.Popen[str]) -> httpx.Response:
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        assert proc.poll() is None, proc.stderr.read() if proc.stderr else ""
        try:
            return httpx.get(url)
        except httpx.TransportError:
            time.sleep(0.2)
    raise AssertionError("the inspector did not start")


def test_cli_serves_a_store_folder(tmp_path: Path, embedding_function: Any) -> None:
    with Memory(path=tmp_path / "store", embedding_function=embedding_function) as mem:
        mem.user("alice").remember("<b>bold</b> note")
    port = free_port()
    proc = subprocess.Popen(
        _cli("--path", str(tmp_path / "store"), "inspect", "--port", str(port)),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        home = _wait_for(f"http://127.0.0.1:{port}/", proc)
        assert 'href="/user?user=alice"' in home.text
        page = httpx.get(f"http://127.0.0.1:{port}/user", params={"user": "alice"}).text
        assert "&lt;b&gt;bold&lt;/b&gt; note" in page
    finally:
        proc.terminate()
        proc.wait(timeout=60)


def test_cli_refusals_are_one_line(tmp_path: Path, embedding_function: Any) -> None:
    wide = subprocess.run(
        _cli("--path", str(tmp_path / "none"), "inspect", "--host", "0.0.0.0"), capture_output=True, text=True
    )
    assert wide.returncode == 2 and "Traceback" not in wide.stderr
    assert wide.stderr.startswith("memtend: InspectorUnprotectedError: ")
    # the embedded store the running application holds: the message says how to inspect it
    with Memory(path=tmp_path / "store", embedding_function=embedding_function) as mem:
        mem.user("alice").remember("held")
        held = subprocess.run(
            _cli("--path", str(tmp_path / "store"), "inspect", "--port", str(free_port())),
            capture_output=True,
            text=True,
        )
    assert held.returncode == 2 and "Traceback" not in held.stderr
    assert "StoreLockedError" in held.stderr and "InspectorServer" in held.stderr


@pytest.mark.server
def test_cli_serves_a_chroma_server(chroma_server: Any, embedding_function: Any) -> None:
    """``--url``: the inspector and the application share a `chroma run` server; what the application writes while
    the inspector runs is shown on the next page load."""
    from memtend.connect import open_memory

    user = f"inspector-cli-{free_port()}"
    url = f"http://127.0.0.1:{chroma_server.port}"
    port = free_port()
    with open_memory(url, embedding_function=embedding_function) as app:
        app.user(user).remember("written before the inspector started")
        proc = subprocess.Popen(
            _cli("inspect", "--url", url, "--port", str(port)),
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        try:
            _wait_for(f"http://127.0.0.1:{port}/", proc)
            app.user(user).remember("written while it runs")
            page = httpx.get(f"http://127.0.0.1:{port}/user", params={"user": user}).text
            assert "written before the inspector started" in page and "written while it runs" in page
            note = app.user(user).list()[0]
            done = httpx.post(
                f"http://127.0.0.1:{port}/action",
                data={"op": "delete", "user": user, "id": note.id, "csrf": _token(page)},
            )
            assert done.status_code == 303
            assert [r.text for r in app.user(user).list()] == ["written while it runs"]
        finally:
            proc.terminate()
            proc.wait(timeout=60)
            app.erase_user(user)


def test_metrics_and_call_log(served: tuple[Memory, InspectorServer]) -> None:
    mem, server = served
    alice = mem.user("alice")
    state = alice.session("thread-1")
    state.set("branch", "main")
    assert state.get("branch") == "main"
    assert state.get("ticket") is None
    alice.set_fact("contact.method", "email")
    mem.user("bob").remember("bob's note")

    home = httpx.get(server.url + "/").text
    store_row = re.search(r'<tr data-scope="whole store">(.*?)</tr>', home)
    assert store_row is not None and "50.0%" in store_row.group(1) and "no data yet" in store_row.group(1)
    assert '<tr data-scope="bob">' in home

    page = httpx.get(server.url + "/user", params={"user": "alice"}).text
    session_row = re.search(r'<tr data-scope="session thread-1">(.*?)</tr>', page)
    assert session_row is not None and "<td>50.0%</td>" in session_row.group(1)
    calls = re.search(r'<table class="calls">(.*?)</table>', page, re.S)
    assert calls is not None
    log = calls.group(1)
    assert "<td>get</td><td>branch</td><td>hit</td><td>thread-1</td>" in log
    assert "<td>get</td><td>ticket</td><td>miss</td><td>thread-1</td>" in log
    assert "<td>set_fact</td><td>contact.method</td>" in log  # (outcome: "written" when logged before it resolved)
    assert "main" not in log and "email" not in log  # the log keeps keys and outcomes, never values
    # a page of another user shows that user's calls only
    bob = httpx.get(server.url + "/user", params={"user": "bob"}).text
    assert "branch" not in bob and "contact.method" not in bob


def test_viewing_a_user_leaves_their_call_log_and_metrics_alone(served: tuple[Memory, InspectorServer]) -> None:
    """A person looking at a user's pages changes nothing the team reads about the agent; a correction made there is
    logged as the operator's (docs/inspector.md, "What the inspector's own calls do")."""
    from memtend.metrics import tally

    mem, server = served
    alice = mem.user("alice")
    state = alice.session("thread-1")
    state.set("branch", "main")
    assert state.get("branch") == "main" and state.get("ticket") is None
    note = alice.remember("Alice deploys on Fridays")
    alice.set_fact("contact.method", "email")
    alice.recall("when does alice deploy?", k=2)
    calls_before = [c.to_dict() for c in alice.calls()]
    metrics_before = alice.metrics()
    looking = mem.user("alice", operator=True)  # this test's own reads are a person's too
    used_before = looking.get(note.id).last_used_at

    for path, params in [
        ("/", {}),
        ("/user", {"user": "alice"}),
        ("/record", {"user": "alice", "id": note.id}),
        ("/export", {"user": "alice"}),
        ("/erase", {"user": "alice"}),
    ]:
        assert httpx.get(server.url + path, params=params).status_code == 200, path
    assert [c.to_dict() for c in alice.calls()] == calls_before
    assert alice.metrics() == metrics_before
    assert metrics_before["memory_hit_rate"] == 0.5  # what the agent's own gets made, kept as it was
    # an operator's recall (the CLI's) is not a use: it extends no lifetime
    looking.recall("when does alice deploy?", k=2)
    assert looking.get(note.id).last_used_at == used_before
    assert [c.to_dict() for c in alice.calls()] == calls_before

    token = _token(httpx.get(server.url + "/user", params={"user": "alice"}).text)
    fixed = httpx.post(
        server.url + "/action",
        data={"op": "set_fact", "user": "alice", "key": "contact.method", "value": "phone", "csrf": token},
    )
    assert fixed.status_code == 303
    assert looking.facts()["contact.method"] == "phone"
    tally.flush(mem, "alice")  # the operator's mark survives the stored row, not only this process's tally
    after = alice.calls()
    seen = {(c["at"], c["op"], c["key"]) for c in calls_before}  # (stored, a call's ms is rounded)
    new = [c for c in after if (c.at, c.op, c.key) not in seen]
    assert [(c.op, c.key, c.by) for c in new] == [("set_fact", "contact.method", tally.OPERATOR)]
    assert all(c.by == "" for c in after if c is not new[0]), "the agent's calls stay its own"
    assert alice.metrics() == metrics_before  # a correction adds to no rate
    page = httpx.get(server.url + "/user", params={"user": "alice"}).text
    log = re.search(r'<table class="calls">(.*?)</table>', page, re.S)
    assert log is not None and "<td>set_fact</td><td>contact.method</td>" in log.group(1)
    assert "<td>operator</td>" in log.group(1) and "<td>application</td>" in log.group(1)
