"""One rule for secrets on the LangGraph surfaces (docs/secrets.md): by default a secret is stored masked in thread
state (checkpoints and pending writes) and in store values, keys of a value included, whether it sits in one
content block or is split over two; a graph run is never stopped by it. With ``redact=False`` the store refuses,
naming itself and the option, before anything of the batch is written."""

from __future__ import annotations

import base64
import json
from typing import Any

import pytest
from langchain_core.messages import AIMessage, HumanMessage
from langgraph.graph import START, MessagesState, StateGraph
from langgraph.store.base import BaseStore
from memtend import Memory, SensitiveDataError
from memtend_langgraph import MemtendSaver, MemtendStore

CARD = "4111 1111 1111 1111"
DIGITS = "4111111111111111"
SPLIT = [{"type": "text", "text": "my card is 4111 1111"}, {"type": "text", "text": "1111 1111, book it"}]


def stored_text(memory: Memory, user: str) -> str:
    """Everything stored for ``user`` as text, the serializer's bytes of checkpoints and writes decoded too."""
    export = memory.user(user).export()
    blobs = [base64.b64decode(d["value"]).decode("latin-1") for d in export["documents"] if d["type"] == "bytes"]
    return json.dumps(export) + "".join(blobs)


def verbatim(text: str) -> bool:
    flat = text.replace(" ", "")
    return DIGITS in flat or "41111111" in flat


def graph(memory: Memory, **saver_options: Any):  # type: ignore[no-untyped-def]
    store = MemtendStore(memory, user_label=1)

    def remember(state: MessagesState, *, store: BaseStore) -> dict[str, Any]:
        last = state["messages"][-1]
        store.put(("memories", "alice"), "said", {"said": last.content, CARD: "the card as a key"})
        return {"messages": [AIMessage("noted")]}

    builder = StateGraph(MessagesState)
    builder.add_node("remember", remember)
    builder.add_edge(START, "remember")
    return builder.compile(checkpointer=MemtendSaver(memory, **saver_options), store=store)


@pytest.mark.parametrize("content", [f"my card is {CARD}", SPLIT], ids=["one-block", "split-over-two-blocks"])
def test_a_graph_run_with_a_card_completes_and_nothing_is_stored_verbatim(
    ephemeral_memory: Memory, content: Any
) -> None:
    g = graph(ephemeral_memory)
    config = {"configurable": {"thread_id": "t1", "user_id": "alice"}}
    out = g.invoke({"messages": [HumanMessage(content=content)]}, config)
    assert out["messages"][-1].text == "noted"  # the run was not stopped
    assert not verbatim(stored_text(ephemeral_memory, "alice"))
    state = g.get_state(config).values["messages"]
    assert "[REDACTED:card]" in json.dumps(state[0].content) and state[1].text == "noted"
    item = MemtendStore(ephemeral_memory, user_label=1).get(("memories", "alice"), "said")
    assert item is not None and "[REDACTED:card]" in json.dumps(item.value) and CARD not in item.value


def test_pending_writes_are_masked_too(ephemeral_memory: Memory) -> None:
    from langgraph.checkpoint.base import empty_checkpoint

    saver = MemtendSaver(ephemeral_memory)
    config = {"configurable": {"thread_id": "t", "checkpoint_ns": "", "user_id": "alice"}}
    config = saver.put(config, empty_checkpoint(), {}, {})  # type: ignore[arg-type]
    saver.put_writes(config, [("messages", [HumanMessage(content=SPLIT)]), ("note", f"card {CARD}")], "task-1")
    found = saver.get_tuple(config)
    assert found is not None and len(found.pending_writes) == 2
    assert not verbatim(stored_text(ephemeral_memory, "alice"))
    assert found.pending_writes[1][2] == "card [REDACTED:card]"


def test_with_redact_false_the_store_refuses_before_anything_is_written(ephemeral_memory: Memory) -> None:
    from langgraph.store.base import PutOp

    store = MemtendStore(ephemeral_memory, user_label=1, redact=False)
    ops = [
        PutOp(("memories", "alice"), "fine", {"text": "nothing secret"}),
        PutOp(("memories", "bob"), "card", {"text": f"card {CARD}"}),  # another user's part, written second
    ]
    with pytest.raises(SensitiveDataError) as refused:
        store.batch(ops)
    message = str(refused.value)
    assert "MemtendStore" in message and "redact=True" in message and "4111" not in message
    assert store.get(("memories", "alice"), "fine") is None and store.get(("memories", "bob"), "card") is None
    with pytest.raises(SensitiveDataError, match="MemtendStore"):
        store.put(("memories", "alice"), "key", {CARD: 1})  # a card as an object key


def test_with_redact_false_the_saver_refuses_naming_itself(ephemeral_memory: Memory) -> None:
    g = graph(ephemeral_memory, redact=False)
    with pytest.raises(SensitiveDataError, match="MemtendSaver refused"):
        g.invoke({"messages": [HumanMessage(content=SPLIT)]}, {"configurable": {"thread_id": "t", "user_id": "alice"}})
    assert not verbatim(stored_text(ephemeral_memory, "alice"))


def test_redact_takes_a_bool_only(ephemeral_memory: Memory) -> None:
    from memtend import InvalidInputError

    for make in (MemtendStore, MemtendSaver):
        with pytest.raises(InvalidInputError, match="redact must be True"):
            make(ephemeral_memory, redact="no")  # type: ignore[arg-type]
