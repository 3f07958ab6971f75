"""Does a statement read as one that replaces how things stood? A learned reading of a note's own embedding.

A change said in other words and the look-alikes beside it (another person's news, a plan, one occasion, a value
added beside the older) are about equally close in meaning to the older statement and to the question, so their
closeness cannot tell them apart. How the newer statement itself reads can: "Fully remote now" reads as how things
stand, "Tried the new sushi bar" as one occasion, "Mum is staying with us for Christmas" as a visit. A logistic
regression over the newer statement's embedding (the vector the index already holds: nothing more is encoded),
trained on the newer statements of the tuning pairs (``tests/benchmarks/conflicts_reading_train.py``), gives the
probability that it replaces something. How well it separates them, held out by domain, is in
``tests/benchmarks/RESULTS.md``.

The weights ship as ``memtend_conflicts/reading.npz``, loaded by ``memtend_conflicts.weights`` (this module
does no I/O). They fit one embedding model (all-MiniLM-L6-v2, 384 dimensions); for vectors of another size the
reading is NaN and the rules decide alone. That model reads English, and the reading is at chance on other
languages, so text that does not read as English (:func:`reads_english`) is not read either; changes in other
languages are found by the words of ``cues`` instead.

Pure: numpy and the standard library only.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from memtend_conflicts.cues import cues_of

__all__ = ["ChangeReading", "reads_english"]


@dataclass(frozen=True)
class ChangeReading:
    """A logistic regression over a statement's embedding: ``sigmoid(w . v + b)``."""

    weights: npt.NDArray[np.float64]
    bias: float

    def probability(self, vector: npt.NDArray[np.floating]) -> float:
        """How likely the statement with this embedding replaces how things stood; NaN for a vector of another
        size (another embedding model: the reading does not apply)."""
        vector = np.asarray(vector, dtype=np.float64).ravel()
        if vector.shape != self.weights.shape:
            return math.nan
        logit = float(vector @ self.weights) + self.bias
        return 1.0 / (1.0 + math.exp(-max(-60.0, min(60.0, logit))))


# common English words, of which nearly every English note holds one; words shared
# with other languages' common words ("die", "war", "also" in German) do no harm: the test is only one of two
_ENGLISH = frozenset(
    """a an the i i'm i've i'd me my mine we we're we've our us you your he his she her it it's its they their them
    this that these those is are was were be been am has have had do does did not no now then there here what when
    where who how why which to of in on at for from with by about into onto over after before up down out off as and
    or but so if than too also just still only all every each some any more most much many other another new old one
    two three first last next week weeks month months year years day days time today yesterday tomorrow morning
    evening night got get gets go goes going went gone make made take took use uses used like likes prefer prefers
    want wants keep keeps live lives moved switched started stopped quit back home work job since anymore longer
    instead order favourite favorite usually always never sometimes fully""".split()
)
_WORD = re.compile(r"[a-z']+")
_ENGLISH_SHARE = 0.4  # below the share of common English words most English notes hold


def reads_english(text: str) -> bool:
    """Does the text read as English, as far as a cheap test tells: at least 90 % of its letters ASCII and one common
    English word, and, when it holds a cue of another language (``cues``: "ik", "vorige week", "jetzt"), at
    least 40 % of its words common English ones (how many notes of the tuning sets pass: ``RESULTS.md``)."""
    letters = [c for c in text if c.isalpha()]
    if not letters:
        return False
    if sum(c.isascii() for c in letters) < 0.9 * len(letters):
        return False
    words = _WORD.findall(text.lower().replace("\u2019", "'"))
    common = sum(word in _ENGLISH for word in words)
    if not common:
        return False
    # a few English-looking words ("in", "had", "week") in a statement holding cues of another language ("Vorige
    # week had ik een sollicitatiegesprek in Arnhem"): not English
    return common >= _ENGLISH_SHARE * len(words) or not cues_of(text)
