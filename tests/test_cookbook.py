"""Every cookbook example runs to the end.

The framework examples are run (and their output checked in detail) by each adapter's own suite; running them
here again only doubled CI time. This module runs the rest and checks that every example is run somewhere.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
COOKBOOK = REPO / "cookbook"
# example -> the adapter test module that runs it and checks what it prints
RUN_BY_ADAPTER_SUITES = {
    "langchain_agent.py": "tests/langchain/test_lc_cookbooks.py",
    "langchain_chat.py": "tests/langchain/test_lc_cookbooks.py",
    "langgraph_agent.py": "tests/langgraph/test_lg_cookbook.py",
    "llamaindex_agent.py": "tests/llamaindex/test_examples.py",
}
QUICKSTART_LINES = ("contact.method: added", "a guess: kept", "refused: ['aws_access_key']")


def _run(script: Path, cwd: Path) -> str:
    done = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, cwd=cwd, timeout=300)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip(), "an example prints what it shows"
    return done.stdout


@pytest.mark.parametrize(
    "script",
    [p for p in sorted(COOKBOOK.glob("*.py")) if p.name not in RUN_BY_ADAPTER_SUITES],
    ids=lambda p: p.name,
)
def test_cookbook_example_runs(script: Path, tmp_path: Path) -> None:
    out = _run(script, tmp_path)
    if script.name == "quickstart.py":
        for line in QUICKSTART_LINES:
            assert line in out


@pytest.mark.parametrize("script,suite", sorted(RUN_BY_ADAPTER_SUITES.items()))
def test_framework_examples_are_run_by_their_adapter_suites(script: str, suite: str) -> None:
    assert (COOKBOOK / script).is_file(), f"{script} is listed here but no longer in cookbook/"
    assert f'"{script}"' in (REPO / suite).read_text(), (
        f"{suite} no longer runs cookbook/{script}; run it there or drop it from RUN_BY_ADAPTER_SUITES"
    )
