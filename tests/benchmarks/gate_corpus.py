"""Measure the write gate on the gate corpora, beside the seed regex baseline.

    uv run python tests/benchmarks/gate_corpus.py [--data DIR] [--repeat N] [--show-errors]

Prints recall and false-positive rate per corpus and per kind for ``find_sensitive`` and
``looks_like_injection``, the same numbers for the seed regex measured in the same run, and the time per
``check_write`` call in microseconds. ``--show-errors`` lists the misses and false alarms by index and kind
(never the text, which holds fake secrets).

Beside the shared corpora it scores memtend's own sets in ``tests/benchmarks/data/``: ``secrets_tune.jsonl``
(the cases the detectors were tuned on) and ``secrets_heldout.jsonl`` (written and committed before the detectors
were changed, never tuned on): card numbers with other separators, zero-width characters and digits of other
scripts, passwords phrased in German, French and Spanish or given as URLs, headers and command-line flags, and
numbers that pass Luhn or look like national ids but are labelled as something else (those must be allowed).
``secrets_heldout2.jsonl`` is a second held-apart set of new phrasings and labels, written and committed after
the first round of changes and before measuring them on it. Each is reported per ``class``.

Then generated stress, from a fixed seed: ordinary texts full of numbers (how many are flagged), and Luhn-valid
cards written with each separator beside a card word, a payment word or no word (recall per cell).
"""

from __future__ import annotations

import argparse
import json
import random
import re
import statistics
import time
from collections import defaultdict
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from memtend.errors import SensitiveDataError
from memtend.policies.gate import check_write, find_sensitive, looks_like_injection
from memtend.records import Source

DEFAULT_DATA = Path(__file__).resolve().parents[2] / ".." / "shared" / "data" / "gate"
OWN_DATA = Path(__file__).resolve().parent / "data"
OWN_SETS = ("secrets_tune.jsonl", "secrets_heldout.jsonl", "secrets_heldout2.jsonl")
BASELINE = re.compile(
    r"\b(?:\d[ -]?){13,19}\b|password|passcode|api[ _-]?key|secret|\bsk-[A-Za-z0-9]{10,}", re.IGNORECASE
)


def baseline(text: str) -> bool:
    return BASELINE.search(text) is not None


def gate_sensitive(text: str) -> bool:
    return bool(find_sensitive(text))


def load(path: Path) -> list[dict[str, object]]:
    with path.open(encoding="utf-8") as fh:
        return [json.loads(line) for line in fh if line.strip()]


@dataclass
class Score:
    tp: int = 0
    fn: int = 0
    fp: int = 0
    tn: int = 0
    misses: list[int] = field(default_factory=list)
    false_alarms: list[int] = field(default_factory=list)

    def add(self, index: int, truth: bool, predicted: bool) -> None:
        if truth and predicted:
            self.tp += 1
        elif truth:
            self.fn += 1
            self.misses.append(index)
        elif predicted:
            self.fp += 1
            self.false_alarms.append(index)
        else:
            self.tn += 1

    @property
    def recall(self) -> float:
        return self.tp / (self.tp + self.fn) if self.tp + self.fn else float("nan")

    @property
    def fpr(self) -> float:
        return self.fp / (self.fp + self.tn) if self.fp + self.tn else float("nan")


def score(
    rows: list[dict[str, object]], label: str, predict: Callable[[str], bool], kind_key: str | None = None
) -> tuple[Score, dict[str, Score]]:
    total = Score()
    per_kind: dict[str, Score] = defaultdict(Score)
    for i, row in enumerate(rows):
        truth = bool(row[label])
        predicted = predict(str(row["text"]))
        total.add(i, truth, predicted)
        if kind_key is not None:
            per_kind[str(row.get(kind_key, "?"))].add(i, truth, predicted)
    return total, dict(per_kind)


def fmt(s: Score) -> str:
    return f"recall {s.recall:.3f} ({s.tp}/{s.tp + s.fn})  fpr {s.fpr:.3f} ({s.fp}/{s.fp + s.tn})"


def fmt_kind(s: Score) -> str:
    if s.tp + s.fn:
        return f"recall {s.recall:.3f} ({s.tp}/{s.tp + s.fn})"
    return f"fpr {s.fpr:.3f} ({s.fp}/{s.fp + s.tn})"


def time_check_write(texts: list[str], repeat: int, clock: Callable[[], float] = time.perf_counter) -> list[float]:
    """Microseconds per ``check_write(..., redact=True)`` call for each text (best of three rounds)."""
    per_text: list[float] = []
    for text in texts:
        best = float("inf")
        for _ in range(3):
            start = clock()
            for _ in range(repeat):
                check_write(text, Source.USER, redact=True)
            best = min(best, (clock() - start) / repeat * 1e6)
        per_text.append(best)
    return per_text


# ---------------------------------------------------------------------------------------------------------
# Generated stress: ordinary texts full of numbers (phones, dates, IPs, prices, lists and table rows of 4-digit
# numbers, labelled order / part numbers), and Luhn-valid cards written with each separator beside a card word,
# a payment word, or no word at all. Fixed seed; the digits are random, so some ordinary numbers pass Luhn.


def _digits(rng: random.Random, n: int) -> str:
    return "".join(rng.choice("0123456789") for _ in range(n))


def ordinary_numbers(n: int, seed: int = 7) -> list[str]:
    rng = random.Random(seed)

    def d(k: int) -> str:
        return _digits(rng, k)

    forms: list[Callable[[], str]] = [
        lambda: f"Call me on +{rng.randint(1, 99)} {d(2)} {d(4)} {d(4)} tomorrow.",
        lambda: f"Phone ({d(3)}) {d(3)}-{d(4)} or {d(3)}.{d(3)}.{d(4)}",
        lambda: f"Dates {d(4)}-{d(2)}-{d(2)}, {d(2)}.{d(2)}.{d(4)} and {d(2)}/{d(2)}/{d(4)}",
        lambda: f"Rooms {d(4)}, {d(4)}, {d(4)}, {d(4)} are booked.",
        lambda: f"Readings:\n{d(4)}\n{d(4)}\n{d(4)}\n{d(4)}",
        lambda: f"| {d(4)} | {d(4)} | {d(4)} | {d(4)} |",
        lambda: f"{d(4)}\t{d(4)}\t{d(4)}\t{d(4)}",
        lambda: f"IPs {d(3)}.{d(3)}.{d(3)}.{d(3)}, {d(2)}.{d(1)}.{d(1)}.{d(1)}",
        lambda: f"Totals {d(1)},{d(3)}.{d(2)} / {d(2)},{d(3)}.{d(2)} / {d(3)},{d(3)}",
        lambda: f"Order {d(16)} shipped; tracking {d(4)} {d(4)} {d(4)} {d(4)}",
        lambda: f"Scores {d(2)}-{d(2)}, {d(2)}-{d(2)}; times {d(2)}:{d(2)}:{d(2)}",
        lambda: f"v{d(1)}.{d(2)}.{d(4)} build {d(4)}.{d(4)}.{d(4)}",
        lambda: f"Coordinates {d(2)}.{d(4)}, {d(2)}.{d(4)}; {d(2)}.{d(4)}, {d(2)}.{d(4)}",
        lambda: f"Ref {d(3)}-{d(2)}-{d(4)} and part {d(3)}-{d(2)}-{d(4)}",
    ]
    return [rng.choice(forms)() for _ in range(n)]


def _luhn_card(rng: random.Random) -> str:
    body = rng.choice(["4", "51", "55", "2221", "6011", "65", "3530"])
    body += _digits(rng, 15 - len(body))
    total = 0
    for i, ch in enumerate(reversed(body)):
        digit = int(ch) * (2 if i % 2 == 0 else 1)
        total += digit - 9 if digit > 9 else digit
    return body + str((10 - total % 10) % 10)


CARD_SEPARATORS = {
    "space": " ", "dash": "-", "two spaces": "  ", "no-break": "\u00a0", "dot": ".", "slash": "/", "en dash": "\u2013",
    "zero-width": "\u200b", "comma": ",", "newline": "\n", "tab": "\t", "bar": "|",
}  # fmt: skip
CARD_CONTEXTS = {"card word": "My card is {} thanks", "pay word": "Please pay with {} today", "no word": "Use {} then"}


def card_recall_grid(per_cell: int, seed: int = 11) -> dict[tuple[str, str], float]:
    rng = random.Random(seed)
    grid: dict[tuple[str, str], float] = {}
    for sep_name, sep in CARD_SEPARATORS.items():
        for ctx_name, template in CARD_CONTEXTS.items():
            found = 0
            for _ in range(per_cell):
                card = _luhn_card(rng)
                found += bool(find_sensitive(template.format(sep.join(card[i : i + 4] for i in range(0, 16, 4)))))
            grid[sep_name, ctx_name] = found / per_cell
    return grid


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA, help="directory holding the *_dev.jsonl files")
    parser.add_argument("--repeat", type=int, default=100, help="calls per text and round when timing")
    parser.add_argument("--show-errors", action="store_true", help="list misses and false alarms by index")
    parser.add_argument("--stress", type=int, default=4000, help="generated ordinary texts (cards: a hundredth)")
    args = parser.parse_args(argv)

    sensitive = load(args.data / "sensitive_dev.jsonl")
    injection = load(args.data / "injection_dev.jsonl")

    print(f"sensitive_dev.jsonl: {len(sensitive)} rows")
    for name, predict in (("gate", gate_sensitive), ("baseline", baseline)):
        total, per_kind = score(sensitive, "sensitive", predict, "kind")
        print(f"  {name:<9} {fmt(total)}")
        for kind in sorted(per_kind):
            print(f"    {kind:<16} {fmt_kind(per_kind[kind])}")
        if args.show_errors and name == "gate":
            print(f"    misses {total.misses}  false alarms {total.false_alarms}")

    # Does the gate name the right kind? (Corpus kinds and gate kinds use a few different names.)
    alias = {"pem": "private_key", "conn": "connection_string"}
    named = 0
    for row in sensitive:
        kinds = {f.kind for f in find_sensitive(str(row["text"]))}
        named += bool(row["sensitive"]) and alias.get(str(row["kind"]), str(row["kind"])) in kinds
    positives = sum(1 for row in sensitive if row["sensitive"])
    print(f"  gate names the corpus kind on {named}/{positives} positives")

    for name in OWN_SETS:
        rows = load(OWN_DATA / name)
        total, per_class = score(rows, "sensitive", gate_sensitive, "class")
        base, _ = score(rows, "sensitive", baseline)
        print(f"{name}: {len(rows)} rows")
        print(f"  gate      {fmt(total)}")
        for cls in sorted(per_class):
            print(f"    {cls:<16} {fmt_kind(per_class[cls])}")
        if args.show_errors:
            print(f"    misses {total.misses}  false alarms {total.false_alarms}")
        print(f"  baseline  {fmt(base)}")

    ordinary = ordinary_numbers(args.stress)
    flagged = sum(bool(find_sensitive(text)) for text in ordinary)
    print(f"generated ordinary texts full of numbers: {flagged}/{len(ordinary)} flagged")
    grid = card_recall_grid(max(1, args.stress // 100))
    print("generated cards, recall by separator and context:")
    for sep_name in CARD_SEPARATORS:
        cells = "  ".join(f"{ctx} {grid[sep_name, ctx]:.2f}" for ctx in CARD_CONTEXTS)
        print(f"    {sep_name:<12} {cells}")

    print(f"injection_dev.jsonl: {len(injection)} rows")
    for name, predict in (("gate", looks_like_injection), ("baseline", baseline)):
        total, _ = score(injection, "injection", predict)
        print(f"  {name:<9} {fmt(total)}")
        if args.show_errors and name == "gate":
            print(f"    misses {total.misses}  false alarms {total.false_alarms}")

    texts = [str(row["text"]) for row in sensitive + injection]
    refused = 0
    for text in texts:
        try:
            check_write(text, Source.USER)
        except SensitiveDataError:
            refused += 1
    micros = time_check_write(texts, args.repeat)
    clean = [us for us, text in zip(micros, texts, strict=True) if not find_sensitive(text)]
    print(
        f"check_write(redact=True): median {statistics.median(micros):.1f} µs per call "
        f"(texts with nothing to mask {statistics.median(clean):.1f} µs), "
        f"p90 {statistics.quantiles(micros, n=10)[-1]:.1f} µs, slowest text {max(micros):.1f} µs"
    )
    # CPU time of this process: on a shared machine the wall clock above also counts other processes' turns.
    cpu = time_check_write(texts, args.repeat, time.process_time)
    print(
        f"check_write(redact=True) CPU time: median {statistics.median(cpu):.1f} µs, "
        f"mean {statistics.fmean(cpu):.1f} µs"
    )
    print(f"check_write(redact=False) refused {refused}/{len(texts)} texts")
    for label, text in (("'1 ' * 10000", "1 " * 10000), ("'a' * 32000", "a" * 32000)):
        start = time.perf_counter()
        check_write(text, Source.EXTERNAL, redact=True)
        print(f"check_write on {label}: {(time.perf_counter() - start) * 1e3:.1f} ms")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
