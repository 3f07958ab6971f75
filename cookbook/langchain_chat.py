"""A LangChain chat app with memtend: RunnableWithMessageHistory over MemtendChatMessageHistory.

Each (user, session) has its own stored history; the app also logs what the user says to the user's long-term
memory (through memtend's write gate) and puts the memories recalled for each question into the prompt, so a
later session knows what an earlier one was told. The chat model is a tiny scripted stand-in (no API key, no
network) that answers a question from the memories in its prompt; swap in any chat model.

Shown: a fact told in one session is used in the next; a correction replaces it; a secret is refused;
erasure leaves nothing.

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
from memtend import Memory, SensitiveDataError
from memtend_langchain import MemtendChatMessageHistory, with_memtend_history


class ScriptedChatModel(BaseChatModel):
    """Stand-in for a chat model: answers "what is my favourite colour?" from the memories in its prompt."""

    @property
    def _llm_type(self) -> str:
        return "scripted-chat"

    def _generate(self, messages: list[BaseMessage], *args: Any, **kwargs: Any) -> ChatResult:
        question = messages[-1].text
        answer = "Noted."
        if question.endswith("?"):
            system = "\n".join(m.text for m in messages if m.type == "system")
            found = re.search(r"favourite colour is (\w+)", system)
            answer = f"Your favourite colour is {found.group(1)}." if found else "I don't know yet."
        return ChatResult(generations=[ChatGeneration(message=AIMessage(answer))])


PROMPT = ChatPromptTemplate.from_messages(
    [
        ("system", "You are a helpful assistant. What you remember about the user (newest first):\n{memories}"),
        MessagesPlaceholder("history"),
        ("human", "{question}"),
    ]
)


def main() -> None:
    with Memory(path=tempfile.mkdtemp(prefix="memtend-langchain-chat-")) as mem:
        chain = with_memtend_history(
            PROMPT | ScriptedChatModel(), mem, input_messages_key="question", history_messages_key="history"
        )

        def chat(user_id: str, session_id: str, question: str) -> str:
            user = mem.user(user_id)
            try:
                user.log(question, session=session_id)  # long-term memory, through the write gate
            except SensitiveDataError as exc:
                print(f"[{session_id}] refused: {exc.kinds}")
                return "refused"
            memories = "\n".join(hit.label() for hit in user.recall(question, k=3))
            answer = chain.invoke(
                {"question": question, "memories": memories},
                config={"configurable": {"user_id": user_id, "session_id": session_id}},
            ).text
            print(f"[{session_id}] {user_id}: {question}\n[{session_id}] assistant: {answer}")
            return answer

        chat("alice", "monday", "My favourite colour is teal.")
        print("next session knows:", chat("alice", "tuesday", "What is my favourite colour?"))
        chat("alice", "tuesday", "Correction: my favourite colour is green now.")
        print("after the correction:", chat("alice", "wednesday", "What is my favourite colour?"))
        chat("alice", "wednesday", "My AWS key is AKIAIOSFODNN7EXAMPLE, keep it for me.")
        history = MemtendChatMessageHistory("alice", "wednesday", memory=mem)
        print("messages in wednesday's history:", len(history.messages))
        print("secret stored anywhere:", "AKIAIOSFODNN7EXAMPLE" in str(mem.user("alice").export()))
        print("bob sees:", chat("bob", "monday", "What is my favourite colour?"))
        receipt = mem.erase_user("alice")
        left = mem.user("alice").export()
        print("erased rows:", receipt.total)
        print("left after erasure:", sum(len(v) for v in left.values() if isinstance(v, list)))
        print("history after erasure:", len(MemtendChatMessageHistory("alice", "monday", memory=mem).messages))


if __name__ == "__main__":
    main()
