"""The README's examples stay true: every Python block parses, everything it imports exists, and the core example
runs as written (on a fresh store) and shows what its comments say."""

from __future__ import annotations

import ast
import contextlib
import importlib
import io
import re
from pathlib import Path

import pytest
from memtend import Memory

README = Path(__file__).resolve().parents[1] / "README.md"
BLOCKS = re.findall(r"```python\n(.*?)```", README.read_text(encoding="utf-8"), flags=re.S)


def _tree(source: str) -> ast.Module:
    flags = ast.PyCF_ONLY_AST | ast.PyCF_ALLOW_TOP_LEVEL_AWAIT  # the LlamaIndex example awaits, as in a notebook
    tree = compile(source, "README.md", "exec", flags=flags)
    assert isinstance(tree, ast.Module)
    return tree


def test_the_readme_has_its_examples() -> None:
    assert len(BLOCKS) >= 4, "the core example and one per framework"
    imported = {node.module for block in BLOCKS for node in ast.walk(_tree(block)) if isinstance(node, ast.ImportFrom)}
    assert {"memtend", "memtend_langchain", "memtend_langgraph", "memtend_llamaindex"} <= imported


@pytest.mark.parametrize("number", range(len(BLOCKS)))
def test_every_name_a_readme_example_imports_exists(number: int) -> None:
    for node in ast.walk(_tree(BLOCKS[number])):
        if isinstance(node, ast.ImportFrom) and node.module:
            module = importlib.import_module(node.module)
            missing = [alias.name for alias in node.names if not hasattr(module, alias.name)]
            assert not missing, f"README block {number + 1}: {node.module} has no {missing}"


def test_the_core_example_runs_as_written(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    core = next(block for block in BLOCKS if "mem.erase_user" in block and "alice.recall" in block)
    monkeypatch.setenv("MEMTEND_PATH", str(tmp_path / "store"))  # "embedded Chroma under ./.memtend", here fresh
    printed = io.StringIO()
    namespace: dict[str, object] = {}
    with contextlib.redirect_stdout(printed):
        exec(compile(core, "README.md", "exec"), namespace)  # the README's own example, as a reader would run it
    mem = namespace["mem"]
    assert isinstance(mem, Memory)
    try:
        assert "Prefers short answers" in printed.getvalue().splitlines()[0], "the note ranks first, as shown"
        assert not mem.user("alice").export()["records"], "erased: nothing of alice is left"
    finally:
        mem.close()
