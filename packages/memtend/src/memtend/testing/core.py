"""The core package as a :class:`Driver`, through its public API only."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from memtend.records import Source
from memtend.testing.driver import VOLATILE, Driver, Seen, strip_keys

if TYPE_CHECKING:
    from memtend import Memory, UserMemory

__all__ = ["CoreDriver"]


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
        return strip_keys(self._user(user_id).export(), VOLATILE)

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
                if i["kind"] == "store"  # keyed stores; session state and ledgers are checked on their own
            }
        if op == "session_set":
            return u.session(p["session"]).set(p["key"], p["value"])
        if op == "session_get":
            return u.session(p["session"]).get(p["key"])
        if op == "session_forget":
            return u.session(p["session"]).delete(p["key"])
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
