"""The package's layers, read from its imports (ast, nothing imported):

* only the storage layer imports chromadb: ``memtend.storage`` (a module or a package) and the embedding module,
  which wraps Chroma's own embedding function and model cache and is storage's embedder;
* policies (``memtend.policies.*``) import no storage and nothing that does I/O, directly or through another
  memtend module, and call no ``open``/``print``/``input``;
* storage is the only builder of Chroma where-filters: no other module passes ``where=`` / ``where_document=``
  to a collection call or writes a ``$and`` / ``$or`` / ``$in`` / ``$nin`` filter (memtend.testing's hostile
  ids aside);
* no import cycle among memtend modules (module-level imports; ``if TYPE_CHECKING:`` blocks excluded).
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pytest

SRC = Path(__file__).resolve().parents[1] / "packages" / "memtend" / "src"
PACKAGE = SRC / "memtend"

CHROMA_ALLOWED = ("memtend.storage", "memtend.embeddings")
# Modules whose import means I/O (files, processes, network, databases, the model runtime).
IO_MODULES = frozenset(
    "chromadb onnxruntime tokenizers httpx requests urllib http socket ssl subprocess multiprocessing sqlite3 "
    "shutil tempfile os pathlib io fcntl glob mmap select selectors asyncio concurrent".split()
)
IO_CALLS = frozenset({"open", "print", "input"})
# Known violations being removed by their owners (issue 9); allowed, not required, so the fix lands freely.
KNOWN_CHROMA_IMPORTERS: dict[str, str] = {}
KNOWN_CYCLES: dict[frozenset[str], str] = {}


@dataclass
class ModuleInfo:
    name: str
    path: Path
    imports: set[str] = field(default_factory=set)  # every import, anywhere in the module
    top_level: set[str] = field(default_factory=set)  # imports executed when the module loads
    io_calls: set[str] = field(default_factory=set)


def module_name(path: Path) -> str:
    parts = list(path.relative_to(SRC).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _resolve(node: ast.ImportFrom, current: str, is_package: bool) -> str:
    if node.level == 0:
        return node.module or ""
    base = current.split(".") if is_package else current.split(".")[:-1]
    base = base[: len(base) - (node.level - 1)]
    return ".".join([*base, node.module] if node.module else base)


def _targets(node: ast.Import | ast.ImportFrom, current: str, is_package: bool, known: set[str]) -> Iterator[str]:
    if isinstance(node, ast.Import):
        yield from (alias.name for alias in node.names)
        return
    module = _resolve(node, current, is_package)
    for alias in node.names:  # `from memtend.policies import gate` imports the module memtend.policies.gate
        sub = f"{module}.{alias.name}"
        yield sub if sub in known else module


def _is_type_checking(node: ast.If) -> bool:
    test = node.test
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def _top_level_imports(body: list[ast.stmt]) -> Iterator[ast.Import | ast.ImportFrom]:
    """Imports run at load: the module body and its if/try/with blocks, not functions, classes' methods or
    TYPE_CHECKING blocks."""
    for node in body:
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            yield node
        elif isinstance(node, ast.If):
            if not _is_type_checking(node):
                yield from _top_level_imports(node.body)
            yield from _top_level_imports(node.orelse)
        elif isinstance(node, ast.Try):
            for block in (node.body, node.orelse, node.finalbody, *(h.body for h in node.handlers)):
                yield from _top_level_imports(block)
        elif isinstance(node, (ast.With, ast.ClassDef)):
            yield from _top_level_imports(node.body)


def _in_type_checking(tree: ast.Module) -> set[int]:
    ids: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and _is_type_checking(node):
            ids.update(id(n) for stmt in node.body for n in ast.walk(stmt))
    return ids


def scan() -> dict[str, ModuleInfo]:
    paths = {module_name(p): p for p in sorted(PACKAGE.rglob("*.py"))}
    known = set(paths)
    modules: dict[str, ModuleInfo] = {}
    for name, path in paths.items():
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
        is_package = path.name == "__init__.py"
        info = ModuleInfo(name, path)
        typing_only = _in_type_checking(tree)
        for node in ast.walk(tree):
            if isinstance(node, (ast.Import, ast.ImportFrom)) and id(node) not in typing_only:
                info.imports.update(_targets(node, name, is_package, known))
            elif isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in IO_CALLS:
                info.io_calls.add(node.func.id)
        for node in _top_level_imports(tree.body):
            info.top_level.update(t for t in _targets(node, name, is_package, known) if t in known)
        modules[name] = info
    return modules


MODULES = scan()


def _root(name: str) -> str:
    return name.split(".")[0]


def test_the_scan_sees_the_package() -> None:
    assert {"memtend", "memtend.storage", "memtend.records", "memtend.policies.retrieval"} <= set(MODULES)
    assert "chromadb" in {_root(i) for i in MODULES["memtend.storage"].imports}  # the scan finds real imports
    assert "memtend.errors" in MODULES["memtend.records"].top_level


def _allowed_chroma(name: str) -> bool:
    return any(name == allowed or name.startswith(allowed + ".") for allowed in CHROMA_ALLOWED)


def test_only_storage_imports_chromadb() -> None:
    importers = {name for name, info in MODULES.items() if any(_root(i) == "chromadb" for i in info.imports)}
    unexpected = sorted(name for name in importers if not _allowed_chroma(name) and name not in KNOWN_CHROMA_IMPORTERS)
    assert unexpected == [], f"{unexpected} import chromadb; only {CHROMA_ALLOWED} may (go through storage)"


def _doing_io() -> dict[str, str]:
    """memtend modules that do I/O, with why: a direct I/O import or call, or a memtend import that does."""
    why: dict[str, str] = {}
    for name, info in MODULES.items():
        roots = sorted({_root(i) for i in info.imports} & IO_MODULES)
        if roots:
            why[name] = f"imports {', '.join(roots)}"
        elif info.io_calls:
            why[name] = f"calls {', '.join(sorted(info.io_calls))}"
    changed = True
    while changed:
        changed = False
        for name, info in MODULES.items():
            if name in why:
                continue
            for target in sorted(info.imports):
                if target in why and not target.startswith(name + "."):
                    why[name] = f"imports {target} ({why[target]})"
                    changed = True
                    break
    return why


def test_policies_import_no_storage_and_do_no_io() -> None:
    io = _doing_io()
    problems = []
    for name, info in MODULES.items():
        if not name.startswith("memtend.policies"):
            continue
        if name in io:
            problems.append(f"{name}: {io[name]}")
        storage = sorted(i for i in info.imports if i == "memtend.storage" or i.startswith("memtend.storage."))
        if storage:
            problems.append(f"{name}: imports {storage}")
    assert problems == []


def test_the_io_rule_can_fail() -> None:
    io = _doing_io()
    assert "memtend.storage" in io and "memtend.cli" in io
    assert "memtend.records" not in io and "memtend.transcript" not in io


FILTER_KEYS = frozenset({"$and", "$or", "$in", "$nin"})
COLLECTION_CALLS = frozenset({"get", "query", "delete", "update", "upsert", "count", "peek"})
FILTER_BUILDERS_ALLOWED = ("memtend.storage", "memtend.testing")


def _filter_building(path: Path) -> list[str]:
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Dict):
            keys = {k.value for k in node.keys if isinstance(k, ast.Constant) and isinstance(k.value, str)}
            found.extend(f"line {node.lineno}: a {key} filter" for key in sorted(keys & FILTER_KEYS))
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in COLLECTION_CALLS:
            found.extend(
                f"line {node.lineno}: {node.func.attr}({kw.arg}=...)"
                for kw in node.keywords
                if kw.arg in ("where", "where_document")
            )
    return found


def test_only_storage_builds_where_filters() -> None:
    problems = {
        name: found
        for name, info in MODULES.items()
        if not any(name == a or name.startswith(a + ".") for a in FILTER_BUILDERS_ALLOWED)
        and (found := _filter_building(info.path))
    }
    assert problems == {}, f"where-filters built outside storage: {problems}"
    assert _filter_building(MODULES["memtend.storage"].path), "the filter scan finds storage's own filters"


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components with more than one module (or a module importing itself): Tarjan."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    counter = 0

    def visit(node: str) -> None:
        nonlocal counter
        index[node] = low[node] = counter
        counter += 1
        stack.append(node)
        on_stack.add(node)
        for nxt in sorted(graph.get(node, ())):
            if nxt not in index:
                visit(nxt)
                low[node] = min(low[node], low[nxt])
            elif nxt in on_stack:
                low[node] = min(low[node], index[nxt])
        if low[node] == index[node]:
            component = []
            while True:
                top = stack.pop()
                on_stack.discard(top)
                component.append(top)
                if top == node:
                    break
            if len(component) > 1 or node in graph.get(node, ()):
                found.append(sorted(component))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return found


def test_no_import_cycle() -> None:
    graph = {name: set(info.top_level) for name, info in MODULES.items()}
    cycles = [c for c in _cycles(graph) if frozenset(c) not in KNOWN_CYCLES]
    assert cycles == [], f"import cycles among memtend modules: {cycles}"


@pytest.mark.parametrize(
    ("graph", "expected"),
    [
        ({"a": {"b"}, "b": {"c"}, "c": set()}, []),
        ({"a": {"b"}, "b": {"a"}}, [["a", "b"]]),
        ({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}, [["a", "b", "c"]]),
        ({"a": {"a"}}, [["a"]]),
    ],
)
def test_the_cycle_finder(graph: dict[str, set[str]], expected: list[list[str]]) -> None:
    assert _cycles(graph) == expected
