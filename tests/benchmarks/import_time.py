"""Measure how long `import memtend` takes, beside `import chromadb`, in the same run.

    uv run python tests/benchmarks/import_time.py [--repeat N]

Each measurement is a fresh interpreter (``python -c ...``), wall time from start to exit, so it includes the
interpreter's own start-up; ``python -c pass`` is printed as the floor. The commands run interleaved, N rounds,
and the median of each is printed with its ratio to ``import chromadb``. Also reports whether each memtend
command left chromadb out of ``sys.modules``.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import time

PROBE = "\nimport sys; print('chromadb' in sys.modules)"
HELP = "from memtend.cli import main\ntry:\n    main(['--help'])\nexcept SystemExit:\n    pass"
COMMANDS: dict[str, str] = {
    "python -c pass": "pass",
    "import memtend": "import memtend",
    "from memtend import Message": "from memtend import Message",
    "memtend --help": HELP,
    "import chromadb": "import chromadb",
}


def _once(code: str) -> tuple[float, bool]:
    start = time.perf_counter()
    out = subprocess.run([sys.executable, "-c", code + PROBE], capture_output=True, text=True, check=True)
    elapsed = time.perf_counter() - start
    return elapsed, out.stdout.strip().splitlines()[-1] == "True"


def run(repeat: int = 5) -> dict[str, dict[str, float | bool]]:
    """Median seconds per command over ``repeat`` interleaved rounds, its ratio to ``import chromadb``, and
    whether chromadb was loaded."""
    times: dict[str, list[float]] = {name: [] for name in COMMANDS}
    chroma_loaded: dict[str, bool] = {}
    for _ in range(repeat):
        for name, code in COMMANDS.items():
            elapsed, loaded = _once(code)
            times[name].append(elapsed)
            chroma_loaded[name] = loaded
    medians = {name: statistics.median(values) for name, values in times.items()}
    peer = medians["import chromadb"]
    return {
        name: {"seconds": medians[name], "vs_chromadb": medians[name] / peer, "chromadb_loaded": chroma_loaded[name]}
        for name in COMMANDS
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=5, help="rounds (default 5)")
    parser.add_argument("--json", action="store_true", help="print the figures as JSON")
    args = parser.parse_args(argv)
    figures = run(args.repeat)
    if args.json:
        print(json.dumps(figures, indent=2))
        return 0
    print(f"median of {args.repeat} fresh interpreters each (wall time, start-up included)")
    print(f"{'command':<30} {'seconds':>8} {'x chromadb':>11}  chromadb loaded")
    for name, row in figures.items():
        print(f"{name:<30} {row['seconds']:>8.3f} {row['vs_chromadb']:>11.2f}  {row['chromadb_loaded']}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
