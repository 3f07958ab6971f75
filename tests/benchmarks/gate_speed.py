"""Write-gate speed: ``find_sensitive`` on one long text (``store_speed.large_text``, ``--mb`` MB) and on short
chat-like messages, the whole-text scans (``old``) against the prefilter path (``new``), in one process with the
repetitions interleaved; medians, with the minimum beside them, and the load average before and after.

    uv run python tests/benchmarks/gate_speed.py [--reps 5] [--mb 8] [--short-reps 200] [--json]

``run(reps, mb, short_reps)`` returns the figures as a dict (a smoke test calls it small).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
if str(HERE) not in sys.path:
    sys.path.insert(0, str(HERE))

from store_speed import large_text  # noqa: E402

# Chat turns as an assistant's users write them: plain prose, numbers, dates, a few with a secret or a near miss.
MESSAGES = [
    "Can you summarise the meeting notes from Tuesday? We agreed to move the launch to 14 March and Dana will own "
    "the rollout plan. Please keep it short, three bullet points at most, and mention the budget of 12,500 EUR that "
    "finance approved last week. Also remind me to send the slides to the partners before Friday noon.",
    "I tried the deploy again after refund ticket 42 was closed on 2024-05-01 but the staging build still fails "
    "with exit code 137. The logs say the container ran out of memory at step 7 of 9. Could the new image be "
    "bigger? It went from 812 MB to 1.3 GB between versions 2.4.1 and 2.5.0 according to the registry.",
    "My flight lands at 6:45 pm at gate B12 and the hotel is about 25 minutes away by taxi. Book a table for two "
    "at the Italian place near the station for 8:30, and if they are full try the sushi bar on Rue Lafayette. "
    "I'd rather not spend more than 80 dollars. Thanks, and please add it to my calendar with a reminder.",
    "Here's the error I get when I run the tests: AssertionError: expected 3 items, got 2 (test_orders.py line "
    "118). It started after I merged the branch that changed the discount rules. The failing case uses a cart "
    "with one item at 19.99 and a coupon for 10 percent. What should I check first in the pricing module?",
    "Remember that my daughter's school play is on the 21st at 5 pm and that she is allergic to peanuts, so the "
    "party snacks need to be nut free. Also the wifi password at the cabin is 'jumping jacks' if anyone asks, "
    "and the gate code changed last month. Order the cake from the bakery on 3rd Street by Thursday.",
    "Charge it to my card 4111 1111 1111 1111, expiry 09/28, and send the receipt to the office address. The "
    "invoice should say Acme Research Ltd, VAT number GB123456789, and reference PO-2291. If the payment fails, "
    "call me instead of retrying, I have had the bank block the card twice this year for unusual activity.",
]


def _time(fn: Any) -> float:
    start = time.perf_counter()
    fn()
    return time.perf_counter() - start


def _figures(seconds: list[float], unit: float) -> dict[str, float]:
    return {"median": round(statistics.median(seconds) * unit, 2), "min": round(min(seconds) * unit, 2)}


def run(reps: int = 5, mb: float = 8, short_reps: int = 200) -> dict[str, Any]:
    from memtend.policies.gate.prefilter import LONG_TEXT
    from memtend.policies.gate.sensitive import DEFAULT_POLICY, _find

    load_before = os.getloadavg()
    long = large_text(mb)
    paths = {"old": None, "new": LONG_TEXT}
    for at in paths.values():  # warm up (imports, compiled patterns) and check the two agree
        assert _find(long, DEFAULT_POLICY, at) == _find(long, DEFAULT_POLICY, None)
    long_s: dict[str, list[float]] = {name: [] for name in paths}
    for rep in range(reps):
        for name in sorted(paths, reverse=bool(rep % 2)):
            text = f"{rep} {long}"  # a new text each time
            long_s[name].append(_time(lambda text=text, at=paths[name]: _find(text, DEFAULT_POLICY, at)))
    short_s: dict[str, list[float]] = {name: [] for name in paths}
    for rep in range(short_reps):
        for name in sorted(paths, reverse=bool(rep % 2)):
            at = paths[name]
            short_s[name].append(_time(lambda at=at: [_find(m, DEFAULT_POLICY, at) for m in MESSAGES]) / len(MESSAGES))
    return {
        "long_ms": {name: _figures(s, 1e3) for name, s in long_s.items()},
        "short_us": {name: _figures(s, 1e6) for name, s in short_s.items()},
        "long_chars": len(long),
        "short_chars": round(statistics.mean(len(m) for m in MESSAGES)),
        "load": {"before": [round(x, 2) for x in load_before], "after": [round(x, 2) for x in os.getloadavg()]},
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reps", type=int, default=5)
    parser.add_argument("--mb", type=float, default=8)
    parser.add_argument("--short-reps", type=int, default=200)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    out = run(args.reps, args.mb, args.short_reps)
    if args.json:
        print(json.dumps(out, indent=2))
        return
    print(f"load average before {out['load']['before']}, after {out['load']['after']}")
    for name in ("old", "new"):
        lm, sm = out["long_ms"][name], out["short_us"][name]
        print(
            f"{name}: {out['long_chars']:,} chars {lm['median']} ms (min {lm['min']}); "
            f"short message ({out['short_chars']} chars) {sm['median']} us (min {sm['min']})"
        )


if __name__ == "__main__":
    main()
