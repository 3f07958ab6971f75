"""MemtendStore keeps each item under the user its namespace names: routing, refusals, the write gate, erasure."""

from __future__ import annotations

import pytest
from langgraph.store.base import GetOp, PutOp, SearchOp
from lg_fixtures import lg_memory_fixture  # noqa: F401  (the lg_memory fixture)
from memtend.errors import SensitiveDataError
from memtend_langgraph import MemtendStore, UserNotFoundError

SECRET = "my AWS key is AKIAIOSFODNN7EXAMPLE"


def test_items_live_under_the_user_label(ephemeral_memory) -> None:  # type: ignore[no-untyped-def]
    store = MemtendStore(ephemeral_memory, user_label=1)
    store.put(("memories", "alice"), "food", {"likes": "sushi"})
    store.put(("memories", "bob"), "food", {"likes": "pizza"})
    assert store.get(("memories", "alice"), "food").value == {"likes": "sushi"}  # type: ignore[union-attr]
    assert [i.value for i in store.search(("memories", "bob"))] == [{"likes": "pizza"}]
    assert ephemeral_memory.document_owners(("langgraph_store", "memories")) == ["alice", "bob"]
    alice_docs = ephemeral_memory.documents("alice").search((), limit=100)
    assert [(d.namespace, d.key) for d in alice_docs] == [(("langgraph_store", "memories", "alice"), "food")]


def test_a_user_function_decides(ephemeral_memory) -> None:  # type: ignore[no-untyped-def]
    def tenant_user(namespace: tuple[str, ...]) -> str | None:
        label = next((x for x in namespace if x.startswith("user=")), None)
        return label.removeprefix("user=") if label else None

    store = MemtendStore(ephemeral_memory, user_of=tenant_user)
    store.put(("acme", "user=carol", "prefs"), "tone", {"v": "brief"})
    assert ephemeral_memory.document_owners(("langgraph_store",)) == ["carol"]
    assert store.search(("acme", "user=carol"))[0].value == {"v": "brief"}
    with pytest.raises(UserNotFoundError, match="user function tenant_user"):
        store.put(("acme", "prefs"), "tone", {"v": "x"})


def test_operations_naming_no_user_are_refused(ephemeral_memory) -> None:  # type: ignore[no-untyped-def]
    store = MemtendStore(ephemeral_memory, user_label=1)
    store.put(("memories", "alice"), "k", {"v": 1})
    with pytest.raises(UserNotFoundError, match="cross_user=True"):
        store.search(("memories",))
    with pytest.raises(UserNotFoundError):
        store.list_namespaces()
    with pytest.raises(UserNotFoundError):
        store.list_namespaces(prefix=("memories", "*"))
    with pytest.raises(UserNotFoundError):
        store.batch([GetOp(("memories",), "k")])
    assert store.list_namespaces(prefix=("memories", "alice")) == [("memories", "alice")]
    admin = MemtendStore(ephemeral_memory, user_label=1, cross_user=True)
    store.put(("memories", "bob"), "k", {"v": 2})
    assert sorted(i.value["v"] for i in admin.search(("memories",))) == [1, 2]
    assert admin.list_namespaces(prefix=("memories", "*")) == [("memories", "alice"), ("memories", "bob")]
    with pytest.raises(UserNotFoundError):  # even an administrator writes an item under one user
        admin.put(("memories",), "k", {"v": 3})


def test_a_refused_batch_writes_nothing(ephemeral_memory) -> None:  # type: ignore[no-untyped-def]
    store = MemtendStore(ephemeral_memory, user_label=0, redact=False)  # the default masks (docs/secrets.md)
    store.put(("alice",), "kept", {"v": "before"})
    with pytest.raises(SensitiveDataError) as refused:
        store.batch(
            [
                PutOp(("alice",), "kept", {"v": "after"}),
                PutOp(("alice",), "new", {"v": "fine"}),
                PutOp(("alice",), "leak", {"note": SECRET}),
            ]
        )
    assert "aws_access_key" in str(refused.value) and "AKIA" not in str(refused.value)
    assert store.get(("alice",), "kept").value == {"v": "before"}  # type: ignore[union-attr]
    assert store.get(("alice",), "new") is None


def test_a_refused_batch_across_users_writes_nothing(ephemeral_memory) -> None:  # type: ignore[no-untyped-def]
    store = MemtendStore(ephemeral_memory, user_label=0, redact=False)
    store.put(("alice",), "kept", {"v": "before"})
    with pytest.raises(SensitiveDataError):
        store.batch(
            [
                PutOp(("alice",), "kept", {"v": "after"}),
                PutOp(("alice",), "new", {"v": "fine"}),
                PutOp(("bob",), "leak", {"note": SECRET}),
                SearchOp(("bob",)),
            ]
        )
    assert store.get(("alice",), "kept").value == {"v": "before"}  # type: ignore[union-attr]
    assert store.get(("alice",), "new") is None
    assert store.search(("bob",)) == []
    # and the other order: the refused user first
    with pytest.raises(SensitiveDataError):
        store.batch([PutOp(("bob",), "leak", {"note": SECRET}), PutOp(("alice",), "new", {"v": "fine"})])
    assert store.get(("alice",), "new") is None


def test_redact_masks_instead_of_refusing(ephemeral_memory) -> None:  # type: ignore[no-untyped-def]
    store = MemtendStore(ephemeral_memory, user_label=0, redact=True)
    store.put(("alice",), "note", {"text": SECRET})
    stored = store.get(("alice",), "note").value["text"]  # type: ignore[union-attr]
    assert "AKIAIOSFODNN7EXAMPLE" not in stored and stored.startswith("my AWS key is")


def test_erasure_and_export_cover_store_items(lg_memory) -> None:  # type: ignore[no-untyped-def]
    store = MemtendStore(lg_memory, user_label=0)
    store.put(("alice", "prefs"), "tone", {"v": "brief"})
    store.put(("bob", "prefs"), "tone", {"v": "chatty"})
    exported = lg_memory.user("alice").export()["documents"]
    assert "brief" in str(exported) and "chatty" not in str(exported)
    lg_memory.erase_user("alice")
    assert store.get(("alice", "prefs"), "tone") is None
    assert store.list_namespaces(prefix=("alice",)) == []
    assert store.get(("bob", "prefs"), "tone").value == {"v": "chatty"}  # type: ignore[union-attr]
