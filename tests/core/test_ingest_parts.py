"""log_many embeds a batch in parts on a helper: the parts are the batches the model makes of the whole list (sorted
by length, 32 at a time), so the vectors are those of one call and the work is the same."""

from __future__ import annotations

import numpy as np
from memtend.helpers import Helpers, embed_in_parts
from memtend.storage.embeddings import BATCH_SIZE, announcing_compute


def test_parts_are_the_models_own_batches_and_give_the_same_vectors(embedding_function: object) -> None:
    texts = [f"note {i}: " + "the lake was cold " * (i % 9) + f"and item {i * 37 % 101}" for i in range(70)]
    helpers = Helpers()
    try:
        parts = embed_in_parts(helpers, embedding_function, texts, BATCH_SIZE)  # type: ignore[arg-type]
        assert parts is not None
        assert [len(p) for p in parts.texts] == [32, 32, 6]
        ordered = sorted(texts, key=len)
        assert [t for p in parts.texts for t in p] == ordered, "shortest first, as the model batches one call"
        by_text = {
            t: v for p, f in zip(parts.texts, parts.futures, strict=True) for t, v in zip(p, f.result(), strict=True)
        }
        assert all(event.is_set() for event in parts.computing)
    finally:
        helpers.close()
    whole = np.asarray(embedding_function(texts), dtype=np.float32)  # type: ignore[operator]
    for text, vector in zip(texts, whole, strict=True):
        assert float(np.dot(by_text[text], vector)) > 0.99999


def test_the_model_announces_each_run_on_the_calling_thread_only(embedding_function: object) -> None:
    """A log_many writer starts a Chroma write (which holds the GIL) only once the model's run has started."""
    runs: list[int] = []
    texts = [f"text number {i}" for i in range(BATCH_SIZE + 5)]
    with announcing_compute(lambda: runs.append(len(runs))):
        embedding_function(texts)  # type: ignore[operator]
    assert runs == [0, 1], "one announcement per forward pass of the model"
    embedding_function(texts)  # type: ignore[operator]
    assert runs == [0, 1], "none outside the block"
