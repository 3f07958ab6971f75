"""The README and the pages under docs/ stay true: every Python block parses, everything it imports exists, the
core example runs as written (on a fresh store) and shows what its comments say, every relative link reaches a file
(and a heading, when it names one), every module or name of memtend a page names in code exists, and the README
keeps the test command CI reads and stays a front door."""

from __future__ import annotations

import ast
import contextlib
import importlib
import io
import re
from pathlib import Path
from typing import Any

import pytest
from memtend import Memory

REPO = Path(__file__).resolve().parents[1]
README = REPO / "README.md"
PAGES = [README, REPO / "CHANGELOG.md", *sorted((REPO / "docs").glob("*.md"))]
FENCE = re.compile(r"```python\n(.*?)```", flags=re.S)
BLOCKS = FENCE.findall(README.read_text(encoding="utf-8"))
PAGE_BLOCKS = [
    (page, number, block)
    for page in PAGES
    for number, block in enumerate(FENCE.findall(page.read_text(encoding="utf-8")), start=1)
]
RESULTS = REPO / "tests" / "benchmarks" / "RESULTS.md"  # linked from the pages; its links are checked too
README_MAX_LINES = 240  # a front door: what memtend is, install, the two commands, one example each, links


def _tree(source: str, where: str = "README.md") -> ast.Module:
    flags = ast.PyCF_ONLY_AST | ast.PyCF_ALLOW_TOP_LEVEL_AWAIT  # the LlamaIndex example awaits, as in a notebook
    tree = compile(source, where, "exec", flags=flags)
    assert isinstance(tree, ast.Module)
    return tree


def test_the_readme_has_its_examples() -> None:
    assert len(BLOCKS) >= 4, "the core example and one per framework"
    imported = {node.module for block in BLOCKS for node in ast.walk(_tree(block)) if isinstance(node, ast.ImportFrom)}
    assert {"memtend", "memtend_langchain", "memtend_langgraph", "memtend_llamaindex"} <= imported


@pytest.mark.parametrize(
    ("page", "number", "block"),
    PAGE_BLOCKS,
    ids=[f"{page.relative_to(REPO)}:{number}" for page, number, _ in PAGE_BLOCKS],
)
def test_every_name_an_example_imports_exists(page: Path, number: int, block: str) -> None:
    where = f"{page.relative_to(REPO)} block {number}"
    for node in ast.walk(_tree(block, where)):  # (parsing it is the first check)
        if isinstance(node, ast.ImportFrom) and node.module:
            module = importlib.import_module(node.module)
            missing = [alias.name for alias in node.names if not hasattr(module, alias.name)]
            assert not missing, f"{where}: {node.module} has no {missing}"
        elif isinstance(node, ast.Import):
            for alias in node.names:
                importlib.import_module(alias.name)


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


def _block(*needles: str) -> str:
    return next(block for block in BLOCKS if all(needle in block for needle in needles))


def test_the_langchain_example_runs_as_written(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from langchain_core.language_models import BaseChatModel
    from langchain_core.messages import AIMessage, BaseMessage
    from langchain_core.outputs import ChatGeneration, ChatResult

    class NotingModel(BaseChatModel):
        """A chat model that answers "Noted." (no network)."""

        @property
        def _llm_type(self) -> str:
            return "noting"

        def bind_tools(self, tools: Any, **kwargs: Any) -> NotingModel:  # type: ignore[override]
            return self

        def _generate(self, messages: list[BaseMessage], *args: Any, **kwargs: Any) -> ChatResult:
            return ChatResult(generations=[ChatGeneration(message=AIMessage("Noted."))])

    monkeypatch.setenv("MEMTEND_PATH", str(tmp_path / "store"))
    namespace: dict[str, Any] = {"model": NotingModel(), "tools": []}  # what the README leaves to the reader
    exec(compile(_block("MemtendMiddleware(mem)"), "README.md", "exec"), namespace)
    mem = namespace["mem"]
    try:
        logged = [r.text for r in mem.user("alice").list()]
        assert logged == ["I prefer short answers."], "the middleware logged what alice said, under alice"
    finally:
        mem.close()


def test_the_langgraph_example_runs_as_written(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from langgraph.graph import START, MessagesState, StateGraph

    builder = StateGraph(MessagesState)
    builder.add_node("reply", lambda state: {"messages": [("ai", "hi")]})
    builder.add_edge(START, "reply")
    monkeypatch.setenv("MEMTEND_PATH", str(tmp_path / "store"))
    namespace: dict[str, Any] = {"builder": builder}
    exec(compile(_block("MemtendSaver(mem)"), "README.md", "exec"), namespace)
    mem = namespace["mem"]
    try:
        state = namespace["graph"].get_state({"configurable": {"thread_id": "t1", "user_id": "alice"}})
        assert [m.content for m in state.values["messages"]] == ["hello", "hi"], "the thread's checkpoint is kept"
        assert mem.user("alice").export()["documents"], "under alice, in her document store"
    finally:
        mem.close()


# ------------------------------------------------------------------------------------------------ links and names
LINK = re.compile(r"\[[^\]]*\]\(([^)\s]+)\)")


def _anchor(heading: str) -> str:
    """The anchor GitHub gives a heading: lower case, punctuation dropped, spaces as hyphens."""
    return re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")


def _anchors(page: Path) -> set[str]:
    text = re.sub(r"```.*?```", "", page.read_text(encoding="utf-8"), flags=re.S)  # no headings inside code
    return {_anchor(m.group(1)) for m in re.finditer(r"^#{1,6} (.+)$", text, flags=re.M)}


def _links(page: Path) -> list[str]:
    text = re.sub(r"```.*?```", "", page.read_text(encoding="utf-8"), flags=re.S)
    return [m.group(1) for m in LINK.finditer(text) if not re.match(r"[a-z]+:", m.group(1))]


def test_the_readme_links_to_the_docs() -> None:
    linked = {(README.parent / link.split("#")[0]).resolve() for link in _links(README) if link.split("#")[0]}
    pages = {p.resolve() for p in (REPO / "docs").glob("*.md")}
    assert pages, "docs/ holds the pages the README sends readers to"
    assert pages <= linked, f"pages under docs/ the README does not link: {sorted(p.name for p in pages - linked)}"


@pytest.mark.parametrize("page", [*PAGES, RESULTS], ids=lambda p: str(p.relative_to(REPO)))
def test_every_relative_link_resolves(page: Path) -> None:
    broken = []
    for link in _links(page):
        target, _, anchor = link.partition("#")
        path = (page.parent / target).resolve() if target else page
        if not path.exists():
            broken.append(f"{link}: no such file")
        elif anchor and path.suffix == ".md" and anchor not in _anchors(path):
            broken.append(f"{link}: no heading with that anchor in {path.relative_to(REPO)}")
    assert not broken, f"{page.relative_to(REPO)}: {broken}"


NAMED = re.compile(r"`(memtend(?:_[a-z]+)?(?:\.[A-Za-z_]\w*)+)")  # `memtend.x.y` or `memtend_langgraph.X` in prose
FILE_NAMES = {"memtend.lock"}  # files a page names, not modules (the folder lock's file)


def _exists(dotted: str) -> bool:
    """True when ``dotted`` is a module, or a name reached from one (``memtend.documents.DocumentStore``)."""
    parts = dotted.split(".")
    for cut in range(len(parts), 0, -1):
        try:
            found: object = importlib.import_module(".".join(parts[:cut]))
        except ModuleNotFoundError:
            continue
        for name in parts[cut:]:
            if not hasattr(found, name):
                return False
            found = getattr(found, name)
        return True
    return False


@pytest.mark.parametrize(
    "page", [p for p in PAGES if p.name != "CHANGELOG.md"], ids=lambda p: str(p.relative_to(REPO))
)  # (the changelog names what was renamed or removed, on purpose)
def test_every_memtend_name_a_page_mentions_exists(page: Path) -> None:
    named = sorted(set(NAMED.findall(page.read_text(encoding="utf-8"))))
    missing = [dotted for dotted in named if dotted not in FILE_NAMES and not _exists(dotted)]
    assert not missing, f"{page.relative_to(REPO)} names what memtend does not have (moved or renamed?): {missing}"


SCRIPT = re.compile(r"(?<![\w/])((?:tests|cookbook)/[\w/]+\.py|test_[\w*]+\.py)")  # a script or test a page names


@pytest.mark.parametrize("page", PAGES, ids=lambda p: str(p.relative_to(REPO)))
def test_every_script_a_page_names_exists(page: Path) -> None:
    named = sorted(set(SCRIPT.findall(page.read_text(encoding="utf-8"))))
    missing = [n for n in named if not ((REPO / n).is_file() if "/" in n else any((REPO / "tests").rglob(n)))]
    assert not missing, f"{page.relative_to(REPO)} names scripts or tests that are not there: {missing}"


# ------------------------------------------------------------------------------------------------ the front door
def test_the_readme_keeps_the_test_command_ci_runs() -> None:
    lines = README.read_text(encoding="utf-8").splitlines()
    at = lines.index("<!-- test-command -->")  # .ci/run reads the first line after it that is not a fence
    command = next(line for line in lines[at + 1 :] if not line.startswith("```"))
    assert command == "uv run pytest -n 2"  # both cores: the suite runs on two pytest-xdist workers


def test_the_readme_stays_a_front_door() -> None:
    lines = README.read_text(encoding="utf-8").splitlines()
    assert len(lines) <= README_MAX_LINES, f"README.md has {len(lines)} lines; move detail to docs/"
