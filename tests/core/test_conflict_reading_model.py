"""The shipped learned reading of a newer statement (``policies.conflict_reading``) with the real embedding model:
statements that replace how things stood read as changes, news of others, visits and one-off outings do not. The
sentences are written here, apart from the tuning sets the weights were trained on."""

from __future__ import annotations

from memtend.embeddings import embed
from memtend.policies.conflict_reading import shipped

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
