"""Memory tools over ``MemtendStore``, in the shape LangMem's tools have: ``create_manage_memory_tool`` (create,
update or delete a memory in a namespace such as ``("memories", "{user_id}")``) and ``create_search_memory_tool``,
plus the user's controls (``create_user_memory_tools``: "what do you remember about me?", "forget that").

A memory is a memtend note of the user the namespace names (filled from the run: ``context=`` first, then
``configurable.user_id``, as the store does), written through the core (the gate, the write mode, revisions that
archive the old text), tagged with its namespace; search is the core's recall within that namespace. With
``write_mode="propose"`` a create or update is a proposal and the tool asks a person with LangGraph's ``interrupt``:
resume with ``Command(resume={"type": "accept"})``, ``{"type": "edit", "text": ...}`` or ``{"type": "reject"}``
(the graph needs a checkpointer). Nothing here decides what is kept: the core does.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Annotated, Any, Literal

from langchain_core.tools import BaseTool, InjectedToolCallId, StructuredTool
from memtend import InvalidInputError, MemtendError, Record, SensitiveDataError, Source, Status, UserMemory
from memtend.identity import SHARED_OWNER, user_in_places
from memtend.policies.proposals import REPLACES, WriteMode, check_write_mode
from memtend.records import Kind
from memtend.working import user_controls

from memtend_langgraph.errors import UserMismatchError, UserNotFoundError
from memtend_langgraph.store import MemtendStore
from memtend_langgraph.users import current_config, run_places

__all__ = ["create_manage_memory_tool", "create_search_memory_tool", "create_user_memory_tools"]

Action = Literal["create", "update", "delete"]
NAMESPACE_FIELD = "namespace"  # the metadata a memory keeps its namespace in (one string, labels joined by "/")
_DEFAULT_NAMESPACE = ("memories", "{user_id}")


def _store(store: MemtendStore | None) -> MemtendStore:
    if store is None:
        from langgraph.config import get_store

        try:
            store = get_store()  # type: ignore[assignment]
        except RuntimeError:
            store = None
    if not isinstance(store, MemtendStore):
        raise InvalidInputError(
            "the memory tools work over a MemtendStore: pass store=..., or compile the graph with store=MemtendStore"
        )
    return store


def _run() -> tuple[dict[str, Any], str]:
    config = current_config() or {}
    return dict(config), str((config.get("configurable") or {}).get("thread_id") or "")


def _user(store: MemtendStore, namespace: tuple[str, ...], write_mode: WriteMode | None) -> tuple[UserMemory, str, str]:
    """The user the namespace names in this run, the namespace as stored, and the run's thread."""
    config, thread = _run()
    run_user = user_in_places(run_places(config, store.context_field), who="the memory tools")
    if "{user_id}" in namespace and run_user is None:
        raise UserNotFoundError(
            "the memory tools' namespace names the run's user ('{user_id}') and this run names none: invoke the "
            "graph with context={'user_id': ...}"
        )
    filled = tuple(run_user if label == "{user_id}" and run_user else label for label in namespace)
    owner = store.users.of(filled)
    if owner is None or owner == SHARED_OWNER:
        raise UserNotFoundError(f"the memory tools' namespace names no user ({store.users.describe()})")
    if run_user is not None and owner != run_user:
        raise UserMismatchError(
            "the memory tools' namespace and the run name different users", ("the namespace", "the run")
        )
    return store.memory.user(owner, write_mode=write_mode), "/".join(filled), thread


def _refused(exc: SensitiveDataError) -> str:
    return f"refused: it holds sensitive data ({', '.join(exc.kinds)}); nothing was stored"


def _in_namespace(record: Record, label: str) -> bool:
    return record.extra.get(NAMESPACE_FIELD) == label


def _review(user: UserMemory, record: Record, action: str, label: str, redact: bool) -> str:
    """Ask a person about a proposal (LangGraph's interrupt) and apply their answer through the core."""
    from langgraph.types import interrupt

    answer = interrupt(
        {
            "memtend": "proposal",
            "action": action,
            "id": record.id,
            "text": record.text,
            "namespace": label.split("/"),
            "replaces": record.extra.get(REPLACES) or None,
            "resume_with": {"type": "accept | edit | reject", "text": "the edited text (edit only)"},
        }
    )
    kind = answer.get("type") if isinstance(answer, dict) else answer
    try:
        if kind == "accept":
            return f"{action}d memory {user.accept(record.id).id}"
        if kind == "edit":
            text = answer.get("text") if isinstance(answer, dict) else None
            accepted = user.accept(record.id, text=text, redact=redact)  # type: ignore[arg-type]
            return f"{action}d memory {accepted.id} as the user edited it: {accepted.text}"
        if kind == "reject":
            user.reject(record.id)
            return "the user rejected this memory; nothing was stored"
    except SensitiveDataError as exc:
        return _refused(exc) + " (the proposal still waits for review)"
    except MemtendError as exc:
        return f"error: {exc}"
    return "error: the review answer must be accept, edit (with text) or reject; the proposal still waits"


def create_manage_memory_tool(
    namespace: Sequence[str] = _DEFAULT_NAMESPACE,
    *,
    store: MemtendStore | None = None,
    write_mode: WriteMode | None = None,
    review: bool = True,
    actions_permitted: Sequence[Action] = ("create", "update", "delete"),
    name: str = "manage_memory",
    instructions: str = "",
) -> BaseTool:
    """A tool the agent creates, updates and deletes memories with (``content``, ``action``, ``id``, as
    LangMem's). ``store``: a ``MemtendStore`` (default: the graph's store); ``write_mode``: ``"propose"`` makes a
    create or update a proposal (None: as the Memory is opened), which ``review`` puts to a person through
    ``interrupt`` (``review=False``: it waits in ``UserMemory.proposals()`` for the application)."""
    ns = tuple(str(label) for label in namespace)
    mode = None if write_mode is None else check_write_mode(write_mode)
    permitted = frozenset(actions_permitted)

    def manage(
        tool_call_id: Annotated[str, InjectedToolCallId],
        content: str | None = None,
        action: Action = "create",
        id: str | None = None,
    ) -> str:
        if action not in permitted:
            return f"error: the {action} action is not permitted here"
        tool_store = _store(store)
        user, label, thread = _user(tool_store, ns, mode)
        try:
            if action in ("update", "delete"):
                if not id:
                    return f"error: {action} needs the id of a memory (as search_memory lists it)"
                if not _in_namespace(user.get(id), label):
                    return "error: no memory with that id in this namespace"
            if action == "delete":
                return f"deleted memory {user.delete(id or '').record.id}"
            if not content:
                return f"error: {action} needs the content to remember"
            record = _written(user, action, content, id, label, thread, tool_call_id)
        except SensitiveDataError as exc:
            return _refused(exc)
        except MemtendError as exc:
            return f"error: {exc}"
        if record.status is Status.PROPOSED:
            if review:
                return _review(user, record, action, label, tool_store.redact)
            return f"proposed memory {record.id}: the user reviews it before it is used"
        if record.status is Status.PENDING_REVIEW:
            return f"held for review: memory {record.id} waits for a person (untrusted content in this conversation)"
        return f"{action}d memory {record.id}"

    description = (
        "Create, update or delete a long-term memory about the user: durable facts, preferences, decisions. "
        "To update or delete, give the memory's id (search first). Never store secrets."
    )
    return StructuredTool.from_function(
        func=manage, name=name, description=f"{description} {instructions}".strip(), return_direct=False
    )


def _written(user: UserMemory, action: str, content: str, id: str | None, label: str, thread: str, call: str) -> Record:
    """The memory this tool call wrote, or writes now: a graph resumed after ``interrupt`` runs the tool again,
    which must find the proposal it made the first time instead of making a second."""
    if action == "create":
        mine = [r for r in user.list(kinds=[Kind.NOTE], status=None) if r.extra.get("tool_call_id") == call]
        if mine:
            return mine[0]
        meta = {NAMESPACE_FIELD: label, "tool_call_id": call}
        return user.remember(content, source=Source.AGENT, session=thread, metadata=meta)
    waiting = [r for r in user.proposals() if r.extra.get(REPLACES) == id and r.text == content]
    if waiting:
        return waiting[0]
    return user.revise(id or "", content, source=Source.AGENT, session=thread)


def create_search_memory_tool(
    namespace: Sequence[str] = _DEFAULT_NAMESPACE,
    *,
    store: MemtendStore | None = None,
    name: str = "search_memory",
    k: int = 5,
) -> BaseTool:
    """A tool the agent searches the namespace's memories with (the core's recall: meaning, words and recency;
    proposals and text in review are never found). Answers a JSON list of ``{id, content, created_at, score}``."""
    ns = tuple(str(label) for label in namespace)

    def search(query: str, limit: int = k) -> str:
        user, label, _ = _user(_store(store), ns, None)
        try:
            hits = user.recall(query, k=max(1, min(int(limit), 100)), where={NAMESPACE_FIELD: label})
        except MemtendError as exc:
            return f"error: {exc}"
        found = [
            {"id": h.record.id, "content": h.text, "created_at": h.record.created_at, "score": round(h.score, 4)}
            for h in hits
        ]
        return json.dumps(found, ensure_ascii=False)

    return StructuredTool.from_function(
        func=search, name=name, description="Search the long-term memories about the user; best first."
    )


def create_user_memory_tools(*, store: MemtendStore | None = None) -> list[BaseTool]:
    """The user's controls as tools: ``memories`` lists what is remembered about the run's user (facts, rules,
    notes, with ids) and ``forget_memory`` deletes one by id (refused in a conversation holding untrusted
    content), through the core (``memtend.working.user_controls``)."""

    def run_user() -> tuple[UserMemory, str]:
        tool_store = _store(store)
        config, thread = _run()
        user_id = user_in_places(run_places(config, tool_store.context_field), who="the memory tools")
        if user_id is None:
            raise UserNotFoundError("the user's memory tools need the run's user: invoke with context={'user_id': ...}")
        return tool_store.memory.user(user_id), thread

    def memories() -> str:
        return user_controls.list_memories(run_user()[0])

    def forget_memory(memory_id: str) -> str:
        user, thread = run_user()
        return user_controls.forget_memory(user, memory_id, session=thread)

    return [
        StructuredTool.from_function(func=memories, name="memories", description=user_controls.MEMORIES_DESCRIPTION),
        StructuredTool.from_function(
            func=forget_memory, name="forget_memory", description=user_controls.FORGET_DESCRIPTION
        ),
    ]
