"""Notes for the conflict tests that build a user index by hand: a fixed clock, unrelated filler notes that conflict
handling must leave alone, and a note dated some days before that clock."""

from __future__ import annotations

import datetime as dt

from memtend.records import Kind, Record

DAY = 86_400.0
NOW = dt.datetime(2026, 1, 1, tzinfo=dt.timezone.utc).timestamp()
FILLERS = [
    "Bought a bread machine last year.",
    "Prefers window seats on flights.",
    "Plays five-a-side football on Thursdays.",
    "Allergic to cats, fine with dogs.",
    "The boiler was serviced in October.",
]


def note(id: str, text: str, days_ago: float) -> Record:
    at = NOW - days_ago * DAY
    return Record(id=id, user_id="u", kind=Kind.NOTE, text=text, created_at=at, updated_at=at)
