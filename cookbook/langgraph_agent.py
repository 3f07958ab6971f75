"""A LangGraph agent whose memory is memtend: one line each for the checkpointer and the store.

A scripted chat model (no LLM needed) stands in for the model. Alice tells the agent, in one thread, that she
wants answers in French; the agent keeps that in the store (cross-thread memory, under alice). In a second thread,
in a NEW PROCESS that reopens the same folder, the agent finds the preference and answers in French, and the first
thread's history is still there (the checkpointer). After `Memory.erase_user("alice")` both are gone.

Run: uv run python cookbook/langgraph_agent.py
"""

from __future__ import annotations

import subprocess
import sys
import tempfile
from typing import Any

from langchain_core.language_models.chat_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, SystemMessage
from langchain_core.outputs import ChatGeneration, ChatResult
from langchain_core.runnables import RunnableConfig
from langgraph.graph import END, START, MessagesState, StateGraph
from langgraph.store.base import BaseStore
from memtend import Memory
from memtend_langgraph import MemtendSaver, MemtendStore


class ScriptedChatModel(BaseChatModel):
    """Greets in the language the system prompt asks for: enough to show what the agent remembered."""

    @property
    def _llm_type(self) -> str:
        return "scripted"

    def _generate(self, messages: list[BaseMessage], stop: Any = None, run_manager: Any = None, **_: Any) -> ChatResult:
        system = " ".join(str(m.content) for m in messages if isinstance(m, SystemMessage))
        answer = "Bonjour ! Voici la réponse." if "French" in system else "Hello! Here is the answer."
        return ChatResult(generations=[ChatGeneration(message=AIMessage(content=answer))])


MODEL = ScriptedChatModel()


def remember(state: MessagesState, config: RunnableConfig, *, store: BaseStore) -> dict[str, Any]:
    """Keep a stated preference ("I prefer ...") in the user's long-term memory."""
    user_id = config["configurable"]["user_id"]
    said = str(state["messages"][-1].content)
    if said.lower().startswith("i prefer "):
        store.put(("memories", user_id), "answers", {"text": said})  # LangGraph's how-to layout
    return {}


def respond(state: MessagesState, config: RunnableConfig, *, store: BaseStore) -> dict[str, Any]:
    """Answer with the user's remembered preferences in the system prompt."""
    user_id = config["configurable"]["user_id"]
    preferences = store.search(("memories", user_id), query=str(state["messages"][-1].content), limit=3)
    system = "You are a helpful assistant. " + " ".join(str(p.value["text"]) for p in preferences)
    reply = MODEL.invoke([SystemMessage(system), *state["messages"]])
    return {"messages": [reply]}


def build_agent(memory: Memory):  # type: ignore[no-untyped-def]
    builder = StateGraph(MessagesState)
    builder.add_node("remember", remember)
    builder.add_node("respond", respond)
    builder.add_edge(START, "remember")
    builder.add_edge("remember", "respond")
    builder.add_edge("respond", END)
    # the swap: memtend keeps the threads (checkpointer) and the cross-thread memory (store)
    return builder.compile(
        checkpointer=MemtendSaver(memory),
        store=MemtendStore(memory, index={"dims": 384, "fields": ["text"]}),
    )


def ask(agent: Any, thread: str, text: str) -> str:
    config = {"configurable": {"thread_id": thread, "user_id": "alice"}}
    result = agent.invoke({"messages": [HumanMessage(text)]}, config)
    return str(result["messages"][-1].content)


def first_process(folder: str) -> None:
    with Memory(path=folder) as memory:
        agent = build_agent(memory)
        print("thread 1, alice: I prefer answers in French.")
        print("  agent:", ask(agent, "thread-1", "I prefer answers in French."))


def second_process(folder: str) -> None:
    with Memory(path=folder) as memory:
        agent = build_agent(memory)
        print("thread 2 (new process), alice: How do I reset my password?")
        print("  agent:", ask(agent, "thread-2", "How do I reset my password?"))
        history = list(agent.get_state_history({"configurable": {"thread_id": "thread-1", "user_id": "alice"}}))
        print(f"  thread 1 still has {len(history)} checkpoints after the restart")

        receipt = memory.erase_user("alice")
        print(f"erased alice: {receipt.total} items")
        print("thread 3, alice: How do I reset my password?")
        print("  agent:", ask(agent, "thread-3", "How do I reset my password?"))
        history = list(agent.get_state_history({"configurable": {"thread_id": "thread-1", "user_id": "alice"}}))
        print(f"  thread 1 has {len(history)} checkpoints after erasure")


def main() -> None:
    if len(sys.argv) == 3 and sys.argv[1] == "--second-process":
        second_process(sys.argv[2])
        return
    folder = tempfile.mkdtemp(prefix="memtend-langgraph-")
    first_process(folder)
    # a new process reopens the same folder: what the agent remembered survives the restart
    subprocess.run([sys.executable, __file__, "--second-process", folder], check=True)


if __name__ == "__main__":
    main()
