"""A batch-independent int8 encoder (issue #58, item 1): today's int8 model with every text embedded alone.

onnxruntime's dynamic quantisation takes each activation's scale from the whole batch (padding included), so a
text's int8 vector moves with its batch companions. Run one text at a time, the scale is the text's own: the vector
is a function of the text alone, bit for bit, whatever the batch. This script measures, on 256 BANKING77 messages:

* batch independence: 40 texts embedded alone, then in shuffled batches of 3, 8 and 32 (max absolute difference);
* agreement with fp32 (cosine, min and mean);
* speed per text, alternating rounds (median of 5): fp32 in batches of 32 and alone, int8 in batches of 32 and alone.

Measured 2026-12-03 14:45 UTC on 2 cores (AVX2, no VNNI), nothing else running: max difference fp32 4.5e-8, int8
batched 4.7e-2, int8 alone 0.0; cosine to fp32 min 0.983 (batched) / 0.980 (alone), mean 0.9934 / 0.9935; per text
fp32 in batches of 32 3.05 ms, fp32 alone 4.23, int8 in batches of 32 1.95, int8 alone 2.66 (medians of 5): alone,
int8 is 1.6 times faster than fp32 alone and faster than fp32 in batches. Quality per development set (issue #58,
item 2) not measured.

Usage: .venv/bin/python experiments/int8_alone.py
"""

from __future__ import annotations

import random
import statistics
import sys
import time
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "benchmarks"))

from _devsets import banking77  # noqa: E402
from norma.embeddings import BertEmbedder  # noqa: E402


def main() -> None:
    texts = [m.text for m in banking77(101, "tune", held_out=0).messages][:256]
    embedders = {
        "fp32 b32": BertEmbedder(quantize=False, batch_size=32),
        "fp32 alone": BertEmbedder(quantize=False, batch_size=1),
        "int8 b32": BertEmbedder(quantize=True, batch_size=32),
        "int8 alone": BertEmbedder(quantize=True, batch_size=1),
    }
    sample = texts[:40]
    for name in ("fp32 b32", "int8 b32", "int8 alone"):
        embedder = embedders[name]
        alone = np.stack([embedder.embed([t])[0] for t in sample])
        worst, rng = 0.0, random.Random(0)
        for size in (3, 8, 32):
            order = list(range(len(sample)))
            rng.shuffle(order)
            for i in range(0, len(order), size):
                chunk = order[i : i + size]
                worst = max(worst, float(np.abs(embedder.embed([sample[j] for j in chunk]) - alone[chunk]).max()))
        print(f"{name}: max |alone - in a batch| {worst:.2e}")
    reference = embedders["fp32 b32"].embed(texts)
    for name in ("int8 b32", "int8 alone"):
        cosine = (embedders[name].embed(texts) * reference).sum(1)
        print(f"{name}: cosine to fp32 min {cosine.min():.4f} mean {cosine.mean():.4f}")
    times: dict[str, list[float]] = {name: [] for name in embedders}
    for _ in range(5):
        for name, embedder in embedders.items():
            started = time.perf_counter()
            embedder.embed(texts)
            times[name].append((time.perf_counter() - started) / len(texts) * 1000)
    for name, values in times.items():
        print(f"{name}: {statistics.median(values):.2f} ms a text (median of 5)")


if __name__ == "__main__":
    main()
