"""``Memory(conflict_judge=...)``: the hook through which an optional judge of changes said in other words plugs in.
AUTO finds the installed memtend-conflicts by its entry point, None keeps the newest-wins rules alone, any object
of the ConflictJudge protocol replaces it; anything else is refused before the store is touched."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import chromadb
import numpy as np
import pytest
from conftest import unique_prefix
from memtend import Memory
from memtend.errors import InvalidInputError
from memtend.extras import AUTO
from memtend.policies.conflicts import ConflictJudge, Pool, check_judge
from memtend.records import Record
from memtend_conflicts import ParaphraseJudge

DAY = 86_400.0
NOW = 1_767_225_600.0  # 2026-01-01


class EveryNewerReplaces:
    """A judge of its own: every newer note replaces every older one; counts what it reads."""

    change_relevance = 0.0

    def __init__(self) -> None:
        self.read_texts: list[str] = []
        self.pools: list[Pool] = []

    def read(self, record: Record, vector: np.ndarray) -> object:
        self.read_texts.append(record.text)
        return record.text

    def judge(self, pool: Pool) -> Any:
        self.pools.append(pool)
        return lambda newer, older: pool.reading(newer) is not None and pool.reading(older) is not None


def memory(embedding_function: Any, judge: Any) -> Memory:
    return Memory(
        client=chromadb.EphemeralClient(),
        embedding_function=embedding_function,
        collection_prefix=unique_prefix(),
        conflict_judge=judge,
    )


def test_auto_finds_the_installed_judge_and_none_keeps_the_plain_rules(embedding_function: Any) -> None:
    with memory(embedding_function, AUTO) as mem:
        assert isinstance(mem.conflict_judge, ParaphraseJudge)
        assert isinstance(mem.conflict_judge, ConflictJudge)
    with memory(embedding_function, None) as mem:
        assert mem.conflict_judge is None
    with Memory(
        client=chromadb.EphemeralClient(), embedding_function=embedding_function, collection_prefix=unique_prefix()
    ) as mem:
        assert isinstance(mem.conflict_judge, ParaphraseJudge)  # AUTO is the default


class NoRead:
    change_relevance = 0.4

    def judge(self, pool: Pool) -> Any:
        return lambda newer, older: False


class BadShare(EveryNewerReplaces):
    change_relevance = 1.5  # type: ignore[assignment]


@pytest.mark.parametrize("bad", ["paraphrase", 1, NoRead(), BadShare(), ParaphraseJudge])
def test_anything_else_is_refused_before_the_store_is_touched(bad: Any, tmp_path: Path) -> None:
    folder = tmp_path / "store"
    with pytest.raises(InvalidInputError, match="conflict_judge"):
        Memory(path=folder, conflict_judge=bad)
    assert not folder.exists()
    with pytest.raises(InvalidInputError):
        check_judge(bad)


def test_a_judge_of_its_own_replaces_the_installed_one(embedding_function: Any) -> None:
    judge = EveryNewerReplaces()
    with memory(embedding_function, judge) as mem:
        user = mem.user("own")
        user.remember("The printer on floor 2 jams with thick paper.", at=NOW - 40 * DAY)
        user.remember("Likes hiking in the Alps in autumn.", at=NOW - 5 * DAY)
        texts = [hit.record.text for hit in user.recall("printer paper jams", k=2, now=NOW)]
        assert texts == ["Likes hiking in the Alps in autumn.", "The printer on floor 2 jams with thick paper."]
        assert len(judge.pools) == 1 and len(judge.pools[0].records) == 2
        user.recall("printer paper jams", k=2, now=NOW)
        assert sorted(judge.read_texts) == sorted(texts)  # each record read once, kept for the next recall
    with memory(embedding_function, None) as mem:
        user = mem.user("plain")
        user.remember("The printer on floor 2 jams with thick paper.", at=NOW - 40 * DAY)
        user.remember("Likes hiking in the Alps in autumn.", at=NOW - 5 * DAY)
        top = user.recall("printer paper jams", k=2, now=NOW)[0].record.text
        assert top == "The printer on floor 2 jams with thick paper."  # no rule merges two unrelated notes
