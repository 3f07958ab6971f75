"""Changes said in other words, judged with the values masked (``memtend_conflicts.subject``), in the user index
and through recall; and a fact's key, where there is one."""

from __future__ import annotations

import math
from dataclasses import replace

import numpy as np
from conflict_notes import DAY, FILLERS, NOW, note
from memtend.index.user_index import UserIndex
from memtend.policies import conflicts as core
from memtend.policies.retrieval import RetrievalConfig
from memtend_conflicts import judge as J
from memtend_conflicts.config import ConflictConfig
from memtend_conflicts.judge import Claim, ParaphraseJudge
from memtend_conflicts.subject import masked_subject

COFFEE = ("I drink three coffees a day.", "Quit caffeine entirely, herbal tea only.", "How much coffee do I drink?")
ALLERGY = ("I'm allergic to peanuts.", "Turns out I'm allergic to shellfish as well.", "What am I allergic to?")


class CountingEncoder:
    def __init__(self) -> None:
        from memtend.storage.embeddings import embed

        self.embed = embed
        self.texts: list[str] = []

    def __call__(self, texts: list[str]) -> np.ndarray:
        self.texts.extend(texts)
        return np.asarray(self.embed(texts))


# half the closeness judged on value-masked forms, at its best threshold in cross-validation
MASKED = ConflictConfig(conflict_subject_masked_weight=0.5, conflict_subject_cosine=0.25)
PLAIN = RetrievalConfig(conflict_pool=0)  # no conflict handling
# no lower cosine for two statements closest to each other (nor for one that reads as a change), and never a change
# without a cue
NOT_NEAR = ConflictConfig(
    conflict_subject_near_cosine=0.3,
    conflict_state_cosine=2.0,
    conflict_state_plain_cosine=2.0,
    conflict_nearest_query_weight=0,
    conflict_reading_accept=1.0,
)


def ranked(
    old: str,
    new: str,
    query: str,
    encode: CountingEncoder | None,
    config: ConflictConfig | RetrievalConfig | None = None,
) -> tuple[UserIndex, dict[str, float]]:
    """The pair among the fillers, ranked with the judge of these knobs (a ConflictConfig, None: its defaults), or
    with this ranking (a RetrievalConfig) and no judge."""
    from memtend.storage.embeddings import embed, embed_query

    records = [note(f"f{i}", t, 60 + i) for i, t in enumerate(FILLERS)]
    records += [note("old", old, 40), note("new", new, 5)]
    judge = None if isinstance(config, RetrievalConfig) else ParaphraseJudge(config)
    index = UserIndex(config if isinstance(config, RetrievalConfig) else None, judge)
    index.upsert(records, embed([r.text for r in records]))
    return index, dict(index.search(query, embed_query(query), k=6, now=NOW, encode=encode))


def test_a_change_sharing_no_word_outranks_the_older_note_with_the_real_model() -> None:
    old, new, query = COFFEE
    encoder = CountingEncoder()
    _, judged = ranked(old, new, query, encoder)
    _, masked = ranked(old, new, query, CountingEncoder(), MASKED)
    _, alone = ranked(old, new, query, None, PLAIN)
    assert judged["new"] > judged["old"] and masked["new"] > masked["old"]
    assert alone["old"] > alone["new"]  # by ranking alone the stale habit answers
    assert encoder.texts == []  # by default the closeness is judged as the notes are: nothing more encoded


def test_a_plan_is_not_merged_with_what_it_may_replace_with_the_real_model() -> None:
    old, plan, query = "Home is Lyon.", "Thinking about relocating to Montreal one day.", "Where is home?"
    encoder = CountingEncoder()
    _, judged = ranked(old, plan, query, None)
    _, masked = ranked(old, plan, query, encoder, MASKED)
    _, alone = ranked(old, plan, query, None, PLAIN)
    assert judged["old"] == masked["old"] == alone["old"] and judged["old"] > judged["new"]
    assert encoder.texts == []  # a plan is never a candidate: nothing encoded for it


def test_an_added_value_is_not_merged_with_the_older_one_with_the_real_model() -> None:
    old, more, query = ALLERGY
    _, judged = ranked(old, more, query, None)
    _, alone = ranked(old, more, query, None, PLAIN)
    assert judged["old"] == alone["old"]


def test_masked_forms_are_encoded_once_per_record_and_again_when_it_changes() -> None:
    from memtend.storage.embeddings import embed, embed_query

    old, new, query = COFFEE
    encoder = CountingEncoder()
    index, _ = ranked(old, new, query, encoder, MASKED)
    assert sorted(encoder.texts) == sorted(masked_subject(text) for text in (old, new))
    index.search(query, embed_query(query), k=6, now=NOW, encode=encoder)
    assert len(encoder.texts) == 2  # kept for the records' slots
    changed = note("new", "Quit caffeine in March, rooibos only.", 5)
    index.upsert([changed], embed([changed.text]))
    index.search(query, embed_query(query), k=6, now=NOW, encode=encoder)
    assert encoder.texts[2:] == ["Quit caffeine in something, rooibos only."]


def test_subject_change_rule() -> None:
    config = ConflictConfig()
    old = Claim(state=True, query_cosine=0.7)
    new = Claim(state=True, acts=True, query_cosine=0.3)
    assert J.subject_change(new, old, 0.3, math.nan, config)  # judged as they are: nothing masked needed
    assert not J.subject_change(new, old, 0.25, math.nan, config)  # not close enough
    assert J.subject_change(replace(new, acts=False, changes=True), old, 0.3, math.nan, config)  # a change cue
    assert not J.subject_change(replace(new, acts=False), old, 0.9, math.nan, config)  # no cue, however close
    assert not J.subject_change(replace(new, current=False), old, 0.3, math.nan, config)  # a plan, or long past
    assert not J.subject_change(replace(new, own_thing=False), old, 0.3, math.nan, config)  # another thing
    assert not J.subject_change(replace(new, adds=True), old, 0.3, math.nan, config)  # a value beside the older
    assert not J.subject_change(replace(new, people=frozenset({"wife"})), old, 0.3, math.nan, config)  # another
    assert not J.subject_change(replace(new, state=False), old, 0.3, math.nan, config)  # a logged event
    assert not J.subject_change(replace(new, query_cosine=-0.1), old, 0.3, math.nan, config)  # far from the query
    assert J.subject_change(new, old, 0.3, 0.3, MASKED)  # half masked, half as they are
    assert not J.subject_change(new, old, 0.2, 0.2, MASKED)  # judged 0.2
    assert not J.subject_change(new, old, 0.3, math.nan, MASKED)  # masked forms not compared


def test_subject_change_between_statements_closest_to_each_other() -> None:
    config = ConflictConfig()
    old = Claim(state=True, query_cosine=0.7, values=frozenset({"lastpass"}))
    new = Claim(state=True, acts=True, query_cosine=0.3, occasion=False, own_voice=True)
    assert not J.subject_change(new, old, 0.22, math.nan, config)  # below the cosine for any two statements
    assert J.subject_change(new, old, 0.22, math.nan, config, nearest=True)  # enough for two closest to each other
    assert not J.subject_change(new, old, 0.08, math.nan, config, nearest=True)  # below the near cosine (0.1)
    # "Chess club is hosted by Jonas from now on": speaks of others, needs the cosine for any two statements
    assert not J.subject_change(replace(new, own_voice=False), old, 0.22, math.nan, config, nearest=True)
    # no change cue: only between statements closest to each other, closer, the newer telling how things stand
    state = replace(new, acts=False)
    assert J.subject_change(state, old, 0.65, math.nan, config, nearest=True)
    assert not J.subject_change(state, old, 0.65, math.nan, config)  # not each other's closest
    assert not J.subject_change(state, old, 0.55, math.nan, config, nearest=True)  # not close enough
    assert not J.subject_change(replace(state, occasion=True), old, 0.65, math.nan, config, nearest=True)
    lastpass = replace(state, names=frozenset({"lastpass"}))  # "LastPass sent a survey": about the older's value
    assert not J.subject_change(lastpass, old, 0.65, math.nan, config, nearest=True)


def test_no_cue_state_rule_needs_values_of_one_kind() -> None:
    config = ConflictConfig()
    old = Claim(state=True, query_cosine=0.7, kinds=frozenset({"name"}))  # "My password manager is LastPass."
    new = Claim(state=True, query_cosine=0.3, occasion=False, kinds=frozenset({"name"}))  # "... live in Bitwarden."
    assert J.subject_change(new, old, 0.55, math.nan, config, nearest=True)  # a name for a name
    assert not J.subject_change(new, old, 0.45, math.nan, config, nearest=True)  # not close enough
    # a time beside a name ("Is learning to play the piano" has none: compared whole, closer)
    assert not J.subject_change(replace(new, kinds=frozenset({"time"})), old, 0.55, math.nan, config, nearest=True)
    assert not J.subject_change(replace(new, kinds=frozenset()), old, 0.65, math.nan, config, nearest=True)
    plain = replace(old, kinds=frozenset())
    assert J.subject_change(replace(new, kinds=frozenset()), plain, 0.65, math.nan, config, nearest=True)
    assert not J.subject_change(replace(new, kinds=frozenset()), plain, 0.55, math.nan, config, nearest=True)
    # a question never replaces ("Would a day shift suit me better?")
    assert not J.subject_change(replace(new, asks=True), old, 0.55, math.nan, config, nearest=True)


def test_a_mere_beginning_needs_the_closeness_of_any_two_statements() -> None:
    config = ConflictConfig()
    old = Claim(state=True, query_cosine=0.7)
    opened = Claim(state=True, acts=True, query_cosine=0.3, own_voice=True, begins=True)  # "Opened an ISA ..."
    assert not J.subject_change(opened, old, 0.25, math.nan, config, nearest=True)
    assert J.subject_change(replace(opened, begins=False), old, 0.25, math.nan, config, nearest=True)
    assert J.subject_change(opened, old, 0.3, math.nan, config, nearest=True)


def test_closest_leans_toward_what_answers_the_query() -> None:
    when = np.array([3.0, 2.0, 1.0])  # 0 newest ("Traded it in for a Kia"), 1 "bread machine", 2 "I drive a Ford"
    similarity = np.array([[1.0, 0.27, 0.25], [0.27, 1.0, 0.1], [0.25, 0.1, 1.0]])
    older, newer = J.closest_to_each_other(similarity, when)
    assert older[0] == 1  # in meaning alone the bread machine is closest
    query_cosine = np.array([0.5, 0.15, 0.55])
    older, newer = J.closest_to_each_other(similarity, when, query_cosine)
    assert older[0] == 2 and newer[2] == 0  # leaning toward the answers, the car notes are each other's closest


def test_a_traded_car_wins_over_a_note_close_in_wording_with_the_real_model() -> None:
    old, new, query = (
        "I drive a 2015 Ford Focus.",
        "Traded it in for an electric Kia last weekend.",
        "What car do I drive?",
    )
    _, scores = ranked(old, new, query, None)
    assert scores["new"] >= scores["old"]
    # "Opened an ISA" beside "I have a savings account with Monzo": another account, not a change of it
    _, scores = ranked(
        "I have a savings account with Monzo.",
        "Opened an ISA with Vanguard this spring.",
        "Where are my savings?",
        None,
    )
    assert scores["old"] > scores["new"]


def demote(
    scores: np.ndarray,
    created: np.ndarray,
    similarity: np.ndarray,
    claims: list[Claim],
    config: ConflictConfig | None = None,
    keys: tuple[str, ...] = (),
) -> np.ndarray:
    """The core's demote_conflicts over three records with the judge's test over these claims (and fact keys)."""
    cfg = config or ConflictConfig()
    plain = [core.Claim(key=key) for key in keys] if keys else [core.Claim()] * len(claims)
    changed = J.judged(claims, similarity, created, cfg)
    order = list(range(len(claims)))
    return core.demote_conflicts(
        order, scores, created, similarity, plain, RetrievalConfig(), changed, cfg.conflict_change_relevance
    )


def test_a_change_in_other_words_takes_the_place_of_what_it_replaces() -> None:
    # 0 "I take the 7:40 train." (asked about), 1 a note between, 2 "I catch the 8:10 these days." (far below)
    scores = np.array([1.0, 0.7, 0.1])
    created = np.array([1.0, 0.5, 3.0])
    similarity = np.array([[1.0, 0.05, 0.44], [0.05, 1.0, 0.05], [0.44, 0.05, 1.0]])
    old = Claim(state=True, query_cosine=0.6, own_voice=True, occasion=False)
    new = Claim(state=True, changes=True, own_voice=True, occasion=False, query_cosine=0.05)
    claims = [old, Claim(), new]
    out = demote(scores, created, similarity, claims)
    assert out[2] == 1.0 and 0.99 < out[0] < out[2]  # the current value first, the stale one just below it
    assert out[1] == 0.7  # the note between keeps its place: the stale one does not drag it down
    # a newer statement found stale itself takes no place: 1 (newest) replaces 2, which would replace 0
    newest = Claim(state=True, changes=True, own_voice=True, occasion=False, query_cosine=0.05)
    claims = [old, newest, new]
    created = np.array([1.0, 4.0, 3.0])
    similarity = np.array([[1.0, 0.05, 0.44], [0.05, 1.0, 0.5], [0.44, 0.5, 1.0]])
    out = demote(np.array([1.0, 0.05, 0.7]), created, similarity, claims)
    assert out[1] == 0.7 and out[0] < out[2] < out[1]  # newest first, then 2 and 0 below it, in that order


def test_the_older_of_a_change_in_other_words_needs_less_relevance_than_other_conflicts() -> None:
    # 0 the best match (another note), 1 "I take the 7:40 train." at 0.55 of the best score, 2 "I catch the 8:10
    # these days." far below: a change in other words demotes 1 (at least conflict_change_relevance of the best) ...
    scores = np.array([1.0, 0.55, 0.1])
    created = np.array([0.5, 1.0, 3.0])
    similarity = np.array([[1.0, 0.05, 0.05], [0.05, 1.0, 0.44], [0.05, 0.44, 1.0]])
    old = Claim(state=True, query_cosine=0.6, own_voice=True, occasion=False)
    new = Claim(state=True, changes=True, own_voice=True, occasion=False, query_cosine=0.05)
    out = demote(scores, created, similarity, [Claim(), old, new])
    assert out[0] == 1.0 and out[2] == 0.55 and out[1] < out[2]
    # ... not below that share, nor at the former floor of every rule
    same = ConflictConfig(conflict_change_relevance=0.6)
    assert demote(scores, created, similarity, [Claim(), old, new], same).tolist() == [
        1.0,
        0.55,
        0.1,
    ]
    below = ConflictConfig().conflict_change_relevance - 0.05  # just under the share
    low = np.array([1.0, below, 0.1])
    assert demote(low, created, similarity, [Claim(), old, new]).tolist() == [
        1.0,
        below,
        0.1,
    ]
    # two notes with one fact key at 0.55 of the best score: still not relevant enough (conflict_relevance)
    out = demote(scores, created, np.eye(3), [Claim(), Claim(), Claim()], keys=("", "k", "k"))
    assert out[1] == 0.55


def test_closest_to_each_other() -> None:
    when = np.array([3.0, 2.0, 1.0])  # 0 newest, 2 oldest
    similarity = np.array([[1.0, 0.2, 0.5], [0.2, 1.0, 0.4], [0.5, 0.4, 1.0]])
    older, newer = J.closest_to_each_other(similarity, when)
    assert older == [2, 2, -1]  # 0 is closest to 2 of those before it; 2 has none before it
    assert newer == [-1, 0, 0]  # 2 is closest to 0 of those after it; 0 has none after it
    # 0 and 2 are each other's closest; 1 is closest to 2 but 2 is closer to 0
    assert older[0] == 2 and newer[2] == 0
    assert not (older[1] == 2 and newer[2] == 1)


def test_a_change_each_others_closest_wins_with_the_real_model() -> None:
    # 0.29 close as they are: below the cosine for any two statements, enough for two closest to each other
    _, scores = ranked("Home is Lyon.", "Relocated to Montreal in the spring.", "Where is home?", None)
    assert scores["new"] >= scores["old"]
    _, scores = ranked("Home is Lyon.", "Relocated to Montreal in the spring.", "Where is home?", None, NOT_NEAR)
    assert scores["old"] > scores["new"]


def test_a_state_said_without_a_change_cue_wins_and_an_occasion_does_not() -> None:
    _, scores = ranked("I commute by train.", "I commute by bike every day.", "How do I commute?", None)
    assert scores["new"] >= scores["old"]
    _, scores = ranked("I commute by train.", "I commute by bike every day.", "How do I commute?", None, NOT_NEAR)
    assert scores["old"] > scores["new"]
    _, scores = ranked("I commute by train.", "On holiday we cycled to the beach every day.", "How do I commute?", None)
    assert scores["old"] > scores["new"]


def test_through_recall_the_newer_note_wins(ephemeral_memory) -> None:  # type: ignore[no-untyped-def]
    user = ephemeral_memory.user("coffee")
    for i, text in enumerate(FILLERS):
        user.remember(text, at=NOW - (60 + i) * DAY)
    old, new, query = COFFEE
    user.remember(old, at=NOW - 40 * DAY)
    user.remember(new, at=NOW - 5 * DAY)
    user.remember("My wife quit sugar in her tea.", at=NOW - 3 * DAY)
    texts = [hit.record.text for hit in user.recall(query, k=6, now=NOW)]
    assert texts.index(new) < texts.index(old)


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
    assert set(cost) == {"without", "first", "warm", "no judge"} and cost["warm"]["n"] == 2 and cost["warm"]["p50"] > 0
    assert cost["no judge"]["n"] == 2
    index = benchmark.index_cost(rounds=1, queries=4)
    assert set(index) == {"without", "warm", "no judge"} and index["warm"]["n"] == index["without"]["n"] > 0
    assert index["no judge"]["n"] == index["without"]["n"]
