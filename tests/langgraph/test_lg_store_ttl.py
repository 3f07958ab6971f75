"""TTL on MemtendStore (LangGraph's minutes): expiry, refresh on read, per-item TTLs, the background sweeper."""

from __future__ import annotations

import time

import pytest
from lg_fixtures import lg_memory_fixture  # noqa: F401  (the lg_memory fixture)
from memtend_langgraph import MemtendStore

ONE_SECOND = 1 / 60  # LangGraph TTLs are minutes


def test_an_expired_item_is_gone(lg_memory) -> None:  # type: ignore[no-untyped-def]
    store = MemtendStore(lg_memory, user_label=0, ttl={"default_ttl": ONE_SECOND})
    store.put(("u", "t"), "short", {"v": "apple"})
    store.put(("u", "t"), "forever", {"v": "apple"}, ttl=None)
    store.put(("u2",), "unread", {"v": "apple"})
    assert store.get(("u", "t"), "short") is not None
    assert len(store.search(("u",), filter={"v": "apple"})) == 2
    time.sleep(1.3)
    assert store.get(("u", "t"), "short") is None  # gone without waiting for a sweep
    assert [i.key for i in store.search(("u",), filter={"v": "apple"})] == ["forever"]
    assert store.sweep_ttl() == 1  # what no read met yet: the other user's item
    assert store.search(("u2",)) == []
    assert store.get(("u", "t"), "forever") is not None


def test_reading_refreshes_the_ttl(ephemeral_memory) -> None:  # type: ignore[no-untyped-def]
    store = MemtendStore(ephemeral_memory, user_label=0, ttl={"default_ttl": 1.0, "refresh_on_read": True})
    started = time.time()
    for key in ("read", "searched", "untouched", "read-no-refresh"):
        store.put(("u",), key, {"k": key})
    time.sleep(1.1)
    store.get(("u",), "read")  # refresh_ttl defaults to the config's refresh_on_read
    store.get(("u",), "read-no-refresh", refresh_ttl=False)
    store.search(("u",), filter={"k": "searched"})
    # a minute after the puts, only the refreshed items are still within their TTL
    swept = ephemeral_memory.sweep_documents(now=started + 60.5)
    assert swept == 2
    assert sorted(i.key for i in store.search(("u",))) == ["read", "searched"]


def test_no_refresh_when_the_config_says_so(ephemeral_memory) -> None:  # type: ignore[no-untyped-def]
    store = MemtendStore(ephemeral_memory, user_label=0, ttl={"default_ttl": 1.0, "refresh_on_read": False})
    started = time.time()
    store.put(("u",), "k", {"v": 1})
    time.sleep(1.1)
    store.get(("u",), "k", refresh_ttl=True)
    assert ephemeral_memory.sweep_documents(now=started + 60.5) == 1


def test_item_ttl_overrides_the_default(ephemeral_memory) -> None:  # type: ignore[no-untyped-def]
    store = MemtendStore(ephemeral_memory, user_label=0, ttl={"default_ttl": 5.0})
    started = time.time()
    store.put(("u",), "one-minute", {"v": 1}, ttl=1.0)
    store.put(("u",), "default", {"v": 2})
    store.put(("u",), "permanent", {"v": 3}, ttl=None)
    assert ephemeral_memory.sweep_documents(now=started + 120) == 1
    assert sorted(i.key for i in store.search(("u",))) == ["default", "permanent"]
    assert ephemeral_memory.sweep_documents(now=started + 400) == 1
    assert [i.key for i in store.search(("u",))] == ["permanent"]


def test_the_sweeper_runs_with_the_store(ephemeral_memory, monkeypatch: pytest.MonkeyPatch) -> None:  # type: ignore[no-untyped-def]
    sweeps: list[int] = []
    real = ephemeral_memory.sweep_documents

    def counted(now: float | None = None) -> int:
        swept = real(now)
        sweeps.append(swept)
        return swept

    monkeypatch.setattr(ephemeral_memory, "sweep_documents", counted)
    with MemtendStore(
        ephemeral_memory, user_label=0, ttl={"default_ttl": ONE_SECOND, "sweep_interval_minutes": 0.3 / 60}
    ) as store:
        store.put(("u",), "k", {"v": 1})
        deadline = time.monotonic() + 20
        while sum(sweeps) < 1 and time.monotonic() < deadline:
            time.sleep(0.1)
        assert sum(sweeps) == 1  # the sweeper deleted the expired item on its own
    runs = len(sweeps)
    time.sleep(0.7)
    assert len(sweeps) == runs  # closing the store stopped it
    assert store.stop_ttl_sweeper()


async def test_async_reads_refresh_and_expire(ephemeral_memory) -> None:  # type: ignore[no-untyped-def]
    import asyncio

    store = MemtendStore(ephemeral_memory, user_label=0, ttl={"default_ttl": 1.0, "refresh_on_read": True})
    started = time.time()
    await store.aput(("u",), "read", {"v": 1})
    await store.aput(("u",), "searched", {"v": 2})
    await store.aput(("u",), "left", {"v": 3})
    await store.aput(("u",), "short", {"v": 4}, ttl=ONE_SECOND)
    await asyncio.sleep(1.2)
    assert await store.aget(("u",), "short") is None
    await store.aget(("u",), "read")
    assert [i.key for i in await store.asearch(("u",), filter={"v": 2})] == ["searched"]
    assert await ephemeral_memory.asweep_documents(now=started + 60.5) == 1
    assert sorted(i.key for i in await store.asearch(("u",))) == ["read", "searched"]
