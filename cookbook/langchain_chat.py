"""A LangChain chat app with memtend: ``with_memtend_history`` over a prompt and a chat model.

Each (user, session) has its own stored history. The wrapper also does the long-term memory: each turn it stores
goes to memtend's capture (what is worth keeping, through the write gate, with the session as provenance), and each
call gets a system message with the user's profile, rules and recalled memories, so a later session knows what an
earlier one was told. The app itself writes nothing to memory. The chat model is a tiny scripted stand-in (no API
key, no network) that answers a question from the memory in its prompt; swap in any chat model.

Shown: a fact told in one session is used in the next, and kept once; a correction replaces it; a secret is
masked; another user sees nothing; erasure leaves nothing.

Run: uv run python cookbook/langchain_chat.py
"""

from __future__ import annotations

import re
import tempfile
from typing import Any

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage
from langchain_core.outputs import ChatGeneration, ChatResult
from langchain_core.prompts import ChatPromptTemplate, MessagesPlaceholder
from memtend import Memory
from memtend_langchain import MemtendChatMessageHistory, with_memtend_history


class ScriptedChatModel(BaseChatModel):
    """Stand-in for a chat model: answers "what is my favourite colour?" from the memory in its system messages."""

    @property
    def _llm_type(self) -> str:
        return "scripted-chat"

    def _generate(self, messages: list[BaseMessage], *args: Any, **kwargs: Any) -> ChatResult:
        question = messages[-1].text
        answer = "Noted."
        if question.endswith("?"):
            system = "\n".join(m.text for m in messages if m.type == "system")
            found = re.search(r"favourite[ _]colour(?: is|:) (\w+)", system)
            answer = f"Your favourite colour is {found.group(1)}." if found else "I don't know yet."
        return ChatResult(generations=[ChatGeneration(message=AIMessage(answer))])


# memtend's system message (profile, rules, recalled memories) goes at the head of "history"
PROMPT = ChatPromptTemplate.from_messages(
    [("system", "You are a helpful assistant."), MessagesPlaceholder("history"), ("human", "{question}")]
)


def main() -> None:
    with Memory(path=tempfile.mkdtemp(prefix="memtend-langchain-chat-")) as mem:
        chain = with_memtend_history(
            PROMPT | ScriptedChatModel(), mem, input_messages_key="question", history_messages_key="history"
        )

        def chat(user_id: str, session_id: str, question: str) -> str:
            config = {"configurable": {"user_id": user_id, "session_id": session_id}}
            answer = chain.invoke({"question": question}, config=config).text
            print(f"[{session_id}] {user_id}: {question}\n[{session_id}] assistant: {answer}")
            return answer

        def kept(session_id: str) -> list[str]:
            """What long-term memory holds from one of alice's sessions (current and replaced values)."""
            return [r["text"] for r in mem.user("alice").export()["records"] if r["session"] == session_id]

        chat("alice", "monday", "My favourite colour is teal.")
        print("kept from monday:", kept("monday"))  # capture kept the fact, once; the transcript is the history
        print("next session knows:", chat("alice", "tuesday", "What is my favourite colour?"))
        chat("alice", "tuesday", "Correction: my favourite colour is green now.")
        print("after the correction:", chat("alice", "wednesday", "What is my favourite colour?"))
        print("kept from wednesday's question:", kept("wednesday"))  # a question is not worth keeping
        chat("alice", "wednesday", "My AWS key is AKIAIOSFODNN7EXAMPLE, keep it for me.")
        history = MemtendChatMessageHistory("alice", "wednesday", memory=mem)
        print("wednesday's history keeps:", history.messages[-2].text)  # masked by the gate (redact=True)
        print("secret stored anywhere:", "AKIAIOSFODNN7EXAMPLE" in str(mem.user("alice").export()))
        print("bob sees:", chat("bob", "monday", "What is my favourite colour?"))
        receipt = mem.erase_user("alice")
        left = mem.user("alice").export()
        print("erased rows:", receipt.total)
        print("left after erasure:", sum(len(v) for v in left.values() if isinstance(v, list)))
        print("history after erasure:", len(MemtendChatMessageHistory("alice", "monday", memory=mem).messages))


if __name__ == "__main__":
    main()
