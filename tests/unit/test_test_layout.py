"""The suite's layout: pytest imports test modules by their base name (tests/ has no packages), so two test
files with one name in different folders break collection of the whole suite. This catches it in the fast tier."""

from __future__ import annotations

from collections import defaultdict
from pathlib import Path

TESTS = Path(__file__).resolve().parents[1]


def test_every_module_under_tests_has_a_unique_base_name() -> None:
    seen: dict[str, list[str]] = defaultdict(list)
    for path in TESTS.rglob("*.py"):
        if path.name != "conftest.py" and "__pycache__" not in path.parts:
            seen[path.stem].append(str(path.relative_to(TESTS)))
    clashes = {name: paths for name, paths in seen.items() if len(paths) > 1}
    assert not clashes, f"rename so each base name is unique (prefix with the folder's framework): {clashes}"
