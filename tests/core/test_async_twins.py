"""The async surface: every public sync method of the public classes has an ``a``-twin declared in code with the
same parameters and return annotation; twins answer what their sync methods answer; sync calls work inside a
running event loop; handles (``user.session()``, ``user.ledger()``, ``user.store()``) do no I/O when created."""

from __future__ import annotations

import asyncio
import inspect
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import memtend
import pytest
from memtend import Memory, MemoryTool, Source
from memtend.aio import NO_IO_ATTRIBUTE

# The classes whose methods reach storage; a name not (yet) exported is skipped.
IO_CLASSES = ["Memory", "UserMemory", "MemoryTool", "SessionState", "Ledger", "KeyedStore", "DocumentStore"]
# Memory's handle members that memtend's own layers call in-process (some while holding the store's lock), not an
# application's API: they need no twin. Those of them an application may call too (apply, embed) keep theirs.
HANDLE_ONLY = frozenset(
    {
        "apply_streamed",
        "embed_parts",
        "embed_query",
        "emit",
        "emit_documents_changed",
        "forget_index",
        "gated_beside_embedding",
        "mark_stale",
        "preload_index",
        "settled_storage",
        "usage_stamps",
        "user_index",
    }
)


def _sync_methods(cls: type) -> dict[str, Any]:
    out = {}
    for name, member in inspect.getmembers(cls, inspect.isfunction):
        if name.startswith("_") or inspect.iscoroutinefunction(member) or getattr(member, NO_IO_ATTRIBUTE, False):
            continue
        if cls.__name__ == "Memory" and name in HANDLE_ONLY:
            continue
        out[name] = member
    return out


def _same_type(annotation: Any) -> str:
    """An annotation as text; ``builtins.list`` (written where a method named ``list`` shadows it) is ``list``."""
    return str(annotation).replace("builtins.", "")


def _classes() -> list[type]:
    return [getattr(memtend, name) for name in IO_CLASSES if name in memtend.__all__]


def test_handle_only_names_are_the_handle_protocols_members() -> None:
    from memtend.handle import FacadeHandle

    protocol = {n for n in dir(FacadeHandle) if not n.startswith("_")}
    assert protocol >= HANDLE_ONLY, f"not handle members: {sorted(HANDLE_ONLY - protocol)}"


def test_the_classes_under_check_are_exported() -> None:
    names = {c.__name__ for c in _classes()}
    assert {"Memory", "UserMemory", "MemoryTool", "SessionState", "Ledger", "KeyedStore"} <= names


@pytest.mark.parametrize("cls", _classes(), ids=lambda c: c.__name__)
def test_every_public_sync_method_has_a_declared_twin(cls: type) -> None:
    methods = _sync_methods(cls)
    assert methods, f"{cls.__name__} has no public sync methods to check"
    problems = []
    for name, sync in methods.items():
        twin = cls.__dict__.get("a" + name) or getattr(cls, "a" + name, None)
        if twin is None:
            problems.append(f"{name}: no a{name}")
            continue
        if not inspect.iscoroutinefunction(twin):
            problems.append(f"a{name} is not declared with async def")
            continue
        if twin.__name__ != "a" + name or twin.__qualname__.split(".")[-1] != "a" + name:
            problems.append(f"a{name} is not declared under its own name (generated?)")
        s, t = inspect.signature(sync), inspect.signature(twin)
        if [(p.name, p.kind, p.default, _same_type(p.annotation)) for p in s.parameters.values()] != [
            (p.name, p.kind, p.default, _same_type(p.annotation)) for p in t.parameters.values()
        ]:
            problems.append(f"a{name}{t} differs from {name}{s}")
        if _same_type(s.return_annotation) != _same_type(t.return_annotation):
            problems.append(f"a{name} returns {t.return_annotation}, {name} returns {s.return_annotation}")
    assert not problems, f"{cls.__name__}: " + "; ".join(problems)


def test_no_twin_is_attached_at_import_time() -> None:
    """Twins live in the class body, where type checkers read them (no setattr from a list of names); the mixins a
    class inherits its calls from (``UserMemory``'s ``ReviewCalls``, ``MetricsCalls``) are read too."""
    for cls in {base for c in _classes() for base in c.__mro__ if base.__module__.startswith("memtend")}:
        for name, member in vars(cls).items():
            if inspect.iscoroutinefunction(member) and not name.startswith("__"):
                source = inspect.getsource(member)
                assert f"async def {name}(" in source, f"{cls.__name__}.{name} is not declared in code"


async def test_twins_answer_what_their_sync_methods_answer(ephemeral_memory: Memory) -> None:
    u = ephemeral_memory.user("twin-user")
    note = await u.aremember("Prefers window seats on long flights")
    assert (await u.aget(note.id)) == u.get(note.id)
    fact = await u.aset_fact("seat", "window")
    assert fact.outcome == "added" and (await u.aget_fact("seat")) == u.get_fact("seat")
    hits = await u.arecall("which seat on a plane?", k=2)
    assert [h.record.id for h in hits] == [h.record.id for h in u.recall("which seat on a plane?", k=2)]
    assert [e.id for e in await u.ahistory()] == [e.id for e in u.history()]
    state = u.session("trip")
    assert (await state.aset("gate", "B12")).outcome == "added"
    assert await state.aget("gate") == "B12" == state.get("gate")
    ledger = u.ledger("trip")
    await ledger.arecord("book_seat", {"seat": "14A"}, {"booking_id": "bk_1"})
    assert (await ledger.aseen("book_seat", {"seat": "14A"})) == ledger.seen("book_seat", {"seat": "14A"})
    store = u.store("notes")
    await store.aput("k", {"v": 1})
    assert await store.aget("k") == {"v": 1} == store.get("k")
    tool = MemoryTool(state, ledger)
    assert await tool.ahandle({"op": "get", "key": "gate"}) == tool.handle({"op": "get", "key": "gate"})
    receipt = await ephemeral_memory.aerase_user("twin-user")
    assert receipt.total > 0 and u.list(status=None) == []


async def test_sync_calls_work_inside_a_running_event_loop(ephemeral_memory: Memory) -> None:
    asyncio.get_running_loop()  # a loop is running here, as in a notebook or an async test
    u = ephemeral_memory.user("loop-user")
    u.remember("Likes green tea")
    assert u.recall("tea", k=1)[0].text == "Likes green tea"
    assert u.set_fact("drink", "tea", source=Source.USER).outcome == "added"
    state = u.session("s")
    state.set("x", 1)
    assert state.get("x") == 1
    u.ledger("s").record("send_mail", {"to": "a"}, "ok")
    assert u.ledger("s").seen("send_mail", {"to": "a"}) is not None
    u.store("ns").put("k", "v")
    assert u.store("ns").get("k") == "v"
    assert ephemeral_memory.erase_user("loop-user").total > 0


@contextmanager
def _no_storage_calls(memory: Memory) -> Iterator[list[str]]:
    """Record every call on the store's Chroma collections (the real ones, wrapped) while the block runs."""
    calls: list[str] = []
    collections = list(memory.storage.collections().values())
    originals = []
    for col in collections:
        for op in ("get", "add", "upsert", "update", "delete", "query", "count"):
            original = getattr(col, op)
            originals.append((col, op, original))

            def spy(*args: Any, _op: str = op, _original: Any = original, **kwargs: Any) -> Any:
                calls.append(_op)
                return _original(*args, **kwargs)

            object.__setattr__(col, op, spy)
    try:
        yield calls
    finally:
        for col, op, original in originals:
            object.__setattr__(col, op, original)


def test_handles_do_no_io_when_created(ephemeral_memory: Memory) -> None:
    u = ephemeral_memory.user("handle-user")
    u.remember("warm up")
    with _no_storage_calls(ephemeral_memory) as calls:
        u.session("s1")
        u.ledger("s1")
        u.store("ns")
        MemoryTool(u.session("s1"), u.ledger("s1"))
        if hasattr(u, "documents"):
            u.documents()
        ephemeral_memory.user("someone-else")
    assert calls == [], f"creating handles reached storage: {calls}"
    with _no_storage_calls(ephemeral_memory) as calls:
        u.session("s1").get("missing")
    assert calls, "the spy sees storage calls (so the check above could fail)"
