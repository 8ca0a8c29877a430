"""The int8 candidate scan on real embeddings: how many rules its bounds leave for exact rescoring, and its speed.

Rules: every BANKING77 train.csv message (10,003, one vector each, all-MiniLM-L6-v2 fp32); messages: 300 test.csv
messages. For each message, the default matcher (int8 scan from 2,048 vectors on) and the same matcher with the
float32 scan (``norma.matching.pipeline_module.SCAN``, an internal switch: the results are identical) are timed in
alternating rounds (``match`` with the precomputed message vector, no threshold, so 10 matches with explanations each
time) and their results compared. Reported: retrieval p50 / p95 of both scans, the number of rules whose bounds reach
the 30th best lower bound (the candidates), how many of those were rescored after the two-stage cut, and whether
every result was identical. Vectors are cached in ``.cache/matching_bench.sqlite`` (shared with matching_quality.py).

Usage::

    .venv/bin/python benchmarks/matching_scan.py
"""

from __future__ import annotations

import csv
import time
from pathlib import Path

import numpy as np

from _docs import machine_line
from norma.embeddings import CachedEmbedder, EmbeddingCache, get_embedder
from norma.matching import MatchConfig, Rule, RuleMatcher
from norma.matching import pipeline_module as pipeline

REPO = Path(__file__).resolve().parents[1]
DATA = REPO.parent / "shared" / "data" / "banking77"
CACHE = REPO / ".cache" / "matching_bench.sqlite"
MESSAGES = 300


def texts(name: str) -> list[str]:
    with (DATA / name).open(newline="", encoding="utf-8") as handle:
        return [row["text"] for row in csv.DictReader(handle)]


def main() -> None:
    CACHE.parent.mkdir(exist_ok=True)
    embedder = CachedEmbedder(get_embedder(), EmbeddingCache(str(CACHE)))
    train = texts("train.csv")
    messages = texts("test.csv")[:: len(texts("test.csv")) // MESSAGES][:MESSAGES]
    rules = [Rule(id=f"t{i:05d}", condition_text=text) for i, text in enumerate(train)]
    vectors = embedder.embed(train)
    queries = embedder.embed(messages)
    matcher = RuleMatcher(
        rules,
        MatchConfig(threshold=None),
        embedder=embedder,
        vectors={r.id: vectors[i : i + 1] for i, r in enumerate(rules)},
    )
    exact = matcher.config
    near_sizes: list[int] = []
    rescored: list[int] = []
    real_bounded, real_rescore = pipeline.bounded_candidates, pipeline.rescore

    def count_bounded(*args: object) -> object:
        found = real_bounded(*args)  # type: ignore[arg-type]
        if found is not None:
            near_sizes.append(len(found[0]))
        return found

    def count_rescore(matcher_: RuleMatcher, slots: np.ndarray, query: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        rescored.append(len(slots))
        return real_rescore(matcher_, slots, query)

    matcher.match(messages[0], query_vector=queries[0])  # builds the lexical index and packs the int8 matrix
    timings: dict[str, list[float]] = {"int8": [], "float32": []}
    same = 0
    per_match: list[int] = []
    for round_ in range(3):
        for scan in timings:
            pipeline.SCAN = scan
            for i in range(round_, MESSAGES, 3):
                started = time.perf_counter()
                matcher.match(messages[i], query_vector=queries[i], config=exact)
                timings[scan].append(time.perf_counter() - started)
    pipeline.bounded_candidates, pipeline.rescore = count_bounded, count_rescore  # type: ignore[assignment]
    try:
        for i in range(MESSAGES):
            before = len(rescored)
            pipeline.SCAN = "int8"
            got = matcher.match(messages[i], query_vector=queries[i])
            per_match.append(sum(rescored[before:]))
            pipeline.SCAN = "float32"
            same += got == matcher.match(messages[i], query_vector=queries[i], config=exact)
    finally:
        pipeline.SCAN = "auto"
        pipeline.bounded_candidates, pipeline.rescore = real_bounded, real_rescore  # type: ignore[assignment]

    def pct(values: list[float] | list[int], q: float, scale: float = 1.0) -> float:
        return float(np.percentile(np.asarray(values, dtype=np.float64) * scale, q))

    print(machine_line())
    print(f"rules: {len(rules):,} (BANKING77 train.csv), messages: {MESSAGES} (test.csv), dim {vectors.shape[1]}")
    print("| scan | retrieval p50 ms | p95 ms |")
    print("|---|---:|---:|")
    for scan, values in timings.items():
        print(f"| {scan} | {pct(values, 50, 1000):.3f} | {pct(values, 95, 1000):.3f} |")
    print()
    print(
        "| int8 bounds: candidates left (of 10,003) p50 / p95 / max "
        "| rules rescored per match (with the BM25 top) p50 / p95 | identical results |"
    )
    print("|---|---|---|")
    print(
        f"| {pct(near_sizes, 50):.0f} / {pct(near_sizes, 95):.0f} / {max(near_sizes)} "
        f"| {pct(per_match, 50):.0f} / {pct(per_match, 95):.0f} | {same} of {MESSAGES} |"
    )


if __name__ == "__main__":
    main()
