"""The LangChain cookbook examples show what they promise: a fact carries over to the next session, a
correction replaces it, a secret is refused or masked, erasure leaves nothing."""

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


def common_promises(out: str, carried: str) -> None:
    assert f"{carried}: Your favourite colour is teal." in out
    assert "after the correction: Your favourite colour is green." in out
    assert "secret stored anywhere: False" in out
    assert "left after erasure: 0" in out


@pytest.mark.slow
def test_chat_cookbook_keeps_its_promises(tmp_path: Path) -> None:
    out = run("langchain_chat.py", tmp_path)
    common_promises(out, "next session knows")
    # capture alone writes long-term memory: the fact once (an app-side log would add the sentence beside it)
    assert "kept from monday: ['favourite colour: teal']" in out
    assert "kept from wednesday's question: []" in out
    assert "wednesday's history keeps: My AWS key is [REDACTED:aws_access_key], keep it for me." in out
    assert "bob sees: I don't know yet." in out
    assert "history after erasure: 0" in out


@pytest.mark.slow
def test_agent_cookbook_keeps_its_promises(tmp_path: Path) -> None:
    out = run("langchain_agent.py", tmp_path)
    common_promises(out, "next thread knows")
    assert "I did not save that: refused" in out
    assert "AKIAIOSFODNN7EXAMPLE" not in out.split("alice: Remember that my AWS key is")[1].split("\n", 1)[1]
    assert "asked again: I don't know yet." in out
    assert "monday thread before erasure: 4 messages" in out
    assert "monday thread after erasure: 0 messages" in out
