"""A long tool-using agent run that keeps its state and never repeats a side effect.

A scripted stand-in for a model drives an agent loop: it notes state through the memory tool, checks the
side-effect ledger before deploying, and the transcript is compacted when it grows, with the user's constraints
carried into the system prompt on every turn.

Run: uv run python cookbook/agent_working_memory.py
"""

from __future__ import annotations

import json
import tempfile

from memtend import Memory, MemoryTool, Message, ToolCall, compact_transcript


def main() -> None:
    with Memory(path=tempfile.mkdtemp(prefix="memtend-agent-")) as mem:
        user = mem.user("dana")
        state, ledger = user.session("ticket-481"), user.ledger("ticket-481")
        tool = MemoryTool(state, ledger)
        print("tool offered to the model (OpenAI format):", tool.openai()["function"]["name"])

        transcript = [
            Message.system("You are a deployment assistant."),
            Message.user("Deploy the billing service to staging. Never touch production without asking me."),
        ]
        print(tool.handle({"op": "set", "key": "Target Env", "value": "https://staging.example.com"}))
        print(tool.handle('{"op": "set", "key": "branch", "value": "release-2.4"}'))

        for turn in range(12):
            args = {"service": "billing", "env": "staging"}
            # before acting, the model asks its memory whether the deploy already happened
            asked = {"op": "seen", "key": "deploy", "value": args}
            check = ToolCall(id=f"check_{turn}", name="memory", arguments=asked)
            answer = tool.handle(check.arguments)
            transcript += [
                Message.assistant("", tool_calls=[check]),
                Message.tool(answer, tool_call_id=check.id, name="memory"),
            ]
            if ledger.seen("deploy", args) is None:
                call = ToolCall(id=f"call_{turn}", name="deploy", arguments=args)
                result = {"deployment_id": "dep_7f3a9", "status": "ok", "log": "x" * 800}
                ledger.record("deploy", args, result)
                transcript += [
                    Message.assistant("", tool_calls=[call]),
                    Message.tool(json.dumps(result), tool_call_id=call.id, name="deploy"),
                ]
            transcript += [
                Message.assistant(f"Turn {turn}: billing is on staging. " + "Checked health endpoints. " * 20),
                Message.user(f"Status of step {turn}?"),
            ]

        result = compact_transcript(transcript, max_tokens=1_500, keep_recent_turns=2)
        print(f"compacted: {result.compacted}, tokens {result.tokens_before} -> {result.tokens_after}")
        print("constraints for the system prompt:", result.constraints)
        assert result.summary is not None
        print("side effects kept in the summary:", [(s.tool, s.ids) for s in result.summary.side_effects])
        print("working memory after compaction:", tool.handle({"op": "list"}))
        print("repeated deploys avoided; ledger stats:", ledger.stats())
        print("erased:", mem.erase_user("dana").counts)


if __name__ == "__main__":
    main()
