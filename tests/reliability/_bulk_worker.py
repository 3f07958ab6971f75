"""Subprocess worker for test_bulk_sigkill.py: an adapter's bulk write on an embedded folder, killed by the test
between two of its Chroma calls.

    python _bulk_worker.py FOLDER history|store N   # write N rows in one call; print MIDWAY after its first
                                                    # Chroma call of the documents collection, then wait to be killed
    python _bulk_worker.py FOLDER users N           # the same for one store batch of N rows for each of USERS
    python _bulk_worker.py FOLDER turns N           # N history turns and N LlamaIndex write_once turns (question
                                                    # and answer), printing ACK after each; then wait to be killed
    python _bulk_worker.py FOLDER dump              # open (finishing what a kill left), print STATE <json>
    python _bulk_worker.py FOLDER overwrite 0       # overwrite an indexed document; print MIDWAY after its
                                                    # vector call (before its rows), then wait to be killed
    python _bulk_worker.py FOLDER ranked            # open, print STATE <json>: the search for the new text

The documents collection's batch size is lowered to 400 rows, so an N of 1,000 takes three calls (6,000 rows at
Chroma's own 5,000 take two: the same path). A history keeps up to 100 messages in a document, so its 1,000 messages
are 10 documents and its namespace row: the history mode lowers the batch to 4 rows, three calls again. The
instrumentation only reports and pauses: every call still reaches the real Chroma collection.
"""

from __future__ import annotations

import json
import sys
import time
from typing import Any

from memtend import Memory
from memtend.testing import HashEmbedder

USER = "bulk-user"
USERS = ("alice", "bob")
BATCH_ROWS = 400
HISTORY_BATCH_ROWS = 4  # 1,000 messages are 10 documents of 100 and the namespace row: three calls


def _say(line: str) -> None:
    sys.stdout.write(line + "\n")
    sys.stdout.flush()


def _pause_after_first_call(mem: Memory, batch: int = BATCH_ROWS) -> None:
    rows = mem.storage.documents
    rows.max_batch = batch
    real = rows.collection.upsert
    calls = 0

    def upsert(**kwargs: Any) -> Any:
        nonlocal calls
        out = real(**kwargs)
        calls += 1
        if calls == 1:
            _say("MIDWAY")
            time.sleep(60)  # the test kills the process here, between this call and the next
        return out

    rows.collection.upsert = upsert  # type: ignore[method-assign]


def write_history(mem: Memory, n: int) -> None:
    from langchain_core.messages import HumanMessage
    from memtend_langchain import MemtendChatMessageHistory

    history = MemtendChatMessageHistory(USER, "bulk", memory=mem)
    _pause_after_first_call(mem, HISTORY_BATCH_ROWS)
    history.add_messages([HumanMessage(f"message {i}") for i in range(n)])
    _say("DONE")


def write_store(mem: Memory, n: int) -> None:
    from langgraph.store.base import PutOp
    from memtend_langgraph import MemtendStore

    store = MemtendStore(mem, user_label=0)
    _pause_after_first_call(mem)
    store.batch([PutOp((USER, "bulk"), f"k{i}", {"i": i}) for i in range(n)])
    _say("DONE")


def write_users(mem: Memory, n: int) -> None:
    from langgraph.store.base import PutOp
    from memtend_langgraph import MemtendStore

    store = MemtendStore(mem, user_label=0)
    _pause_after_first_call(mem)
    # each user's part alone fits in one call; together they take two
    store.batch([PutOp((user, "bulk"), f"k{i}", {"i": i}) for i in range(n) for user in USERS])
    _say("DONE")


def write_turns(mem: Memory, n: int) -> None:
    """Turns as the frameworks store them, each acknowledged (ACK) once its call returned; killed after the last."""
    import asyncio

    from langchain_core.messages import AIMessage, HumanMessage
    from llama_index.core.base.llms.types import ChatMessage
    from memtend_langchain import MemtendChatMessageHistory
    from memtend_llamaindex import MemtendMemory

    history = MemtendChatMessageHistory(USER, "turns", memory=mem)
    agent_memory = MemtendMemory.from_defaults(user_id=USER, session_id="turns", memory=mem, write_once=True)
    for i in range(n):
        history.add_messages([HumanMessage(f"question {i}"), AIMessage(f"answer {i}")])
        _say("ACK")
        asyncio.run(agent_memory.aput(ChatMessage(role="user", content=f"question {i}")))
        asyncio.run(agent_memory.aput_messages([ChatMessage(role="assistant", content=f"answer {i}")]))
        _say("ACK")
    asyncio.run(agent_memory.aput(ChatMessage(role="user", content="held, never answered")))
    time.sleep(60)  # the test kills the process here


OLD_TEXT = "My dog loves running in the park every morning"
NEW_TEXT = "Accounting: my tax returns are due to the accountant on Friday"


def overwrite(mem: Memory, n: int) -> None:
    docs = mem.user(USER).documents()
    docs.put(("notes",), "a", {"text": OLD_TEXT}, index=["text"])
    docs.put(("notes",), "b", {"text": "The quarterly report is due to finance next week"}, index=["text"])
    vectors = mem.storage.documents.vectors
    real = vectors.upsert

    def upsert(**kwargs: Any) -> Any:
        out = real(**kwargs)
        _say("MIDWAY")
        time.sleep(60)  # the test kills the process here, after the vectors and before the document rows
        return out

    vectors.upsert = upsert  # type: ignore[method-assign]
    docs.put(("notes",), "a", {"text": NEW_TEXT}, index=["text"])
    _say("DONE")


def ranked(mem: Memory) -> dict[str, Any]:
    docs = mem.user(USER).documents()
    found = docs.search(("notes",), query=NEW_TEXT, limit=2)
    stored = docs.get(("notes",), "a")
    return {
        "ranked": [[d.key, d.score] for d in found],
        "a": None if stored is None else stored.value["text"],
        "vector_rows": len(mem.storage.documents.vectors.get(where={"user_id": {"$eq": USER}}, include=[])["ids"]),
    }


def _count(store: Any, user: str) -> int:
    items, offset = 0, 0
    while True:
        page = store.search((user, "bulk"), limit=500, offset=offset)
        items += len(page)
        offset += 500
        if len(page) < 500:
            return items


def dump(mem: Memory) -> dict[str, Any]:
    from memtend_langchain import MemtendChatMessageHistory
    from memtend_langgraph import MemtendStore
    from memtend_llamaindex import MemtendMemory

    history = MemtendChatMessageHistory(USER, "bulk", memory=mem).messages
    turns = MemtendChatMessageHistory(USER, "turns", memory=mem).messages
    agent_turns = MemtendMemory.from_defaults(user_id=USER, session_id="turns", memory=mem).get_all()
    store = MemtendStore(mem, user_label=0)
    journals = mem.storage.documents.collection.get(where={"doc_journal": {"$eq": True}}, include=[])["ids"]
    return {
        "messages": len(history),
        "turns": [m.text for m in turns],
        "agent_turns": [m.content for m in agent_turns],
        "items": _count(store, USER),
        "journals": len(journals),
        **{user: _count(store, user) for user in USERS},
    }


def main() -> None:
    folder, mode = sys.argv[1], sys.argv[2]
    mem = Memory(path=folder, embedding_function=HashEmbedder())
    if mode in ("dump", "ranked"):
        _say("STATE " + json.dumps(dump(mem) if mode == "dump" else ranked(mem)))
        mem.close()
        return
    n = int(sys.argv[3])
    {
        "history": write_history,
        "store": write_store,
        "users": write_users,
        "turns": write_turns,
        "overwrite": overwrite,
    }[mode](mem, n)
    mem.close()


if __name__ == "__main__":
    main()
