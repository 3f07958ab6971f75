"""Write a BERT encoder as an ONNX graph, straight from safetensors weights (no torch).

The graph is the one Chroma's ``ONNXMiniLM_L6_V2`` expects in ``model.onnx``: inputs ``input_ids``,
``attention_mask`` and ``token_type_ids`` (int64, shape ``[batch, sequence]``), first output the last
hidden state (float32, ``[batch, sequence, hidden]``). Chroma does the mean pooling and normalisation.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import onnx
from onnx import TensorProto, helper

OPSET = 17  # first opset with LayerNormalization
IR_VERSION = 8  # what opset 17 shipped with; old enough for any onnxruntime that runs opset 17


@dataclass(frozen=True)
class BertConfig:
    """The shape of the BERT encoder to build, read from the model's ``config.json``."""

    hidden_size: int  # numbers per token between layers (384 for all-MiniLM-L6-v2)
    num_layers: int  # transformer layers
    num_heads: int  # attention heads per layer (each sees hidden_size / num_heads numbers)
    layer_norm_eps: float  # the epsilon added to the variance in every layer norm

    @classmethod
    def from_json(cls, path: Path) -> BertConfig:
        raw = json.loads(path.read_text(encoding="utf-8"))
        if raw.get("hidden_act", "gelu") != "gelu":
            raise ValueError(f"unsupported activation {raw['hidden_act']!r} in {path}; only 'gelu' is")
        if raw.get("position_embedding_type", "absolute") != "absolute":
            raise ValueError(f"unsupported position embeddings in {path}; only 'absolute' are")
        return cls(
            hidden_size=int(raw["hidden_size"]),
            num_layers=int(raw["num_hidden_layers"]),
            num_heads=int(raw["num_attention_heads"]),
            layer_norm_eps=float(raw["layer_norm_eps"]),
        )


class _Graph:
    """Collects nodes and initializers, handing out fresh tensor names."""

    def __init__(self) -> None:
        self.nodes: list[onnx.NodeProto] = []
        self.constants: dict[str, np.ndarray] = {}
        self._count = 0

    def const(self, name: str, value: np.ndarray) -> str:
        self.constants[name] = value
        return name

    def op(self, op_type: str, *inputs: str, **attrs: Any) -> str:
        self._count += 1
        out = f"{op_type.lower()}_{self._count}"
        self.nodes.append(helper.make_node(op_type, list(inputs), [out], name=out, **attrs))
        return out

    def linear(self, x: str, weights: Mapping[str, np.ndarray], prefix: str) -> str:
        # torch Linear stores weight as [out, in]; MatMul wants [in, out]
        w = self.const(f"{prefix}.weight", np.ascontiguousarray(weights[f"{prefix}.weight"].T))
        b = self.const(f"{prefix}.bias", weights[f"{prefix}.bias"])
        return self.op("Add", self.op("MatMul", x, w), b)

    def layer_norm(self, x: str, weights: Mapping[str, np.ndarray], prefix: str, eps: float) -> str:
        gamma = self.const(f"{prefix}.weight", weights[f"{prefix}.weight"])
        beta = self.const(f"{prefix}.bias", weights[f"{prefix}.bias"])
        return self.op("LayerNormalization", x, gamma, beta, axis=-1, epsilon=eps)


def build_bert_graph(weights: Mapping[str, np.ndarray], config: BertConfig) -> onnx.ModelProto:
    """Build the ONNX model of a BERT encoder from HF-named weights (``embeddings.*``, ``encoder.*``)."""
    hidden, heads = config.hidden_size, config.num_heads
    head_dim = hidden // heads
    eps = config.layer_norm_eps
    g = _Graph()

    # Embeddings: word + token type + position, then LayerNorm.
    word = g.op("Gather", g.const("word_emb", weights["embeddings.word_embeddings.weight"]), "input_ids")
    token_type = g.op(
        "Gather", g.const("type_emb", weights["embeddings.token_type_embeddings.weight"]), "token_type_ids"
    )
    # Positions 0..seq-1 are the first seq rows of the table: Slice it (Gather over Range trips ORT's
    # optimizer).
    seq_len = g.op(
        "Slice",
        g.op("Shape", "input_ids"),
        g.const("one", np.array([1], np.int64)),
        g.const("two", np.array([2], np.int64)),
    )
    position = g.op(
        "Slice",
        g.const("pos_emb", weights["embeddings.position_embeddings.weight"]),
        g.const("zero", np.array([0], np.int64)),
        seq_len,
        g.const("axis0", np.array([0], np.int64)),
    )
    x = g.op("Add", g.op("Add", word, token_type), position)
    x = g.layer_norm(x, weights, "embeddings.LayerNorm", eps)

    # Additive attention mask [batch, 1, 1, seq]: 0 where attended, a huge negative where padded.
    mask = g.op("Cast", "attention_mask", to=TensorProto.FLOAT)
    blocked = g.op("Sub", g.const("f_one", np.array(1.0, np.float32)), mask)
    bias = g.op("Mul", blocked, g.const("neg_big", np.array(np.finfo(np.float32).min, np.float32)))
    bias = g.op("Unsqueeze", bias, g.const("axes12", np.array([1, 2], np.int64)))

    split_shape = g.const("split_shape", np.array([0, 0, heads, head_dim], np.int64))
    merge_shape = g.const("merge_shape", np.array([0, 0, hidden], np.int64))
    scale = g.const("scale", np.array(1.0 / math.sqrt(head_dim), np.float32))
    sqrt2 = g.const("sqrt2", np.array(math.sqrt(2.0), np.float32))
    half = g.const("half", np.array(0.5, np.float32))
    f_one = "f_one"

    for i in range(config.num_layers):
        p = f"encoder.layer.{i}"
        q = g.op("Reshape", g.linear(x, weights, f"{p}.attention.self.query"), split_shape)
        k = g.op("Reshape", g.linear(x, weights, f"{p}.attention.self.key"), split_shape)
        v = g.op("Reshape", g.linear(x, weights, f"{p}.attention.self.value"), split_shape)
        q = g.op("Transpose", q, perm=[0, 2, 1, 3])  # [b, h, s, d]
        k = g.op("Transpose", k, perm=[0, 2, 3, 1])  # [b, h, d, s]
        v = g.op("Transpose", v, perm=[0, 2, 1, 3])  # [b, h, s, d]
        scores = g.op("Add", g.op("Mul", g.op("MatMul", q, k), scale), bias)
        context = g.op("MatMul", g.op("Softmax", scores, axis=-1), v)
        context = g.op("Reshape", g.op("Transpose", context, perm=[0, 2, 1, 3]), merge_shape)
        attended = g.linear(context, weights, f"{p}.attention.output.dense")
        x = g.layer_norm(g.op("Add", attended, x), weights, f"{p}.attention.output.LayerNorm", eps)

        inner = g.linear(x, weights, f"{p}.intermediate.dense")
        # exact GELU: 0.5 * x * (1 + erf(x / sqrt(2)))
        erf = g.op("Erf", g.op("Div", inner, sqrt2))
        gelu = g.op("Mul", g.op("Mul", inner, half), g.op("Add", erf, f_one))
        out = g.linear(gelu, weights, f"{p}.output.dense")
        x = g.layer_norm(g.op("Add", out, x), weights, f"{p}.output.LayerNorm", eps)

    g.nodes.append(helper.make_node("Identity", [x], ["last_hidden_state"], name="output"))

    dims = ["batch", "sequence"]
    graph = helper.make_graph(
        g.nodes,
        "bert_encoder",
        inputs=[
            helper.make_tensor_value_info(name, TensorProto.INT64, dims)
            for name in ("input_ids", "attention_mask", "token_type_ids")
        ],
        outputs=[helper.make_tensor_value_info("last_hidden_state", TensorProto.FLOAT, [*dims, hidden])],
    )
    model = helper.make_model(
        graph, opset_imports=[helper.make_opsetid("", OPSET)], producer_name="memtend.storage.onnx_bert"
    )
    model.ir_version = IR_VERSION
    # Fill weights in place: passing ~90 MB through make_graph/make_model copies it twice.
    for name, value in g.constants.items():
        tensor = model.graph.initializer.add()
        tensor.name = name
        tensor.data_type = helper.np_dtype_to_tensor_dtype(value.dtype)
        tensor.dims.extend(value.shape)
        tensor.raw_data = np.ascontiguousarray(value, dtype=value.dtype.newbyteorder("<")).tobytes()
    return model


def load_weights(path: Path) -> dict[str, np.ndarray]:
    """Read safetensors weights as float32 arrays, dropping a leading ``bert.`` if present."""
    from safetensors.numpy import load_file

    weights = load_file(str(path))
    return {
        name.removeprefix("bert."): value.astype(np.float32, copy=False)
        for name, value in weights.items()
        if value.dtype.kind == "f"
    }


def build_model_bytes(model_dir: Path) -> bytes:
    """Serialized ``model.onnx`` for the HF model in ``model_dir`` (config.json + model.safetensors)."""
    config = BertConfig.from_json(model_dir / "config.json")
    model = build_bert_graph(load_weights(model_dir / "model.safetensors"), config)
    return model.SerializeToString()
