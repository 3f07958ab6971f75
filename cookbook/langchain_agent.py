"""A LangChain 1.x agent with memtend: create_agent + MemtendMiddleware + the memory tools.

The middleware puts what memtend knows about the user (profile, rules, memories recalled for the latest
message, dated) into each model call's system message, compacts long threads, and logs what the user said;
the tools let the model remember and recall. The chat model here is a tiny scripted stand-in (no API key, no
network) that does what a real model would be asked to: call ``remember`` when told "remember that ...", and
answer a question from the memories in its system message. Swap in any chat model: nothing else changes.

The threads' checkpoints are memtend documents too (``MemtendSaver`` from memtend-langgraph), so erasing the
user removes them with everything else.

Shown: a fact told in one thread is used in the next; a correction replaces it; a secret is refused;
erasure leaves nothing.

Run: uv run python cookbook/langchain_agent.py
"""

from __future__ import annotations

import re
import tempfile
from typing import Any

from langchain.agents import create_agent
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, ToolMessage
from langchain_core.outputs import ChatGeneration, ChatResult
from memtend import Memory
from memtend_langchain import MemtendMiddleware
from memtend_langgraph import MemtendSaver, MemtendStore


class ScriptedAgentModel(BaseChatModel):
    """Stand-in for a tool-calling chat model (see the module docstring)."""

    @property
    def _llm_type(self) -> str:
        return "scripted-agent"

    def bind_tools(self, tools: Any, **kwargs: Any) -> ScriptedAgentModel:  # type: ignore[override]
        return self

    def _generate(self, messages: list[BaseMessage], *args: Any, **kwargs: Any) -> ChatResult:
        return ChatResult(generations=[ChatGeneration(message=self._answer(messages))])

    def _answer(self, messages: list[BaseMessage]) -> AIMessage:
        last = messages[-1]
        if isinstance(last, ToolMessage):
            return AIMessage("Saved." if last.text == "remembered" else f"I did not save that: {last.text}")
        said = last.text
        told = re.match(r"(?i)remember that (.+)", said)
        if told:
            call = {"name": "remember", "args": {"text": told.group(1)}, "id": f"call_{len(messages)}"}
            return AIMessage("", tool_calls=[call])
        if said.endswith("?"):
            system = "\n".join(m.text for m in messages if m.type == "system")
            found = re.search(r"favourite colour is (\w+)", system)
            return AIMessage(f"Your favourite colour is {found.group(1)}." if found else "I don't know yet.")
        return AIMessage("Noted.")


def main() -> None:
    with Memory(path=tempfile.mkdtemp(prefix="memtend-langchain-agent-")) as mem:
        agent = create_agent(
            ScriptedAgentModel(),
            system_prompt="You are a helpful assistant.",
            middleware=[MemtendMiddleware(mem)],
            checkpointer=MemtendSaver(mem),  # each thread's state, stored under its user (memtend-langgraph)
            store=MemtendStore(mem),  # LangGraph's cross-thread store, for any node or tool that wants it
        )

        def say(thread: str, text: str) -> str:
            state = agent.invoke(
                {"messages": [HumanMessage(text)]},
                config={"configurable": {"thread_id": thread, "user_id": "alice"}},  # the checkpointer's user
                context={"user_id": "alice"},
            )
            answer = state["messages"][-1].text
            print(f"[{thread}] alice: {text}\n[{thread}] agent: {answer}")
            return answer

        say("monday", "Remember that my favourite colour is teal")
        print("next thread knows:", say("tuesday", "What is my favourite colour?"))
        say("tuesday", "Remember that my favourite colour is green now")
        print("after the correction:", say("wednesday", "What is my favourite colour?"))
        say("wednesday", "Remember that my AWS key is AKIAIOSFODNN7EXAMPLE")
        alice = mem.user("alice")
        # memories, their history and the JSON documents: the gate refused or masked the key everywhere. The
        # thread's checkpoints (opaque bytes, as with any checkpointer) hold the conversation as typed, until erased.
        exported = alice.export()
        readable = [exported["records"], exported["history"], [d for d in exported["documents"] if d["type"] == "json"]]
        print("secret stored anywhere:", "AKIAIOSFODNN7EXAMPLE" in str(readable))
        monday = {"configurable": {"thread_id": "monday", "user_id": "alice"}}
        print("monday thread before erasure:", len(agent.get_state(monday).values.get("messages", [])), "messages")
        receipt = mem.erase_user("alice")
        left = alice.export()
        print("erased rows:", receipt.total)
        print("left after erasure:", sum(len(v) for v in left.values() if isinstance(v, list)))
        print("monday thread after erasure:", len(agent.get_state(monday).values.get("messages", [])), "messages")
        print("asked again:", say("thursday", "What is my favourite colour?"))


if __name__ == "__main__":
    main()
