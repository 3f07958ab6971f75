"""The gate's channels through MemtendStore: namespace labels and keys are identifiers (refused even with
redact), values of any JSON shape are read whole (a secret split over list items is masked)."""

from __future__ import annotations

import pytest
from memtend import Memory, SensitiveIdentifierError
from memtend_langgraph import MemtendStore

GH_TOKEN = "ghp_MFLZDe1f8rESQedUStPKR0CsTy4Qwb8DwkNh"  # fake, from the gate corpus


def test_store_labels_and_keys_holding_secrets_are_refused_and_values_masked(ephemeral_memory: Memory) -> None:
    store = MemtendStore(ephemeral_memory, user_label=1, redact=True)
    store.put(("memories", "alice"), "k", {"v": 1})
    for namespace, key in ((("memories", "alice", GH_TOKEN), "k"), (("memories", "alice"), f"key {GH_TOKEN}")):
        with pytest.raises(SensitiveIdentifierError) as caught:
            store.put(namespace, key, {"v": 2})
        assert GH_TOKEN not in str(caught.value)
    store.put(("memories", "alice"), "card", {"parts": ["4111", "1111", "1111", "1111"], "n": 2})
    item = store.get(("memories", "alice"), "card")
    assert item is not None and item.value["n"] == 2 and "4111" not in str(item.value)
    assert store.get(("memories", "alice"), "k").value == {"v": 1}  # type: ignore[union-attr]
    assert GH_TOKEN not in str(ephemeral_memory.user("alice").export())


def test_a_checkpointer_thread_id_holding_a_secret_is_refused(ephemeral_memory: Memory) -> None:
    """The checkpointer keeps opaque data (gate="off"), but its thread id names what it stores: an identifier."""
    from langgraph.checkpoint.base import empty_checkpoint
    from memtend_langgraph import MemtendSaver

    saver = MemtendSaver(ephemeral_memory)
    good = {"configurable": {"thread_id": "t1", "checkpoint_ns": "", "user_id": "alice"}}
    saver.put(good, empty_checkpoint(), {}, {})  # type: ignore[arg-type]
    bad = {"configurable": {"thread_id": f"thread {GH_TOKEN}", "checkpoint_ns": "", "user_id": "alice"}}
    with pytest.raises(SensitiveIdentifierError) as caught:
        saver.put(bad, empty_checkpoint(), {}, {})  # type: ignore[arg-type]
    assert GH_TOKEN not in str(caught.value)
    assert saver.get_tuple(good) is not None
    assert GH_TOKEN not in str(ephemeral_memory.user("alice").export())
