"""The side-effect policy the adapters apply around a tool call: which tools are side-effecting, what counts as
the same call, and what a repeat gets instead of running again.

An application names its side-effecting tools (``SideEffectGuard(["deploy", "create_ticket"])``) or marks them
(:func:`side_effecting`). Around each call of such a tool an adapter asks :meth:`SideEffectGuard.before`; the
verdict says whether to run it. The same call is the same tool with the same arguments (as JSON, in any key order:
:func:`memtend.working.ledger.call_key`) in the same conversation of the same user (one
:class:`~memtend.working.ledger.Ledger` per user and session). A repeat, with ``on_repeat``:

* ``"answer"`` (the default): not run; the agent is told it was already done, when, with which ids, and the
  earlier result;
* ``"refuse"``: not run; the agent gets an error saying it was already done (with the ids) and is not repeated;
* ``"allow"``: run again, and recorded as a repeat (``ledger.stats()["repeats"]``).

After the call the adapter hands the result to :meth:`SideEffectGuard.after` (the ids it names are kept), or to
:meth:`SideEffectGuard.failed` when it raised or reported an error, so a retry runs. A call cut short by a crash
stays pending: a repeat is answered saying its outcome was not recorded. Adapters only translate the verdict into
their framework's tool message.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any, Literal, TypeVar, get_args

from memtend.arguments import describe
from memtend.errors import InvalidInputError
from memtend.working.ledger import Ledger, LedgerEntry

__all__ = ["MARK", "OnRepeat", "SideEffectGuard", "Verdict", "is_marked", "side_effecting"]

OnRepeat = Literal["answer", "refuse", "allow"]
MARK = "memtend_side_effect"  # attribute (or ``metadata`` entry) marking a tool or function as side-effecting
ANSWERED = "Not run again (memtend ledger): "
REFUSED = "Refused (memtend ledger): "

T = TypeVar("T")
R = TypeVar("R")


def side_effecting(obj: T) -> T:
    """Mark a function or tool object as side-effecting, so every adapter's guard records and deduplicates its
    calls; works as a decorator under a framework's own (``@tool`` over ``@side_effecting``) or on a tool object
    (a tool with a ``metadata`` dict, as LangChain's, gets the mark there)."""
    metadata = getattr(obj, "metadata", None)
    if isinstance(metadata, dict):
        metadata[MARK] = True
        return obj
    if metadata is None and hasattr(obj, "metadata"):
        try:  # a tool object whose metadata dict is not set yet
            obj.metadata = {MARK: True}  # type: ignore[attr-defined]
            return obj
        except (AttributeError, TypeError, ValueError):
            pass
    try:
        setattr(obj, MARK, True)
    except (AttributeError, TypeError, ValueError):
        raise InvalidInputError(
            f"cannot mark {describe(obj)} as side-effecting; mark the function it wraps, or name the tool in "
            "side_effect_tools"
        ) from None
    return obj


def is_marked(*objects: object) -> bool:
    """Whether any of ``objects`` (a tool, the function it wraps) carries the :func:`side_effecting` mark."""
    for obj in objects:
        if obj is None:
            continue
        if getattr(obj, MARK, False) is True:
            return True
        metadata = getattr(obj, "metadata", None)
        if isinstance(metadata, Mapping) and metadata.get(MARK) is True:
            return True
    return False


@dataclass(frozen=True)
class Verdict:
    """What to do with one tool call: ``run`` it, or answer with ``text`` instead (``refused``: as an error).
    ``entry``: the earlier call, for a repeat."""

    run: bool
    text: str = ""
    refused: bool = False
    entry: LedgerEntry | None = None
    guarded: bool = True  # False: not a side-effecting tool, nothing was reserved

    @property
    def repeat(self) -> bool:
        return self.entry is not None


RUN_UNGUARDED = Verdict(run=True, guarded=False)


def _check_on_repeat(value: object) -> OnRepeat:
    options = get_args(OnRepeat)
    if value not in options:
        raise InvalidInputError(f"on_repeat must be one of {', '.join(options)}, got {describe(value)}")
    return value  # type: ignore[return-value]


def _check_names(tools: object) -> frozenset[str]:
    if isinstance(tools, str):
        raise InvalidInputError("side_effect_tools takes a list of tool names, not one string")
    if not isinstance(tools, Iterable):
        raise InvalidInputError(f"side_effect_tools must be a list of tool names, got {describe(tools)}")
    names = list(tools)
    bad = [n for n in names if not isinstance(n, str) or not n.strip()]
    if bad:
        raise InvalidInputError(f"side_effect_tools must hold tool names (non-empty strings), got {describe(bad[0])}")
    return frozenset(names)


class SideEffectGuard:
    """The ledger policy for an adapter: ``SideEffectGuard(["deploy"], on_repeat="answer")``."""

    def __init__(self, tools: Iterable[str] = (), *, on_repeat: OnRepeat = "answer") -> None:
        self.tools = _check_names(tools)
        self.on_repeat: OnRepeat = _check_on_repeat(on_repeat)

    def __repr__(self) -> str:
        return f"SideEffectGuard({sorted(self.tools)!r}, on_repeat={self.on_repeat!r})"

    def guards(self, name: str, *marked: object) -> bool:
        """Whether a call of tool ``name`` (whose tool object and function are ``marked``) is side-effecting."""
        return name in self.tools or is_marked(*marked)

    # ------------------------------------------------------------------ around the call
    def before(self, ledger: Ledger, tool: str, args: Any) -> Verdict:
        """Before calling ``tool`` with ``args``: reserve it in ``ledger`` if new; for a repeat, the answer."""
        if self.on_repeat == "allow":
            earlier = ledger.seen(tool, args)
            return Verdict(run=True, entry=earlier) if earlier is not None else Verdict(run=True)
        return self._verdict(ledger.claim(tool, args))

    async def abefore(self, ledger: Ledger, tool: str, args: Any) -> Verdict:
        if self.on_repeat == "allow":
            earlier = await ledger.aseen(tool, args)
            return Verdict(run=True, entry=earlier) if earlier is not None else Verdict(run=True)
        return self._verdict(await ledger.aclaim(tool, args))

    def after(self, ledger: Ledger, tool: str, args: Any, result: Any, verdict: Verdict) -> LedgerEntry | None:
        """After a call that ran: its result (the ids it names are kept) completes the reservation; a repeat the
        policy allowed counts as one more call."""
        return ledger.record(tool, args, result) if verdict.guarded else None

    async def aafter(self, ledger: Ledger, tool: str, args: Any, result: Any, verdict: Verdict) -> LedgerEntry | None:
        return await ledger.arecord(tool, args, result) if verdict.guarded else None

    def failed(self, ledger: Ledger, tool: str, args: Any, verdict: Verdict) -> None:
        """After a call that raised or reported an error: its reservation is dropped, so a retry runs."""
        if verdict.guarded and not verdict.repeat:
            ledger.release(tool, args)

    async def afailed(self, ledger: Ledger, tool: str, args: Any, verdict: Verdict) -> None:
        if verdict.guarded and not verdict.repeat:
            await ledger.arelease(tool, args)

    # ------------------------------------------------------------------ the whole call, for an adapter
    def run(
        self,
        ledger: Ledger,
        tool: str,
        args: Any,
        call: Callable[[], R],
        *,
        answer: Callable[[Verdict], R],
        result_of: Callable[[R], Any] = lambda out: out,
        is_error: Callable[[R], bool] = lambda out: False,
    ) -> R:
        """One guarded call: ``call()`` when it is new (or allowed), else ``answer(verdict)`` (the adapter's tool
        message for the verdict's text). ``result_of`` reads what to record from the call's output; ``is_error``
        tells an output that reports a failure (the reservation is dropped, as when ``call`` raises)."""
        verdict = self.before(ledger, tool, args)
        if not verdict.run:
            return answer(verdict)
        try:
            out = call()
        except BaseException:
            self.failed(ledger, tool, args, verdict)
            raise
        if is_error(out):
            self.failed(ledger, tool, args, verdict)
        else:
            self.after(ledger, tool, args, result_of(out), verdict)
        return out

    async def arun(
        self,
        ledger: Ledger,
        tool: str,
        args: Any,
        call: Callable[[], Awaitable[R]],
        *,
        answer: Callable[[Verdict], R],
        result_of: Callable[[R], Any] = lambda out: out,
        is_error: Callable[[R], bool] = lambda out: False,
    ) -> R:
        verdict = await self.abefore(ledger, tool, args)
        if not verdict.run:
            return answer(verdict)
        try:
            out = await call()
        except BaseException:
            await self.afailed(ledger, tool, args, verdict)
            raise
        if is_error(out):
            await self.afailed(ledger, tool, args, verdict)
        else:
            await self.aafter(ledger, tool, args, result_of(out), verdict)
        return out

    # ------------------------------------------------------------------ the answer
    def _verdict(self, earlier: LedgerEntry | None) -> Verdict:
        if earlier is None:
            return Verdict(run=True)
        if self.on_repeat == "refuse":
            text = (
                f"{REFUSED}{earlier.describe()}. A side-effecting call is not made twice in one conversation; "
                "use the earlier result, or ask the user before doing it again."
            )
            return Verdict(run=False, text=text, refused=True, entry=earlier)
        text = f"{ANSWERED}{earlier.describe()}."
        if earlier.result is not None:
            text += f" Earlier result: {earlier.result}"
        return Verdict(run=False, text=text, entry=earlier)
