"""Working memory: session state (get, set, list, delete) and the side-effect ledger, over real Chroma."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from memtend import InvalidInputError, KeyedStore, Memory, SensitiveDataError, UserMemory
from memtend.policies.forgetting import DAY
from memtend.records import now
from memtend.working import session as session_module
from memtend.working.ledger import Ledger, call_key, extract_ids
from memtend.working.session import STATS_KEY, SessionState


def session(user: UserMemory, session_id: str = "t1") -> SessionState:
    """What ``user.session(session_id)`` returns once it is wired into UserMemory."""
    return SessionState(user, session_id)


def ledger(user: UserMemory, session_id: str = "t1") -> Ledger:
    return Ledger(user, session_id)


def raw(user: UserMemory, session_id: str = "t1") -> KeyedStore:
    """The session's own rows (its values and the stats row), in memtend's reserved space."""
    return session(user, session_id)._store


# ------------------------------------------------------------------------------------------ every backend
def test_get_set_list_delete(memory: Memory) -> None:
    state = session(memory.user("alice"))
    assert state.get("branch") is None
    assert state.get("branch", "none") == "none"
    assert state.set("branch", "main").outcome == "added"
    assert state.set("plan", {"steps": ["a", "b"], "done": 1}).outcome == "added"
    assert state.set("plan", {"steps": ["a", "b"], "done": 1}).outcome == "unchanged"
    assert state.get("branch") == "main"
    assert state.get("plan") == {"steps": ["a", "b"], "done": 1}
    assert state.list() == {"branch": "main", "plan": {"steps": ["a", "b"], "done": 1}}
    assert state.delete("branch") is True
    assert state.delete("branch") is False
    assert state.get("branch") is None
    assert list(state.list()) == ["plan"]


def test_keys_are_canonical_and_list_keeps_insertion_order(memory: Memory) -> None:
    state = session(memory.user("alice"))
    state.set("User ID", 1)
    state.set("branch", "main")
    state.set("Ticket-Number", "T-9")
    assert state.set("userId", 2).outcome == "updated"  # the same key as "User ID"
    assert state.set("user_id", 3).key == "user_id"
    assert state.get("USER ID") == 3
    assert list(state.list().items()) == [("user_id", 3), ("branch", "main"), ("ticket_number", "T-9")]
    assert state.delete("userId") is True
    assert list(state.list()) == ["branch", "ticket_number"]


def test_sessions_and_users_are_isolated_and_erased(memory: Memory) -> None:
    alice, bob = memory.user("alice"), memory.user("bob")
    session(alice, "t1").set("branch", "main")
    session(alice, "t2").set("branch", "dev")
    session(bob, "t1").set("branch", "bob-only")
    ledger(alice, "t1").record("send_email", {"to": "bob"}, {"id": "m-1"})
    assert session(alice, "t1").get("branch") == "main"
    assert session(alice, "t2").get("branch") == "dev"
    assert session(bob, "t1").list() == {"branch": "bob-only"}
    assert session(bob, "t2").list() == {}
    assert ledger(alice, "t2").seen("send_email", {"to": "bob"}) is None
    assert ledger(bob, "t1").seen("send_email", {"to": "bob"}) is None
    assert ledger(alice, "t1").seen("send_email", {"to": "bob"}) is not None

    receipt = memory.erase_user("alice")
    assert receipt.counts["documents"] >= 4  # two sessions' values and stats rows, one ledger entry
    assert session(alice, "t1").list() == {}
    assert session(alice, "t2").get("branch") is None
    assert ledger(alice, "t1").entries() == []
    assert raw(alice, "t1").items() == []
    assert session(bob, "t1").get("branch") == "bob-only"


def test_round_trip_across_processes(tmp_path: Path, embedding_function: object) -> None:
    """State, counts and ledger written by this process are read by a fresh one (embedded Chroma on disk)."""
    store = tmp_path / "store"
    with Memory(path=store, embedding_function=embedding_function) as mem:
        alice = mem.user("alice")
        state = session(alice, "thread-1")
        state.set("User ID", 7)
        state.set("branch", "main")
        state.set("userId", 8)
        state.get("user_id")
        state.get("nope")
        state.flush()
        ledger(alice, "thread-1").record("open_pr", {"repo": "x", "title": "fix"}, '{"number": "PR-45"}')
    read = textwrap.dedent(
        f"""
        import json
        from memtend import Memory
        from memtend.working.ledger import Ledger
        from memtend.working.session import SessionState
        with Memory(path={str(store)!r}) as mem:
            alice = mem.user("alice")
            state = SessionState(alice, "thread-1")
            entry = Ledger(alice, "thread-1").seen("open_pr", {{"title": "fix", "repo": "x"}})
            print(json.dumps([list(state.list().items()), state.stats(), list(entry.ids)]))
        """
    )
    done = subprocess.run([sys.executable, "-c", read], capture_output=True, text=True, check=True)
    items, stats, ids = json.loads(done.stdout)
    assert items == [["user_id", 8], ["branch", "main"]]
    assert stats["calls"] == {"get": 2, "set": 3, "list": 1, "delete": 0}  # the reader's own list() adds one
    assert stats["unflushed"] == 1
    assert (stats["hits"], stats["misses"], stats["hit_rate"]) == (1, 1, 0.5)
    assert ids == ["PR-45"]


# ------------------------------------------------------------------------------------------ expiry
def test_every_write_sets_expiry_and_forget_removes_expired_state(ephemeral_memory: Memory) -> None:
    alice = ephemeral_memory.user("alice")
    state = session(alice)
    days = ephemeral_memory.retention.session_days
    before = now()
    state.set("branch", "main")
    ledger(alice).record("send_email", {"to": "bob"}, "sent")
    item = raw(alice, "t1").item("branch")
    assert item is not None and item.expires_at is not None
    assert before + days * DAY <= item.expires_at <= now() + days * DAY

    assert alice.forget(now=now() + (days - 1) * DAY).session_items == 0
    assert state.get("branch") == "main"
    report = alice.forget(dry_run=True, now=now() + (days + 1) * DAY)
    assert report.session_items == 3  # the value, the session's stats row, the ledger entry
    alice.forget(now=now() + (days + 1) * DAY)
    assert state.list() == {}
    assert ledger(alice).entries() == []
    assert raw(alice, "t1").items() == []


def test_expired_state_is_not_returned_before_forget_runs(
    ephemeral_memory: Memory, monkeypatch: pytest.MonkeyPatch
) -> None:
    state = session(ephemeral_memory.user("alice"))
    state.set("branch", "main")
    later = now() + (ephemeral_memory.retention.session_days + 1) * DAY
    monkeypatch.setattr(session_module, "now", lambda: later)
    assert state.get("branch") is None
    assert state.list() == {}
    assert state.set("branch", "dev").outcome == "added"


# ------------------------------------------------------------------------------------------ gate and values
@pytest.mark.parametrize(
    ("key", "value", "kind"),
    [
        ("note", "my password is hunter2", "password"),
        ("payment", "4111 1111 1111 1111", "card"),
        ("password", "hunter2", "password"),  # the key counts: "password: hunter2"
        ("login", {"user": "bob", "password": "hunter2"}, "password"),
        ("cards", ["visa", "4111111111111111"], "card"),
    ],
)
def test_gate_refuses_secrets_without_echoing_them(
    ephemeral_memory: Memory, key: str, value: object, kind: str
) -> None:
    state = session(ephemeral_memory.user("alice"))
    state.set("branch", "main")
    with pytest.raises(SensitiveDataError) as err:
        state.set(key, value)
    assert kind in err.value.kinds
    assert "hunter2" not in str(err.value) and "4111" not in str(err.value)
    assert "redact=True" not in str(err.value)  # session state has no redact option: the advice must not offer one
    assert "reference" in str(err.value)
    assert state.list() == {"branch": "main"}
    assert state.stats()["refused"] == 1


@pytest.mark.parametrize("value", [object(), float("nan"), {1: "x"}, {"a": {1, 2}}, "x" * 40_000, b"bytes"])
def test_values_must_be_small_json(ephemeral_memory: Memory, value: object) -> None:
    state = session(ephemeral_memory.user("alice"))
    with pytest.raises(InvalidInputError):
        state.set("thing", value)
    assert state.list() == {}


@pytest.mark.parametrize("key", ["", "  ", "!!!", 5, None])
def test_bad_keys_are_refused(ephemeral_memory: Memory, key: object) -> None:
    state = session(ephemeral_memory.user("alice"))
    with pytest.raises(InvalidInputError):
        state.set(key, "x")  # type: ignore[arg-type]
    with pytest.raises(InvalidInputError):
        state.get(key)  # type: ignore[arg-type]
    assert state.stats()["errors"] == 2


@pytest.mark.parametrize("session_id", ["", " ", 3, None, "x" * 300])
def test_bad_session_ids_are_refused(ephemeral_memory: Memory, session_id: object) -> None:
    with pytest.raises(InvalidInputError):
        SessionState(ephemeral_memory.user("alice"), session_id)  # type: ignore[arg-type]
    with pytest.raises(InvalidInputError):
        Ledger(ephemeral_memory.user("alice"), session_id)  # type: ignore[arg-type]


# ------------------------------------------------------------------------------------------ stats and log
def test_stats_hit_rate_is_exact_and_shared_by_handles(ephemeral_memory: Memory) -> None:
    alice = ephemeral_memory.user("alice")
    assert session(alice).stats()["hit_rate"] is None
    session(alice).set("branch", "main")
    session(alice).set("User ID", 4)
    for key in ("branch", "userId", "branch", "missing"):
        session(alice).get(key)  # a new handle per call, as an adapter would make
    session(alice).list()
    stats = session(alice).stats()
    assert stats["calls"] == {"get": 4, "set": 2, "list": 1, "delete": 0}
    assert (stats["hits"], stats["misses"], stats["hit_rate"]) == (3, 1, 0.75)
    assert stats["unflushed"] == 5  # reads since the last write
    assert session(alice).flush() == 5
    assert session(alice).stats() == {**stats, "unflushed": 0}
    stored = raw(alice, "t1").get(STATS_KEY)
    assert (stored["get"], stored["set"], stored["hits"], stored["misses"]) == (4, 2, 3, 1)
    assert STATS_KEY not in session(alice).list()


def test_writes_carry_the_counts_and_reads_never_create_rows(
    ephemeral_memory: Memory, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(session_module, "FLUSH_EVERY", 3)
    alice = ephemeral_memory.user("alice")
    state = session(alice, "reads-only")
    for _ in range(5):
        state.get("anything")
    assert raw(alice, "reads-only").items() == [], "reads alone never create a row"
    state.set("k", 1)
    stored = raw(alice, "reads-only").get(STATS_KEY)
    assert (stored["get"], stored["misses"], stored["set"]) == (5, 5, 1)
    for _ in range(3):  # the third read reaches FLUSH_EVERY and updates the existing row
        state.get("k")
    assert raw(alice, "reads-only").get(STATS_KEY)["hits"] == 3
    assert state.stats()["unflushed"] == 0
    state.delete("k")
    assert raw(alice, "reads-only").get(STATS_KEY)["delete"] == 1


def test_every_call_is_logged(ephemeral_memory: Memory) -> None:
    state = session(ephemeral_memory.user("alice"))
    state.set("User ID", 1)
    state.get("userId")
    state.get("nope")
    state.list()
    state.delete("user_id")
    with pytest.raises(SensitiveDataError):
        state.set("pin", "my password is hunter2")
    log = state.calls()
    assert [(c.op, c.key, c.outcome) for c in log] == [
        ("set", "user_id", "added"),
        ("get", "user_id", "hit"),
        ("get", "nope", "miss"),
        ("list", "", "1 keys"),
        ("delete", "user_id", "removed"),
        ("set", "pin", "refused"),
    ]
    assert all("hunter2" not in str(c) for c in log)
    assert log == sorted(log, key=lambda c: c.at)


# ------------------------------------------------------------------------------------------ ledger
def test_ledger_detects_repeats_whatever_the_key_order(ephemeral_memory: Memory) -> None:
    book = ledger(ephemeral_memory.user("alice"))
    args = {"to": "bob@example.com", "subject": "Invoice", "cc": ["a", "b"], "n": 1}
    assert book.seen("send_email", args) is None
    first = book.record("send_email", args, {"message_id": "msg-77", "status": "sent"})
    assert first.calls == 1 and first.ids == ("msg-77",)
    reordered = {"n": 1.0, "cc": ["a", "b"], "subject": "Invoice", "to": "bob@example.com"}
    seen = book.seen("send_email", reordered)
    assert seen is not None and seen.key == first.key
    assert seen.ids == ("msg-77",) and seen.first_at == first.first_at
    assert book.seen("send_email", '{"to": "bob@example.com", "subject": "Invoice", "cc": ["a", "b"], "n": 1}')
    assert book.seen("send_email", {**args, "cc": ["b", "a"]}) is None  # list order is meaningful
    assert book.seen("send_sms", args) is None
    again = book.record("send_email", reordered, "sent again: #981")
    assert again.calls == 2 and again.ids == ("msg-77", "#981")
    assert "already called" in again.describe() and "msg-77" in again.describe()
    assert call_key("send_email", args) == call_key("send_email", reordered)


def test_ledger_stats_count_repeats_but_not_completions(ephemeral_memory: Memory) -> None:
    book = ledger(ephemeral_memory.user("alice"))
    assert book.stats()["repeat_rate"] is None
    book.record("open_pr", {"title": "fix"}, pending=True)  # before the call
    entry = book.record("open_pr", {"title": "fix"}, {"url": "https://git.example/pr/1", "number": "PR-1"})
    assert entry.calls == 1 and not entry.pending and entry.ids == ("PR-1",)
    book.record("deploy", {"env": "prod"}, "ok")
    book.record("deploy", {"env": "prod"}, "ok")
    book.record("deploy", {"env": "prod"}, pending=True)
    assert book.stats() == {"session_id": "t1", "calls": 4, "distinct": 2, "repeats": 2, "repeat_rate": 0.5}
    assert [e.tool for e in book.entries()] == ["open_pr", "deploy"]


def test_ledger_masks_secrets_in_what_it_keeps(ephemeral_memory: Memory) -> None:
    book = ledger(ephemeral_memory.user("alice"))
    entry = book.record(
        "charge", {"card": "4111 1111 1111 1111", "amount": 5}, "charged 4111 1111 1111 1111, id ch_1 #55"
    )
    stored = str(ephemeral_memory.user("alice").store("ledger:t1").items())
    assert "4111" not in stored and "4111" not in str(entry)
    assert entry.args == {"card": "[REDACTED:card]", "amount": 5}
    assert entry.ids == ("#55",)
    assert book.seen("charge", {"amount": 5, "card": "4111 1111 1111 1111"}) is not None


@pytest.mark.parametrize(
    ("result", "ids"),
    [
        ({"id": 12, "thread": {"threadId": "t-9"}, "ok": True}, ["12", "t-9"]),
        ('{"data": {"order_id": "o-1", "item_ids": ["a", "b"]}}', ["o-1", "a", "b"]),
        ("Created PR-45 for #123 (see JIRA-7); encoding UTF-8", ["PR-45", "#123", "JIRA-7"]),
        ("job 123e4567-e89b-12d3-a456-426614174000 queued", ["123e4567-e89b-12d3-a456-426614174000"]),
        ("saved as 0123456789abcdef0123456789abcdef", ["0123456789abcdef0123456789abcdef"]),
        ("nothing here", []),
        ({"id": True, "name": "x"}, []),
        ("&#123; is an html entity", []),
    ],
)
def test_extract_ids(result: object, ids: list[str]) -> None:
    assert extract_ids(result) == ids


def test_ledger_refuses_bad_input(ephemeral_memory: Memory) -> None:
    book = ledger(ephemeral_memory.user("alice"))
    for tool in ("", 3, None):
        with pytest.raises(InvalidInputError):
            book.record(tool, {})  # type: ignore[arg-type]
    with pytest.raises(InvalidInputError):
        book.record("x", {"a": object()})
    with pytest.raises(InvalidInputError):
        book.seen("x", float("inf"))
    assert book.entries() == []


# ------------------------------------------------------------------------------------------ async
def test_async_twins(ephemeral_memory: Memory) -> None:
    alice = ephemeral_memory.user("alice")

    async def run() -> tuple[object, ...]:
        state, book = session(alice), ledger(alice)
        await state.aset("Branch Name", "main")
        got = await state.aget("branch_name")
        listed = await state.alist()
        stats = await state.astats()
        await state.aflush()
        forgot = await state.adelete("branchName")
        log = await state.acalls()
        await book.arecord("send", {"a": 1}, "#1")
        seen = await book.aseen("send", {"a": 1})
        entries = await book.aentries()
        ledger_stats = await book.astats()
        return got, listed, stats["hits"], forgot, len(log), seen is not None, len(entries), ledger_stats["calls"]

    assert asyncio.run(run()) == ("main", {"branch_name": "main"}, 1, True, 4, True, 1, 1)


def test_keyed_store_refusal_advises_a_reference_not_redact(ephemeral_memory: Memory) -> None:
    store = ephemeral_memory.user("alice").store("prefs")
    store.put("theme", "dark")
    with pytest.raises(SensitiveDataError) as err:
        store.put("card", "4111 1111 1111 1111")
    assert err.value.kinds == ["card"]
    assert "redact=True" not in str(err.value) and "reference" in str(err.value)
    assert "4111" not in str(err.value)
    assert store.get("theme") == "dark" and store.get("card") is None
