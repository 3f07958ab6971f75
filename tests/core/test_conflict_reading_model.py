"""The shipped learned reading of a newer statement (``memtend_conflicts.reading``) with the real embedding model:
statements that replace how things stood read as changes, news of others, visits and one-off outings do not; in
the index, a change no rule trusts at its closeness wins when it reads as one, while its look-alikes (another
person's, a plan, one occasion) demote nothing. The sentences are written here, apart from the tuning sets the
weights were trained on."""

from __future__ import annotations

from conflict_notes import FILLERS, NOW, note
from memtend.index.user_index import UserIndex
from memtend.policies.retrieval import RetrievalConfig
from memtend.storage.embeddings import embed
from memtend_conflicts import ConflictConfig, ParaphraseJudge
from memtend_conflicts.weights import shipped

CHANGES = [
    "Sold the motorbike; I cycle everywhere now.",
    "Our new address is 4 Mill Lane.",
    "Work is fully from home these days.",
]
LOOK_ALIKES = [
    "My brother is visiting next weekend.",
    "My neighbour bought a new car.",
    "Went to a jazz concert on Saturday.",
]


def test_changes_read_as_changes_and_look_alikes_do_not_with_the_real_model() -> None:
    reading = shipped()
    assert reading is not None
    changes = [reading.probability(v) for v in embed(CHANGES)]
    others = [reading.probability(v) for v in embed(LOOK_ALIKES)]
    assert min(changes) > max(others), (changes, others)
    assert min(changes) >= 0.6 and max(others) <= 0.4  # on either side of the shipped thresholds' middle


def _scores(old: str, new: str, query: str, config: ConflictConfig | RetrievalConfig) -> dict[str, float]:
    """Scores by id with the judge of these knobs (a ConflictConfig), or with this ranking and no judge."""
    from memtend.storage.embeddings import embed_query

    records = [note(f"f{i}", text, 60 + i) for i, text in enumerate(FILLERS)]
    records += [note("old", old, 40), note("new", new, 5)]
    index = UserIndex(None, ParaphraseJudge(config)) if isinstance(config, ConflictConfig) else UserIndex(config)
    index.upsert(records, embed([r.text for r in records]))
    return dict(index.search(query, embed_query(query), k=7, now=NOW))


RULES_ALONE = ConflictConfig(  # every use of the reading switched off
    conflict_reading_floor=0.0, conflict_reading_accept=1.0, conflict_near_reading=0.0, conflict_near_other_reading=2.0
)
NO_CONFLICTS = RetrievalConfig(conflict_pool=0)


def test_a_change_the_rules_alone_miss_wins_when_it_reads_as_one_with_the_real_model() -> None:
    for old, new, query in (
        ("I bank with Lloyds.", "My salary lands in a Monzo account.", "Which bank do I use?"),
        (
            "I wake up at 6:30 on weekdays.",
            "Alarm goes off at quarter to eight since the new role.",
            "When do I get up?",
        ),
    ):
        read = _scores(old, new, query, ConflictConfig())
        assert read["new"] >= read["old"], new
        alone = _scores(old, new, query, RULES_ALONE)
        assert alone["old"] > alone["new"], new  # no change cue the rules trust at this closeness


def test_look_alikes_of_those_changes_stay_apart_with_the_real_model() -> None:
    for old, new, query in (
        ("I bank with Lloyds.", "My partner's salary lands in a Monzo account.", "Which bank do I use?"),
        ("I bank with Lloyds.", "Thinking of opening a Monzo account for holidays.", "Which bank do I use?"),
        ("I wake up at 6:30 on weekdays.", "My brother's alarm goes off at quarter to eight.", "When do I get up?"),
        ("I wake up at 6:30 on weekdays.", "Slept in until ten on Sunday.", "When do I get up?"),
    ):
        assert _scores(old, new, query, ConflictConfig())["old"] == _scores(old, new, query, NO_CONFLICTS)["old"], new
