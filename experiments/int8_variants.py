"""Which parts of the encoder to quantise (issue #58, item 2): int8 variants against fp32, before a quality run.

Today's int8 encoder (``#int8.2``) quantises every MatMul, the fused Attention's projection and the word-embedding
Gather (per-channel int8 weights, dynamic uint8 activations; each text embedded alone). It misses #58's quality rule
(0.005 per figure against fp32) on 7 of 10 sets. This script builds variants that keep some parts in float32 and,
on 400 BANKING77 messages (tune draw, each embedded alone), measures the cosine to fp32 (min, mean), how often the
top-1 rule among the draw's 61 intents' centroids changes against fp32, and the p50 per text (alternating rounds).

Usage: .venv/bin/python experiments/int8_variants.py
"""

from __future__ import annotations

import statistics
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "benchmarks"))
sys.path.insert(0, str(REPO / "src"))

from _devsets import banking77  # noqa: E402
from norma.embeddings._bert import BertEmbedder  # noqa: E402
from norma.embeddings._graph import build_graph  # noqa: E402
from norma.embeddings._model_files import load_model_files, read_weights  # noqa: E402
from norma.embeddings._session import create_session  # noqa: E402


def variants(model) -> dict[str, dict]:
    ffn_down, attn_out, last = [], [], []
    for node in model.graph.node:
        if node.op_type != "MatMul":
            continue
        weight = " ".join(node.input)
        if ".output.dense" in weight and "attention" not in weight:
            ffn_down.append(node.name)
        if "attention.output.dense" in weight:
            attn_out.append(node.name)
        if "layer.5." in weight:
            last.append(node.name)
    every = ["MatMul", "Attention", "Gather"]
    return {
        "today (MatMul, Attention, Gather)": {"op_types_to_quantize": every},
        "no Gather": {"op_types_to_quantize": ["MatMul", "Attention"]},
        "no Gather, FFN down fp32": {"op_types_to_quantize": ["MatMul", "Attention"], "nodes_to_exclude": ffn_down},
        "no Gather, attention fp32": {"op_types_to_quantize": ["MatMul"]},
        "no Gather, last layer fp32": {"op_types_to_quantize": ["MatMul", "Attention"], "nodes_to_exclude": last},
    }


def main() -> None:
    import onnx
    from onnxruntime.quantization import QuantType, quantize_dynamic

    files = load_model_files(None)
    graph = build_graph(files.config, read_weights(files))
    model = graph.inlined()
    names = {n.name for n in model.graph.node}
    assert len(names) == len(model.graph.node), "nodes need unique names"
    dev = banking77(101, "tune", held_out=0)
    texts = [m.text for m in dev.messages][:400]
    tokens = BertEmbedder(quantize=False)._tokens
    ids = [np.asarray([i], dtype=np.int64) for i in tokens.encode(texts)]
    fp32 = create_session(graph.model.SerializeToString(), external=graph.external, source="fp32")
    sessions = {"fp32": fp32}
    folder = Path(tempfile.mkdtemp())
    for name, options in variants(model).items():
        path = folder / f"{len(sessions)}.onnx"
        quantize_dynamic(model, path, per_channel=True, weight_type=QuantType.QInt8,
                         extra_options={"DefaultTensorType": onnx.TensorProto.FLOAT}, **options)  # fmt: skip
        sessions[name] = create_session(path, source=name)

    def embed(session) -> np.ndarray:
        out = np.stack([session.run(x, np.ones_like(x))[0] for x in ids])
        return out / np.linalg.norm(out, axis=1, keepdims=True)

    vectors = {name: embed(s) for name, s in sessions.items()}
    examples: dict[str, list[str]] = {}
    for rule in dev.rules:
        examples[rule.id] = list(rule.examples)
    rule_ids = sorted(examples)
    times: dict[str, list[float]] = {name: [] for name in sessions}
    for _ in range(5):
        for name, session in sessions.items():
            took = []
            for x in ids[:100]:
                start = time.perf_counter()
                session.run(x, np.ones_like(x))
                took.append(time.perf_counter() - start)
            times[name].append(statistics.median(took) * 1e3)
    centroids = {}
    for name, session in sessions.items():
        rows = []
        for rid in rule_ids:
            ex = [np.asarray([i], dtype=np.int64) for i in tokens.encode(examples[rid])]
            v = np.stack([session.run(x, np.ones_like(x))[0] for x in ex]).mean(0)
            rows.append(v / np.linalg.norm(v))
        centroids[name] = np.stack(rows)
    top_fp32 = (vectors["fp32"] @ centroids["fp32"].T).argmax(1)
    print(f"{len(texts)} messages, {len(rule_ids)} rules; p50 ms per text (median of 5 alternating rounds)")
    print("| encoder | cos min | cos mean | top-1 changed | max |sim - fp32 sim| | p50 ms |")
    print("|---|---:|---:|---:|---:|---:|")
    reference = vectors["fp32"] @ centroids["fp32"].T
    for name in sessions:
        cos = (vectors[name] * vectors["fp32"]).sum(1)
        sims = vectors[name] @ centroids[name].T
        changed = int((sims.argmax(1) != top_fp32).sum())
        print(
            f"| {name} | {cos.min():.4f} | {cos.mean():.4f} | {changed} | {np.abs(sims - reference).max():.4f} | "
            f"{statistics.median(times[name]):.2f} |"
        )


if __name__ == "__main__":
    main()
