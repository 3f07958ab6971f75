"""The injection check's one-pass anchor scan finds exactly the rules an ``in`` test per anchor would: on texts of
anchors run together (overlapping, one a prefix of another, with case and characters whose lower case is longer)."""

from __future__ import annotations

import random

from memtend.policies.gate import injection


def _per_anchor(lower: str) -> list[int]:
    return [i for i, (anchors, _) in enumerate(injection._INJECTION) if any(a in lower for a in anchors)]


def test_the_one_pass_scan_finds_the_rules_an_in_test_per_anchor_finds() -> None:
    anchors = sorted(injection._ANCHORS)
    rnd = random.Random(16)
    glue = ["", "", " ", "x", "İ", "ß", "\n"]
    texts = [
        "",
        "the user prefers dark mode",
        *anchors,
        *("".join(rnd.choice(anchors) + rnd.choice(glue) for _ in range(rnd.randint(1, 8))) for _ in range(3000)),
        *(a[:-1] for a in anchors if len(a) > 1),  # an anchor cut short holds only the anchors inside it
    ]
    for text in texts:
        for lower in (text.lower(), text):
            assert injection._rules_anchored(lower) == _per_anchor(lower), lower
