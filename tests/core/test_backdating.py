"""Capture calls accept the time a thing was said: a past conversation imported keeps its dates."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import pytest
from memtend import Memory
from memtend.errors import InvalidInputError

MAY = dt.datetime(2024, 5, 8, 13, 56, tzinfo=dt.timezone.utc).timestamp()
JUNE = dt.datetime(2024, 6, 2, 9, 0, tzinfo=dt.timezone.utc).timestamp()


def test_notes_rules_and_facts_keep_the_time_they_were_said(tmp_path: Path) -> None:
    with Memory(path=str(tmp_path)) as mem:
        user = mem.user("importer")
        note = user.remember("Adopted a dog called Pepper", at=MAY)
        assert note.created_at == MAY
        assert user.add_rule("Never book red-eye flights", at=MAY).created_at == MAY
        hits = user.recall("what did I adopt in May 2024?", k=1, now=JUNE)
        assert hits[0].record.id == note.id and "2024-05-08" in hits[0].label()
        assert user.set_fact("home.city", "Lyon", at=JUNE).outcome == "added"
        late = user.set_fact("home.city", "Paris", at=MAY)  # said before Lyon was: Lyon stays current
        assert late.outcome == "kept" and user.facts()["home.city"] == "Lyon"
        assert user.set_fact("home.city", "Nice").outcome == "updated"  # now: replaces
        with pytest.raises(InvalidInputError):
            user.remember("bad time", at=float("nan"))
