"""The LlamaIndex cookbook example and the benchmark script run (small), so neither can rot."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from conftest import REPO, load_benchmark


@pytest.mark.slow
def test_cookbook_agent_learns_uses_after_restart_and_forgets(tmp_path: Path) -> None:
    script = REPO / "cookbook" / "llamaindex_agent.py"
    done = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, cwd=tmp_path, timeout=600)
    assert done.returncode == 0, done.stderr
    out = done.stdout
    assert "[monday] agent: Noted, I will remember that." in out
    assert "[tuesday] agent: - memtend keeps memory per user" in out
    assert "[wednesday] agent: Memtend keeps memory per user;" in out
    assert "learned, used after a restart, forgotten on erasure: ok" in out


def test_benchmark_smoke(tmp_path: Path) -> None:
    bench = load_benchmark("llamaindex_memory")
    figures = bench.run(n=30, gets=2, folder=tmp_path)
    assert figures["memtend"]["stored_messages"] == 32  # 30, then one follow-up before each of the 2 timed reads
    for side in ("memtend", "llamaindex"):
        assert figures[side]["aput_ms"] > 0 and figures[side]["aget_ms"] > 0 and figures[side]["aget_repeat_ms"] > 0
    bench.report(figures, 30)
