"""The injection detector's second opinion, with the embedding model: is a text close in meaning to
instructions aimed at an AI agent?

The pieces of the text chosen by :func:`memtend.policies.gate.injection_similarity.chunks` are encoded with
memtend's embedding model (all-MiniLM-L6-v2, offline, the one already loaded for recall) and compared with two
banks of examples written for memtend (``memtend.policies.gate.injection_bank``): instructions to an agent, and
ordinary text that shares their words. Pass :func:`reads_like_agent_instruction` as ``meaning=`` to
``looks_like_injection`` or ``check_write``; ``Memory`` does, and the gate uses it for external text. When the
model cannot be loaded the check answers ``False`` and the patterns decide alone.

The banks' vectors ship beside this module (``injection_bank.npz``, float16, tagged with a digest of the bank
texts), so the first check costs one encoding, not ~190; if the texts change and the file was not rebuilt
(``uv run python -m memtend.injection_meaning``), the vectors are computed at first use instead.
"""

from __future__ import annotations

import hashlib
import json
import threading
from pathlib import Path

import numpy as np

from memtend.policies.gate.injection_bank import ORDINARY, TO_THE_AGENT
from memtend.policies.gate.injection_similarity import chunks, judge, reads_like

__all__ = [
    "VECTORS",
    "bank_digest",
    "close_to_agent_bank",
    "reads_like_agent_instruction",
    "scores",
    "write_bank_vectors",
]

VECTORS = Path(__file__).with_name("injection_bank.npz")

_lock = threading.Lock()
_banks: tuple[np.ndarray, np.ndarray] | None = None
_unavailable = False


def bank_digest() -> str:
    """A digest of the bank texts: the shipped vectors are used only when they were built from these."""
    return hashlib.sha256(json.dumps([TO_THE_AGENT, ORDINARY]).encode("utf-8")).hexdigest()


def shipped_vectors() -> tuple[np.ndarray, np.ndarray] | None:
    """The vectors shipped beside this module, if they were built from the current bank texts."""
    try:
        with np.load(VECTORS) as data:
            if str(data["digest"]) != bank_digest():
                return None
            return data["agent"].astype(np.float32), data["ordinary"].astype(np.float32)
    except (OSError, KeyError, ValueError):
        return None


def _computed() -> tuple[np.ndarray, np.ndarray]:
    from memtend.storage.embeddings import embed

    return embed(list(TO_THE_AGENT)), embed(list(ORDINARY))


def _load_banks() -> tuple[np.ndarray, np.ndarray] | None:
    global _banks, _unavailable
    with _lock:
        if _banks is None and not _unavailable:
            try:
                _banks = shipped_vectors() or _computed()
            except Exception:  # no model on this machine: the patterns decide alone
                _unavailable = True
        return _banks


def scores(text: str) -> tuple[float, float]:
    """(closeness to the agent bank, margin over the ordinary bank) of the text's most agent-like piece;
    ``(0, 0)`` when nothing in it speaks to an agent or the model is unavailable."""
    pieces = chunks(text)
    banks = _load_banks() if pieces else None
    if banks is None:
        return 0.0, 0.0
    from memtend.storage.embeddings import embed

    try:
        vectors = embed(pieces)
    except Exception:  # the model went missing after the banks were read: the patterns decide alone
        return 0.0, 0.0
    return judge(vectors, *banks)


def close_to_agent_bank(text: str) -> bool:
    """Is some piece of ``text`` close in meaning to instructions aimed at an AI agent, and closer to them than
    to ordinary text?"""
    return reads_like(*scores(text))


def reads_like_agent_instruction(text: str) -> bool:
    """The meaning check for external text: scored as an injection by the learned classifier
    (``memtend.injection_classifier``, every piece).

    The MiniLM bank (:func:`close_to_agent_bank`) no longer joins it: with each round by other hands held out in
    turn (``tests/benchmarks/injection_train.py``), the bank's flags added false flags on writing about assistants
    and attacks faster than recall the classifier lacked, so the threshold had to sit higher; without it mean
    recall at the same held-out false-flag bound rose from 0.836 to 0.870 (rounds 3-6), and no MiniLM encoding is
    spent on external text. The bank stays for comparison in the training script."""
    from memtend.injection_classifier import reads_like_injection

    return reads_like_injection(text)


def write_bank_vectors(path: Path = VECTORS) -> None:
    """Encode both banks and save them (float16) with their digest, for shipping beside this module."""
    agent, ordinary = _computed()
    np.savez_compressed(
        path, digest=np.array(bank_digest()), agent=agent.astype(np.float16), ordinary=ordinary.astype(np.float16)
    )


if __name__ == "__main__":
    write_bank_vectors()
    print(f"wrote {VECTORS} ({len(TO_THE_AGENT)} + {len(ORDINARY)} texts)")
