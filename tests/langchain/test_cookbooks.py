"""The LangChain cookbook examples show what they promise: a fact carries over to the next session, a
correction replaces it, a secret is refused, erasure leaves nothing."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

COOKBOOK = Path(__file__).resolve().parents[2] / "cookbook"


def run(script: str, cwd: Path) -> str:
    done = subprocess.run(
        [sys.executable, str(COOKBOOK / script)], capture_output=True, text=True, cwd=cwd, timeout=300
    )
    assert done.returncode == 0, done.stderr
    return done.stdout


@pytest.mark.slow
@pytest.mark.parametrize("script", ["langchain_chat.py", "langchain_agent.py"])
def test_cookbook_keeps_its_promises(script: str, tmp_path: Path) -> None:
    out = run(script, tmp_path)
    assert "next session knows: Your favourite colour is teal." in out or (
        "next thread knows: Your favourite colour is teal." in out
    )
    assert "after the correction: Your favourite colour is green." in out
    assert "secret stored anywhere: False" in out
    assert "left after erasure: 0" in out
    assert "AKIAIOSFODNN7EXAMPLE" not in out.split("secret stored anywhere")[1]


@pytest.mark.slow
def test_chat_cookbook_refuses_the_secret_and_keeps_users_apart(tmp_path: Path) -> None:
    out = run("langchain_chat.py", tmp_path)
    assert "refused: ['aws_access_key']" in out
    assert "bob sees: I don't know yet." in out
    assert "history after erasure: 0" in out


@pytest.mark.slow
def test_agent_cookbook_answers_nothing_after_erasure(tmp_path: Path) -> None:
    out = run("langchain_agent.py", tmp_path)
    assert "I did not save that: refused" in out
    assert "asked again: I don't know yet." in out
