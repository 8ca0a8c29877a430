"""Rule-matching speed at 1k / 10k / 100k synthetic rules: index build, retrieval and end-to-end latency.

Synthetic rules: condition texts of 6-12 Zipf-distributed pseudo-words (a realistic term-frequency skew for BM25),
and clustered random unit vectors (2,000 random centres + noise, dim 384) instead of embedding 100k texts. Each
size reports: build time (RuleMatcher from precomputed vectors; plus the HNSW index where one is used), retrieval
latency p50 / p95 (``match`` with a precomputed query vector; the default scan, and the float32 scan in alternating
rounds of the same run), end-to-end latency (``match`` of a message with the real embedder), and a naive baseline
measured in the same run (per call: a pure-Python cosine loop over every rule vector and a fresh
``rank_bm25.BM25Okapi`` over every condition text), with the ratio of the p50s. At sizes where HNSW is used,
recall@10 against the exact path is reported too, and the exact path is measured at 100k as well.

Usage::

    .venv/bin/python benchmarks/matching_speed.py            # 1k, 10k, 100k
    .venv/bin/python benchmarks/matching_speed.py --quick    # 1k, 10k
    .venv/bin/python benchmarks/matching_speed.py --blas-threads 1   # pin OpenBLAS to one thread
    .venv/bin/python benchmarks/matching_speed.py --quick --examples 1   # rules with examples: the automatic gate

With ``--examples N`` every rule also gets N example texts (vectors near the rule's), so the matcher measures the
rulebook's own gate (with its margin band), and a last column times ``match`` with the default automatic gate in
the same alternating rounds (the gate measured once before timing; docs/benchmarks.md gives its cost apart).
"""

from __future__ import annotations

import os
import sys

if "--blas-threads" in sys.argv:  # must be set before numpy loads OpenBLAS
    os.environ["OPENBLAS_NUM_THREADS"] = sys.argv[sys.argv.index("--blas-threads") + 1]

import argparse
import math
import time

import numpy as np
from rank_bm25 import BM25Okapi

from _docs import machine_line
from norma.embeddings import get_embedder
from norma.matching import MatchConfig, Rule, RuleMatcher, tokenize
from norma.matching import pipeline_module as pipeline

DIM = 384
SEED = 20261122


def pseudo_words(rng: np.random.Generator, count: int) -> list[str]:
    ranks = np.minimum(rng.zipf(1.3, size=count), 50_000)
    return [f"w{int(r)}x" for r in ranks]


def synthetic(n: int, rng: np.random.Generator, examples: int = 0) -> tuple[list[Rule], dict[str, np.ndarray]]:
    centres = rng.standard_normal((2000, DIM)).astype(np.float32)
    centres /= np.linalg.norm(centres, axis=1, keepdims=True)
    noise = rng.standard_normal((n, DIM)).astype(np.float32) * 0.06
    vectors = centres[rng.integers(0, len(centres), n)] + noise
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    rules = [
        Rule(
            id=f"rule-{i:06d}",
            condition_text=" ".join(pseudo_words(rng, int(rng.integers(6, 13)))),
            examples=[" ".join(pseudo_words(rng, 6)) for _ in range(examples)],
        )
        for i in range(n)
    ]
    out = {}
    for i, rule in enumerate(rules):
        texts = vectors[i] + rng.standard_normal((1 + examples, DIM)).astype(np.float32) * 0.03
        texts[0] = vectors[i]
        out[rule.id] = texts / np.linalg.norm(texts, axis=1, keepdims=True)
    return rules, out


def percentiles(samples: list[float]) -> tuple[float, float]:
    values = np.asarray(samples) * 1000
    return float(np.percentile(values, 50)), float(np.percentile(values, 95))


def naive_match(message: str, query: list[float], texts: list[list[str]], vectors: list[list[float]]) -> list[int]:
    """How a first implementation does it: a Python cosine loop and a BM25 index built per call."""
    bm25 = BM25Okapi(texts)
    lexical = bm25.get_scores(tokenize(message))
    top = max(lexical) or 1.0
    scores = []
    for i, vector in enumerate(vectors):
        dot = sum(a * b for a, b in zip(query, vector, strict=True))
        norm = math.sqrt(sum(a * a for a in vector)) * math.sqrt(sum(b * b for b in query))
        scores.append((0.7 * dot / norm + 0.3 * lexical[i] / top, i))
    scores.sort(reverse=True)
    return [i for _, i in scores[:10]]


def retrieval(matcher: RuleMatcher, messages: list[str], queries: list[np.ndarray], config: MatchConfig) -> list[float]:
    timings = []
    for message, query in zip(messages, queries, strict=True):
        started = time.perf_counter()
        matcher.match(message, query_vector=query, config=config)
        timings.append(time.perf_counter() - started)
    return timings


def run(
    n: int,
    rng: np.random.Generator,
    queries: int,
    embed_queries: int,
    naive_calls: int,
    *,
    exact: bool = False,
    examples: int = 0,
) -> dict[str, float]:
    rules, vectors = synthetic(n, rng, examples)
    pipeline.HNSW_BACKGROUND = False  # the first match builds the HNSW index before timing
    config = MatchConfig(threshold=None)
    if exact:  # the exact path past hnsw_min_rows too
        config = config.with_(hnsw_min_rows=10**9)
    started = time.perf_counter()
    matcher = RuleMatcher(rules, config, embedder=get_embedder(), vectors=vectors)
    build = time.perf_counter() - started
    picks = rng.integers(0, n, queries)
    query_vectors = [vectors[rules[i].id][0] + rng.standard_normal(DIM).astype(np.float32) * 0.05 for i in picks]
    query_vectors = [q / np.linalg.norm(q) for q in query_vectors]
    messages = [" ".join(pseudo_words(rng, 8)) for _ in range(queries)]
    started = time.perf_counter()
    matcher.match(messages[0], query_vector=query_vectors[0])  # builds the lexical (and HNSW) index
    first = time.perf_counter() - started
    scans: dict[str, list[float]] = {"auto": [], "float32": []}  # alternating rounds: all see the same machine
    configs = dict.fromkeys(scans, matcher.config)
    if examples:
        scans["gated"] = []
        configs["gated"] = matcher.config.with_(threshold="auto")
        matcher.gate(configs["gated"])  # measured once per rules version, before timing
    for round_ in range(3):
        for scan in scans:
            part = slice(round_ * queries // 3, (round_ + 1) * queries // 3)
            pipeline.SCAN = "float32" if scan == "float32" else "auto"  # the same results, two implementations
            scans[scan] += retrieval(matcher, messages[part], query_vectors[part], configs[scan])
    pipeline.SCAN = "auto"
    retrieval_p = percentiles(scans["auto"])
    float32_p50 = percentiles(scans["float32"])[0] if matcher.config.hnsw_min_rows > n else float("nan")
    recall = float("nan")
    if matcher.config.hnsw_min_rows <= n:
        exact_config = config.with_(hnsw_min_rows=10**9)
        hits = 0
        for message, query in zip(messages[:50], query_vectors[:50], strict=True):
            approx = {m.rule.id for m in matcher.match(message, query_vector=query)}
            exact = {m.rule.id for m in matcher.match(message, query_vector=query, config=exact_config)}
            hits += len(approx & exact)
        recall = hits / (50 * 10)
    texts = [f"customer asks about {' '.join(pseudo_words(rng, 4))} and wants help" for _ in range(embed_queries)]
    matcher.match(texts[0])
    e2e = []
    for text in texts:
        started = time.perf_counter()
        matcher.match(text)
        e2e.append(time.perf_counter() - started)
    end_to_end = percentiles(e2e)
    gated_p50 = percentiles(scans["gated"])[0] if examples else float("nan")
    plain_vectors = [vectors[rule.id][0].tolist() for rule in rules]
    tokenized = [tokenize(rule.condition_text) for rule in rules]
    naive = []
    for message, query in list(zip(messages, query_vectors, strict=True))[:naive_calls]:
        started = time.perf_counter()
        naive_match(message, query.tolist(), tokenized, plain_vectors)
        naive.append(time.perf_counter() - started)
    naive_p50, naive_p95 = percentiles(naive)
    return {
        "rules": n,
        "float32_p50": float32_p50,
        "build_s": build,
        "first_match_s": first,
        "retrieval_p50": retrieval_p[0],
        "retrieval_p95": retrieval_p[1],
        "e2e_p50": end_to_end[0],
        "e2e_p95": end_to_end[1],
        "naive_p50": naive_p50,
        "naive_p95": naive_p95,
        "ratio": naive_p50 / retrieval_p[0],
        "hnsw_recall": recall,
        "gated_p50": gated_p50,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="1k and 10k rules only")
    parser.add_argument("--blas-threads", type=int, default=None, help="OPENBLAS_NUM_THREADS for this run")
    parser.add_argument("--examples", type=int, default=0, help="example texts per rule (times the automatic gate)")
    args = parser.parse_args()
    sizes = [1_000, 10_000] if args.quick else [1_000, 10_000, 100_000]
    rng = np.random.default_rng(SEED)
    get_embedder().embed(["warm up"])
    print(machine_line())
    print(f"BLAS threads: {os.environ.get('OPENBLAS_NUM_THREADS', 'default')}; cores: {os.cpu_count()}")
    print(
        "| rules | path | build s | first match s | retrieval p50 ms | p95 ms | float32 scan p50 ms "
        "| end-to-end p50 ms | p95 ms | naive p50 ms | naive/ours | HNSW recall@10 | automatic gate p50 ms |"
    )
    print("|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    runs = [(n, False) for n in sizes]
    if 100_000 in sizes:
        runs.append((100_000, True))  # the exact int8 path at 100k too, for comparison with HNSW
    for n, exact in runs:
        row = run(
            n, rng, queries=300, embed_queries=100, naive_calls=20 if n <= 10_000 else 3, exact=exact,
            examples=args.examples,
        )  # fmt: skip
        path = "HNSW + exact rescoring" if n >= MatchConfig().hnsw_min_rows and not exact else "exact"
        recall = "-" if math.isnan(row["hnsw_recall"]) else f"{row['hnsw_recall']:.3f}"
        float32 = "-" if math.isnan(row["float32_p50"]) else f"{row['float32_p50']:.3f}"
        print(
            f"| {n:,} | {path} | {row['build_s']:.2f} | {row['first_match_s']:.2f} | {row['retrieval_p50']:.3f} "
            f"| {row['retrieval_p95']:.3f} | {float32} | {row['e2e_p50']:.2f} | {row['e2e_p95']:.2f} "
            f"| {row['naive_p50']:.1f} | {row['ratio']:.0f}x | {recall} | "
            f"{'-' if math.isnan(row['gated_p50']) else format(row['gated_p50'], '.3f')} |",
            flush=True,
        )


if __name__ == "__main__":
    main()
