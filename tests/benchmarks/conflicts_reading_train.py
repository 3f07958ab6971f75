"""Train the learned reading of a newer statement (``memtend_conflicts.reading``) on the tuning sets.

Each tuning pair's newer statement is one example: 1 when it replaces the older (a change), 0 for a look-alike. A
logistic regression over its embedding (all-MiniLM-L6-v2, as the index holds it) with an L2 penalty chosen by
cross-validation held out by domain (a set without domains one fold, as in ``conflicts_cv.py``). Prints the held-out
area under the curve per set, and with ``--save`` writes the weights trained on every tuning set
(``memtend_conflicts/reading.npz``).
Only tuning sets: never the fresh or held-apart sets.

    uv run python tests/benchmarks/conflicts_reading_train.py [--save]
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
from conflicts import SPLITS, TUNING, load

PENALTIES = (0.03, 0.1, 0.3, 1.0)
PENALTY = 0.3  # chosen by the held-out area under the curve over PENALTIES


def fit(x: np.ndarray, y: np.ndarray, penalty: float = PENALTY) -> tuple[np.ndarray, float]:
    """L2-penalised logistic regression (the bias unpenalised) by Newton's method: (weights, bias)."""
    n, d = x.shape
    design = np.hstack([x, np.ones((n, 1))])
    ridge = penalty * np.eye(d + 1)
    ridge[d, d] = 0.0
    theta = np.zeros(d + 1)
    for _ in range(50):
        p = 1.0 / (1.0 + np.exp(-np.clip(design @ theta, -60, 60)))
        gradient = design.T @ (p - y) + ridge @ theta
        hessian = (design * (p * (1 - p))[:, None]).T @ design + ridge
        step = np.linalg.solve(hessian, gradient)
        theta -= step
        if np.abs(step).max() < 1e-8:
            break
    return theta[:d], float(theta[d])


def auc(scores: np.ndarray, labels: np.ndarray) -> float:
    positive, negative = scores[labels], scores[~labels]
    if not len(positive) or not len(negative):
        return float("nan")
    above = (positive[:, None] > negative[None, :]).mean()
    return float(above + 0.5 * (positive[:, None] == negative[None, :]).mean())


def examples(rows: Sequence[dict[str, Any]]) -> tuple[np.ndarray, np.ndarray]:
    """The newer statements' embeddings and labels (1: a change)."""
    from memtend.storage.embeddings import embed

    return np.asarray(embed([row["new"] for row in rows]), dtype=np.float64), np.array([row["change"] for row in rows])


def folds(rows: Sequence[dict[str, Any]]) -> np.ndarray:
    """Each pair's fold: its domain, else its set."""
    return np.array([row.get("domain") or row["set"] for row in rows])


def out_of_fold(x: np.ndarray, y: np.ndarray, groups: np.ndarray, penalty: float) -> np.ndarray:
    """Each example's logit from the regression trained without its fold."""
    out = np.zeros(len(y))
    for group in np.unique(groups):
        held = groups == group
        weights, bias = fit(x[~held], y[~held].astype(np.float64), penalty)
        out[held] = x[held] @ weights + bias
    return out


def main(argv: list[str] | None = None) -> int:
    import argparse

    from memtend_conflicts.reading import ChangeReading
    from memtend_conflicts.weights import save

    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--save", action="store_true", help="write the weights trained on every tuning set")
    args = parser.parse_args(argv)
    rows = [dict(row, set=name) for name in TUNING for row in load(SPLITS[name])]
    x, y = examples(rows)
    groups, sets = folds(rows), np.array([row["set"] for row in rows])
    for penalty in PENALTIES:
        held = out_of_fold(x, y, groups, penalty)
        per_set = " ".join(f"{name}={auc(held[sets == name], y[sets == name]):.2f}" for name in TUNING)
        print(f"penalty {penalty:<5} held out by domain: AUC {auc(held, y):.3f}  ({per_set})")
    if args.save:
        weights, bias = fit(x, y.astype(np.float64), PENALTY)
        save(ChangeReading(weights, bias))
        print(f"saved, penalty {PENALTY}, trained on {len(rows)} newer statements")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
