"""The learned reading of a newer statement (``memtend_conflicts.reading``): its arithmetic, its file, and how the
conflict rules use it (a floor every change in other words must reach, a level that lets a change without a cue
through)."""

from __future__ import annotations

import math
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest
from memtend.errors import InvalidInputError
from memtend_conflicts import judge as J
from memtend_conflicts.config import ConflictConfig
from memtend_conflicts.judge import Claim
from memtend_conflicts.reading import ChangeReading
from memtend_conflicts.weights import load, save, shipped


def test_probability_is_the_logistic_of_the_weighted_vector() -> None:
    reading = ChangeReading(np.array([2.0, -1.0, 0.0]), 0.5)
    assert reading.probability(np.array([1.0, 1.0, 3.0])) == pytest.approx(1 / (1 + math.exp(-1.5)))
    assert reading.probability(np.array([0.0, 0.0, 0.0])) == pytest.approx(1 / (1 + math.exp(-0.5)))
    assert reading.probability(np.array([1e6, 0.0, 0.0])) == pytest.approx(1.0)  # no overflow
    assert reading.probability(np.array([-1e6, 0.0, 0.0])) == pytest.approx(0.0, abs=1e-20)


def test_a_vector_of_another_embedding_model_is_not_read() -> None:
    reading = ChangeReading(np.ones(3), 0.0)
    assert math.isnan(reading.probability(np.ones(4)))


def test_weights_round_trip_and_a_missing_file_reads_as_none(tmp_path: Path) -> None:
    reading = ChangeReading(np.array([0.25, -0.5]), -1.0)
    save(reading, tmp_path / "reading.npz")
    back = load(tmp_path / "reading.npz")
    assert back is not None
    assert back.weights.tolist() == [0.25, -0.5] and back.bias == -1.0
    assert load(tmp_path / "missing.npz") is None
    (tmp_path / "broken.npz").write_bytes(b"not numpy")
    assert load(tmp_path / "broken.npz") is None


def test_the_shipped_weights_fit_the_embedding_model() -> None:
    reading = shipped()
    assert reading is not None
    assert reading.weights.shape == (384,)  # all-MiniLM-L6-v2
    assert np.isfinite(reading.weights).all() and math.isfinite(reading.bias)


def test_a_change_in_other_words_must_read_as_one() -> None:
    config = ConflictConfig(conflict_reading_floor=0.3)
    old = Claim(state=True, query_cosine=0.7, values=frozenset({"paris"}))
    new = Claim(state=True, acts=True, query_cosine=0.6, reads_as_change=0.5)
    assert J.subject_change(new, old, 0.35, math.nan, config)
    assert not J.subject_change(replace(new, reads_as_change=0.2), old, 0.35, math.nan, config)
    assert J.subject_change(replace(new, reads_as_change=math.nan), old, 0.35, math.nan, config)  # not read
    moved = replace(new, acts=False, changes=True, first_person=True, values=frozenset({"berlin"}))
    mine = replace(old, first_person=True)
    assert J.paraphrased_change(moved, mine, 0.3, config)
    assert not J.paraphrased_change(replace(moved, reads_as_change=0.1), mine, 0.3, config)
    # a beginning as the only cue ("Started using Notion for my notes") may add beside the older: not a change
    assert not J.paraphrased_change(replace(moved, begins=True), mine, 0.3, config)


def test_reading_as_a_change_lets_statements_closest_to_each_other_through() -> None:
    config = ConflictConfig(conflict_reading_accept=0.8, conflict_reading_cosine=0.15)
    old = Claim(state=True, query_cosine=0.7, kinds=frozenset({"name"}), values=frozenset({"kim"}))
    # no cue, a value of another kind, told as one occasion: the rules alone would never let it replace
    new = Claim(state=True, query_cosine=0.6, occasion=True, kinds=frozenset({"time"}), reads_as_change=0.9)
    never = replace(config, conflict_reading_accept=1.0)
    assert J.subject_change(new, old, 0.2, math.nan, config, nearest=True)
    assert not J.subject_change(new, old, 0.2, math.nan, never, nearest=True)
    assert not J.subject_change(replace(new, reads_as_change=0.7), old, 0.2, math.nan, config, nearest=True)
    assert not J.subject_change(replace(new, reads_as_change=math.nan), old, 0.2, math.nan, config, nearest=True)
    assert not J.subject_change(new, old, 0.2, math.nan, config)  # only between each other's closest
    assert not J.subject_change(new, old, 0.1, math.nan, config, nearest=True)  # below conflict_reading_cosine
    # still never about the older's value ("Kim moved her salon"), nor another person's, nor a plan
    assert not J.subject_change(replace(new, names=frozenset({"kim"})), old, 0.2, math.nan, config, nearest=True)
    assert not J.subject_change(replace(new, people=frozenset({"son"})), old, 0.2, math.nan, config, nearest=True)
    assert not J.subject_change(replace(new, current=False), old, 0.2, math.nan, config, nearest=True)
    # a value replaces a value: not an older statement that holds none ("Uses a standing desk at work")
    valueless = replace(old, kinds=frozenset(), values=frozenset())
    assert not J.subject_change(new, valueless, 0.2, math.nan, config, nearest=True)
    assert J.subject_change(replace(new, kinds=frozenset()), valueless, 0.2, math.nan, config, nearest=True)
    # with a cue, the lower of the two closeness thresholds holds
    cue = replace(new, changes=True, occasion=False)
    assert (
        J.subject_change(cue, old, 0.2, math.nan, replace(config, conflict_reading_cosine=0.5), nearest=False) is False
    )
    assert J.subject_change(cue, old, 0.3, math.nan, replace(config, conflict_reading_cosine=0.5))


def test_reading_thresholds_are_checked() -> None:
    with pytest.raises(InvalidInputError):
        ConflictConfig(conflict_reading_floor=math.nan)


def test_only_text_that_reads_as_english_is_read() -> None:
    from memtend_conflicts.reading import reads_english

    for english in ("Fully remote now, never leave home for work.", "The café's Wi-Fi is on the router now."):
        assert reads_english(english), english
    for other in (
        "Bin letzten Monat nach Berlin gezogen.",
        "Je vais désormais chez le Dr Leroy.",
        "Теперь я в школе.",
        "先月、大阪に引っ越しました。",
        "Sekarang saya mengajar di sekolah.",
        "",
        "42",
    ):
        assert not reads_english(other), other


def test_statements_closest_to_each_other_need_a_surer_reading_to_be_only_near() -> None:
    # "I'm a member of the climbing wall" / "Bought a new pair of shoes and chalk bag": a cue ("new"), each the
    # other's closest, in the user's voice, but read as a change only weakly: it must be as close as any cued change
    config = ConflictConfig(conflict_subject_near_cosine=0.1, conflict_subject_cosine=0.3, conflict_near_reading=0.4)
    old = Claim(state=True, query_cosine=0.7, first_person=True, own_voice=True)
    new = Claim(state=True, changes=True, own_voice=True, first_person=True, query_cosine=0.6, reads_as_change=0.5)
    assert J.subject_change(new, old, 0.15, math.nan, config, nearest=True)
    weak = replace(new, reads_as_change=0.35)
    assert not J.subject_change(weak, old, 0.15, math.nan, config, nearest=True)
    assert J.subject_change(weak, old, 0.35, math.nan, config, nearest=True)  # close enough for any cued change
    assert J.subject_change(replace(new, reads_as_change=math.nan), old, 0.15, math.nan, config, nearest=True)
    assert J.subject_change(weak, old, 0.15, math.nan, replace(config, conflict_near_reading=0.3), nearest=True)


def test_a_cued_change_not_in_the_users_voice_may_be_only_near_when_it_reads_surely_as_one() -> None:
    # "I'm on the night shift" / "Rota changed to days, seven to three": a cue, each the other's closest, but not in
    # the user's voice: only near in meaning when it reads as a change at least conflict_near_other_reading
    config = ConflictConfig(
        conflict_subject_near_cosine=0.1, conflict_subject_cosine=0.3, conflict_near_other_reading=0.7
    )
    old = Claim(state=True, query_cosine=0.7, first_person=True, own_voice=True)
    new = Claim(state=True, changes=True, query_cosine=0.6, reads_as_change=0.75)
    assert J.subject_change(new, old, 0.15, math.nan, config, nearest=True)
    assert not J.subject_change(new, old, 0.15, math.nan, config)  # only between each other's closest
    assert not J.subject_change(replace(new, reads_as_change=0.65), old, 0.15, math.nan, config, nearest=True)
    assert not J.subject_change(replace(new, reads_as_change=math.nan), old, 0.15, math.nan, config, nearest=True)
    assert not J.subject_change(replace(new, begins=True), old, 0.15, math.nan, config, nearest=True)
    assert not J.subject_change(replace(new, people=frozenset({"son"})), old, 0.15, math.nan, config, nearest=True)
    never = replace(config, conflict_near_other_reading=2.0)
    assert not J.subject_change(new, old, 0.15, math.nan, never, nearest=True)
