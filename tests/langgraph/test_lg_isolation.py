"""memtend.testing's isolation machine over the LangGraph adapters: random store items and checkpoints for several
users (hostile ids, keys and namespace labels), with no cross-user read, loss or leftover after erasure.

Each user's items live under a namespace whose first label encodes the user id (hex, so any id the core accepts
is a valid LangGraph label) and ``user_of`` decodes it; each ``write`` also saves a checkpoint of the user's thread
holding the text, so ``list`` shows store items and checkpoint state together.
"""

from __future__ import annotations

import uuid
from typing import Any

import chromadb
import pytest
from hypothesis import HealthCheck, settings
from langgraph.checkpoint.base import empty_checkpoint
from langgraph.store.base import GetOp, PutOp
from memtend import Memory
from memtend.records import Source, check_user_id
from memtend.testing import VOLATILE, Driver, Seen, make_isolation_machine, strip_keys
from memtend_langgraph import MemtendSaver, MemtendStore

THREAD = "thread-1"
MEMORIES = "memories"


def user_label(user_id: str) -> str:
    return "u" + user_id.encode().hex()


def user_of(namespace: tuple[str, ...]) -> str | None:
    if not namespace or not namespace[0].startswith("u"):
        return None
    return bytes.fromhex(namespace[0][1:]).decode()


class LangGraphDriver(Driver):
    name = "langgraph"
    embedding_function: Any = None

    def __init__(self) -> None:
        self.memory = Memory(
            client=chromadb.EphemeralClient(),
            embedding_function=type(self).embedding_function,
            collection_prefix="lgiso" + uuid.uuid4().hex[:10],
        )
        self.store = MemtendStore(self.memory, user_of=user_of, index={"dims": 384, "fields": ["text"]})
        self.saver = MemtendSaver(self.memory)
        self.count = 0

    def _config(self, user_id: str) -> dict[str, Any]:
        return {"configurable": {"thread_id": THREAD, "checkpoint_ns": "", "user_id": user_id}}

    def write(self, user_id: str, text: str, *, kind: str, source: Source = Source.USER) -> None:
        self.count += 1
        self.store.put((user_label(user_id), MEMORIES), f"m{self.count}", {"text": text, "kind": kind})
        config = self._config(user_id)
        latest = self.saver.get_tuple(config)
        checkpoint = empty_checkpoint()
        texts = [] if latest is None else list(latest.checkpoint["channel_values"]["texts"])
        checkpoint["channel_values"] = {"texts": [*texts, text]}
        if latest is not None:
            config["configurable"]["checkpoint_id"] = latest.checkpoint["id"]
        self.saver.put(config, checkpoint, {"source": "loop", "step": self.count, "parents": {}}, {})

    def recall(self, user_id: str, query: str) -> list[Seen]:
        found = self.store.search((user_label(user_id), MEMORIES), query=query, limit=10)
        return [Seen(None, str(item.value["text"])) for item in found]

    def list(self, user_id: str) -> list[Seen]:
        items = self.store.search((user_label(user_id), MEMORIES), limit=1000)
        seen = [Seen(None, str(item.value["text"])) for item in items]
        for saved in self.saver.list(self._config(user_id)):
            seen.extend(Seen(None, text) for text in saved.checkpoint["channel_values"].get("texts", []))
        return seen

    def export(self, user_id: str) -> Any:
        return strip_keys(self.memory.user(user_id).export(), VOLATILE)

    def erase(self, user_id: str) -> None:
        self.memory.erase_user(user_id)

    def validate_user(self, user_id: object) -> None:
        check_user_id(user_id)

    def supports(self, op: str) -> bool:
        return op in {"store_put", "store_delete", "store_items"}

    def operate(self, user_id: str, op: str, **params: Any) -> Any:
        label = user_label(user_id)
        if op == "store_put":  # through batch(), with LangGraph's label rule ("." refused everywhere) kept
            self.store.batch([PutOp((label, _label(params["namespace"])), params["key"], params["value"])])
            return None
        if op == "store_delete":
            namespace = (label, _label(params["namespace"]))
            before, _ = self.store.batch([GetOp(namespace, params["key"]), PutOp(namespace, params["key"], None)])
            return before is not None
        if op == "store_items":
            items = self.store.search((label,), limit=10_000)
            return {(_unlabel(i.namespace[1]), i.key): i.value for i in items if i.namespace[1:] != (MEMORIES,)}
        raise NotImplementedError(op)

    def close(self) -> None:
        self.memory.close()


@pytest.mark.slow
def test_no_cross_user_read_under_random_operations(embedding_function) -> None:  # type: ignore[no-untyped-def]
    LangGraphDriver.embedding_function = embedding_function
    case = make_isolation_machine(LangGraphDriver).TestCase
    case.settings = settings(
        max_examples=10,
        stateful_step_count=12,
        deadline=None,
        database=None,
        suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much],
    )
    case().runTest()


_DOT = "\u2024"  # ONE DOT LEADER: stands for "." in a hostile namespace, which LangGraph's store refuses in a label


def _label(namespace: str) -> str:
    return namespace.replace(".", _DOT)


def _unlabel(label: str) -> str:
    return label.replace(_DOT, ".")
