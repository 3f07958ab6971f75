"""The code stays ruff clean: the same check developers run, as part of the test suite CI runs."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def test_ruff_clean() -> None:
    ruff = shutil.which("ruff") or str(Path(sys.executable).parent / "ruff")
    done = subprocess.run([ruff, "check", "."], cwd=REPO, capture_output=True, text=True)
    assert done.returncode == 0, done.stdout + done.stderr
