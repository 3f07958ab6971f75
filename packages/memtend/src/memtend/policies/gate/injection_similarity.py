"""The injection detector's second opinion: how close a text is in meaning to instructions aimed at an agent.

Each chunk of the text (a sentence or a few) is embedded with memtend's embedding model (all-MiniLM-L6-v2,
offline, the one already loaded for recall) and compared with two banks of examples written for memtend
(``injection_bank``): instructions to an agent, and ordinary text that shares their words. A chunk reads like
an injection when it is close to the first bank (cosine at least ``MIN_SIMILARITY``) and closer to it than to
the second by ``MIN_MARGIN``. The thresholds were chosen on the tuning corpora only (see
``tests/benchmarks/injection.py``). When the model cannot be loaded the check answers ``False`` and the
patterns decide alone.

The banks' vectors ship beside this module (``injection_bank.npz``, float16, tagged with a digest of the bank
texts), so the first check costs one encoding, not ~190; if the texts change and the file was not rebuilt
(``python -m memtend.policies.gate.injection_similarity``), the vectors are computed at first use instead.
"""

from __future__ import annotations

import hashlib
import json
import re
import threading
from pathlib import Path

import numpy as np

from memtend.policies.gate.injection_bank import ORDINARY, TO_THE_AGENT

__all__ = ["MIN_MARGIN", "MIN_SIMILARITY", "bank_digest", "reads_like_agent_instruction", "write_bank_vectors"]

MIN_SIMILARITY = 0.55
MIN_MARGIN = 0.10
_CHUNK_CHARS = 300
_SENTENCES = re.compile(r"(?<=[.!?;])\s+|\n+")
_MAX_CHUNKS = 6
# An instruction to an agent speaks to it or of it: a chunk with none of these words is not compared.
_AGENT_CUES = re.compile(
    r"\b(?:you|your|yours|yourself|ai|a\.i\.|assistant|agent|agents|model|bot|bots|chatbot|llm|gpt|instructions?"
    r"|prompt|rules|user'?s?|du|dein\w*|dich|dir|ki|nutzer\w*|tu|toi|ton|ta|tes|vous|votre|vos|ia|utilisateur"
    r"|tú|tus|te|ti|usted|eres|asistente|agente|usuario)\b",
    re.IGNORECASE,
)
_WORDS = re.compile(r"[^\W\d_]{2,}")

_lock = threading.Lock()
_banks: tuple[np.ndarray, np.ndarray] | None = None
_unavailable = False


VECTORS = Path(__file__).with_name("injection_bank.npz")


def bank_digest() -> str:
    """A digest of the bank texts: the shipped vectors are used only when they were built from these."""
    return hashlib.sha256(json.dumps([TO_THE_AGENT, ORDINARY]).encode("utf-8")).hexdigest()


def _shipped() -> tuple[np.ndarray, np.ndarray] | None:
    try:
        with np.load(VECTORS) as data:
            if str(data["digest"]) != bank_digest():
                return None
            return data["agent"].astype(np.float32), data["ordinary"].astype(np.float32)
    except (OSError, KeyError, ValueError):
        return None


def _computed() -> tuple[np.ndarray, np.ndarray]:
    from memtend.embeddings import embed

    return embed(list(TO_THE_AGENT)), embed(list(ORDINARY))


def _load_banks() -> tuple[np.ndarray, np.ndarray] | None:
    global _banks, _unavailable
    with _lock:
        if _banks is None and not _unavailable:
            try:
                _banks = _shipped() or _computed()
            except Exception:  # no model on this machine: the patterns decide alone
                _unavailable = True
        return _banks


def write_bank_vectors(path: Path = VECTORS) -> None:
    """Encode both banks and save them (float16) with their digest, for shipping beside this module."""
    agent, ordinary = _computed()
    np.savez_compressed(
        path, digest=np.array(bank_digest()), agent=agent.astype(np.float16), ordinary=ordinary.astype(np.float16)
    )


def chunks(text: str) -> list[str]:
    """The pieces of ``text`` worth comparing: sentences packed into pieces of at most about ``_CHUNK_CHARS``
    characters that hold a few words and speak to or of an agent; of a long text, the ``_MAX_CHUNKS`` with the
    most such cues (a long document costs at most that many encodings)."""
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


def scores(text: str) -> tuple[float, float]:
    """(closeness to the agent bank, margin over the ordinary bank) of the text's most agent-like chunk;
    ``(0, 0)`` when the model is unavailable or the text is empty."""
    banks = _load_banks()
    pieces = chunks(text)
    if banks is None or not pieces:
        return 0.0, 0.0
    from memtend.embeddings import embed

    agent_bank, ordinary_bank = banks
    try:
        vectors = embed(pieces)
    except Exception:  # the model went missing after the banks were read: the patterns decide alone
        return 0.0, 0.0
    to_agent = (vectors @ agent_bank.T).max(axis=1)
    margin = to_agent - (vectors @ ordinary_bank.T).max(axis=1)
    best = int(np.argmax(np.where(to_agent >= MIN_SIMILARITY, margin, -np.inf))) if len(pieces) > 1 else 0
    return float(to_agent[best]), float(margin[best])


def reads_like_agent_instruction(text: str) -> bool:
    """Is some chunk of ``text`` close in meaning to instructions aimed at an AI agent, and closer to them
    than to ordinary text?"""
    closeness, margin = scores(text)
    return closeness >= MIN_SIMILARITY and margin >= MIN_MARGIN


if __name__ == "__main__":
    write_bank_vectors()
    print(f"wrote {VECTORS} ({len(TO_THE_AGENT)} + {len(ORDINARY)} texts)")
