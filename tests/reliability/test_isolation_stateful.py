"""Isolation under random operations: no user ever sees, changes or keeps another user's data.

The state machine and its :class:`~memtend.testing.Driver` live in :mod:`memtend.testing`, so framework adapters
reuse them; this module runs the machine over the core (:class:`~memtend.testing.CoreDriver`) on an
EphemeralClient, and the hostile ids over every backend. See :func:`memtend.testing.make_isolation_machine` for
what is checked after every step.
"""

from __future__ import annotations

import json
from typing import Any

import chromadb
import pytest
from conftest import scaled, unique_prefix
from hypothesis import HealthCheck, settings
from memtend import Memory
from memtend.testing import HOSTILE_USER_IDS, CoreDriver, Driver, make_isolation_machine, marker, strip_keys


# --------------------------------------------------------------------------------------------- every backend
@pytest.mark.slow
def test_hostile_ids_stay_apart_on_every_backend(memory: Memory) -> None:
    """The machine runs on EphemeralClient; the filters must hold the same on disk and over HTTP (where ids
    travel as JSON): every hostile id gets its own data, and erasing half of them leaves the rest intact."""
    driver = CoreDriver(memory)
    ids = list(HOSTILE_USER_IDS)
    for slot, uid in enumerate(ids):
        driver.write(uid, f"{marker(slot)} note about the harbour", kind="note")
        memory.user(uid).set_fact("user_id", f"{marker(slot)} value")
        memory.user(uid).store("$or").put("user_id", {"v": marker(slot)})
    for slot, uid in enumerate(ids):
        seen = driver.list(uid) + driver.recall(uid, "harbour note value")
        assert seen and all(s.user_id == uid and marker(slot) in s.text for s in seen), uid
        others = [marker(i) for i in range(len(ids)) if i != slot]
        blob = json.dumps(strip_keys(driver.export(uid), frozenset({"user_id"})), ensure_ascii=False)
        assert not [m for m in others if m in blob], f"{uid!r} sees another user's data"
    for uid in ids[::2]:
        driver.erase(uid)
    for slot, uid in enumerate(ids):
        texts = [s.text for s in driver.list(uid)]
        if slot % 2 == 0:
            assert texts == [] and memory.user(uid).store("$or").get("user_id") is None, uid
        else:
            assert len(texts) == 2 and memory.user(uid).store("$or").get("user_id") == {"v": marker(slot)}, uid


# --------------------------------------------------------------------------------------------- the core
_EMBEDDING_FUNCTION: Any = None


def core_driver() -> Driver:
    """One EphemeralClient Memory per example, with its own collections; the real embedding model."""
    global _EMBEDDING_FUNCTION
    if _EMBEDDING_FUNCTION is None:
        from memtend.storage.embeddings import default_embedding_function

        _EMBEDDING_FUNCTION = default_embedding_function()
    return CoreDriver(
        Memory(
            client=chromadb.EphemeralClient(), embedding_function=_EMBEDDING_FUNCTION, collection_prefix=unique_prefix()
        )
    )


CoreIsolation = make_isolation_machine(core_driver)
TestCoreIsolation = CoreIsolation.TestCase
TestCoreIsolation.settings = settings(
    max_examples=scaled(25),
    stateful_step_count=15,
    deadline=None,
    database=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much, HealthCheck.data_too_large],
)
TestCoreIsolation = pytest.mark.slow(TestCoreIsolation)
