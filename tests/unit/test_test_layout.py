"""The suite's layout: pytest imports test modules by their base name (tests/ has no packages), so two test
files with one name in different folders break collection of the whole suite; and the fast tier (tests/unit)
holds product tests only: the checks of the benchmark sets live in tests/datasets, the benchmarks' smoke tests
beside the tests of what they measure. This catches both in the fast tier."""

from __future__ import annotations

import re
from collections import defaultdict
from pathlib import Path

TESTS = Path(__file__).resolve().parents[1]
UNIT = TESTS / "unit"
# What a fast-tier test never names: a benchmark script or its data sets (tests/benchmarks/...).
BENCHMARK_USE = re.compile(r"\bload_benchmark\b|\bbenchmarks\b|\bheldapart_rows\b")


def test_every_module_under_tests_has_a_unique_base_name() -> None:
    seen: dict[str, list[str]] = defaultdict(list)
    for path in TESTS.rglob("*.py"):
        if path.name != "conftest.py" and "__pycache__" not in path.parts:
            seen[path.stem].append(str(path.relative_to(TESTS)))
    clashes = {name: paths for name, paths in seen.items() if len(paths) > 1}
    assert not clashes, f"rename so each base name is unique (prefix with the folder's framework): {clashes}"


def test_the_fast_tier_reads_no_benchmark_and_no_benchmark_set() -> None:
    found = {
        str(path.relative_to(TESTS)): match.group(0)
        for path in sorted(UNIT.rglob("*.py"))
        if path != Path(__file__).resolve() and (match := BENCHMARK_USE.search(path.read_text(encoding="utf-8")))
    }
    assert found == {}, f"move these to tests/datasets (set checks) or beside what they measure (smoke): {found}"
    assert (TESTS / "datasets" / "heldapart_rows.py").is_file(), "the set checks' home is tests/datasets"
