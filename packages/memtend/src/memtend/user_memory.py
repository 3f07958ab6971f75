"""The per-user facade: every call scoped to one user, each read as validate -> plan -> apply.

Capture (remember, log, add_rule, set_fact) -> judge (gate, precedence) -> write or merge -> retrieve
(recall) -> review and forget (approve, reject, compact, forget, purge, restore) -> erase.
Validation is the ``check_*`` functions and the write gate; planning is :mod:`memtend.policies.changes` (pure);
applying is ``Memory.apply``, the one function that writes.
"""

from __future__ import annotations

import builtins
import functools
from collections.abc import Iterable
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

import numpy as np

from memtend.aio import no_io, run_io
from memtend.arguments import check_items, describe
from memtend.capture import merge
from memtend.capture import run as capture_run
from memtend.capture.extractor import AsyncExtractor, Extractor, check_extractor
from memtend.capture.report import CaptureReport
from memtend.consistency import guarded as shared_writes
from memtend.consistency.claim_write import write_claim
from memtend.documents.external import export_external
from memtend.documents.keyed import KeyedStore, export_items
from memtend.documents.store import DocumentStore, shared_namespaces
from memtend.documents.values import gate_identifier, gated_metadata
from memtend.errors import InvalidInputError, RecordNotFoundError
from memtend.helpers import Parts, embedded_ahead
from memtend.metrics import observe as observed_calls
from memtend.metrics.facade import MetricsCalls
from memtend.metrics.tally import operating
from memtend.policies import changes, compaction, forgetting, gate, precedence, proposals, recall_filters
from memtend.policies.changes import Change
from memtend.policies.precedence import FactOutcome
from memtend.policies.recall_filters import MetadataFilter
from memtend.records import (
    Kind,
    Record,
    Scope,
    Source,
    Status,
    check_days,
    check_extra,
    check_name,
    check_text,
    check_time,
    chroma_float,
    fact_id,
    new_id,
    now,
)
from memtend.results import CompactionReport, DeleteReport, Event, FactResult, ForgetReport, HistoryEntry, Hit
from memtend.storage.store import Storage
from memtend.upkeep import user_upkeep
from memtend.writing.review_calls import ReviewCalls, checked_id

if TYPE_CHECKING:
    from memtend.documents.store import GateMode
    from memtend.handle import FacadeHandle
    from memtend.policies.proposals import WriteMode
    from memtend.transcripts.messages import Message
    from memtend.working.constraints import SessionConstraints
    from memtend.working.ledger import Ledger
    from memtend.working.session import SessionState

__all__ = ["MAX_K", "UserMemory"]

_clock = now  # methods with a ``now`` parameter read the real clock through this name
MAX_K = 1_000
_AHEAD_MAX = 256  # a log_many batch up to this size is written in one go (as the apply step's pipeline chunk)


@functools.lru_cache(maxsize=4_096)
def _fact_key(key: str) -> str:
    """A fact key canonicalised, after the key as given passed the gate (canonicalising lower-cases, which can hide
    a token). Keys repeat from write to write: each is read once per process (a refused key is read every time)."""
    canonical = precedence.canonical_key(key)
    gate_identifier(key, "the fact key")
    return canonical


@dataclass(frozen=True)
class _Checked:
    """A record that passed validation and the gate, and the kinds of sensitive value the gate masked."""

    record: Record
    redacted: tuple[str, ...]


@observed_calls.instrumented  # each public call logged and timed (memtend.metrics.observe)
class UserMemory(ReviewCalls, MetricsCalls):
    """Everything stored about one user; obtained from ``Memory.user(user_id)``. The review calls (``pending``,
    ``proposals``, ``accept``, ``revise``, ``approve``, ``reject``, ``restore``) come from
    :class:`~memtend.writing.review_calls.ReviewCalls`; the metrics and call-log calls (``metrics``, ``calls``,
    ``report_recall``, ``report_compaction``, ``check_retrieval``) from
    :class:`~memtend.metrics.facade.MetricsCalls`."""

    def __init__(
        self, memory: FacadeHandle, user_id: str, *, write_mode: WriteMode | None = None, operator: bool = False
    ) -> None:
        self.memory = memory
        self.user_id = user_id
        self.write_mode: WriteMode = memory.write_mode if write_mode is None else write_mode  # see policies.proposals
        self.operator = operator  # a person's handle: reads unlogged, changes logged as theirs (memtend.metrics.tally)

    def __repr__(self) -> str:
        return f"UserMemory(user_id={self.user_id!r})"

    @property
    def _storage(self) -> Storage:
        """Storage, with buffered usage stamps written first so every read shows them."""
        return self.memory.settled_storage()

    # ------------------------------------------------------------------ capture
    def _checked(
        self,
        kind: Kind,
        text: object,
        source: Source | str,
        *,
        redact: bool,
        at: float | None = None,
        session: str = "",
        metadata: dict[str, Any] | None = None,
        key: str = "",
        value: str = "",
        life: tuple[Scope | None, float | None] = (None, None),
    ) -> _Checked:
        """Validate a new record's parts and pass its text through the gate (which may refuse or mask it)."""
        source = Source.parse(source)
        text = check_text(text)
        extra = check_extra(metadata)
        session = check_name(session, "session")
        if session and source in (Source.AGENT, Source.TOOL, Source.INFERRED) and self._untrusted(session):
            source = Source.EXTERNAL  # written on the strength of a conversation holding unreviewed untrusted content
        if at is not None:
            at = check_time(at, "at")
        decision = gate.check_write(text, source, redact=redact, meaning=self.memory.injection_check)
        if session:  # a label names what is stored: refused, never masked
            gate_identifier(session, "the session label")
        extra, masked_extra = gated_metadata(extra, redact=redact)
        t = now()
        created = float(at) if at is not None else t
        record = Record(
            id=new_id(),
            user_id=self.user_id,
            kind=kind,
            text=decision.text,
            source=source,
            status=proposals.status_for(self.write_mode, source, decision.status),
            key=key,
            value=value,
            created_at=created,
            updated_at=created,
            last_used_at=t,
            session=session,
            flagged=decision.flagged,
            extra=extra,
            scope=life[0],
            expires_at=life[1],
        )
        return _Checked(record, tuple(sorted({*decision.redacted_kinds, *masked_extra})))

    def _add(
        self, checked: list[_Checked], embedded: dict[str, np.ndarray] | None = None, batch_id: str | None = None
    ) -> list[Record]:
        """Store checked records in one change; ``embedded``: vectors already made, by text (a text the gate
        changed is not among them and is embedded by the apply step); ``batch_id``: see ``log_many``."""
        records = [c.record for c in checked]
        if records:
            change = self._adding(checked, batch_id)
            if embedded:
                vectors = {r.id: embedded[r.text] for r in change.upserts if r.text in embedded}
                change = replace(change, vectors={**change.vectors, **vectors})
            self.memory.apply(change)
            records = list(change.upserts)
        return records

    def _add_streamed(self, checked: list[_Checked], parts: Parts, batch_id: str | None) -> list[Record]:
        """Store checked new records while ``parts`` embeds their texts (see ``Memory.apply_streamed``)."""
        change = self._adding(checked, batch_id)
        self.memory.apply_streamed(change, parts)
        return list(change.upserts)

    def _adding(self, checked: list[_Checked], batch_id: str | None) -> changes.Change:
        """The change that adds checked new records, with what the gate masked in each."""
        redacted = {c.record.id: c.redacted for c in checked if c.redacted}
        return changes.add(self.user_id, [c.record for c in checked], redacted, batch_id=batch_id)

    def remember(
        self,
        text: str,
        *,
        source: Source | str = Source.USER,
        metadata: dict[str, Any] | None = None,
        redact: bool = False,
        session: str = "",
        at: float | None = None,
        scope: Scope | str | None = None,
        expires_at: float | None = None,
    ) -> Record:
        """Store a free-text note (``at``: when it was said, epoch seconds; default now, so a past conversation
        imported as notes keeps its dates). ``scope`` and ``expires_at``: its lifetime (see ``Scope``, docs/core.md)."""
        life = user_upkeep.lifetime(scope, expires_at)
        return self._note(text, source=source, metadata=metadata, redact=redact, session=session, at=at, life=life)[0]

    def _note(self, text: object, **given: Any) -> tuple[Record, str]:
        """``remember`` (``given``: its options), and what it did: added, duplicate or refreshed (capture.merge)."""
        checked, embedded = self.memory.gated_beside_embedding(text, lambda: self._checked(Kind.NOTE, text, **given))
        vector = embedded.get(checked.record.text) if embedded else None
        gated = checked.record.text
        return merge.write_or_merge(
            self.memory,
            self.user_id,
            checked.record,
            vector,
            lambda made: self._add([checked], embedded if made is None else {**(embedded or {}), gated: made})[0],
        )

    def log(
        self,
        text: str,
        *,
        at: float | None = None,
        session: str = "",
        source: Source | str = Source.USER,
        metadata: dict[str, Any] | None = None,
        redact: bool = False,
        scope: Scope | str | None = None,
        expires_at: float | None = None,
    ) -> Record:
        """Append an event to the user's log (``at``: when it happened, epoch seconds, default now; ``scope`` and
        ``expires_at`` as for ``remember``)."""
        life = user_upkeep.lifetime(scope, expires_at)
        checked, embedded = self.memory.gated_beside_embedding(
            text,
            lambda: self._checked(
                Kind.EVENT, text, source, redact=redact, at=at, session=session, metadata=metadata, life=life
            ),
        )
        return self._add([checked], embedded)[0]

    def log_many(
        self, events: Iterable[Event | str], *, redact: bool = False, batch_id: str | None = None
    ) -> list[Record]:
        """Append many events in one batch (one embedding call, one write). All are checked before any is stored.

        All or nothing: a batch too large for one Chroma write is journaled and finished on the next open if the
        process dies midway. ``batch_id``: your name for this batch (an import file and its line range, a message
        id); record ids derive from it, so calling again with the same ``batch_id`` and events (after a crash or a
        lost server, not knowing whether the first call landed) writes the same records again instead of twice."""
        if batch_id is not None:
            batch_id = check_name(batch_id, "batch_id", blank=False)
        items = [Event(text=event) if isinstance(event, str) else event for event in check_items(events, "events")]
        for event in items:
            if not isinstance(event, Event):
                raise InvalidInputError(f"log_many takes Event or str items, got {type(event).__name__}")
        # a batch up to _AHEAD_MAX is embedded on a helper while the gate reads it, in the model's own batches of
        # texts, and each part is stored while the next is embedded (a larger one is embedded and written in a
        # pipeline by the apply step)
        texts = [e.text for e in items if isinstance(e.text, str)]
        parts = self.memory.embed_parts(texts) if 1 < len(texts) == len(items) <= _AHEAD_MAX else None
        if parts is not None:
            # the gate waits for the first model run to begin: it lets the GIL go only for moments (system calls, as
            # for a new id's random bytes) and takes it back before a waiting thread wakes, so the helper often did
            # not start before the gate ended (the embedding then waited for the whole gate); a model run holds no
            # GIL, so the gate beside it costs the embedding nothing
            parts.computing[0].wait()
        checked = []
        for event in items:
            checked.append(
                self._checked(
                    Kind.EVENT,
                    event.text,
                    event.source,
                    redact=redact,
                    at=event.at,
                    session=event.session,
                    metadata=event.metadata,
                )
            )
        if parts is None or len(parts.futures) == 1:
            return self._add(checked, embedded_ahead(parts, texts), batch_id)
        return self._add_streamed(checked, parts, batch_id)

    def add_rule(
        self, text: str, *, source: Source | str = Source.USER, redact: bool = False, at: float | None = None
    ) -> Record:
        """Store a procedural rule (``at``: when it was said; default now). Rules are pinned: forgetting never
        archives them. A rule from an external source waits in review until approved."""
        return self._add([self._checked(Kind.RULE, text, source, redact=redact, at=at)])[0]

    # ------------------------------------------------------------------ facts and precedence
    def set_fact(
        self,
        key: str,
        value: str,
        *,
        source: Source | str = Source.USER,
        redact: bool = False,
        at: float | None = None,
        scope: Scope | str | None = None,
        expires_at: float | None = None,
    ) -> FactResult:
        """Set the user's current value for ``key``; ``.outcome`` is added / updated / unchanged / kept.

        A lower-trust source never replaces a higher-trust one; a replaced value is archived with a pointer to
        its successor and can be restored. An external source is held for review instead. ``at``: when the value
        was said (default now); a value said before the current one was set is kept out (``kept``). ``scope`` and
        ``expires_at``: the value's lifetime, as for ``remember`` (default: the user's, until superseded).
        """
        life = user_upkeep.lifetime(scope, expires_at)
        return self._fact(key, value, source=source, redact=redact, at=at, life=life)

    def _fact(self, key: str, value: str, *, source: Source | str, **given: Any) -> FactResult:
        """``set_fact`` (``given``: redact, at; session and metadata, the provenance the written value carries)."""
        at = given.get("at")
        canonical = _fact_key(key) if type(key) is str else _fact_key.__wrapped__(key)
        value = check_text(value, "value")
        source = Source.parse(source)
        text = precedence.fact_text(canonical, value)
        checked, embedded = self.memory.gated_beside_embedding(
            text, lambda: self._checked(Kind.FACT, text, source, key=canonical, value=value, **given)
        )
        candidate = checked.record
        if candidate.text != text:  # redacted: keep the value consistent with what is stored
            candidate = replace(candidate, value=gate.redact(value))
        if candidate.status in (Status.PENDING_REVIEW, Status.PROPOSED):
            self._add([_Checked(candidate, checked.redacted)], embedded)
            held = "proposed: waits to be accepted" if candidate.status is Status.PROPOSED else "external source"
            return FactResult(FactOutcome.KEPT, candidate, f"{held}: held for review")
        said_at = candidate.created_at if at else None
        return write_claim(
            self.memory, self.user_id, candidate, checked.redacted, said_at=said_at, embedded=embedded, clock=now
        )

    def _set_fact_resolved(self, key: str, value: str, **given: Any) -> FactResult:
        """``set_fact`` with its result resolved now (for ``aset_fact``, which runs it off the event loop)."""
        result = self.set_fact(key, value, **given)
        _ = result.outcome  # resolves it
        return result

    def get_fact(self, key: str) -> Record | None:
        """The key's current value (its claims resolved, see :mod:`memtend.consistency.claims`), or None. Known without
        a read where this process holds the folder lock and has seen the key; else the key's rows are read (its slot
        row by id, its claims by key)."""
        current, _ = self._storage.fact_slot(self.user_id, fact_id(self.user_id, precedence.canonical_key(key)))
        return current if current is not None and current.status is Status.ACTIVE else None

    def facts(self) -> dict[str, str]:
        """The profile: every current fact, key -> value."""
        # the profile shows no usage stamps, so the buffered ones are not written first (a closed handle's
        # storage refuses the read)
        records, _ = self.memory.storage.get_records(self.user_id, kinds=[Kind.FACT], statuses=[Status.ACTIVE])
        return {r.key: r.value for r in sorted(records, key=lambda r: r.key) if r.id.startswith("fact:")}

    # ------------------------------------------------------------------ capture of a turn (memtend.capture)
    def capture(
        self,
        messages: Iterable[Message],
        *,
        session: str = "",
        offset: int = 0,
        extractor: Extractor | AsyncExtractor | None = None,
        redact: bool = False,
        conversation: Iterable[Message] | None = None,
    ) -> CaptureReport:
        """Keep what a turn (messages: user, assistant, tool) holds that is worth keeping, written or merged with its
        provenance (``session``, ``offset``: the first message's index); see :mod:`memtend.capture`. When the
        conversation ends, pass it whole as ``conversation``: the user's instructions still in force are kept too,
        each in its latest version (until then the session's constraints hold them)."""
        chosen = check_extractor(extractor) or self.memory.extractor
        run = capture_run.judge(messages, offset, chosen, conversation)
        return self._write_captured(run, session, redact)

    async def acapture(
        self,
        messages: Iterable[Message],
        *,
        session: str = "",
        offset: int = 0,
        extractor: Extractor | AsyncExtractor | None = None,
        redact: bool = False,
        conversation: Iterable[Message] | None = None,
    ) -> CaptureReport:
        chosen = check_extractor(extractor) or self.memory.extractor
        whole = None if conversation is None else list(conversation)
        run = await capture_run.ajudge(list(messages), offset, chosen, whole)
        return await run_io(self._write_captured, run, session, redact)

    def _write_captured(self, judged: tuple[builtins.list[Any], str], session: str, redact: bool) -> CaptureReport:
        """Store what capture judged; an instruction revising one an earlier session kept goes through ``revise``."""
        notes = functools.partial(self.list, kinds=[Kind.NOTE])  # the active notes, oldest first
        return capture_run.write(
            *judged, self._note, self._fact, session=session, redact=redact, notes=notes, revise=self.revise
        )

    # ------------------------------------------------------------------ retrieval
    def recall(
        self,
        query: str,
        k: int = 5,
        *,
        session: str | None = None,
        kinds: Iterable[Kind | str] | None = None,
        where: MetadataFilter | None = None,
        max_tokens: int | None = None,
        now: float | None = None,
        include_pending: bool = False,
    ) -> list[Hit]:
        """The ``k`` records that best answer ``query``, ranked by meaning, words and recency together.

        Among relevant records that conflict, the newest wins. Narrow it with ``session`` (only records written
        in that session or thread), ``kinds``, and ``where``: a filter on the metadata given at write time
        (``{"project": "apollo", "priority": {"$gte": 2}}``; operators ``$eq $ne $gt $gte $lt $lte $in $nin``).
        ``max_tokens`` caps what the hits' labels take in a prompt (about four characters a token): the best hits
        that fit, in rank order. Pending-review (untrusted) records are left out unless ``include_pending``.
        Returned records get ``last_used_at`` set.
        """
        query = check_text(query, "query")
        if not isinstance(k, int) or isinstance(k, bool) or not 1 <= k <= MAX_K:
            raise InvalidInputError(f"k must be an int from 1 to {MAX_K}, got {describe(k)}")
        if session is not None:
            session = check_name(session, "session")
        kind_set = {Kind.parse(x) for x in check_items(kinds, "kinds")} if kinds is not None else None
        conditions = recall_filters.check_filter(where) if where is not None else None
        budget = recall_filters.check_max_tokens(max_tokens)
        statuses = {Status.ACTIVE, Status.PENDING_REVIEW} if include_pending else {Status.ACTIVE}
        only = recall_filters.recall_test(session, conditions)
        memory = self.memory
        loading = memory.preload_index(self.user_id)  # a first recall reads storage while the query is embedded
        query_vec = memory.embed_query(query)
        if loading is not None:
            loading.result()
        t = _now_default(now)
        with memory.lock:
            index = memory.user_index(self.user_id)
            ranked = index.search(
                query, query_vec, k=k, now=t, kinds=kind_set, statuses=statuses, only=only, encode=memory.embed
            )
            used = _clock()
            records = {rid: index.record(rid) for rid, _ in ranked}
            hits = [Hit(replace(records[rid], last_used_at=used), score) for rid, score in ranked if rid in records]
        hits = hits[: recall_filters.within_budget([h.label() for h in hits], budget)]
        # stamped on the row holding each record (a fact's value: its winning claim, see memtend.consistency.claims)
        if not operating():  # a person looking is not the agent using: no lifetime is extended by it
            memory.apply(Change(self.user_id, used={records[h.record.id].row_id or h.record.id: used for h in hits}))
        return hits

    # ------------------------------------------------------------------ reading
    def get(self, record_id: str) -> Record:
        if not check_name(record_id, "record_id"):
            raise InvalidInputError("record_id must not be empty")
        found, _ = self._storage.get_records(self.user_id, [record_id])
        if not found:
            raise RecordNotFoundError(
                f"no record with that id ({describe(record_id)}) for this user; list the user's records for their ids"
            )
        return found[0]

    def list(
        self, *, kinds: Iterable[Kind | str] | None = None, status: Status | str | None = Status.ACTIVE
    ) -> list[Record]:
        """Records of this user, oldest first (``status=None`` for every status)."""
        kind_list = [Kind.parse(x) for x in check_items(kinds, "kinds")] if kinds is not None else None
        statuses = [Status.parse(status)] if status is not None else None
        stamps = self.memory.usage_stamps(self.user_id)  # before the read: a stamp written meanwhile is in it
        records, _ = self.memory.storage.get_records(self.user_id, kinds=kind_list, statuses=statuses)
        for record in records:  # the unwritten stamps shown as a flush would store them, without the write
            if record.id in stamps:
                record.last_used_at = chroma_float(stamps[record.id])
        return sorted(records, key=lambda r: (r.created_at, r.id))

    def history(self, record_id: str | None = None) -> builtins.list[HistoryEntry]:
        """Every change to this user's records (or to one record), oldest first."""
        if record_id is not None:
            record_id = check_name(record_id, "record_id")
        return self._storage.get_history(self.user_id, record_id=record_id)

    # ------------------------------------------------------------------ deletion, compaction
    def delete(self, record_id: str) -> DeleteReport:
        """Delete one record for good; summaries derived from it are rebuilt from their other sources, or
        deleted when none remain. Returns what was deleted and which summaries were rebuilt or removed."""

        def plan() -> tuple[DeleteReport, Change]:
            record = self.get(record_id)
            summaries, _ = self._storage.get_records(self.user_id, kinds=list(forgetting.DERIVED_KINDS))
            touched = [s for s in summaries if forgetting.derives_from(s, record.id)]
            wanted = list(dict.fromkeys(i for s in touched for i in s.derived_from if i != record.id))
            sources, _ = self._storage.get_records(self.user_id, wanted)
            return changes.delete(self.user_id, record, touched, {r.id: r for r in sources}, now())

        with self.memory.lock:
            return shared_writes.guarded(self.memory, self.user_id, [checked_id(record_id)], plan)

    def compact(self, keep_recent: int = 20, summarizer: compaction.LogSummarizer | None = None) -> CompactionReport:
        """Keep the newest ``keep_recent`` events verbatim; replace older ones (and any earlier summary) with one
        summary whose ``derived_from`` lists what it replaced. The replaced records move to the archive."""
        return user_upkeep.compact(self.memory, self.user_id, keep_recent, summarizer)

    # ------------------------------------------------------------------ forgetting
    def forget(self, *, dry_run: bool = False, now: float | None = None) -> ForgetReport:
        """Apply the retention schedule: report (``dry_run=True``) or archive what it says goes.

        Rules are pinned; a scoped note is folded into one line first. Expired session state is removed (no archive)."""
        return user_upkeep.forget(self.memory, self.user_id, _now_default(now), dry_run=dry_run, clock=_clock())

    def purge(self, *, grace_days: float | None = None, now: float | None = None) -> int:
        """Delete archived records whose grace period is over; returns how many."""
        t = _now_default(now)
        if grace_days is not None:
            grace_days = check_days(grace_days, "grace_days")
        return user_upkeep.purge(self.memory, self.user_id, t, grace_days)

    # ------------------------------------------------------------------ working memory, keyed store, export
    def _untrusted(self, session: str) -> bool:
        """Whether the conversation ``session`` holds unreviewed untrusted content (see ``SessionState``)."""
        from memtend.working.session import conversation_untrusted

        return conversation_untrusted(self, session)

    @no_io
    def session(self, session_id: str) -> SessionState:
        """Working memory for one session of this user: a key-value state the agent reads and writes."""
        from memtend.working.session import SessionState

        return SessionState(self, session_id)

    @no_io
    def ledger(self, session_id: str) -> Ledger:
        """The side-effect ledger of one session: which side-effecting calls were already made."""
        from memtend.working.ledger import Ledger

        return Ledger(self, session_id)

    @no_io
    def constraints(self, session_id: str) -> SessionConstraints:
        """The constraints the user set in one session, for adapters that see one message per turn."""
        from memtend.working.constraints import SessionConstraints

        return SessionConstraints(self, session_id)

    @no_io
    def store(self, namespace: str) -> KeyedStore:
        """A user-scoped keyed store for data that is not a memory (session state, checkpoints, chat messages).
        Isolation, export and erasure cover it."""
        return KeyedStore(self.memory, self.user_id, namespace)

    @no_io
    def documents(self, *, gate: GateMode = "text", redact: bool = False, surface: str | None = None) -> DocumentStore:
        """This user's document store (see :mod:`memtend.documents.store`); no I/O on creation."""
        if surface is not None:
            from memtend.surfaces import SurfaceDocuments

            return SurfaceDocuments(self.memory, self.user_id, gate=gate, redact=redact, surface=surface)
        return DocumentStore(self.memory, self.user_id, gate=gate, redact=redact)

    def export(self) -> dict[str, Any]:
        """Everything stored about this user, as JSON-able data."""
        records, _ = self._storage.get_records(self.user_id)
        return {
            "user_id": self.user_id,
            "exported_at": now(),
            "records": [r.to_dict() for r in sorted(records, key=lambda r: (r.created_at, r.id))],
            "history": [e.to_dict() for e in self.history()],
            "store": export_items(self.memory, self.user_id),
            "documents": self.documents().export(),
            # kept for no one user (an adapter's shared namespaces): not this user's data, named so it can be checked
            "shared_namespaces": [list(ns) for ns in shared_namespaces(self.memory)],
            # what adapters keep of the user in the application's own stores (delegated checkpoints)
            "external": export_external(self.memory, self.user_id),
        }

    def stats(self) -> dict[str, Any]:
        records, _ = self._storage.get_records(self.user_id)
        by: dict[str, int] = {}
        for r in records:
            name = f"{r.kind.value}/{r.status.value}"
            by[name] = by.get(name, 0) + 1
        return {
            "user_id": self.user_id,
            "records": len(records),
            "by_kind_status": dict(sorted(by.items())),
            "stored": self._storage.count_user(self.user_id),
        }

    # ------------------------------------------------------------------ async twins (same parameters and results)
    async def aremember(
        self,
        text: str,
        *,
        source: Source | str = Source.USER,
        metadata: dict[str, Any] | None = None,
        redact: bool = False,
        session: str = "",
        at: float | None = None,
        scope: Scope | str | None = None,
        expires_at: float | None = None,
    ) -> Record:
        call = functools.partial(self.remember, session=session, at=at, scope=scope, expires_at=expires_at)
        return await run_io(call, text, source=source, metadata=metadata, redact=redact)

    async def alog(
        self,
        text: str,
        *,
        at: float | None = None,
        session: str = "",
        source: Source | str = Source.USER,
        metadata: dict[str, Any] | None = None,
        redact: bool = False,
        scope: Scope | str | None = None,
        expires_at: float | None = None,
    ) -> Record:
        call = functools.partial(self.log, session=session, at=at, scope=scope, expires_at=expires_at)
        return await run_io(call, text, source=source, metadata=metadata, redact=redact)

    async def alog_many(
        self, events: Iterable[Event | str], *, redact: bool = False, batch_id: str | None = None
    ) -> builtins.list[Record]:
        return await run_io(self.log_many, list(events), redact=redact, batch_id=batch_id)

    async def aadd_rule(
        self, text: str, *, source: Source | str = Source.USER, redact: bool = False, at: float | None = None
    ) -> Record:
        return await run_io(self.add_rule, text, source=source, redact=redact, at=at)

    async def aset_fact(
        self,
        key: str,
        value: str,
        *,
        source: Source | str = Source.USER,
        redact: bool = False,
        at: float | None = None,
        scope: Scope | str | None = None,
        expires_at: float | None = None,
    ) -> FactResult:
        # resolved in the worker: a lazy result (a shared store) asked for later would read on the event loop
        return await run_io(
            self._set_fact_resolved, key, value, source=source, redact=redact, at=at, scope=scope, expires_at=expires_at
        )

    async def aget_fact(self, key: str) -> Record | None:
        return await run_io(self.get_fact, key)

    async def afacts(self) -> dict[str, str]:
        return await run_io(self.facts)

    async def arecall(
        self,
        query: str,
        k: int = 5,
        *,
        session: str | None = None,
        kinds: Iterable[Kind | str] | None = None,
        where: MetadataFilter | None = None,
        max_tokens: int | None = None,
        now: float | None = None,
        include_pending: bool = False,
    ) -> builtins.list[Hit]:
        return await run_io(
            self.recall,
            query,
            k,
            session=session,
            kinds=kinds,
            where=where,
            max_tokens=max_tokens,
            now=now,
            include_pending=include_pending,
        )

    async def aget(self, record_id: str) -> Record:
        return await run_io(self.get, record_id)

    async def alist(
        self, *, kinds: Iterable[Kind | str] | None = None, status: Status | str | None = Status.ACTIVE
    ) -> builtins.list[Record]:
        return await run_io(self.list, kinds=kinds, status=status)

    async def ahistory(self, record_id: str | None = None) -> builtins.list[HistoryEntry]:
        return await run_io(self.history, record_id)

    async def adelete(self, record_id: str) -> DeleteReport:
        return await run_io(self.delete, record_id)

    async def acompact(
        self, keep_recent: int = 20, summarizer: compaction.LogSummarizer | None = None
    ) -> CompactionReport:
        return await run_io(self.compact, keep_recent, summarizer)

    async def aforget(self, *, dry_run: bool = False, now: float | None = None) -> ForgetReport:
        return await run_io(self.forget, dry_run=dry_run, now=now)

    async def apurge(self, *, grace_days: float | None = None, now: float | None = None) -> int:
        return await run_io(self.purge, grace_days=grace_days, now=now)

    async def aexport(self) -> dict[str, Any]:
        return await run_io(self.export)

    async def astats(self) -> dict[str, Any]:
        return await run_io(self.stats)


def _now_default(value: float | None) -> float:
    return _clock() if value is None else check_time(value, "now")
