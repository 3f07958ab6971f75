"""The LangGraph cookbook agent remembers across threads and a restart, and forgets on erasure."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

SCRIPT = Path(__file__).resolve().parents[2] / "cookbook" / "langgraph_agent.py"


@pytest.mark.slow
def test_the_agent_remembers_restarts_and_forgets(tmp_path: Path) -> None:
    done = subprocess.run([sys.executable, str(SCRIPT)], capture_output=True, text=True, cwd=tmp_path, timeout=300)
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    answers = [line.strip() for line in lines if line.strip().startswith("agent:")]
    assert answers == [
        "agent: Bonjour ! Voici la réponse.",  # thread 1: the preference is kept, then used
        "agent: Bonjour ! Voici la réponse.",  # thread 2, new process: remembered
        "agent: Hello! Here is the answer.",  # thread 3, after erasure: forgotten
    ]
    assert "thread 1 still has 4 checkpoints after the restart" in done.stdout
    assert "thread 1 has 0 checkpoints after erasure" in done.stdout
