"""The package's layers, read from its imports (ast, nothing imported).

Three kinds of import are read: at module level (run when the module loads), inside a function (run on call)
and under ``if TYPE_CHECKING:`` (read by type checkers only); ``importlib.import_module("...")`` with a constant
counts as an import where it is called, and ``from memtend import Memory`` as an import of ``memtend.memory``.

* only the storage package imports chromadb (any kind of import), its embedding module included;
* policies and the transcript tier (:data:`PURE_PACKAGES`) import no storage (any kind) and nothing that does
  I/O, directly or through another memtend module, and call no ``open``/``print``/``input``;
* storage is the only builder of Chroma where-filters: no other module passes ``where=`` / ``where_document=``
  to a collection call or writes a ``$and`` / ``$or`` / ``$in`` / ``$nin`` filter (memtend.testing's hostile
  ids aside);
* no import cycle among memtend modules, counting all three kinds (and none at all of module-level imports);
* lower layers (every module but the facade, :data:`FACADE`) never import ``memtend.memory`` or
  ``memtend.user_memory``: they take what they need of a Memory through a small protocol;
* the core imports neither optional distribution (:data:`OPTIONAL_DISTRIBUTIONS`): they plug in by entry point;
* no module is over :data:`MAX_MODULE_LINES` lines, and at most :data:`MAX_ROOT_MODULES` modules sit at the
  package root (``__init__`` aside).

The ``KNOWN_*`` allowlists below hold exactly the violations on main when each rule landed (issue 29 removes
them): a listed violation is allowed, not required, so its fix lands freely; a violation not listed fails.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pytest

SRC = Path(__file__).resolve().parents[1] / "packages" / "memtend" / "src"
PACKAGE = SRC / "memtend"

# The facade: the modules an application imports, which may import anything below them. A module here or under
# a prefix ending in "." is facade; every other module of the package is a lower layer.
FACADE = (
    "memtend",
    "memtend.memory",
    "memtend.user_memory",
    "memtend.connect",  # open_memory: a Memory from a folder or server URL, for applications and adapters
    "memtend.cli",
    "memtend.prompt_context",
    "memtend.testing.",
    "memtend.inspector.",  # the memory inspector: a web page over a Memory, built on its public API only
)
# What no lower layer imports (nor anything inside them, should they become packages).
MEMORY_MODULES = ("memtend.memory", "memtend.user_memory")
OPTIONAL_DISTRIBUTIONS = ("memtend_injection", "memtend_conflicts", "memtend_otel")
MAX_MODULE_LINES = 800
# Packages of pure code: no storage, no I/O (the transcript tier is pure too: messages, compaction, summaries).
PURE_PACKAGES = ("memtend.policies", "memtend.transcripts")
MAX_ROOT_MODULES = 15
CHROMA_ALLOWED = ("memtend.storage",)
# Modules whose import means I/O (files, processes, network, databases, the model runtime).
IO_MODULES = frozenset(
    "chromadb onnxruntime tokenizers httpx requests urllib http socket ssl subprocess multiprocessing sqlite3 "
    "shutil tempfile os pathlib io fcntl glob mmap select selectors asyncio concurrent".split()
)
IO_CALLS = frozenset({"open", "print", "input"})

# Known violations being removed by their owners (issues 9 and 29); allowed, not required, so the fix lands freely.
# Each held exactly the violations on main when its rule landed (13bc13d); the re-housing emptied the first four.
KNOWN_CHROMA_IMPORTERS: dict[str, str] = {}
# Imports inside a cycle, importer -> imported. A cycle passes while each import inside it is listed; an unlisted
# import that closes a cycle, or joins a module to one, fails.
KNOWN_CYCLE_IMPORTS: dict[str, frozenset[str]] = {}
# Lower layers importing memtend.memory / memtend.user_memory: module -> the one it imports.
KNOWN_MEMORY_IMPORTERS: dict[str, str] = {}
# Modules over MAX_MODULE_LINES, with their length when listed.
KNOWN_LONG_MODULES: dict[str, int] = {}
# Root modules that leave the core or move into a subpackage (LAYOUT.md): they do not count toward MAX_ROOT_MODULES
# while they stay.
KNOWN_MISPLACED_ROOT_MODULES: frozenset[str] = frozenset()

KINDS = ("module", "function", "typing")
DYNAMIC_IMPORTS = frozenset({"import_module", "__import__"})


@dataclass
class ModuleInfo:
    name: str
    path: Path
    lines: int
    # Imported modules by kind of import: "module" (runs when the module loads), "function" (inside a function,
    # runs on call), "typing" (under ``if TYPE_CHECKING:``, read by type checkers only). memtend modules are
    # resolved to the module imported; others are named as written.
    by_kind: dict[str, set[str]] = field(default_factory=lambda: {kind: set() for kind in KINDS})
    io_calls: set[str] = field(default_factory=set)

    @property
    def top_level(self) -> set[str]:
        return self.by_kind["module"]

    @property
    def imports(self) -> set[str]:
        """Every import that runs: at load or inside a function (TYPE_CHECKING ones never run)."""
        return self.by_kind["module"] | self.by_kind["function"]

    @property
    def every_import(self) -> set[str]:
        return set().union(*self.by_kind.values())


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


@dataclass(frozen=True)
class Package:
    """What the scan knows of the package: its modules, and the names ``memtend`` loads lazily from each."""

    modules: frozenset[str]
    lazy: dict[str, str]


def _targets(node: ast.Import | ast.ImportFrom, current: str, is_package: bool, package: Package) -> Iterator[str]:
    if isinstance(node, ast.Import):
        yield from (alias.name for alias in node.names)
        return
    module = _resolve(node, current, is_package)
    for alias in node.names:  # `from memtend.policies import gate` imports the module memtend.policies.gate
        sub = f"{module}.{alias.name}"
        if sub in package.modules:
            yield sub
        elif module == "memtend" and alias.name in package.lazy:  # `from memtend import Memory` loads memtend.memory
            yield package.lazy[alias.name]
        else:
            yield module


def _is_type_checking(node: ast.If) -> bool:
    test = node.test
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def _dynamic_import(node: ast.Call) -> str | None:
    """The module an ``importlib.import_module("...")`` or ``__import__("...")`` call names, if a constant."""
    func = node.func
    name = func.id if isinstance(func, ast.Name) else func.attr if isinstance(func, ast.Attribute) else None
    if name in DYNAMIC_IMPORTS and node.args:
        first = node.args[0]
        if isinstance(first, ast.Constant) and isinstance(first.value, str):
            return first.value
    return None


def imports_by_kind(
    tree: ast.Module, name: str, is_package: bool, package: Package
) -> tuple[dict[str, set[str]], set[str]]:
    """Every import of a module's source by kind (see :class:`ModuleInfo`), and the I/O builtins it calls."""
    by_kind: dict[str, set[str]] = {kind: set() for kind in KINDS}
    io_calls: set[str] = set()

    def visit(node: ast.AST, kind: str) -> None:
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            by_kind[kind].update(_targets(node, name, is_package, package))
            return
        if isinstance(node, ast.If) and _is_type_checking(node):
            for stmt in node.body:
                visit(stmt, "typing")
            for stmt in node.orelse:
                visit(stmt, kind)
            return
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
            inner = "typing" if kind == "typing" else "function"
            body = node.body if isinstance(node.body, list) else [node.body]
            for child in ast.iter_child_nodes(node):  # decorators and defaults run where the function is defined
                visit(child, inner if child in body else kind)
            return
        if isinstance(node, ast.Call) and kind != "typing":
            if (dynamic := _dynamic_import(node)) is not None:
                by_kind[kind].add(dynamic)
            if isinstance(node.func, ast.Name) and node.func.id in IO_CALLS:
                io_calls.add(node.func.id)
        for child in ast.iter_child_nodes(node):
            visit(child, kind)

    visit(tree, "module")
    return by_kind, io_calls


def _lazy_names(init: Path) -> dict[str, str]:
    """``memtend/__init__.py``'s ``_LAZY``: public name -> the module it is loaded from."""
    for node in ast.parse(init.read_text(encoding="utf-8")).body:
        if isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name) and node.target.id == "_LAZY":
            value = ast.literal_eval(node.value) if node.value is not None else {}
            return dict(value)
    return {}


def scan() -> dict[str, ModuleInfo]:
    paths = {module_name(p): p for p in sorted(PACKAGE.rglob("*.py"))}
    package = Package(frozenset(paths), _lazy_names(PACKAGE / "__init__.py"))
    modules: dict[str, ModuleInfo] = {}
    for name, path in paths.items():
        text = path.read_text(encoding="utf-8")
        by_kind, io_calls = imports_by_kind(
            ast.parse(text, filename=str(path)), name, path.name == "__init__.py", package
        )
        modules[name] = ModuleInfo(name, path, len(text.splitlines()), by_kind, io_calls)
    return modules


MODULES = scan()


def _root(name: str) -> str:
    return name.split(".")[0]


def test_the_scan_sees_the_package() -> None:
    assert {"memtend", "memtend.storage", "memtend.records", "memtend.policies.retrieval"} <= set(MODULES)
    assert "chromadb" in {_root(i) for i in MODULES["memtend.storage.chroma"].imports}  # the scan finds real imports
    assert "memtend.errors" in MODULES["memtend.records"].top_level


def _allowed_chroma(name: str) -> bool:
    return any(name == allowed or name.startswith(allowed + ".") for allowed in CHROMA_ALLOWED)


def test_only_storage_imports_chromadb() -> None:
    importers = {name for name, info in MODULES.items() if any(_root(i) == "chromadb" for i in info.every_import)}
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
        if not name.startswith(PURE_PACKAGES):
            continue
        if name in io:
            problems.append(f"{name}: {io[name]}")
        storage = sorted(i for i in info.every_import if i == "memtend.storage" or i.startswith("memtend.storage."))
        if storage:
            problems.append(f"{name}: imports {storage}")
    assert problems == []


def test_the_io_rule_can_fail() -> None:
    io = _doing_io()
    assert "memtend.storage.chroma" in io and "memtend.cli" in io
    assert "memtend.records" not in io and "memtend.transcripts.messages" not in io


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
    assert _filter_building(MODULES["memtend.storage.filters"].path), "the filter scan finds storage's own filters"


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


def _graph(kinds: tuple[str, ...] = KINDS) -> dict[str, set[str]]:
    """memtend module -> the memtend modules it imports by any of ``kinds``."""
    return {
        name: {target for kind in kinds for target in info.by_kind[kind] if target in MODULES}
        for name, info in MODULES.items()
    }


def _unlisted_cycle_imports(graph: dict[str, set[str]], known: dict[str, frozenset[str]]) -> list[str]:
    """Imports inside a cycle of ``graph`` that ``known`` does not list, as "importer -> imported"."""
    found = []
    for component in _cycles(graph):
        inside = set(component)
        found.extend(
            f"{name} -> {target}"
            for name in component
            for target in sorted(graph[name] & inside)
            if target not in known.get(name, frozenset())
        )
    return found


def test_no_import_cycle_counting_every_kind() -> None:
    unlisted = _unlisted_cycle_imports(_graph(), KNOWN_CYCLE_IMPORTS)
    assert unlisted == [], (
        f"imports that close an import cycle (module level, in a function or under TYPE_CHECKING): {unlisted}; "
        "lower layers take a small protocol of what they need, not the module above them"
    )


def test_no_import_cycle_at_module_level() -> None:
    assert _cycles(_graph(("module",))) == [], "modules that import each other when they load"


def test_the_cycle_allowlist_lets_a_fix_land_and_stops_a_new_import() -> None:
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}}
    known = {"a": frozenset({"b"}), "b": frozenset({"c"}), "c": frozenset({"a"})}
    assert _unlisted_cycle_imports(graph, known) == []
    assert _unlisted_cycle_imports({"a": {"b"}, "b": {"c"}, "c": set()}, known) == []  # the cycle broken
    assert _unlisted_cycle_imports({**graph, "b": {"a", "c"}}, known) == ["b -> a"]  # a new import inside it
    assert _unlisted_cycle_imports({**graph, "c": {"a", "d"}, "d": {"c"}}, known) == ["c -> d", "d -> c"]


def _is_facade(name: str) -> bool:
    return any(name.startswith(f) if f.endswith(".") else name == f for f in FACADE)


def _is_memory_module(name: str) -> bool:
    return any(name == m or name.startswith(m + ".") for m in MEMORY_MODULES)


def test_lower_layers_never_import_memory() -> None:
    problems = []
    for name, info in MODULES.items():
        if _is_facade(name):
            continue
        for kind in KINDS:
            for target in sorted(t for t in info.by_kind[kind] if _is_memory_module(t)):
                if KNOWN_MEMORY_IMPORTERS.get(name) != target:
                    problems.append(f"{name} imports {target} ({kind})")
    assert problems == [], f"lower layers importing the facade: {problems}; take the handle protocol instead"


def test_the_facade_list_names_modules_that_exist() -> None:
    for entry in FACADE:
        assert (
            any(name == entry or name.startswith(entry) for name in MODULES)
            if entry.endswith(".")
            else (entry in MODULES)
        ), f"FACADE names {entry}, which is not a module of the package"
    assert not _is_facade("memtend.storage") and _is_facade("memtend.testing.core") and not _is_facade("memtend.test")


def test_the_core_imports_no_optional_distribution() -> None:
    importers = sorted(
        f"{name} imports {target} ({kind})"
        for name, info in MODULES.items()
        for kind in KINDS
        for target in info.by_kind[kind]
        if _root(target) in OPTIONAL_DISTRIBUTIONS
    )
    assert importers == [], f"{importers}; an optional distribution plugs in by entry point (memtend.extras)"


def test_no_module_is_over_the_line_limit() -> None:
    long = {
        name: info.lines
        for name, info in MODULES.items()
        if info.lines > MAX_MODULE_LINES and name not in KNOWN_LONG_MODULES
    }
    assert long == {}, f"modules over {MAX_MODULE_LINES} lines: {long}; split them by concept"
    assert MODULES["memtend.storage.record_rows"].lines > 100, "the line count reads the files"


def test_few_modules_at_the_package_root() -> None:
    root = sorted(name for name, info in MODULES.items() if info.path.parent == PACKAGE and name != "memtend")
    counted = [name for name in root if name not in KNOWN_MISPLACED_ROOT_MODULES]
    assert len(counted) <= MAX_ROOT_MODULES, (
        f"{len(counted)} modules at the package root (at most {MAX_ROOT_MODULES}): {counted}; "
        "put the new one in the subpackage of its concept"
    )
    assert "memtend.errors" in root and "memtend.policies" not in root


IMPORT_KINDS_SOURCE = """
from __future__ import annotations
import importlib
from typing import TYPE_CHECKING
from memtend import errors, Memory
from . import results

if TYPE_CHECKING:
    from memtend.user_memory import UserMemory
else:
    import json

class Thing:
    import csv

    def method(self) -> None:
        from memtend.policies import gate

def lazy(default=importlib.import_module("zlib")) -> None:
    import memtend.storage
    importlib.import_module("memtend_injection")
    handler = lambda: __import__("memtend.records")
"""


def test_the_scan_reads_each_kind_of_import() -> None:
    package = Package(
        frozenset({"memtend", "memtend.errors", "memtend.results", "memtend.memory", "memtend.policies.gate"}),
        {"Memory": "memtend.memory"},
    )
    by_kind, _ = imports_by_kind(ast.parse(IMPORT_KINDS_SOURCE), "memtend.thing", False, package)
    assert by_kind == {
        "module": {
            "__future__",
            "importlib",
            "typing",
            "memtend.errors",
            "memtend.memory",
            "memtend.results",
            "json",
            "csv",
            "zlib",
        },
        "function": {"memtend.policies.gate", "memtend.storage", "memtend_injection", "memtend.records"},
        "typing": {"memtend.user_memory"},
    }


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
