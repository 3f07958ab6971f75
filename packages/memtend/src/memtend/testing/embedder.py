"""A deterministic embedding function for fast tests: no model, no download, no Chroma."""

from __future__ import annotations

import hashlib
import re
from collections.abc import Sequence
from typing import Any

import numpy as np
import numpy.typing as npt

__all__ = ["HashEmbedder"]

_WORD = re.compile(r"\w+")


class HashEmbedder:
    """Each text becomes the normalised sum of hashed features (its lower-cased words, and their character
    trigrams at half weight) in ``dim`` dimensions (384 by default, like all-MiniLM-L6-v2).

    Texts sharing words are close, the same text gives the same vector in every process (blake2b, not
    ``hash``), and an empty text gets a fixed unit vector. It ranks by word overlap, not by meaning: keep the
    real model for tests where ranking quality matters. Called like a Chroma embedding function:
    ``embedder(["a text", ...])`` gives one float32 vector per text.
    """

    def __init__(self, dim: int = 384) -> None:
        if isinstance(dim, bool) or not isinstance(dim, int) or dim < 8:
            raise ValueError(f"dim must be an int of at least 8, got {dim!r}")
        self.dim = dim

    # Chroma's embedding-function protocol, so a collection can record and rebuild it (chromadb not imported).
    @staticmethod
    def name() -> str:
        return "memtend-hash"

    def get_config(self) -> dict[str, Any]:
        return {"dim": self.dim}

    @staticmethod
    def build_from_config(config: dict[str, Any]) -> HashEmbedder:
        return HashEmbedder(int(config.get("dim", 384)))

    @staticmethod
    def validate_config(config: dict[str, Any]) -> None:
        return None

    def validate_config_update(self, old_config: dict[str, Any], new_config: dict[str, Any]) -> None:
        return None

    def is_legacy(self) -> bool:
        return False

    def default_space(self) -> str:
        return "cosine"

    def supported_spaces(self) -> list[str]:
        return ["cosine", "l2", "ip"]

    def __call__(self, input: Sequence[str]) -> list[npt.NDArray[np.float32]]:
        return list(self.embed(input))

    def embed(self, texts: Sequence[str]) -> npt.NDArray[np.float32]:
        """An ``(len(texts), dim)`` array of unit vectors."""
        if isinstance(texts, str):
            raise TypeError("pass a list of texts, not one str")
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        for row, text in enumerate(texts):
            for feature, weight in self._features(str(text)):
                digest = int.from_bytes(hashlib.blake2b(feature.encode("utf-8"), digest_size=8).digest(), "big")
                out[row, digest % self.dim] += weight if digest >> 63 else -weight
            norm = float(np.linalg.norm(out[row]))
            if norm > 0:
                out[row] /= norm
            else:
                out[row, 0] = 1.0
        return out

    def embed_query(self, input: Sequence[str]) -> list[npt.NDArray[np.float32]]:
        return self(input)

    @staticmethod
    def _features(text: str) -> list[tuple[str, float]]:
        features: list[tuple[str, float]] = []
        for word in _WORD.findall(text.lower()):
            features.append((f"w:{word}", 1.0))
            padded = f"<{word}>"
            features.extend((f"c:{padded[i : i + 3]}", 0.5) for i in range(len(padded) - 2))
        return features
