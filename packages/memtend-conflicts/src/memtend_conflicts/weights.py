"""The shipped weights of the learned reading of a newer statement (``memtend_conflicts.reading``): read from
``reading.npz`` beside this module (the reading itself does no I/O), written by
``tests/benchmarks/conflicts_reading_train.py --save``."""

from __future__ import annotations

import functools
from pathlib import Path

import numpy as np

from memtend_conflicts.reading import ChangeReading

__all__ = ["WEIGHTS", "load", "save", "shipped"]

WEIGHTS = Path(__file__).with_name("reading.npz")


def save(reading: ChangeReading, path: Path = WEIGHTS) -> None:
    np.savez(path, weights=reading.weights.astype(np.float32), bias=np.array(reading.bias, dtype=np.float64))


def load(path: Path = WEIGHTS) -> ChangeReading | None:
    """The reading stored at ``path``, or None when the file is missing or unreadable (the rules then decide alone)."""
    try:
        with np.load(path) as data:
            return ChangeReading(np.asarray(data["weights"], dtype=np.float64), float(data["bias"]))
    except (OSError, KeyError, ValueError):
        return None


@functools.cache
def shipped() -> ChangeReading | None:
    """The weights shipped with the package, loaded once."""
    return load()
