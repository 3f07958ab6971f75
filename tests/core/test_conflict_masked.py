"""Changes said in other words, judged with the values masked (``policies.conflict_subject``), in the user index
and through recall; and a fact's key, where there is one."""

from __future__ import annotations

import datetime as dt
import math
from dataclasses import replace

import numpy as np
from memtend.policies import retrieval as R
from memtend.policies.retrieval import Claim, RetrievalConfig
from memtend.records import Kind, Record
from memtend.user_index import UserIndex

DAY = 86_400.0
NOW = dt.datetime(2026, 1, 1, tzinfo=dt.timezone.utc).timestamp()
CAR = ("I drive a 2015 Ford Focus.", "Traded it in for an electric Kia last weekend.", "What car do I drive?")
FILLERS = [
    "Prefers window seats on flights.",
    "Plays five-a-side football on Thursdays.",
    "Allergic to cats, fine with dogs.",
    "The boiler was serviced in October.",
]


def note(id: str, text: str, days_ago: float) -> Record:
    at = NOW - days_ago * DAY
    return Record(id=id, user_id="u", kind=Kind.NOTE, text=text, created_at=at, updated_at=at)


class CountingEncoder:
    def __init__(self) -> None:
        from memtend.embeddings import embed

        self.embed = embed
        self.texts: list[str] = []

    def __call__(self, texts: list[str]) -> np.ndarray:
        self.texts.extend(texts)
        return np.asarray(self.embed(texts))


def ranked(old: str, new: str, query: str, encode: CountingEncoder | None) -> tuple[UserIndex, dict[str, float]]:
    from memtend.embeddings import embed, embed_query

    records = [note(f"f{i}", t, 60 + i) for i, t in enumerate(FILLERS)]
    records += [note("old", old, 40), note("new", new, 5)]
    index = UserIndex(RetrievalConfig())
    index.upsert(records, embed([r.text for r in records]))
    return index, dict(index.search(query, embed_query(query), k=6, now=NOW, encode=encode))


def test_a_change_sharing_no_word_outranks_the_older_note_with_the_real_model() -> None:
    old, new, query = CAR
    _, with_masks = ranked(old, new, query, CountingEncoder())
    _, without = ranked(old, new, query, None)
    assert with_masks["new"] > with_masks["old"]
    assert without["old"] > without["new"]  # without the masked comparison the stale car answers


def test_a_plan_is_not_merged_with_what_it_may_replace_with_the_real_model() -> None:
    old, plan, query = "Home is Lyon.", "Thinking about relocating to Montreal one day.", "Where is home?"
    encoder = CountingEncoder()
    _, with_masks = ranked(old, plan, query, encoder)
    _, without = ranked(old, plan, query, None)
    assert with_masks["old"] == without["old"] and with_masks["old"] > with_masks["new"]
    assert encoder.texts == []  # a plan is never a candidate: nothing encoded for it


def test_masked_forms_are_encoded_once_per_record_and_again_when_it_changes() -> None:
    from memtend.embeddings import embed, embed_query

    old, new, query = CAR
    encoder = CountingEncoder()
    index, _ = ranked(old, new, query, encoder)
    assert sorted(encoder.texts) == ["I drive a something.", "Traded it in for an electric something last something."]
    index.search(query, embed_query(query), k=6, now=NOW, encode=encoder)
    assert len(encoder.texts) == 2  # kept for the records' slots
    changed = note("new", "Traded it in for an electric Skoda last weekend.", 5)
    index.upsert([changed], embed([changed.text]))
    index.search(query, embed_query(query), k=6, now=NOW, encode=encoder)
    assert encoder.texts[2:] == [changed.text.replace("Skoda", "something").replace("weekend", "something")]


def test_subject_change_rule() -> None:
    config = RetrievalConfig()
    old = Claim(state=True, query_cosine=0.7)
    new = Claim(state=True, acts=True, query_cosine=0.3)
    assert R.subject_change(new, old, 0.3, 0.3, config)  # close enough, half masked and half as they are
    assert not R.subject_change(new, old, 0.1, 0.3, config)  # judged 0.2
    assert not R.subject_change(new, old, 0.3, math.nan, config)  # not compared
    assert not R.subject_change(replace(new, acts=False), old, 0.3, 0.3, config)  # no cue, not close enough
    assert R.subject_change(replace(new, acts=False), old, 0.6, 0.6, config)  # no cue, but close
    assert not R.subject_change(replace(new, current=False), old, 0.3, 0.3, config)  # a plan, or long past
    assert not R.subject_change(replace(new, own_thing=False), old, 0.3, 0.3, config)  # another thing
    assert not R.subject_change(replace(new, people=frozenset({"wife"})), old, 0.3, 0.3, config)  # someone else
    assert not R.subject_change(replace(new, state=False), old, 0.3, 0.3, config)  # a logged event
    assert not R.subject_change(replace(new, query_cosine=-0.1), old, 0.3, 0.3, config)  # far from the query
    as_they_are = replace(config, conflict_subject_masked_weight=0.0)
    assert R.subject_change(new, old, 0.3, math.nan, as_they_are)


def test_through_recall_the_newer_note_wins(ephemeral_memory) -> None:  # type: ignore[no-untyped-def]
    user = ephemeral_memory.user("driver")
    for i, text in enumerate(FILLERS):
        user.remember(text, at=NOW - (60 + i) * DAY)
    user.remember("I drive a 2015 Ford Focus.", at=NOW - 40 * DAY)
    user.remember("Traded it in for an electric Kia last weekend.", at=NOW - 5 * DAY)
    user.remember("My wife traded hers in for an electric Kia.", at=NOW - 3 * DAY)
    texts = [hit.record.text for hit in user.recall("What car do I drive?", k=6, now=NOW)]
    assert texts.index("Traded it in for an electric Kia last weekend.") < texts.index("I drive a 2015 Ford Focus.")


def test_a_fact_key_keeps_the_newest_value(ephemeral_memory) -> None:  # type: ignore[no-untyped-def]
    user = ephemeral_memory.user("mover")
    user.remember("Prefers window seats on flights.")
    assert user.set_fact("home.city", "Paris", at=NOW - 40 * DAY).outcome == "added"
    assert user.set_fact("home.city", "Berlin", at=NOW - 5 * DAY).outcome == "updated"
    hits = user.recall("Which city do I live in?", k=3, now=NOW)
    texts = [hit.record.text for hit in hits]
    assert "Berlin" in texts[0] and not any("Paris" in t for t in texts)
    assert user.facts()["home.city"] == "Berlin"


def test_recall_cost_benchmark_runs() -> None:
    from conftest import load_benchmark

    benchmark = load_benchmark("conflicts")
    cost = benchmark.recall_cost(pairs=4, queries=2, rounds=1)
    assert set(cost) == {"without", "first", "warm"} and cost["warm"]["n"] == 2 and cost["warm"]["p50"] > 0
    index = benchmark.index_cost(rounds=1)
    assert set(index) == {"without", "warm"} and index["warm"]["n"] == index["without"]["n"] > 0
