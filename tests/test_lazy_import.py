"""`import memtend` stays light: chromadb, numpy and the embedding model load only when a name needs them."""

from __future__ import annotations

import ast
import json
import shutil
import subprocess
import sys
from pathlib import Path

import memtend
import pytest

INIT = Path(memtend.__file__)
HEAVY = ("chromadb", "numpy", "onnxruntime", "tokenizers", "detect_secrets")


def loaded_after(code: str) -> dict[str, bool]:
    """Which heavy modules a fresh interpreter holds after running ``code``."""
    probe = f"{code}\nimport json, sys\nprint(json.dumps({{m: m in sys.modules for m in {HEAVY!r}}}))"
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True, timeout=120)
    return json.loads(out.stdout.strip().splitlines()[-1])  # type: ignore[no-any-return]


@pytest.mark.parametrize(
    "code",
    [
        "import memtend",
        "from memtend import Message, ToolCall, MemtendError, Source, Kind",
        "from memtend import StructuredSummary, compact_transcript",
        "import sys\nfrom memtend.cli import main\ntry:\n    main(['--help'])\nexcept SystemExit:\n    pass",
    ],
)
def test_light_imports_leave_chromadb_and_the_model_out(code: str) -> None:
    loaded = loaded_after(code)
    assert loaded == dict.fromkeys(HEAVY, False), loaded


@pytest.mark.slow
def test_memory_still_loads_chromadb_when_asked_for() -> None:
    assert loaded_after("from memtend import Memory")["chromadb"]  # the probe can see a heavy import


def test_the_memtend_command_prints_help() -> None:
    command = shutil.which("memtend") or str(Path(sys.executable).parent / "memtend")
    out = subprocess.run([command, "--help"], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0 and "usage: memtend" in out.stdout


def _type_checking_imports() -> dict[str, str]:
    tree = ast.parse(INIT.read_text(encoding="utf-8"))
    found: dict[str, str] = {}
    for node in tree.body:
        if isinstance(node, ast.If) and isinstance(node.test, ast.Name) and node.test.id == "TYPE_CHECKING":
            for statement in node.body:
                assert isinstance(statement, ast.ImportFrom) and statement.module is not None
                found.update({alias.asname or alias.name: statement.module for alias in statement.names})
    return found


def test_lazy_map_matches_the_type_checking_imports_and_all() -> None:
    lazy: dict[str, str] = memtend._LAZY
    assert _type_checking_imports() == lazy
    errors = {name for name in memtend.__all__ if name not in lazy}
    assert all(name.endswith("Error") for name in errors)  # only errors are imported eagerly
    assert set(memtend.__all__) == errors | set(lazy)
    assert len(memtend.__all__) == len(set(memtend.__all__))


def test_every_exported_name_resolves_to_its_module() -> None:
    for name in memtend.__all__:
        value = getattr(memtend, name)
        module = memtend._LAZY.get(name, "memtend.errors")
        assert getattr(sys.modules[module], name) is value
    assert set(memtend.__all__) <= set(dir(memtend))
    with pytest.raises(AttributeError, match="no attribute 'Nope'"):
        memtend.Nope  # type: ignore[attr-defined]  # noqa: B018
