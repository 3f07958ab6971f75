"""Isolation under random operations: no user ever sees, changes or keeps another user's data.

A hypothesis state machine drives random operations for several users (with hostile user ids, keys and
namespaces) through a :class:`Driver`, and after every step checks, for every user:

* recall, list and export carry only that user's id, and every text in them holds that user's marker and no
  other user's marker (each text a user writes is tagged with a per-user marker);
* facts, keyed-store items, session state (working memory) and the side-effect ledger equal an independent
  model (precedence: user > tool > agent > inferred, external held for review; working memory expires after
  ``retention.session_days``); nothing acknowledged is lost, no unreviewed external record becomes active;
* deleting a record leaves no summary derived from it or quoting it;
* the users a step did not address are exactly as they were (export fingerprint, volatile stamps aside);
* after ``erase``, the user has nothing left, and can start over.

The machine talks only to the small :class:`Driver` interface, so a framework adapter can be checked by the
same machine later: write a Driver for it and call :func:`make_isolation_machine` with a factory. The core
(:class:`CoreDriver`) is the first driver; it offers optional operations (compaction, forgetting, review,
keyed store, ...) through :meth:`Driver.operate`, guarded by :meth:`Driver.supports`.
"""

from __future__ import annotations

import json
import time
import unicodedata
from abc import ABC, abstractmethod
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

import chromadb
import pytest
from conftest import unique_prefix
from hypothesis import HealthCheck, settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, initialize, invariant, precondition, rule
from memtend import (
    Event,
    InvalidInputError,
    InvalidUserIdError,
    Kind,
    Memory,
    RecordNotFoundError,
    Source,
    Status,
    UserMemory,
    canonical_key,
)
from memtend.records import MAX_USER_ID_CHARS

DAY = 86_400.0
# Ids that look like filter operators, injections, near-duplicates of each other, odd unicode, the limit.
HOSTILE_USER_IDS: tuple[str, ...] = (
    "$or",
    '{"$ne": ""}',
    "$and",
    "user_id",
    "$ne",
    '{"user_id": {"$ne": "x"}}',
    "' OR '1'='1",
    '"; DROP TABLE memories; --',
    'ali"ce',
    "alice",
    "Alice",
    "alice ",
    " alice",
    "alice\x00",
    "alice\x00evil",
    "ａｌｉｃｅ",  # fullwidth: NFKC-equal to "alice", still a different user
    "\u202eecila",
    "用户💥",
    "ñandú",
    "kv:0000",
    "fact:0000",
    "null",
    "*",
    "%",
    "\\",
    "../../etc/passwd",
    "a" * MAX_USER_ID_CHARS,
    "a" * (MAX_USER_ID_CHARS - 1) + "é",
)
INVALID_USER_IDS: tuple[object, ...] = ("", "   ", "\t\n", "a" * (MAX_USER_ID_CHARS + 1), None, 7, b"alice", "\ud800")
HOSTILE_KEYS: tuple[str, ...] = (
    "colour",
    "contact.method",
    "Contact Method",
    "contactMethod",
    "$or",
    '{"$ne": ""}',
    "user_id",
    "$$",  # no letters: refused
    "ключ",
    "a" * 300,  # too long after canonicalising: refused
)
HOSTILE_NAMESPACES: tuple[str, ...] = ("session:s1", "$or", '{"$ne": ""}', "user_id", "ns/../x", "命名空间")
SOURCES: tuple[Source, ...] = tuple(Source)
WORDS = ("garden", "kayak", "teal", "invoice", "harbour", "violin", "orchard", "lantern", "meadow", "copper")
MARKER_STEM = "zq"
SESSION_ID = "thread-1"
SESSION_NS, LEDGER_NS = f"session:{SESSION_ID}", f"ledger:{SESSION_ID}"
SESSION_KEYS: tuple[str, ...] = ("$or", '{"$ne": ""}', "$ne", "user_id", "User ID", "@stats", "$$")
TOOLS: tuple[str, ...] = ("send_email", "$or", "deploy")


def marker(slot: int) -> str:
    """The tag of the user in slot ``slot``: never a substring of another slot's tag (the ``x`` ends it)."""
    return f"{MARKER_STEM}{slot}x"


def _user_id_ok(uid: str) -> bool:
    return bool(uid.strip()) and MARKER_STEM not in uid.lower() and len(uid) <= MAX_USER_ID_CHARS


USER_IDS = st.one_of(
    st.sampled_from(HOSTILE_USER_IDS),
    st.text(min_size=1, max_size=40).filter(_user_id_ok),
)


# --------------------------------------------------------------------------------------------- the driver
@dataclass(frozen=True)
class Seen:
    """One item a surface showed for a user: the owner it reports (None if it reports none) and its text."""

    user_id: str | None
    text: str


class Driver(ABC):
    """What the isolation machine needs from a memory surface: the core, or (later) a framework adapter.

    ``write``/``recall``/``list``/``export``/``erase`` are required. Anything else goes through ``operate``
    and is only called when ``supports`` says so; the machine's model covers ``facts`` and ``store``.
    """

    name: str = "driver"

    @abstractmethod
    def write(self, user_id: str, text: str, *, kind: str, source: Source = Source.USER) -> None:
        """Store ``text`` for the user as a memory of ``kind`` (note, event, rule)."""

    @abstractmethod
    def recall(self, user_id: str, query: str) -> list[Seen]: ...

    @abstractmethod
    def list(self, user_id: str) -> list[Seen]:
        """Everything the surface lists for the user (every status)."""

    @abstractmethod
    def export(self, user_id: str) -> Any:
        """Everything kept about the user, JSON-able; volatile stamps (export time, last use) left out."""

    @abstractmethod
    def erase(self, user_id: str) -> None: ...

    def validate_user(self, user_id: object) -> None:  # noqa: B027 - optional hook
        """Raise InvalidUserIdError for an id the surface refuses."""

    def supports(self, op: str) -> bool:
        return False

    def operate(self, user_id: str, op: str, **params: Any) -> Any:
        raise NotImplementedError(op)

    def close(self) -> None:  # noqa: B027 - optional hook
        """Release what the driver holds."""


_VOLATILE = frozenset({"exported_at", "last_used_at"})


def _strip(value: Any, drop: frozenset[str]) -> Any:
    if isinstance(value, dict):
        return {k: _strip(v, drop) for k, v in value.items() if k not in drop}
    if isinstance(value, list):
        return [_strip(v, drop) for v in value]
    return value


def _owner_ids(value: Any) -> Iterator[Any]:
    """Every value found under a ``user_id`` key, at any depth (caller metadata, ``extra``, aside)."""
    if isinstance(value, dict):
        for k, v in value.items():
            if k == "user_id":
                yield v
            elif k != "extra":
                yield from _owner_ids(v)
    elif isinstance(value, list):
        for v in value:
            yield from _owner_ids(v)


class CoreDriver(Driver):
    """The core package, through its public API only."""

    name = "core"
    _OPS = frozenset(
        {
            "set_fact",
            "facts",
            "log_many",
            "compact",
            "forget",
            "purge",
            "restore",
            "delete",
            "approve",
            "reject",
            "records",
            "get",
            "store_put",
            "store_delete",
            "store_items",
            "session_set",
            "session_get",
            "session_forget",
            "session_list",
            "ledger_record",
            "ledger_seen",
            "ledger_entries",
        }
    )

    def __init__(self, memory: Memory) -> None:
        self.memory = memory

    def _user(self, user_id: str) -> UserMemory:
        return self.memory.user(user_id)

    def write(self, user_id: str, text: str, *, kind: str, source: Source = Source.USER) -> None:
        u = self._user(user_id)
        if kind == "note":
            u.remember(text, source=source, metadata={"user_id": "spoofed", "$or": "x"})
        elif kind == "event":
            u.log(text, source=source, session="s1")
        elif kind == "rule":
            u.add_rule(text, source=source)
        else:
            raise AssertionError(kind)

    def recall(self, user_id: str, query: str) -> list[Seen]:
        hits = self._user(user_id).recall(query, k=50, include_pending=True)
        return [Seen(h.record.user_id, h.text) for h in hits]

    def list(self, user_id: str) -> list[Seen]:
        u = self._user(user_id)
        seen = [Seen(r.user_id, r.text) for r in u.list(status=None)]
        seen += [Seen(r.user_id, r.text) for r in u.pending()]
        return seen

    def export(self, user_id: str) -> Any:
        return _strip(self._user(user_id).export(), _VOLATILE)

    def erase(self, user_id: str) -> None:
        receipt = self.memory.erase_user(user_id)
        assert receipt.user_id == user_id

    def validate_user(self, user_id: object) -> None:
        self.memory.user(user_id)  # type: ignore[arg-type]

    def supports(self, op: str) -> bool:
        return op in self._OPS

    def operate(self, user_id: str, op: str, **p: Any) -> Any:
        u = self._user(user_id)
        if op == "set_fact":
            return u.set_fact(p["key"], p["value"], source=p["source"])
        if op == "facts":
            return {k: (r.value, r.source) for k, r in ((k, u.get_fact(k)) for k in u.facts()) if r is not None}
        if op == "log_many":
            return u.log_many(p["events"])
        if op == "compact":
            return u.compact(keep_recent=p["keep_recent"])
        if op == "forget":
            return u.forget(now=p["now"])
        if op == "purge":
            return u.purge(grace_days=p["grace_days"], now=p["now"])
        if op == "restore":
            return u.restore(p["record_id"])
        if op == "delete":
            return u.delete(p["record_id"])
        if op == "approve":
            return u.approve(p["record_id"])
        if op == "reject":
            return u.reject(p["record_id"])
        if op == "records":
            return u.list(status=None)
        if op == "get":
            return u.get(p["record_id"])
        if op == "store_put":
            return u.store(p["namespace"]).put(p["key"], p["value"])
        if op == "store_delete":
            return u.store(p["namespace"]).delete(p["key"])
        if op == "store_items":
            return {
                (i["namespace"], i["key"]): i["value"]
                for i in u.export()["store"]
                if not i["namespace"].startswith((SESSION_NS, LEDGER_NS))
            }
        if op == "session_set":
            return u.session(p["session"]).set(p["key"], p["value"])
        if op == "session_get":
            return u.session(p["session"]).get(p["key"])
        if op == "session_forget":
            return u.session(p["session"]).forget(p["key"])
        if op == "session_list":
            return u.session(p["session"]).list()
        if op == "ledger_record":
            return u.ledger(p["session"]).record(p["tool"], p["args"], p.get("result"))
        if op == "ledger_seen":
            return u.ledger(p["session"]).seen(p["tool"], p["args"])
        if op == "ledger_entries":
            return u.ledger(p["session"]).entries()
        raise NotImplementedError(op)

    def close(self) -> None:
        storage = self.memory.storage
        names = [c.name for c in storage.collections().values()]
        self.memory.close()
        for name in names:
            storage.client.delete_collection(name)


# --------------------------------------------------------------------------------------------- the model
def _same_value(a: str, b: str) -> bool:
    def norm(v: str) -> str:
        return " ".join(unicodedata.normalize("NFKC", v).split()).casefold()

    return norm(a) == norm(b)


@dataclass
class UserModel:
    slot: int
    facts: dict[str, tuple[str, Source]] = field(default_factory=dict)
    store: dict[tuple[str, str], Any] = field(default_factory=dict)
    approved: set[str] = field(default_factory=set)
    session: dict[str, Any] = field(default_factory=dict)
    ledger: dict[tuple[str, str], int] = field(default_factory=dict)  # (tool, args as JSON) -> calls
    counter: int = 0

    @property
    def marker(self) -> str:
        return marker(self.slot)

    def text(self, words: list[str]) -> str:
        self.counter += 1
        return f"{self.marker} item {self.counter} {' '.join(words)}."

    def apply_fact(self, key: str, value: str, source: Source) -> str:
        """Precedence, written independently of the core: what set_fact must answer."""
        if source is Source.EXTERNAL:
            return "kept"
        current = self.facts.get(key)
        if current is None:
            self.facts[key] = (value, source)
            return "added"
        if _same_value(current[0], value):
            return "unchanged"
        if source.trust < current[1].trust:
            return "kept"
        self.facts[key] = (value, source)
        return "updated"


DriverFactory = Callable[[], Driver]


def make_isolation_machine(factory: DriverFactory) -> type[RuleBasedStateMachine]:
    """A state machine class checking isolation over the driver ``factory`` builds (one per example)."""

    class IsolationMachine(RuleBasedStateMachine):
        def __init__(self) -> None:
            super().__init__()
            self.driver = factory()
            self.users: list[str] = []
            self.models: dict[str, UserModel] = {}
            self.fingerprints: dict[str, str] = {}
            self.touched: set[str] = set()

        # ------------------------------------------------------------------ helpers
        def _pick(self, n: int) -> tuple[str, UserModel]:
            uid = self.users[n % len(self.users)]
            self.touched.add(uid)
            return uid, self.models[uid]

        def _records(self, uid: str) -> list[Any]:
            return list(self.driver.operate(uid, "records"))

        def teardown(self) -> None:
            self.driver.close()

        # ------------------------------------------------------------------ setup
        @initialize(ids=st.lists(USER_IDS, min_size=2, max_size=4, unique=True))
        def start(self, ids: list[str]) -> None:
            self.users = ids
            self.models = {uid: UserModel(slot) for slot, uid in enumerate(ids)}
            self.touched = set(ids)

        # ------------------------------------------------------------------ generic rules (every driver)
        @rule(
            n=st.integers(0, 3),
            kind=st.sampled_from(["note", "event", "rule"]),
            source=st.sampled_from(SOURCES),
            words=st.lists(st.sampled_from(WORDS), min_size=1, max_size=4),
        )
        def write(self, n: int, kind: str, source: Source, words: list[str]) -> None:
            uid, model = self._pick(n)
            self.driver.write(uid, model.text(words), kind=kind, source=source)

        @rule(n=st.integers(0, 3), word=st.sampled_from(WORDS), other=st.integers(0, 3))
        def recall(self, n: int, word: str, other: int) -> None:
            uid, model = self._pick(n)
            # Ask with another user's marker in the query: it must find nothing of theirs.
            bait = self.models[self.users[other % len(self.users)]].marker
            for item in self.driver.recall(uid, f"{bait} {word} {model.marker}"):
                self._check_item(uid, item, "recall")

        @rule(n=st.integers(0, 3))
        def erase(self, n: int) -> None:
            uid, model = self._pick(n)
            self.driver.erase(uid)
            self.models[uid] = UserModel(model.slot)
            assert self.driver.list(uid) == []
            assert self.driver.recall(uid, f"{model.marker} {' '.join(WORDS)}") == []
            leftover = json.dumps(self.driver.export(uid), ensure_ascii=False, default=str)
            assert model.marker not in leftover, f"erased user {uid!r} still has data: {leftover[:300]}"

        @rule(bad=st.sampled_from(INVALID_USER_IDS))
        def invalid_user_id(self, bad: object) -> None:
            with pytest.raises(InvalidUserIdError):
                self.driver.validate_user(bad)

        # ------------------------------------------------------------------ facts (precedence model)
        @precondition(lambda self: self.driver.supports("set_fact"))
        @rule(
            key=st.sampled_from(HOSTILE_KEYS),
            writes=st.lists(
                st.tuples(st.integers(0, 3), st.sampled_from(SOURCES), st.sampled_from(WORDS[:3]), st.booleans()),
                min_size=1,
                max_size=5,
            ),
        )
        def set_fact(self, key: str, writes: list[tuple[int, Source, str, bool]]) -> None:
            """A burst of writes to one key, by one or several users, from sources of every trust level."""
            for n, source, word, shout in writes:
                uid, model = self._pick(n)
                value = f"{model.marker} {word.upper() if shout else word}"  # case-only changes are "unchanged"
                try:
                    canonical = canonical_key(key)
                except InvalidInputError:
                    with pytest.raises(InvalidInputError):
                        self.driver.operate(uid, "set_fact", key=key, value=value, source=source)
                    continue
                expected = model.apply_fact(canonical, value, source)
                result = self.driver.operate(uid, "set_fact", key=key, value=value, source=source)
                assert result == expected, (uid, key, value, source, result.reason)
                assert result.record.user_id == uid

        @precondition(lambda self: self.driver.supports("log_many"))
        @rule(
            n=st.integers(0, 3),
            count=st.integers(1, 4),
            back=st.integers(0, 400),
            compact_after=st.sampled_from([None, 0, 1]),
        )
        def log_many(self, n: int, count: int, back: int, compact_after: int | None) -> None:
            uid, model = self._pick(n)
            base = 1_700_000_000.0 + back * DAY
            others = [u for u in self.users if u != uid]
            events = [
                Event(model.text([WORDS[i % len(WORDS)]]), at=base + i, session="s1", metadata={"user_id": others[0]})
                for i in range(count)
            ]
            records = self.driver.operate(uid, "log_many", events=events)
            assert [r.user_id for r in records] == [uid] * count
            if compact_after is not None and self.driver.supports("compact"):
                self.driver.operate(uid, "compact", keep_recent=compact_after)

        # ------------------------------------------------------------------ log life cycle
        @precondition(lambda self: self.driver.supports("compact"))
        @rule(n=st.integers(0, 3), keep=st.integers(0, 3))
        def compact(self, n: int, keep: int) -> None:
            uid, _ = self._pick(n)
            report = self.driver.operate(uid, "compact", keep_recent=keep)
            if report.summary is not None:
                assert report.summary.user_id == uid

        @precondition(lambda self: self.driver.supports("forget"))
        @rule(n=st.integers(0, 3), days=st.sampled_from([0, 40, 200, 10_000]))
        def forget(self, n: int, days: int) -> None:
            uid, model = self._pick(n)
            self.driver.operate(uid, "forget", now=self._now() + days * DAY)
            if days > 7:  # working memory expires after retention.session_days (7) without a write
                model.session.clear()
                model.ledger.clear()

        @precondition(lambda self: self.driver.supports("purge"))
        @rule(n=st.integers(0, 3))
        def purge(self, n: int) -> None:
            uid, _ = self._pick(n)
            self.driver.operate(uid, "purge", grace_days=0.0, now=self._now() + 20_000 * DAY)

        def _now(self) -> float:
            return time.time()

        @precondition(lambda self: self.driver.supports("restore") and self.driver.supports("records"))
        @rule(n=st.integers(0, 3), pick=st.integers(0, 10**6))
        def restore(self, n: int, pick: int) -> None:
            uid, model = self._pick(n)
            # External records that were archived unreviewed are left out here: see
            # test_hostile_input.py::test_restore_never_promotes_unreviewed_external_content.
            archived = [
                r for r in self._records(uid) if r.status is Status.ARCHIVED and r.source is not Source.EXTERNAL
            ]
            if not archived:
                return
            record = archived[pick % len(archived)]
            restored = self.driver.operate(uid, "restore", record_id=record.id)
            assert restored.user_id == uid and restored.status is Status.ACTIVE
            if record.kind is Kind.FACT:
                model.facts[record.key] = (record.value, record.source)

        @precondition(lambda self: self.driver.supports("delete") and self.driver.supports("records"))
        @rule(n=st.integers(0, 3), pick=st.integers(0, 10**6), summarised=st.booleans())
        def delete(self, n: int, pick: int, summarised: bool) -> None:
            uid, model = self._pick(n)
            if summarised and self.driver.supports("compact") and not any(r.derived_from for r in self._records(uid)):
                self.log_many(n, count=3, back=0, compact_after=1)  # give it a summary to break
            records = self._records(uid)
            by_id = {r.id: r for r in records}
            sources = [by_id[i] for r in records for i in r.derived_from if i in by_id]
            candidates = sources if summarised and sources else records  # often: a record a summary stands for
            if not candidates:
                return
            record = candidates[pick % len(candidates)]
            self.driver.operate(uid, "delete", record_id=record.id)
            if record.kind is Kind.FACT and record.status is Status.ACTIVE and record.id.startswith("fact:"):
                model.facts.pop(record.key, None)
            with pytest.raises(RecordNotFoundError):
                self.driver.operate(uid, "get", record_id=record.id)
            for r in self._records(uid):  # nothing left derived from it, or quoting it
                assert record.id not in r.derived_from, f"summary {r.id} still derives from deleted {record.id}"
                if record.kind in (Kind.EVENT, Kind.NOTE, Kind.RULE):
                    assert record.text not in r.text, f"{r.kind.value} {r.id} still quotes the deleted text"

        @precondition(lambda self: self.driver.supports("approve") and self.driver.supports("records"))
        @rule(n=st.integers(0, 3), pick=st.integers(0, 10**6), accept=st.booleans())
        def review(self, n: int, pick: int, accept: bool) -> None:
            uid, model = self._pick(n)
            pending = [r for r in self._records(uid) if r.status is Status.PENDING_REVIEW]
            if not pending:
                return
            record = pending[pick % len(pending)]
            if not accept:
                self.driver.operate(uid, "reject", record_id=record.id)
                return
            approved = self.driver.operate(uid, "approve", record_id=record.id)
            assert approved.user_id == uid
            if record.kind is Kind.FACT:
                model.apply_fact(record.key, record.value, Source.USER)
            else:
                model.approved.add(approved.id)

        # ------------------------------------------------------------------ cross-user attempts
        @precondition(lambda self: self.driver.supports("get") and self.driver.supports("records"))
        @rule(n=st.integers(0, 3), victim=st.integers(0, 3), pick=st.integers(0, 10**6))
        def reach_into_another_user(self, n: int, victim: int, pick: int) -> None:
            uid, _ = self._pick(n)
            other = self.users[victim % len(self.users)]
            if other == uid:
                return
            records = self._records(other)
            if not records:
                return
            target = records[pick % len(records)].id
            for op in ("get", "delete", "restore", "approve", "reject"):
                with pytest.raises(RecordNotFoundError):
                    self.driver.operate(uid, op, record_id=target)

        # ------------------------------------------------------------------ keyed store
        @precondition(lambda self: self.driver.supports("store_put"))
        @rule(
            n=st.integers(0, 3),
            namespace=st.sampled_from(HOSTILE_NAMESPACES),
            key=st.sampled_from(HOSTILE_USER_IDS[:12]),
            word=st.sampled_from(WORDS),
            remove=st.booleans(),
        )
        def store(self, n: int, namespace: str, key: str, word: str, remove: bool) -> None:
            uid, model = self._pick(n)
            if remove:
                existed = self.driver.operate(uid, "store_delete", namespace=namespace, key=key)
                assert existed == ((namespace, key) in model.store)
                model.store.pop((namespace, key), None)
                return
            value = {"text": f"{model.marker} {word}", "nested": [{"$or": model.marker}], "n": model.counter}
            self.driver.operate(uid, "store_put", namespace=namespace, key=key, value=value)
            model.store[(namespace, key)] = value

        # ------------------------------------------------------------------ working memory
        @precondition(lambda self: self.driver.supports("session_set"))
        @rule(
            n=st.integers(0, 3),
            key=st.sampled_from(SESSION_KEYS),
            word=st.sampled_from(WORDS),
            remove=st.booleans(),
        )
        def session_state(self, n: int, key: str, word: str, remove: bool) -> None:
            uid, model = self._pick(n)
            try:
                name = canonical_key(key)
            except InvalidInputError:
                with pytest.raises(InvalidInputError):
                    self.driver.operate(uid, "session_set", session=SESSION_ID, key=key, value=word)
                return
            if remove:
                present = self.driver.operate(uid, "session_forget", session=SESSION_ID, key=key)
                assert present == (name in model.session)
                model.session.pop(name, None)
                return
            value = {"note": f"{model.marker} {word}"}
            expected = (
                "added" if name not in model.session else "unchanged" if model.session[name] == value else "updated"
            )
            result = self.driver.operate(uid, "session_set", session=SESSION_ID, key=key, value=value)
            assert (result.key, result.outcome.value) == (name, expected)
            model.session[name] = value
            assert self.driver.operate(uid, "session_get", session=SESSION_ID, key=key) == value

        @precondition(lambda self: self.driver.supports("ledger_record"))
        @rule(n=st.integers(0, 3), tool=st.sampled_from(TOOLS), word=st.sampled_from(WORDS[:3]))
        def ledger_record(self, n: int, tool: str, word: str) -> None:
            uid, model = self._pick(n)
            args = {"subject": f"{model.marker} {word}", "$or": [{"user_id": uid}]}
            entry = self.driver.operate(
                uid, "ledger_record", session=SESSION_ID, tool=tool, args=args, result={"id": f"{model.marker}-r"}
            )
            call = (tool, json.dumps(args, sort_keys=True))
            model.ledger[call] = model.ledger.get(call, 0) + 1
            assert entry.calls == model.ledger[call]
            seen = self.driver.operate(uid, "ledger_seen", session=SESSION_ID, tool=tool, args=args)
            assert seen is not None and seen.calls == model.ledger[call]

        # ------------------------------------------------------------------ invariants
        def _check_item(self, uid: str, item: Seen, where: str) -> None:
            own = self.models[uid].marker
            assert item.user_id in (None, uid), f"{where} for {uid!r} returned a record of {item.user_id!r}"
            assert own in item.text, f"{where} for {uid!r} returned a text {uid!r} never wrote: {item.text[:200]!r}"
            for other, model in self.models.items():
                if other != uid:
                    assert model.marker not in item.text, f"{where} for {uid!r} shows {other!r}'s data"

        @invariant()
        def isolated_complete_and_untouched(self) -> None:
            for uid in self.users:
                model = self.models[uid]
                for item in self.driver.list(uid):
                    self._check_item(uid, item, "list")
                for item in self.driver.recall(uid, f"{model.marker} {' '.join(WORDS[:4])}"):
                    self._check_item(uid, item, "recall")
                exported = self.driver.export(uid)
                assert set(_owner_ids(exported)) <= {uid}, f"export of {uid!r} names other owners"
                blob = json.dumps(_strip(exported, frozenset({"user_id"})), ensure_ascii=False, default=str)
                for other, other_model in self.models.items():
                    if other != uid:
                        assert other_model.marker not in blob, f"export of {uid!r} holds {other!r}'s data"
                if self.driver.supports("facts"):
                    facts = self.driver.operate(uid, "facts")
                    assert facts == model.facts, f"facts of {uid!r} differ from the model"
                if self.driver.supports("store_items"):
                    assert self.driver.operate(uid, "store_items") == model.store
                if self.driver.supports("session_list"):
                    assert self.driver.operate(uid, "session_list", session=SESSION_ID) == model.session
                if self.driver.supports("ledger_entries"):
                    entries = self.driver.operate(uid, "ledger_entries", session=SESSION_ID)
                    assert sorted(e.calls for e in entries) == sorted(model.ledger.values())
                    for e in entries:
                        self._check_item(uid, Seen(None, json.dumps(e.args, ensure_ascii=False)), "ledger")
                if self.driver.supports("records"):
                    for r in self._records(uid):
                        if r.status is Status.ACTIVE and r.source is Source.EXTERNAL:
                            assert r.id in model.approved, f"unreviewed external record became active: {r.text!r}"
                # the users a step did not address are exactly as they were
                fingerprint = json.dumps(exported, sort_keys=True, ensure_ascii=False, default=str)
                if uid not in self.touched and uid in self.fingerprints:
                    assert fingerprint == self.fingerprints[uid], f"a step on {sorted(self.touched)} changed {uid!r}"
                self.fingerprints[uid] = fingerprint
            self.touched = set()

    return IsolationMachine


# --------------------------------------------------------------------------------------------- every backend
@pytest.mark.slow
def test_hostile_ids_stay_apart_on_every_backend(memory: Memory) -> None:
    """The machine runs on EphemeralClient; the filters must hold the same on disk and over HTTP (where ids
    travel as JSON): every hostile id gets its own data, and erasing half of them leaves the rest intact."""
    driver = CoreDriver(memory)
    ids = list(HOSTILE_USER_IDS)
    for slot, uid in enumerate(ids):
        driver.write(uid, f"{marker(slot)} note about the harbour", kind="note")
        memory.user(uid).set_fact("user_id", f"{marker(slot)} value")
        memory.user(uid).store("$or").put("user_id", {"v": marker(slot)})
    for slot, uid in enumerate(ids):
        seen = driver.list(uid) + driver.recall(uid, "harbour note value")
        assert seen and all(s.user_id == uid and marker(slot) in s.text for s in seen), uid
        others = [marker(i) for i in range(len(ids)) if i != slot]
        blob = json.dumps(_strip(driver.export(uid), frozenset({"user_id"})), ensure_ascii=False)
        assert not [m for m in others if m in blob], f"{uid!r} sees another user's data"
    for uid in ids[::2]:
        driver.erase(uid)
    for slot, uid in enumerate(ids):
        texts = [s.text for s in driver.list(uid)]
        if slot % 2 == 0:
            assert texts == [] and memory.user(uid).store("$or").get("user_id") is None, uid
        else:
            assert len(texts) == 2 and memory.user(uid).store("$or").get("user_id") == {"v": marker(slot)}, uid


# --------------------------------------------------------------------------------------------- the core
_EMBEDDING_FUNCTION: Any = None


def core_driver() -> Driver:
    """One EphemeralClient Memory per example, with its own collections; the real embedding model."""
    global _EMBEDDING_FUNCTION
    if _EMBEDDING_FUNCTION is None:
        from memtend.embeddings import default_embedding_function

        _EMBEDDING_FUNCTION = default_embedding_function()
    return CoreDriver(
        Memory(
            client=chromadb.EphemeralClient(), embedding_function=_EMBEDDING_FUNCTION, collection_prefix=unique_prefix()
        )
    )


CoreIsolation = make_isolation_machine(core_driver)
TestCoreIsolation = CoreIsolation.TestCase
TestCoreIsolation.settings = settings(
    max_examples=25,
    stateful_step_count=15,
    deadline=None,
    database=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much, HealthCheck.data_too_large],
)
TestCoreIsolation = pytest.mark.slow(TestCoreIsolation)
