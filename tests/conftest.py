"""Shared fixtures: real Chroma (in-process, on disk, and a `chroma run` server), the real embedding model."""

from __future__ import annotations

import importlib.abc
import importlib.util
import os
import shutil
import socket
import subprocess
import sys
import time
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path
from types import ModuleType

import pytest
from hypothesis import HealthCheck, settings

pytest.register_assert_rewrite("memtend.testing")  # the isolation machine's asserts explain their failures

IN_CI = os.environ.get("CI", "").strip().lower() in ("1", "true", "yes")

# Hypothesis profiles: "ci" (CI=true) runs every property test at its full count; "dev" (the default
# elsewhere) runs a tenth of it, at least 10, so a local run is quick. HYPOTHESIS_PROFILE picks one by name.
# A test written with its own count says so with scaled(n), which follows the profile.
settings.register_profile("ci", deadline=None, print_blob=True, suppress_health_check=[HealthCheck.too_slow])
settings.register_profile("dev", max_examples=10, deadline=None)
PROFILE = os.environ.get("HYPOTHESIS_PROFILE") or ("ci" if IN_CI else "dev")
settings.load_profile(PROFILE)


def scaled(examples: int) -> int:
    """``examples`` under the ci profile, a tenth of it (at least 10) under dev."""
    return examples if PROFILE == "ci" else max(10, examples // 10)


REPO = Path(__file__).resolve().parents[1]
SHARED = REPO.parent / "shared"
BACKENDS = ("ephemeral", "persistent", "server")


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class ChromaServer:
    """A real `chroma run` on 127.0.0.1, started and stopped by the tests."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.port = free_port()
        self.proc: subprocess.Popen[bytes] | None = None

    def start(self) -> None:
        chroma = shutil.which("chroma") or str(Path(sys.executable).parent / "chroma")
        log = open(self.path.parent / f"chroma-{self.port}.log", "wb")  # noqa: SIM115
        self.proc = subprocess.Popen(
            [chroma, "run", "--path", str(self.path), "--host", "127.0.0.1", "--port", str(self.port)],
            stdout=log,
            stderr=subprocess.STDOUT,
        )
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"chroma run exited with {self.proc.returncode}; see {log.name}")
            try:
                with socket.create_connection(("127.0.0.1", self.port), timeout=0.5):
                    break
            except OSError:
                time.sleep(0.1)
        else:
            raise RuntimeError("chroma run did not start within 60 s")
        import chromadb

        for _ in range(100):
            try:
                chromadb.HttpClient(host="127.0.0.1", port=self.port).heartbeat()
                return
            except Exception:
                time.sleep(0.1)
        raise RuntimeError("chroma run did not answer heartbeats")

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=20)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self.proc = None

    def client(self):  # type: ignore[no-untyped-def]
        import chromadb

        return chromadb.HttpClient(host="127.0.0.1", port=self.port)


UNIT = REPO / "tests" / "unit"
HEAVY = ("chromadb", "onnxruntime")


class FastTierError(AssertionError):
    """A fast-tier test (tests/unit) loaded Chroma or the model runtime, opened Chroma or built the model."""


class _HeavyImports(importlib.abc.MetaPathFinder):
    """Notes each first import of chromadb or onnxruntime and the fast-tier file whose code made it (a test
    module loading, or a test running); finds nothing itself, so every import goes on as before."""

    def __init__(self) -> None:
        self.seen: list[tuple[str, Path | None]] = []

    def find_spec(self, fullname: str, path: object = None, target: object = None) -> None:
        if fullname in HEAVY:
            self.seen.append((fullname, _fast_tier_caller()))


def _fast_tier_caller() -> Path | None:
    frame = sys._getframe(1)
    prefix = str(UNIT) + os.sep
    while frame is not None:
        name = frame.f_code.co_filename
        if name.startswith(prefix) and not name.endswith("conftest.py"):
            return Path(name)
        frame = frame.f_back
    return None


HEAVY_IMPORTS = _HeavyImports()
sys.meta_path.insert(0, HEAVY_IMPORTS)
_COLLECTED = pytest.StashKey[int]()  # how many of HEAVY_IMPORTS.seen were made while test modules loaded


def pytest_collection_finish(session: pytest.Session) -> None:
    session.stash[_COLLECTED] = len(HEAVY_IMPORTS.seen)


FAST_TIER_PROBLEMS = pytest.StashKey[list[str]]()
_FAST_TIER_START = pytest.StashKey[int]()


def refusing(problems: list[str], what: str) -> Callable[..., None]:
    def refused(*args: object, **kwargs: object) -> None:
        problems.append(what)
        raise FastTierError(f"a fast-tier test {what}: move it out of tests/unit, or embed with HashEmbedder")

    return refused


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item: pytest.Item, nextitem: pytest.Item | None) -> Iterator[None]:
    """tests/unit is the fast tier (`uv run pytest tests/unit`): a test there fails if its module or the test
    (setup and fixtures included) imports chromadb or onnxruntime, opens a Chroma client or builds memtend's
    embedding model (embed with memtend.testing.HashEmbedder instead). An import is seen where it is the first
    (a fast-tier run); the client and the model are refused in any run, the whole suite's too."""
    if UNIT not in item.path.parents:
        yield
        return
    at_load = HEAVY_IMPORTS.seen[: item.session.stash.get(_COLLECTED, 0)]
    problems = [f"imports {name} when {item.path.name} loads" for name, where in at_load if where == item.path]
    item.stash[FAST_TIER_PROBLEMS] = problems
    item.stash[_FAST_TIER_START] = len(HEAVY_IMPORTS.seen)
    with pytest.MonkeyPatch.context() as patch:
        embeddings = sys.modules.get("memtend.storage.embeddings")
        if embeddings is not None:
            for name in ("default_embedding_function", "load_embedding_function"):
                patch.setattr(embeddings, name, refusing(problems, f"builds the embedding model ({name})"))
        clients = sys.modules.get("chromadb.api.shared_system_client")
        if clients is not None:
            patch.setattr(clients.SharedSystemClient, "__init__", refusing(problems, "opens a Chroma client"))
        yield


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> Iterator[None]:
    outcome = yield
    if call.when != "teardown" or FAST_TIER_PROBLEMS not in item.stash:
        return
    problems = item.stash[FAST_TIER_PROBLEMS] + [
        f"imports {name}" for name, _ in HEAVY_IMPORTS.seen[item.stash[_FAST_TIER_START] :]
    ]
    if problems:
        report = outcome.get_result()
        report.outcome = "failed"
        report.longrepr = (
            f"fast tier: {item.nodeid} {'; '.join(problems)}. tests/unit runs with no Chroma and no model: move the "
            "test out of tests/unit, or embed with memtend.testing.HashEmbedder"
        )


@pytest.fixture(scope="session")
def embedding_function():  # type: ignore[no-untyped-def]
    from memtend.storage.embeddings import default_embedding_function

    return default_embedding_function()


@pytest.fixture(scope="session")
def chroma_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ChromaServer]:
    server = ChromaServer(tmp_path_factory.mktemp("chroma-server") / "data")
    server.start()
    yield server
    server.stop()


def unique_prefix() -> str:
    return "t" + uuid.uuid4().hex[:12]


@pytest.fixture(params=BACKENDS)
def backend(request: pytest.FixtureRequest) -> str:
    return str(request.param)


def _open_memory(backend: str, tmp_path: Path, embedding_function, request: pytest.FixtureRequest, **options):  # type: ignore[no-untyped-def]
    """A Memory on ``backend`` (EphemeralClient, PersistentClient folder, `chroma run` server) with ``options``."""
    import chromadb
    from memtend import Memory

    if backend == "ephemeral":
        return Memory(
            client=chromadb.EphemeralClient(),
            embedding_function=embedding_function,
            collection_prefix=unique_prefix(),
            **options,
        )
    if backend == "persistent":
        return Memory(path=tmp_path / "store", embedding_function=embedding_function, **options)
    server: ChromaServer = request.getfixturevalue("chroma_server")
    return Memory(
        client=server.client(), embedding_function=embedding_function, collection_prefix=unique_prefix(), **options
    )


@pytest.fixture
def memory(backend: str, tmp_path: Path, embedding_function, request: pytest.FixtureRequest):  # type: ignore[no-untyped-def]
    """A fresh Memory on each backend: EphemeralClient, PersistentClient folder, and a `chroma run` server."""
    mem = _open_memory(backend, tmp_path, embedding_function, request)
    yield mem
    mem.close()


@pytest.fixture
def propose_memory(backend: str, tmp_path: Path, embedding_function, request: pytest.FixtureRequest):  # type: ignore[no-untyped-def]
    """A fresh ``Memory(write_mode="propose")`` on each backend, as ``memory``."""
    mem = _open_memory(backend, tmp_path, embedding_function, request, write_mode="propose")
    yield mem
    mem.close()


@pytest.fixture
def ephemeral_memory(embedding_function):  # type: ignore[no-untyped-def]
    import chromadb
    from memtend import Memory

    mem = Memory(
        client=chromadb.EphemeralClient(),
        embedding_function=embedding_function,
        collection_prefix=unique_prefix(),
    )
    yield mem
    mem.close()


def load_benchmark(name: str) -> ModuleType:
    """Import a benchmark script of tests/benchmarks/ as a module, so a smoke test can call its ``run``."""
    spec = importlib.util.spec_from_file_location(
        f"memtend_benchmark_{name}", REPO / "tests" / "benchmarks" / f"{name}.py"
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


def shared_path(*parts: str) -> Path:
    """A file of ../shared (read in place, never copied). Missing: the test skips locally and fails in CI, where
    the quality figures must be measured."""
    path = SHARED.joinpath(*parts)
    if not path.exists():
        message = f"shared data {path} is not present next to the repository"
        if IN_CI:
            pytest.fail(f"{message}; CI must check out ../shared beside the repository", pytrace=False)
        pytest.skip(message)
    return path


os.environ.setdefault("ANONYMIZED_TELEMETRY", "False")
# stores opened by tests run no scheduled upkeep (no timer thread, no pass on close) unless a test asks for it with
# Memory(upkeep=Upkeep(...)): a background pass must never make a test that does not test it flaky
os.environ["MEMTEND_UPKEEP"] = "off"


@pytest.fixture
def two_processes(embedding_function: object) -> Iterator[tuple[object, object]]:
    """Two Memory objects over one store, each with its own retrieval index: how two processes on a server
    see each other (an EphemeralClient is shared within the process, like a server is between processes)."""
    import chromadb
    from memtend import Memory

    prefix = unique_prefix()
    a = Memory(client=chromadb.EphemeralClient(), embedding_function=embedding_function, collection_prefix=prefix)
    b = Memory(client=chromadb.EphemeralClient(), embedding_function=embedding_function, collection_prefix=prefix)
    yield a, b
    a.close()
    b.close()
