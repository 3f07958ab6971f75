"""Fixtures of the inspector tests (a module of their own, not a conftest: `from conftest import` in other folders
must keep finding tests/conftest.py): the inspector served on a thread over a real Memory, and Debian's Chromium
driven by Playwright (the browser on the machine: Playwright never downloads one here)."""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Iterator
from typing import Any

import pytest

IN_CI = os.environ.get("CI", "").strip().lower() in ("1", "true", "yes")  # as tests/conftest.py reads it
CHROMIUM = os.environ.get("MEMTEND_CHROMIUM", "/usr/bin/chromium")
# headless as root on a machine with a closed network: no sandbox, no GPU, and none of the background
# connections Chromium makes at start (they are refused here, many at a time)
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]


@pytest.fixture(name="inspector")
def inspector_fixture(memory: Any) -> Iterator[Any]:
    """The inspector over the test's Memory (each backend), served on a free loopback port of this process, as an
    application that holds the store would serve it."""
    from memtend.inspector import InspectorServer

    with InspectorServer(memory, host="127.0.0.1", port=0) as server:
        yield server


@pytest.fixture(name="browser", scope="module")
def browser_fixture() -> Iterator[Any]:
    """Chromium for one test module: Playwright's sync API holds an event loop on the main thread while it runs,
    which async tests of later modules must not meet."""
    if not (os.path.isfile(CHROMIUM) and os.access(CHROMIUM, os.X_OK)):
        if IN_CI:
            pytest.fail(f"{CHROMIUM} is missing: .ci/run installs Debian's chromium package")
        pytest.skip(f"{CHROMIUM} is missing: apt-get install -y chromium")
    from playwright.sync_api import sync_playwright

    profile = tempfile.mkdtemp(prefix="memtend-chromium-")
    with sync_playwright() as pw:
        # a persistent context takes the empty --user-data-dir the flags above go with
        context = pw.chromium.launch_persistent_context(
            profile, executable_path=CHROMIUM, headless=True, args=CHROMIUM_ARGS, accept_downloads=True
        )
        try:
            yield context
        finally:
            context.close()
    shutil.rmtree(profile, ignore_errors=True)


@pytest.fixture(name="page")
def page_fixture(browser: Any) -> Iterator[Any]:
    tab = browser.new_page()
    tab.set_default_timeout(20_000)
    yield tab
    tab.close()
