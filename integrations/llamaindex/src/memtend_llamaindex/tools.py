"""Memory tools for LlamaIndex agents (``FunctionTool``): ``remember`` (honours the write mode: in propose mode a
proposal the user accepts), ``recall``, and the user's controls ``memories`` and ``forget_memory``, for one user
and session, through the core (``memtend.working.user_controls``)."""

from __future__ import annotations

from llama_index.core.tools import FunctionTool
from memtend import Memory, MemtendError, SensitiveDataError, Source, Status
from memtend.policies.proposals import WriteMode, check_write_mode
from memtend.working import user_controls

__all__ = ["memtend_tools"]


def memtend_tools(
    memory: Memory, user_id: str, *, session_id: str = "", write_mode: WriteMode | None = None, k: int = 5
) -> list[FunctionTool]:
    """The four tools, bound to ``user_id`` (and ``session_id``, the conversation a forget is asked in)."""
    mode = None if write_mode is None else check_write_mode(write_mode)
    user = memory.user(user_id, write_mode=mode)

    async def remember(text: str) -> str:
        """Save one durable fact or preference about the user (one short sentence). Never pass secrets."""
        try:
            record = await user.aremember(text, source=Source.AGENT, session=session_id)
        except SensitiveDataError as exc:
            return f"refused: it holds sensitive data ({', '.join(exc.kinds)}); nothing was stored"
        except MemtendError as exc:
            return f"error: {exc}"
        if record.status is Status.PROPOSED:
            return "proposed: the user reviews it before it is remembered"
        return "held for review" if record.status is Status.PENDING_REVIEW else "remembered"

    async def recall(query: str) -> str:
        """Search what was remembered about the user; dated memories, best first."""
        hits = await user.arecall(query, k=k)
        return "\n".join(h.label() for h in hits) or "nothing remembered matches"

    async def memories() -> str:
        return await user_controls.alist_memories(user)

    async def forget_memory(memory_id: str) -> str:
        return await user_controls.aforget_memory(user, memory_id, session=session_id)

    return [
        FunctionTool.from_defaults(async_fn=remember, name="remember"),
        FunctionTool.from_defaults(async_fn=recall, name="recall"),
        FunctionTool.from_defaults(async_fn=memories, name="memories", description=user_controls.MEMORIES_DESCRIPTION),
        FunctionTool.from_defaults(
            async_fn=forget_memory, name="forget_memory", description=user_controls.FORGET_DESCRIPTION
        ),
    ]
