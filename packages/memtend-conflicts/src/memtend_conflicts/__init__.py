"""memtend-conflicts: finds a change said in other words among the top of a recall, so the newest wins there too.

"I live in Paris." and, a month later, "I moved to Berlin last month." share no word: memtend's own newest-wins
rules (the same fact key, near-duplicates with other values, an update cue on a shared subject) do not see that
the second replaces the first. This distribution's :class:`ParaphraseJudge` does, from the two statements' words
in 25 languages and a learned reading of the newer one's embedding. Installed, ``Memory()`` finds it by its entry
point (``memtend.conflict_judge``); ``Memory(conflict_judge=ParaphraseJudge(ConflictConfig(...)))`` sets its knobs,
``Memory(conflict_judge=None)`` runs without it.
"""

from __future__ import annotations

from memtend_conflicts.config import ConflictConfig
from memtend_conflicts.judge import Claim, ParaphraseJudge, default_judge

__all__ = ["Claim", "ConflictConfig", "ParaphraseJudge", "default_judge"]
