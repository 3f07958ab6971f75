"""The constraints a user set in one conversation, kept for adapters that do not hold the transcript.

A framework memory that sees one user message per turn (LangChain's classic chain memory) or only the turns not
yet flushed (a LlamaIndex memory block) cannot read the whole conversation again each turn. It hands each user
message to :meth:`SessionConstraints.note` once, and gets back the constraints in force: the transcript summary's
rules decide what is an instruction and which later one revises which
(:mod:`memtend.transcripts.summary.constraints`), so a revised constraint replaces the earlier one and a request is
not a constraint, exactly as for a compacted transcript. Kept per (user, session) in the reserved document space
(namespace ``constraints:<session id>``), sensitive values masked, expiring with the session state and erased with
the user.
"""

from __future__ import annotations

import asyncio
import hashlib
from collections.abc import Sequence
from typing import Any

from memtend.arguments import check_texts
from memtend.documents.values import gated_json
from memtend.errors import SensitiveDataError
from memtend.records import now
from memtend.transcripts.summary.constraints import is_replaced, mark_replaced, user_instructions
from memtend.transcripts.summary.schema import dedupe
from memtend.working.scope import SessionScoped, is_expired

__all__ = ["SessionConstraints"]

KEY = "current"
MAX_KEPT = 100  # constraints kept per session, the oldest dropped first
MAX_SEEN = 1_000  # fingerprints of the messages already read, so a message handed over twice counts once


def _fingerprint(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()[:20]


def _masked(sentences: list[str]) -> list[str]:
    """The sentences with what the write gate finds masked (a sentence that cannot be masked in place is left
    out: it is a secret, not an instruction to keep)."""
    out = []
    for sentence in sentences:
        try:
            masked = gated_json(sentence, redact=True)[0]
        except SensitiveDataError:
            continue
        if isinstance(masked, str):
            out.append(masked)
    return out


class SessionConstraints(SessionScoped):
    """The constraints of one (user, session): ``note`` each user message once, read them back with ``current``.

    Obtained from ``user.constraints(session_id)``."""

    prefix = "constraints:"
    label = "constraints"

    def _state(self) -> dict[str, Any]:
        item = self._store.item(KEY)
        if item is None or is_expired(item, now()) or not isinstance(item.value, dict):
            return {"constraints": [], "seen": [], "opened": False}
        value = item.value
        return {
            "constraints": [c for c in value.get("constraints") or () if isinstance(c, str)],
            "seen": [s for s in value.get("seen") or () if isinstance(s, str)],
            "opened": bool(value.get("opened")),
        }

    def note(self, texts: Sequence[str]) -> list[str]:
        """Read the user's messages ``texts`` (in order; one already read is skipped) and return the constraints
        in force, oldest first. The first message of the session states the task: its opening imperative is the
        task, not a constraint."""
        texts = check_texts(texts, "texts")
        fresh = [t for t in texts if t.strip()]
        if not fresh:
            return self.current()
        self._gate_session_id()
        with self._tally().lock:
            state = self._state()
            seen: list[str] = state["seen"]
            marked: list[str] = state["constraints"]
            opened: bool = state["opened"]
            changed = False
            for text in fresh:
                mark = _fingerprint(text)
                if mark in seen:
                    continue
                seen.append(mark)
                found = _masked(user_instructions(text, goal=not opened))
                opened = changed = True
                marked = mark_replaced(dedupe([*marked, *found]))[-MAX_KEPT:]
            if changed:
                value = {"constraints": marked, "seen": seen[-MAX_SEEN:], "opened": opened}
                self._store.put(KEY, value, expires_at=self._expiry())
        return [c for c in marked if not is_replaced(c)]

    def current(self) -> list[str]:
        """The constraints in force, oldest first (revised ones in their latest version only)."""
        return [c for c in self._state()["constraints"] if not is_replaced(c)]

    def clear(self) -> None:
        """Forget the session's constraints (a new conversation under the same id starts afresh)."""
        self._store.delete(KEY)

    # ---------------------------------------------------------- async twins (each runs its sync call in a thread)
    async def anote(self, texts: Sequence[str]) -> list[str]:
        return await asyncio.to_thread(self.note, texts)

    async def acurrent(self) -> list[str]:
        return await asyncio.to_thread(self.current)

    async def aclear(self) -> None:
        await asyncio.to_thread(self.clear)
