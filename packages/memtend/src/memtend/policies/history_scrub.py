"""What of the history goes when records are deleted for good (pure: entries in, entries changed in place).

A history entry is filed under one record id, but can quote another record's text:

- a fact's earlier value is archived under a new id, while the entry that replaced it (``update``, and a
  ``restore``) is filed under the fact's own id, its ``before`` holding the old value;
- events folded into a summary are quoted by the summary's entries (``compact``, ``archive``, ``rebuild``), filed
  under the summary's id, and again by a summary of summaries.

So a deletion scrubs the text and value from (1) every entry filed under a deleted id, (2) every record version
whose provenance (``derived_from``) names a deleted id, and (3) under the fact ids of deleted fact values, every
version holding the same key and value. The entries stay: the history still says what happened and when.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from memtend.records import fact_id

CONTENT_FIELDS = ("text", "value", "extra")
_SIDES = ("before", "after")

Entry = dict[str, Any]


def gone_facts(entries: Iterable[Entry], gone: set[str]) -> set[tuple[str, str]]:
    """(key, value) of the fact values deleted: read from their removal entries (a delete, purge or reject keeps
    the record as it was in ``before``)."""
    out = set()
    for entry in entries:
        before = entry.get("before")
        if entry.get("record_id") not in gone or entry.get("after") is not None or not isinstance(before, dict):
            continue
        if before.get("kind") == "fact" and before.get("key") and not before.get("removed"):
            out.add((str(before["key"]), str(before.get("value", ""))))
    return out


def quoting_ids(user_id: str, entries: Iterable[Entry], gone: set[str], facts: set[tuple[str, str]]) -> set[str]:
    """Ids under which other entries may quote what went: the fact ids of deleted fact values, and the records
    (summaries) whose versions were derived from a deleted record."""
    ids = {fact_id(user_id, key) for key, _ in facts}
    for entry in entries:
        if any(_derived_from_gone(entry.get(side), gone) for side in _SIDES):
            ids.add(str(entry.get("record_id")))
    return ids - gone


def scrub(entries: Sequence[Entry], user_id: str, gone: set[str], facts: set[tuple[str, str]]) -> int:
    """Remove the content of what went from ``entries`` (in place); returns how many entries changed."""
    slots = {fact_id(user_id, key): (key, value) for key, value in facts}
    changed = 0
    for entry in entries:
        rid = str(entry.get("record_id"))
        hit = False
        for side in _SIDES:
            snap = entry.get(side)
            if not isinstance(snap, dict) or snap.get("removed"):
                continue
            if rid in gone or _derived_from_gone(snap, gone) or _same_fact_value(snap, rid, slots, facts):
                entry[side] = {k: v for k, v in snap.items() if k not in CONTENT_FIELDS} | {"removed": True}
                hit = True
        changed += hit
    return changed


def _derived_from_gone(snap: Any, gone: set[str]) -> bool:
    return isinstance(snap, dict) and not gone.isdisjoint(snap.get("derived_from") or ())


def _same_fact_value(snap: Entry, rid: str, slots: dict[str, tuple[str, str]], facts: set[tuple[str, str]]) -> bool:
    if rid not in slots or snap.get("kind") != "fact":
        return False
    return (str(snap.get("key", "")), str(snap.get("value", ""))) in facts
