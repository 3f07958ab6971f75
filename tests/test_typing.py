"""The packages type-check: mypy over packages/memtend and the three adapters (config in the root pyproject,
strict on the core's public modules), and a user's code sees memtend's types (py.typed)."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
PACKAGE = REPO / "packages" / "memtend" / "src" / "memtend"
MUST_BE_STRICT = (
    "memtend",
    "memtend.errors",
    "memtend.records",
    "memtend.transcripts.messages",
    "memtend.working.memory_tool",
)


def mypy(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "mypy", "--config-file", str(REPO / "pyproject.toml"), *args],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=900,
    )


def test_py_typed_ships() -> None:
    assert (PACKAGE / "py.typed").is_file()
    for adapter in ("langchain", "langgraph", "llamaindex"):
        assert (REPO / "integrations" / adapter / "src" / f"memtend_{adapter}" / "py.typed").is_file(), adapter


def test_mypy_checks_the_core_and_every_adapter() -> None:
    if sys.version_info >= (3, 11):
        import tomllib
    else:  # pragma: no cover
        pytest.skip("tomllib needs Python 3.11")
    files = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))["tool"]["mypy"]["files"]
    expected = {"packages/memtend/src/memtend"} | {
        f"integrations/{a}/src/memtend_{a}" for a in ("langchain", "langgraph", "llamaindex")
    }
    assert expected <= set(files)


def test_public_modules_are_strict() -> None:
    if sys.version_info >= (3, 11):
        import tomllib
    else:  # pragma: no cover
        pytest.skip("tomllib needs Python 3.11")
    config = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))["tool"]["mypy"]
    strict = [o for o in config["overrides"] if o.get("disallow_untyped_defs") and o.get("warn_return_any")]
    assert len(strict) == 1
    assert set(MUST_BE_STRICT) <= set(strict[0]["module"])
    for name in ("results", "documents"):  # strict as soon as they exist
        if (PACKAGE / f"{name}.py").exists() or (PACKAGE / name).is_dir():
            assert f"memtend.{name}" in strict[0]["module"]


@pytest.mark.slow  # mypy over the core and the adapters: ~30-70 s cold
def test_mypy_passes_on_the_package() -> None:
    out = mypy()
    assert out.returncode == 0, f"mypy found problems (config: root pyproject [tool.mypy]):\n{out.stdout}{out.stderr}"


@pytest.mark.slow
def test_users_see_memtend_types(tmp_path: Path) -> None:
    user_code = tmp_path / "user_code.py"
    user_code.write_text(
        textwrap.dedent(
            """
            from memtend import Message, compact_transcript

            message: Message = Message.user("hello")
            wrong: int = Message.user("hello")
            result = compact_transcript([message], force=True)
            turns: str = result.removed
            """
        ),
        encoding="utf-8",
    )
    out = mypy("--strict", "--no-incremental", str(user_code))
    lines = [line for line in out.stdout.splitlines() if "error:" in line]
    assert out.returncode == 1, out.stdout
    assert len(lines) == 2 and ":5:" in lines[0] and ":7:" in lines[1], out.stdout
