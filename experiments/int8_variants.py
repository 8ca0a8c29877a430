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
from typing import Any

import numpy as np

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "benchmarks"))
sys.path.insert(0, str(REPO / "src"))

from _devsets import banking77  # noqa: E402
from norma.embeddings import BertEmbedder, find_model_dir, user_cache_dir  # noqa: E402


def variants(model: Any) -> dict[str, dict[str, Any]]:
    ffn_down, last = [], []
    for node in model.graph.node:
        if node.op_type != "MatMul":
            continue
        weight = " ".join(node.input)
        if ".output.dense" in weight and "attention" not in weight:
            ffn_down.append(node.name)
        if "layer.5." in weight:
            last.append(node.name)
    return {
        "today (MatMul, Attention, Gather)": {"op_types_to_quantize": ["MatMul", "Attention", "Gather"]},
        "no Gather": {"op_types_to_quantize": ["MatMul", "Attention"]},
        "no Gather, FFN down fp32": {"op_types_to_quantize": ["MatMul", "Attention"], "nodes_to_exclude": ffn_down},
        "no Gather, attention fp32": {"op_types_to_quantize": ["MatMul"]},
        "no Gather, last layer fp32": {"op_types_to_quantize": ["MatMul", "Attention"], "nodes_to_exclude": last},
    }


def session(path: Path) -> Any:
    """An onnxruntime session with the options norma's encoder uses (2 intra-op threads, every optimisation)."""
    import onnxruntime as ort

    options = ort.SessionOptions()
    options.intra_op_num_threads = 2
    options.inter_op_num_threads = 1
    options.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
    options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
    options.log_severity_level = 3
    return ort.InferenceSession(str(path), options, providers=["CPUExecutionProvider"])


def main() -> None:
    import onnx
    from onnxruntime.quantization import QuantType, quantize_dynamic
    from tokenizers import Tokenizer

    dev = banking77(101, "tune", held_out=0)
    texts = [m.text for m in dev.messages][:400]
    norma_fp32 = BertEmbedder(quantize=False, batch_size=1)
    expected = norma_fp32.embed(texts)  # also writes the built fp32 graph to norma's cache, read below
    (fp32_file,) = sorted(
        (user_cache_dir() / "embeddings").glob("encoder-*-fp32.onnx"), key=lambda p: p.stat().st_mtime
    )[-1:]
    model = onnx.load(str(fp32_file))
    assert len({n.name for n in model.graph.node}) == len(model.graph.node), "nodes need unique names"
    tokenizer = Tokenizer.from_file(str(find_model_dir()[0] / "tokenizer.json"))
    tokenizer.no_padding()
    tokenizer.enable_truncation(norma_fp32.max_seq_length)

    def ids_of(items: list[str]) -> list[np.ndarray]:
        return [np.asarray([e.ids], dtype=np.int64) for e in tokenizer.encode_batch(items)]

    ids = ids_of(texts)
    sessions = {"fp32": session(fp32_file)}
    folder = Path(tempfile.mkdtemp())
    for name, options in variants(model).items():
        path = folder / f"{len(sessions)}.onnx"
        quantize_dynamic(model, path, per_channel=True, weight_type=QuantType.QInt8,
                         extra_options={"DefaultTensorType": onnx.TensorProto.FLOAT}, **options)  # fmt: skip
        sessions[name] = session(path)

    def run(s: Any, x: np.ndarray) -> np.ndarray:
        out = np.asarray(s.run(None, {"input_ids": x, "attention_mask": np.ones_like(x)})[0][0], dtype=np.float32)
        return out / np.linalg.norm(out)

    vectors = {name: np.stack([run(s, x) for x in ids]) for name, s in sessions.items()}
    agreement = float((vectors["fp32"] * expected).sum(1).min())
    assert agreement > 0.99999, f"the fp32 session is not norma's encoder (min cosine {agreement})"
    times: dict[str, list[float]] = {name: [] for name in sessions}
    for _ in range(5):
        for name, s in sessions.items():
            took = []
            for x in ids[:100]:
                start = time.perf_counter()
                s.run(None, {"input_ids": x, "attention_mask": np.ones_like(x)})
                took.append(time.perf_counter() - start)
            times[name].append(statistics.median(took) * 1e3)
    centroids = {}
    for name, s in sessions.items():
        rows = []
        for rule in dev.rules:
            v = np.stack([run(s, x) for x in ids_of(list(rule.examples))]).mean(0)
            rows.append(v / np.linalg.norm(v))
        centroids[name] = np.stack(rows)
    reference = vectors["fp32"] @ centroids["fp32"].T
    print(f"{len(texts)} messages, {len(dev.rules)} rules; p50 ms per text (median of 5 alternating rounds)")
    print("| encoder | cos min | cos mean | top-1 changed | max |sim - fp32 sim| | p50 ms |")
    print("|---|---:|---:|---:|---:|---:|")
    for name in sessions:
        cos = (vectors[name] * vectors["fp32"]).sum(1)
        sims = vectors[name] @ centroids[name].T
        changed = int((sims.argmax(1) != reference.argmax(1)).sum())
        print(
            f"| {name} | {cos.min():.4f} | {cos.mean():.4f} | {changed} | {np.abs(sims - reference).max():.4f} | "
            f"{statistics.median(times[name]):.2f} |"
        )


if __name__ == "__main__":
    main()
