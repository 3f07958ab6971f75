"""The pure half of the injection detector's second opinion: which pieces of a text to compare in meaning with
instructions aimed at an agent, and how to judge the comparison. The encoding itself happens outside the
policies (``memtend.injection_meaning``), which hands :func:`looks_like_injection` a ``meaning`` check.

A piece reads like an injection when it is close to the bank of instructions aimed at an agent (cosine at
least ``MIN_SIMILARITY``) and closer to it than to the bank of ordinary text by ``MIN_MARGIN``. Both thresholds
were chosen on the tuning corpora only (see ``tests/benchmarks/injection.py``).
"""

from __future__ import annotations

import re
from collections.abc import Callable

import numpy as np

__all__ = ["MIN_MARGIN", "MIN_SIMILARITY", "Meaning", "chunks", "judge"]

Meaning = Callable[[str], bool]
"""A check of a text's meaning: ``True`` when it reads like an instruction aimed at an AI agent."""

MIN_SIMILARITY = 0.55
MIN_MARGIN = 0.10
_CHUNK_CHARS = 300
_MAX_CHUNKS = 6
_SENTENCES = re.compile(r"(?<=[.!?;])\s+|\n+")
# An instruction to an agent speaks to it or of it: a piece with none of these words is not compared.
_AGENT_CUES = re.compile(
    r"\b(?:you|your|yours|yourself|ai|a\.i\.|assistant|agent|agents|model|bot|bots|chatbot|llm|gpt|instructions?"
    r"|prompt|rules|user'?s?|du|dein\w*|dich|dir|ki|nutzer\w*|tu|toi|ton|ta|tes|vous|votre|vos|ia|utilisateur"
    r"|tú|tus|te|ti|usted|eres|asistente|agente|usuario)\b",
    re.IGNORECASE,
)
_WORDS = re.compile(r"[^\W\d_]{2,}")


def chunks(text: str) -> list[str]:
    """The pieces of ``text`` worth comparing: sentences packed into pieces of at most about ``_CHUNK_CHARS``
    characters that hold a few words and speak to or of an agent; of a long text, the ``_MAX_CHUNKS`` with the
    most such cues (a long document costs at most that many encodings). Unencodable characters become "?"."""
    out: list[str] = []
    for sentence in _SENTENCES.split(text):
        sentence = sentence.strip()
        if not sentence:
            continue
        while len(sentence) > _CHUNK_CHARS:
            out.append(sentence[:_CHUNK_CHARS])
            sentence = sentence[_CHUNK_CHARS:]
        if out and len(out[-1]) + len(sentence) < _CHUNK_CHARS // 2:
            out[-1] = f"{out[-1]} {sentence}"
        else:
            out.append(sentence)
    out = [piece for piece in out if len(_WORDS.findall(piece)) >= 3 and _AGENT_CUES.search(piece)]
    if len(out) > _MAX_CHUNKS:
        ranked = sorted(range(len(out)), key=lambda i: -len(_AGENT_CUES.findall(out[i])))[:_MAX_CHUNKS]
        out = [out[i] for i in sorted(ranked)]
    return [piece.encode("utf-8", "replace").decode("utf-8") for piece in out]


def judge(vectors: np.ndarray, agent_bank: np.ndarray, ordinary_bank: np.ndarray) -> tuple[float, float]:
    """(closeness to the agent bank, margin over the ordinary bank) of the most agent-like piece, from the
    pieces' unit vectors and the banks' (rows)."""
    if len(vectors) == 0:
        return 0.0, 0.0
    to_agent = (vectors @ agent_bank.T).max(axis=1)
    margin = to_agent - (vectors @ ordinary_bank.T).max(axis=1)
    best = int(np.argmax(np.where(to_agent >= MIN_SIMILARITY, margin, -np.inf)))
    return float(to_agent[best]), float(margin[best])


def reads_like(closeness: float, margin: float) -> bool:
    return closeness >= MIN_SIMILARITY and margin >= MIN_MARGIN
