"""How far the fp32 embedding of one message is from this CPU's arithmetic floor (issue #58's 3 ms per turn).

For the messages the guard benchmark sends (examples/rulebooks/banking-support.labelled.jsonl): the tokens each
becomes, the floating-point operations all-MiniLM-L6-v2 spends on it (the six layers' matrix products and the
attention; the embedding lookup and the normalisations are negligible), the time of one fp32 embedding (norma's
encoder, one message at a time, p50 of every message), and the rate that time implies. Beside it, the rate this
machine's BLAS reaches on a large float32 matrix product on the same threads (numpy, a practical ceiling), and
what one message would take at that rate. Ran against the commit that added it (public API and
``norma.embeddings.get_embedder`` only).

Run: ``.venv/bin/python experiments/fp32_floor.py``.
"""

from __future__ import annotations

import json
import statistics
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))

from norma.embeddings import get_embedder  # noqa: E402

HIDDEN, FFN, LAYERS = 384, 1536, 6


def flops(tokens: int) -> float:
    """Multiply-adds x 2 of one sequence through the six layers."""
    per_token = 4 * HIDDEN * HIDDEN + 2 * HIDDEN * FFN  # Q, K, V, output projections; the two feed-forward ones
    attention = 2 * tokens * tokens * HIDDEN  # scores and the weighted sum
    return 2.0 * LAYERS * (tokens * per_token + attention)


def blas_rate(seconds: float = 2.0) -> float:
    a = np.random.default_rng(0).standard_normal((512, HIDDEN), dtype=np.float32)
    b = np.random.default_rng(1).standard_normal((HIDDEN, FFN), dtype=np.float32)
    done, started = 0, time.perf_counter()
    while time.perf_counter() - started < seconds:
        a @ b
        done += 1
    return done * 2.0 * 512 * HIDDEN * FFN / (time.perf_counter() - started)


def main() -> None:
    texts = [json.loads(line)["message"] for line in (ROOT / "examples/rulebooks/banking-support.labelled.jsonl").open()]
    embedder = get_embedder(quantize=False)
    counts = [len(ids) for ids in embedder._tokens.encode(texts)]
    embedder.embed(texts[:8])
    times = []
    for _round in range(3):
        for n, text in enumerate(texts):
            started = time.perf_counter()
            embedder.embed([f"{text} #{n}"])
            times.append(time.perf_counter() - started)
    p50 = statistics.median(times)
    tokens = statistics.median(counts)
    work = flops(int(tokens))
    rate = blas_rate()
    print(f"messages {len(texts)}, tokens p50 {tokens:.0f} (min {min(counts)}, max {max(counts)})")
    print(f"work per message p50: {work / 1e6:.0f} MFLOP")
    print(f"fp32 embedding p50: {p50 * 1000:.2f} ms -> {work / p50 / 1e9:.0f} GFLOP/s")
    print(f"numpy sgemm 512x384x1536: {rate / 1e9:.0f} GFLOP/s -> one message at that rate: {work / rate * 1000:.2f} ms")


if __name__ == "__main__":
    main()
