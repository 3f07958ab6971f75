"""LlamaIndex FunctionTools: remember honours the write mode; the user's controls list and forget, one user only.
Real FunctionTool calls over real Chroma."""

from __future__ import annotations

from memtend import Memory
from memtend_llamaindex.tools import memtend_tools


async def test_remember_proposes_and_the_controls_list_and_forget(memory: Memory) -> None:
    tools = {t.metadata.name: t for t in memtend_tools(memory, "alice", session_id="s1", write_mode="propose")}
    out = await tools["remember"].acall(text="Prefers window seats")
    assert str(out).startswith("proposed:")
    alice = memory.user("alice")
    (proposal,) = alice.proposals()
    assert "window" not in str(await tools["recall"].acall(query="seat preference"))
    note = alice.remember("Has a cat called Miso")
    bobs = memory.user("bob").remember("Bob has a dog")
    listed = str(await tools["memories"].acall())
    assert f"[{note.id}] note" in listed and "window" not in listed and "Bob" not in listed
    assert str(await tools["forget_memory"].acall(memory_id=bobs.id)).startswith("error: no memory")
    assert str(await tools["forget_memory"].acall(memory_id=note.id)) == f"forgotten: note {note.id}"
    assert alice.list() == [] and [r.id for r in alice.proposals()] == [proposal.id]
