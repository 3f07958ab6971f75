"""Every cookbook example runs to the end."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

COOKBOOK = Path(__file__).resolve().parents[1] / "cookbook"


@pytest.mark.parametrize("script", sorted(COOKBOOK.glob("*.py")), ids=lambda p: p.name)
def test_cookbook_example_runs(script: Path, tmp_path: Path) -> None:
    done = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, cwd=tmp_path, timeout=300)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip(), "an example prints what it shows"


def test_quickstart_shows_the_policies(tmp_path: Path) -> None:
    done = subprocess.run(
        [sys.executable, str(COOKBOOK / "quickstart.py")], capture_output=True, text=True, cwd=tmp_path, check=True
    )
    assert "contact.method: added" in done.stdout
    assert "a guess: kept" in done.stdout
    assert "refused: ['aws_access_key']" in done.stdout
