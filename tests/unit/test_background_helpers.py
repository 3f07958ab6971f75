"""Helper threads: a task is handed over only while a helper is free, never after close."""

from __future__ import annotations

import threading
from collections.abc import Callable
from concurrent.futures import Future
from typing import Any

from memtend.helpers import Helpers


def submit_soon(helpers: Helpers, fn: Callable[..., Any], *args: Any) -> Future[Any] | None:
    """Submit, retrying briefly: a helper is freed by a callback just after its last task's result is set."""
    for _ in range(200):
        future = helpers.submit(fn, *args)
        if future is not None:
            return future
        threading.Event().wait(0.01)
    return None


def test_tasks_run_on_free_helpers_and_the_rest_are_left_to_the_caller() -> None:
    helpers = Helpers(workers=2)
    release = threading.Event()
    busy = [helpers.submit(release.wait, 30) for _ in range(2)]
    assert all(f is not None for f in busy)
    assert helpers.submit(lambda: 1) is None  # both busy: the caller does it itself
    release.set()
    assert all(f is not None and f.result(timeout=30) for f in busy)
    again = submit_soon(helpers, lambda x: x + 1, 41)
    assert again is not None and again.result(timeout=30) == 42
    helpers.close()
    assert helpers.submit(lambda: 1) is None


def test_a_failing_task_frees_its_helper_and_reports_the_error() -> None:
    helpers = Helpers(workers=1)

    def fail() -> None:
        raise ValueError("boom")

    failed = helpers.submit(fail)
    assert failed is not None and isinstance(failed.exception(timeout=30), ValueError)
    later = submit_soon(helpers, lambda: "ok")
    assert later is not None and later.result(timeout=30) == "ok"
    helpers.close()
