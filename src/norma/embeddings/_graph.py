"""The BERT sentence encoder as an ONNX graph, built in code from ``config.json`` and the safetensors weights.

Inputs ``input_ids`` and ``attention_mask`` (int64, ``[batch, seq]``); output ``embeddings`` (float32,
``[batch, hidden]``): mean pooling of the last hidden states over the attention mask, then L2 normalisation
(``x / max(||x||, 1e-12)``, as ``torch.nn.functional.normalize``), so the graph gives sentence-transformers'
``encode(..., normalize_embeddings=True)`` output for ``all-MiniLM-L6-v2``-style models.

Per layer: self-attention with padded positions masked out, residual + LayerNorm, an erf-GELU feed-forward block,
residual + LayerNorm. Token type ids are always 0 for single sentences, so row 0 of the token-type table is added
to the position table once, at build time. With ``fused=True`` each attention block is onnxruntime's contrib
``Attention`` operator (one QKV matrix multiply and a multi-threaded kernel); with ``fused=False`` it is written
in standard ONNX operators only.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

from norma.embeddings._model_files import GRAPH_VERSION, BertConfig

__all__ = ["GRAPH_VERSION", "INPUT_NAMES", "OUTPUT_NAME", "EncoderGraph", "build_graph"]

INPUT_NAMES = ("input_ids", "attention_mask")
OUTPUT_NAME = "embeddings"
_OPSET = 18
_MS_DOMAIN = "com.microsoft"
_EXTERNAL_BYTES = 4096
_IN_MEMORY = "norma-in-memory"


class _Builder:
    """Accumulates nodes and initializers with generated names."""

    def __init__(self) -> None:
        self.nodes: list[onnx.NodeProto] = []
        self.initializers: list[onnx.TensorProto] = []
        self.external: dict[str, np.ndarray] = {}
        self.value_info: list[onnx.ValueInfoProto] = []
        self._count = 0

    def const(self, name: str, array: np.ndarray) -> str:
        array = np.ascontiguousarray(array)
        if array.nbytes < _EXTERNAL_BYTES:
            self.initializers.append(numpy_helper.from_array(array, name))
            return name
        # A placeholder: onnxruntime takes the data from memory (SessionOptions.add_external_initializers).
        placeholder = onnx.TensorProto(
            name=name, data_type=helper.np_dtype_to_tensor_dtype(array.dtype), dims=array.shape
        )
        placeholder.data_location = onnx.TensorProto.EXTERNAL
        entry = placeholder.external_data.add()
        entry.key, entry.value = "location", _IN_MEMORY
        self.initializers.append(placeholder)
        self.external[name] = array
        return name

    def op(self, op_type: str, inputs: list[str], *, domain: str = "", width: int | None = None, **attrs: Any) -> str:
        """Add a node; ``width`` declares its output as ``[batch, sequence, width]`` float32.

        The declared shapes let onnxruntime fuse residual + LayerNorm and bias + GELU even after the contrib
        ``Attention`` node, whose output shape ONNX shape inference does not know.
        """
        self._count += 1
        out = f"{op_type.lower()}_{self._count}"
        self.nodes.append(helper.make_node(op_type, inputs, [out], name=out, domain=domain, **attrs))
        if width is not None:
            self.value_info.append(helper.make_tensor_value_info(out, TensorProto.FLOAT, ["batch", "sequence", width]))
        return out

    def linear(self, x: str, weight: np.ndarray, bias: np.ndarray, name: str) -> str:
        """``x @ weight.T + bias`` for a torch-layout ``[out, in]`` weight."""
        w = self.const(f"{name}.weight_t", weight.T.copy())
        b = self.const(f"{name}.bias", bias)
        width = weight.shape[0]
        return self.op("Add", [self.op("MatMul", [x, w], width=width), b], width=width)

    def layer_norm(self, x: str, weights: Mapping[str, np.ndarray], name: str, eps: float) -> str:
        gamma = weights[f"{name}.weight"]
        g = self.const(f"{name}.weight", gamma)
        b = self.const(f"{name}.bias", weights[f"{name}.bias"])
        return self.op("LayerNormalization", [x, g, b], axis=-1, epsilon=eps, width=gamma.shape[0])


def _attention_standard(
    b: _Builder, x: str, weights: Mapping[str, np.ndarray], p: str, config: BertConfig, additive_mask: str
) -> str:
    heads, size = config.num_attention_heads, config.head_size
    split = b.const(f"{p}split_shape", np.array([0, 0, heads, size], dtype=np.int64))
    merge = b.const(f"{p}merge_shape", np.array([0, 0, config.hidden_size], dtype=np.int64))

    def project(kind: str, perm: list[int]) -> str:
        name = f"{p}attention.self.{kind}"
        y = b.linear(x, weights[f"{name}.weight"], weights[f"{name}.bias"], name)
        return b.op("Transpose", [b.op("Reshape", [y, split])], perm=perm)

    q = project("query", [0, 2, 1, 3])
    k = project("key", [0, 2, 3, 1])
    v = project("value", [0, 2, 1, 3])
    scale = b.const(f"{p}scale", np.array(1.0 / math.sqrt(size), dtype=np.float32))
    scores = b.op("Add", [b.op("Mul", [b.op("MatMul", [q, k]), scale]), additive_mask])
    probs = b.op("Softmax", [scores], axis=-1)
    context = b.op("Transpose", [b.op("MatMul", [probs, v])], perm=[0, 2, 1, 3])
    return b.op("Reshape", [context, merge])


def _attention_fused(
    b: _Builder, x: str, weights: Mapping[str, np.ndarray], p: str, config: BertConfig, mask: str
) -> str:
    name = f"{p}attention.self"
    qkv_w = np.concatenate([weights[f"{name}.{k}.weight"].T for k in ("query", "key", "value")], axis=1)
    qkv_b = np.concatenate([weights[f"{name}.{k}.bias"] for k in ("query", "key", "value")])
    w = b.const(f"{name}.qkv_weight", qkv_w)
    bias = b.const(f"{name}.qkv_bias", qkv_b)
    return b.op(
        "Attention",
        [x, w, bias, mask],
        domain=_MS_DOMAIN,
        num_heads=config.num_attention_heads,
        width=config.hidden_size,
    )


@dataclass(frozen=True)
class EncoderGraph:
    """An encoder graph whose large initializers are placeholders, with their data alongside (in memory)."""

    model: onnx.ModelProto
    external: Mapping[str, np.ndarray]

    def inlined(self) -> onnx.ModelProto:
        """A self-contained copy of the model with every initializer's data inside it (for quantisation)."""
        model = onnx.ModelProto()
        model.CopyFrom(self.model)
        for index, tensor in enumerate(model.graph.initializer):
            if tensor.name in self.external:
                model.graph.initializer[index].CopyFrom(
                    numpy_helper.from_array(self.external[tensor.name], tensor.name)
                )
        return model


def build_graph(config: BertConfig, weights: Mapping[str, np.ndarray], *, fused: bool = True) -> EncoderGraph:
    """The sentence encoder for ``config`` with ``weights`` (torch names, float32).

    Large initializers are not copied into the protobuf: the returned model names them as external data and
    :attr:`EncoderGraph.external` holds the arrays, which the session takes from memory.
    """
    b = _Builder()
    eps = config.layer_norm_eps
    input_ids, attention_mask = INPUT_NAMES

    word = b.op("Gather", [b.const("word_embeddings", weights["embeddings.word_embeddings.weight"]), input_ids])
    position_table = (
        weights["embeddings.position_embeddings.weight"] + weights["embeddings.token_type_embeddings.weight"][0]
    )
    positions = b.const("position_embeddings", position_table.astype(np.float32))
    seq_len = b.op(
        "Slice",
        [
            b.op("Shape", [input_ids]),
            b.const("one_i64", np.array([1], dtype=np.int64)),
            b.const("two_i64", np.array([2], dtype=np.int64)),
        ],
    )
    zero = b.const("zero_i64", np.array([0], dtype=np.int64))
    pos = b.op("Slice", [positions, zero, seq_len, zero])
    x = b.layer_norm(b.op("Add", [word, pos], width=config.hidden_size), weights, "embeddings.LayerNorm", eps)

    mask_f = b.op("Cast", [attention_mask], to=TensorProto.FLOAT)
    if fused:
        mask: str = b.op("Cast", [attention_mask], to=TensorProto.INT32)
    else:
        ext = b.op("Unsqueeze", [mask_f, b.const("mask_axes", np.array([1, 2], dtype=np.int64))])
        one = b.const("one_f32", np.array(1.0, dtype=np.float32))
        lowest = b.const("lowest_f32", np.array(np.finfo(np.float32).min, dtype=np.float32))
        mask = b.op("Mul", [b.op("Sub", [one, ext]), lowest])

    half = b.const("half", np.array(0.5, dtype=np.float32))
    one_f = b.const("one", np.array(1.0, dtype=np.float32))
    sqrt2 = b.const("sqrt2", np.array(math.sqrt(2.0), dtype=np.float32))
    d, ff = config.hidden_size, config.intermediate_size
    for i in range(config.num_hidden_layers):
        p = f"encoder.layer.{i}."
        if fused:
            context = _attention_fused(b, x, weights, p, config, mask)
        else:
            context = _attention_standard(b, x, weights, p, config, mask)
        name = f"{p}attention.output.dense"
        attn = b.linear(context, weights[f"{name}.weight"], weights[f"{name}.bias"], name)
        x = b.layer_norm(b.op("Add", [attn, x], width=d), weights, f"{p}attention.output.LayerNorm", eps)
        name = f"{p}intermediate.dense"
        h = b.linear(x, weights[f"{name}.weight"], weights[f"{name}.bias"], name)
        # x * 0.5 * (1 + erf(x / sqrt 2)), in the node order onnxruntime's GELU fusion recognises.
        erf = b.op("Erf", [b.op("Div", [h, sqrt2], width=ff)], width=ff)
        gelu = b.op("Mul", [b.op("Mul", [h, b.op("Add", [erf, one_f], width=ff)], width=ff), half], width=ff)
        name = f"{p}output.dense"
        out = b.linear(gelu, weights[f"{name}.weight"], weights[f"{name}.bias"], name)
        x = b.layer_norm(b.op("Add", [out, x], width=d), weights, f"{p}output.LayerNorm", eps)

    token_mask = b.op("Unsqueeze", [mask_f, b.const("pool_axes", np.array([2], dtype=np.int64))])
    axis1 = b.const("axis1", np.array([1], dtype=np.int64))
    summed = b.op("ReduceSum", [b.op("Mul", [x, token_mask]), axis1], keepdims=0)
    counts = b.op("ReduceSum", [token_mask, axis1], keepdims=0)
    counts = b.op("Max", [counts, b.const("min_count", np.array(1e-9, dtype=np.float32))])
    mean = b.op("Div", [summed, counts])
    norm = b.op("ReduceL2", [mean, axis1], keepdims=1)
    norm = b.op("Max", [norm, b.const("min_norm", np.array(1e-12, dtype=np.float32))])
    b.nodes.append(helper.make_node("Div", [mean, norm], [OUTPUT_NAME], name="l2_normalize"))

    graph = helper.make_graph(
        b.nodes,
        "norma_sentence_encoder",
        inputs=[
            helper.make_tensor_value_info(input_ids, TensorProto.INT64, ["batch", "sequence"]),
            helper.make_tensor_value_info(attention_mask, TensorProto.INT64, ["batch", "sequence"]),
        ],
        outputs=[helper.make_tensor_value_info(OUTPUT_NAME, TensorProto.FLOAT, ["batch", config.hidden_size])],
        initializer=b.initializers,
        value_info=b.value_info,
    )
    opsets = [helper.make_opsetid("", _OPSET)]
    if fused:
        opsets.append(helper.make_opsetid(_MS_DOMAIN, 1))
    model = helper.make_model(graph, opset_imports=opsets, producer_name="norma")
    model.ir_version = 8
    return EncoderGraph(model=model, external=b.external)
