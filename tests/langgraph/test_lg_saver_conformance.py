"""LangGraph's own checkpointer conformance suite (langgraph-checkpoint-conformance), every capability, on memtend."""

from __future__ import annotations

import zlib
from collections.abc import AsyncIterator
from typing import Any

import pytest
from langgraph.checkpoint.conformance import checkpointer_test, validate
from langgraph.checkpoint.conformance.capabilities import Capability
from memtend_langgraph import MemtendSaver

USERS = ("ada", "bo", "cy")


def user_of_thread(config: Any) -> str | None:
    """Spread the suite's threads over three users, so thread-only calls must find owners across users."""
    thread_id = (config.get("configurable") or {}).get("thread_id")
    return None if thread_id is None else USERS[zlib.crc32(str(thread_id).encode()) % len(USERS)]


async def test_conformance_full_with_every_capability(ephemeral_memory) -> None:  # type: ignore[no-untyped-def]
    @checkpointer_test(name="MemtendSaver")
    async def memtend_saver() -> AsyncIterator[MemtendSaver]:
        # the suite lists every thread with list(None): a saver-wide view, which an application opens on purpose
        yield MemtendSaver(ephemeral_memory, user_resolver=user_of_thread, admin=True)

    report = await validate(memtend_saver)
    report.print_report()
    results = report.to_dict()["results"]
    for capability in Capability:
        assert results[capability.value]["detected"], f"{capability.value} not detected"
    failed = {name: r["failures"] for name, r in results.items() if r["tests_failed"]}
    assert not failed, failed
    passed = sum(r["tests_passed"] for r in results.values())
    print(f"conformance: {passed} passed, 0 failed over {len(results)} capabilities")
    assert passed >= 81  # 58 base + 23 extended in langgraph-checkpoint-conformance 0.0.2
    assert report.passed_all_base() and report.passed_all()
    assert str(report.conformance_level()).upper().endswith("FULL")


@pytest.mark.parametrize("default_user", ["solo"])
async def test_conformance_base_with_one_default_user(ephemeral_memory, default_user: str) -> None:  # type: ignore[no-untyped-def]
    @checkpointer_test(name="MemtendSaverDefaultUser")
    async def memtend_saver() -> AsyncIterator[MemtendSaver]:
        yield MemtendSaver(ephemeral_memory, default_user=default_user)

    report = await validate(memtend_saver)
    assert report.passed_all(), report.to_dict()
