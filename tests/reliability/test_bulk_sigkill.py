"""SIGKILL between two Chroma calls of an adapter's bulk write (a LangChain history's ``add_messages``, a
LangGraph store ``batch``): after the store is opened again the write is whole (its journal, sent with its first
call, is rolled forward), never a first chunk alone.

A worker (``_bulk_worker.py``) starts the write on an embedded folder and says MIDWAY right after its first call to
the documents collection; the test kills it there, then a fresh process opens the folder and counts what is there.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

WORKER = Path(__file__).with_name("_bulk_worker.py")
ROWS = 1_000  # three calls of the worker's 400-row batches


def _env() -> dict[str, str]:
    return {**os.environ, "ANONYMIZED_TELEMETRY": "False", "PYTHONUNBUFFERED": "1"}


def _dump(folder: Path) -> tuple[dict[str, int], str]:
    out = subprocess.run(
        [sys.executable, str(WORKER), str(folder), "dump"], capture_output=True, text=True, env=_env(), timeout=300
    )
    assert out.returncode == 0, out.stderr[-3000:]
    line = next(x for x in out.stdout.splitlines() if x.startswith("STATE "))
    return json.loads(line.split(" ", 1)[1]), out.stderr


def _kill_midway(folder: Path, mode: str) -> None:
    proc = subprocess.Popen(
        [sys.executable, str(WORKER), str(folder), mode, str(ROWS)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=_env(),
    )
    assert proc.stdout is not None
    line = proc.stdout.readline().strip()
    assert line == "MIDWAY", proc.stderr.read() if proc.stderr else "the worker ended"
    proc.send_signal(signal.SIGKILL)
    proc.communicate(timeout=60)
    assert proc.returncode == -signal.SIGKILL


@pytest.mark.parametrize(("mode", "field"), [("history", "messages"), ("store", "items")])
def test_sigkill_between_the_calls_of_a_bulk_write_leaves_it_whole(tmp_path: Path, mode: str, field: str) -> None:
    folder = tmp_path / "store"
    _kill_midway(folder, mode)
    state, log = _dump(folder)
    assert state[field] == ROWS, f"{state[field]} of {ROWS} rows visible: not all or nothing"
    assert state["journals"] == 0, "the journal outlived the open that finished it"
    assert "finishing an interrupted document write" in log  # the kill did land between the calls
    again, _ = _dump(folder)  # a second open finds nothing to do and the same rows
    assert again == state
