"""Smoke test for an installed memtend-langchain: the public API works from a plain `pip install`.

Run by the packaging tests in a fresh virtual environment: python tests/install/smoke_memtend_langchain.py
"""

from __future__ import annotations

import tempfile

from langchain_core.messages import AIMessage, HumanMessage, ToolMessage
from memtend import Memory, SensitiveDataError
from memtend_langchain import MemtendChatMessageHistory, MemtendMiddleware, memtend_tools


def main() -> None:
    with Memory(path=tempfile.mkdtemp(prefix="memtend-langchain-smoke-")) as mem:
        history = MemtendChatMessageHistory("alice", "s1", memory=mem)
        sent = [
            HumanMessage("look up order 7", id="h1"),
            AIMessage("", tool_calls=[{"name": "lookup", "args": {"order": 7}, "id": "c1"}], id="a1"),
            ToolMessage("shipped", tool_call_id="c1", name="lookup", id="t1"),
            AIMessage("Order 7 has shipped.", id="a2"),
        ]
        history.add_messages(sent)
        assert history.messages == sent, history.messages
        history.add_messages([HumanMessage("my key is AKIAIOSFODNN7EXAMPLE", id="h2")])  # masked by default
        stored = history.messages[-1].content
        assert "AKIAIOSFODNN7EXAMPLE" not in stored and "[REDACTED:" in stored, stored
        strict = MemtendChatMessageHistory("alice", "s1", memory=mem, redact=False)
        try:
            strict.add_messages([HumanMessage("my key is AKIAIOSFODNN7EXAMPLE")])
        except SensitiveDataError:
            pass
        else:
            raise AssertionError("redact=False let a secret through")
        assert len(history.messages) == 5
        assert [t.name for t in memtend_tools(mem)] == ["remember", "recall", "memory", "memories", "forget_memory"]
        assert [t.name for t in MemtendMiddleware(mem).tools] == [
            "remember",
            "recall",
            "memory",
            "memories",
            "forget_memory",
        ]
        try:
            from memtend_langchain import MemtendMemory
        except ImportError:
            print("MemtendMemory: langchain-classic not installed (the 'classic' extra)")
        else:
            classic = MemtendMemory(memory=mem, user_id="alice", session_id="s1")
            classic.save_context({"input": "I keep bees on the roof"}, {"output": "Lovely"})
            assert "bees" in classic.load_memory_variables({"input": "what do I keep?"})["memories"]
        history.clear()
        assert history.messages == []
    print("memtend-langchain smoke: ok")


if __name__ == "__main__":
    main()
