"""SIGKILL after LangGraph acknowledged two steps in ``durability="sync"``, on a delegated ``MemtendSaver``
(checkpoints in a ``SqliteSaver`` file, the thread's registry in memtend on an embedded folder): a fresh process
reads both steps back, the thread's registry document is there, and the run resumes at the step that was running.

The worker (``_delegated_worker.py``) says ACKED from inside the third node, which LangGraph starts only once the
second step's checkpoint is committed; the test kills it there.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path

WORKER = Path(__file__).with_name("_delegated_worker.py")


def _env() -> dict[str, str]:
    return {**os.environ, "ANONYMIZED_TELEMETRY": "False", "PYTHONUNBUFFERED": "1"}


def test_what_sync_acknowledged_survives_a_sigkill_and_the_run_resumes(tmp_path: Path) -> None:
    proc = subprocess.Popen(
        [sys.executable, str(WORKER), str(tmp_path), "run"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=_env(),
    )
    assert proc.stdout is not None
    line = proc.stdout.readline().strip()
    assert line == "ACKED", proc.stderr.read() if proc.stderr else "the worker ended"
    proc.send_signal(signal.SIGKILL)
    proc.communicate(timeout=60)
    assert proc.returncode == -signal.SIGKILL

    out = subprocess.run(
        [sys.executable, str(WORKER), str(tmp_path), "resume"], capture_output=True, text=True, env=_env(), timeout=300
    )
    assert out.returncode == 0, out.stderr[-3000:]
    lines = {x.split(" ", 1)[0]: json.loads(x.split(" ", 1)[1]) for x in out.stdout.splitlines() if " " in x}
    state = lines["STATE"]
    assert state["messages"] == ["start", "step one done", "step two done"]
    assert state["next"] == ["three"]
    assert state["registered"] == ["t1"]
    assert lines["DONE"] == ["start", "step one done", "step two done", "step three done"]
