"""A LlamaIndex FunctionAgent whose memory is memtend: it learns a preference, uses it after a restart, forgets it.

The only change to an ordinary LlamaIndex agent is the memory object:

    memory = MemtendMemory.from_defaults(user_id="alice", session_id="monday", memory=Memory(path=...))
    await agent.run("...", memory=memory)

A scripted stand-in for a model (LlamaIndex's MockFunctionCallingLLM with a response function) calls a
``save_preference`` tool when the user states a preference, and otherwise answers in the style its system
message asks for. Monday runs in one process, the rest in another, over the same on-disk store:

1. monday: the user states a preference; the agent saves it through its tool;
2. tuesday (a new process, a new session): memtend puts the preference in the system message, the answer
   follows it;
3. the user is erased; wednesday: nothing is known any more, the answer is plain again.

Run: uv run python cookbook/llamaindex_agent.py
"""

from __future__ import annotations

import argparse
import asyncio
import subprocess
import sys
import tempfile
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # imported where used, so the parent process that only starts the phases stays light
    from llama_index.core.agent.workflow import FunctionAgent
    from llama_index.core.base.llms.types import ChatMessage
    from memtend import Memory

USER = "alice"
NOTES = ["memtend keeps memory per user", "compaction keeps tool calls with their results", "erasure is one call"]


def scripted_model(messages: Sequence[ChatMessage], **kwargs: Any) -> ChatMessage:
    """Stands in for an LLM: saves stated preferences through the tool, formats answers as its system prompt says."""
    from llama_index.core.base.llms.types import ChatMessage, MessageRole, ToolCallBlock

    last = messages[-1]
    if last.role == MessageRole.TOOL:
        return ChatMessage(role="assistant", content="Noted, I will remember that.")
    text = last.content or ""
    if last.role == MessageRole.USER and text.lower().startswith("please remember"):
        call = ToolCallBlock(
            tool_call_id="call-save-1",
            tool_name="save_preference",
            tool_kwargs={"key": "answer.format", "value": "bullet points"},
        )
        return ChatMessage(role="assistant", blocks=[call])
    system = messages[0].content if messages[0].role == MessageRole.SYSTEM else ""
    if "answer.format: bullet points" in (system or ""):
        return ChatMessage(role="assistant", content="\n".join(f"- {note}" for note in NOTES))
    return ChatMessage(role="assistant", content="; ".join(NOTES).capitalize() + ".")


def build_agent(mem: Memory) -> FunctionAgent:
    from llama_index.core.agent.workflow import FunctionAgent
    from llama_index.core.llms.mock import MockFunctionCallingLLM
    from llama_index.core.tools import FunctionTool
    from memtend import Source

    def save_preference(key: str, value: str) -> str:
        """Save how the user likes things done, as a key and a value."""
        return mem.user(USER).set_fact(key, value, source=Source.USER).outcome.value

    tool = FunctionTool.from_defaults(save_preference)
    return FunctionAgent(tools=[tool], llm=MockFunctionCallingLLM(response_generator=scripted_model))


async def session(path: str, session_id: str, said: str) -> str:
    from memtend import Memory
    from memtend_llamaindex import MemtendMemory

    with Memory(path=path) as mem:
        memory = MemtendMemory.from_defaults(user_id=USER, session_id=session_id, memory=mem)
        answer = str(await build_agent(mem).run(said, memory=memory))
        print(f"[{session_id}] user: {said}")
        print(f"[{session_id}] agent: {answer}")
        print(f"[{session_id}] history kept: {len(await memory.aget_all())} messages")
        return answer


def erase(path: str) -> None:
    from memtend import Memory

    with Memory(path=path) as mem:
        receipt = mem.erase_user(USER)
        print(f"[erase] removed {receipt.total} items of {USER}")


def run_phase(path: str, phase: str) -> str:
    """Run one phase in a fresh Python process: nothing survives but what memtend stored on disk."""
    done = subprocess.run(
        [sys.executable, __file__, "--phase", phase, "--path", path], capture_output=True, text=True, check=False
    )
    if done.returncode != 0:
        raise SystemExit(f"phase {phase} failed:\n{done.stderr}")
    print(done.stdout, end="")
    return done.stdout


def main() -> None:
    path = tempfile.mkdtemp(prefix="memtend-llamaindex-")
    run_phase(path, "monday")
    later = run_phase(path, "later")
    tuesday, wednesday = later.split("[erase]")
    assert "- memtend keeps memory per user" in tuesday, "the preference learned on Monday shapes Tuesday's answer"
    assert "- memtend" not in wednesday, "after erasure the preference is gone"
    print("learned, used after a restart, forgotten on erasure: ok")


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--phase", choices=["monday", "later"])
    parser.add_argument("--path")
    args = parser.parse_args()
    if args.phase is None:
        main()
    elif args.phase == "monday":
        asyncio.run(session(args.path, "monday", "Please remember: I like answers as bullet points."))
    else:
        asyncio.run(session(args.path, "tuesday", "What should I know about memtend?"))
        erase(args.path)
        asyncio.run(session(args.path, "wednesday", "What should I know about memtend?"))
