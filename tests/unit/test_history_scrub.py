"""The pure part of scrubbing the history after a deletion: what quotes a deleted record, under which ids."""

from __future__ import annotations

from memtend.policies import history_scrub
from memtend.records import fact_id

USER = "u1"
SLOT = fact_id(USER, "colour")


def _fact(rid: str, value: str) -> dict[str, object]:
    return {"id": rid, "kind": "fact", "key": "colour", "value": value, "text": f"Colour: {value}"}


def test_an_earlier_fact_value_is_scrubbed_under_the_fact_id_and_nothing_else() -> None:
    update = {"record_id": SLOT, "op": "update", "before": _fact(SLOT, "teal"), "after": _fact(SLOT, "amber")}
    removal = {"record_id": "old1", "op": "delete", "before": _fact("old1", "teal"), "after": None}
    note = {"id": "note1", "kind": "note", "text": "teal"}
    other = {"record_id": "note1", "op": "add", "before": None, "after": note}
    gone = {"old1"}
    facts = history_scrub.gone_facts([removal], gone)
    assert facts == {("colour", "teal")}
    assert history_scrub.quoting_ids(USER, [removal], gone, facts) == {SLOT}
    entries = [update, removal, other]
    assert history_scrub.scrub(entries, USER, gone, facts) == 2
    assert update["before"] == {"id": SLOT, "kind": "fact", "key": "colour", "removed": True}
    assert update["after"] == _fact(SLOT, "amber"), "the value that replaced it stays"
    assert removal["before"]["removed"] is True  # type: ignore[index]
    assert other["after"]["text"] == "teal", "a note of the same words is not the deleted fact"  # type: ignore[index]
    assert history_scrub.scrub(entries, USER, gone, facts) == 0, "scrubbing twice changes nothing"


def test_summary_versions_derived_from_a_deleted_record_are_scrubbed() -> None:
    old = {"id": "s1", "kind": "summary", "text": "- e0 - e1", "derived_from": ["e0", "e1"]}
    new = {"id": "s1", "kind": "summary", "text": "- e0", "derived_from": ["e0"]}
    rebuild = {"record_id": "s1", "op": "rebuild", "before": old, "after": new}
    gone = {"e1"}
    assert history_scrub.quoting_ids(USER, [rebuild], gone, set()) == {"s1"}
    assert history_scrub.scrub([rebuild], USER, gone, set()) == 1
    assert rebuild["before"] == {"id": "s1", "kind": "summary", "derived_from": ["e0", "e1"], "removed": True}
    assert rebuild["after"] == new
