"""Rule-matching quality on BANKING77: rules from train.csv, messages from test.csv, 10 intents held out.

Each of 67 intents becomes a rule whose condition text is built from the intent name ("card arrival" ->
"the customer asks about card arrival") with 0, 1, 3 or 10 examples drawn from train.csv (seeded); the other 10
intents (drawn with the same seed) have no rule, and their test messages should match nothing. Every test.csv
message is matched (vectors embedded once and cached in ``.cache/matching_bench.sqlite``).

Reported per configuration and example count: accuracy@1, recall@3 and MRR@10 over the messages of known intents
(ranking without a threshold), then at the configuration's threshold: precision and recall of the top match and
the rejection rate of held-out messages; ``--sweep`` adds precision / recall / rejection at other thresholds.

Usage::

    .venv/bin/python benchmarks/matching_quality.py             # the four configurations of the issue
    .venv/bin/python benchmarks/matching_quality.py --sweep     # also the threshold sweep
"""

from __future__ import annotations

import argparse
import csv
import json
import random
import time
from pathlib import Path
from typing import Any

import numpy as np

from norma.embeddings import CachedEmbedder, EmbeddingCache, get_embedder
from norma.matching import MatchConfig, Rule, RuleMatcher

REPO = Path(__file__).resolve().parents[1]
DATA = REPO.parent / "shared" / "data" / "banking77"
CACHE = REPO / ".cache" / "matching_bench.sqlite"
SEED = 20261122
HELD_OUT = 10
EXAMPLE_COUNTS = (0, 1, 3, 10)

CONFIGS: dict[str, MatchConfig] = {
    "vector only": MatchConfig(
        vector_weight=1.0,
        bm25_weight=0.0,
        hybrid_weight=1.0,
        priority_weight=0.0,
        scope_weight=0.0,
        threshold=0.55,
        threshold_on="similarity",
    ),
    "BM25 only": MatchConfig(
        vector_weight=0.0,
        bm25_weight=1.0,
        hybrid_weight=1.0,
        priority_weight=0.0,
        scope_weight=0.0,
        threshold=0.3,
        threshold_on="final",  # = hybrid: the priority and scope weights are 0
        bm25_normalization="query",
    ),
    "ADR hybrid": MatchConfig.adr(),
    "default": MatchConfig(),
}


def read(path: Path) -> list[tuple[str, str]]:
    with path.open(encoding="utf-8", newline="") as handle:
        return [(row["text"], row["category"]) for row in csv.DictReader(handle)]


def build_rules(train: list[tuple[str, str]], intents: list[str], examples: int) -> list[Rule]:
    rng = random.Random(SEED)
    by_intent: dict[str, list[str]] = {}
    for text, label in train:
        by_intent.setdefault(label, []).append(text)
    return [
        Rule(
            id=intent,
            condition_text=f"the customer asks about {intent.replace('_', ' ')}",
            examples=rng.sample(by_intent[intent], examples) if examples else [],
        )
        for intent in intents
    ]


def evaluate(
    matcher: RuleMatcher,
    config: MatchConfig,
    messages: list[str],
    vectors: np.ndarray,
    labels: list[str | None],
    thresholds: list[float],
) -> dict[str, Any]:
    ranking = config.with_(threshold=None, max_matched=10)
    started = time.perf_counter()
    results = matcher.match_many(messages, config=ranking, query_vectors=list(vectors))
    per_message = (time.perf_counter() - started) / len(messages) * 1000
    known = [i for i, label in enumerate(labels) if label is not None]
    unknown = [i for i, label in enumerate(labels) if label is None]
    hits1 = hits3 = 0
    reciprocal = 0.0
    for i in known:
        ids = [m.rule.id for m in results[i]]
        hits1 += bool(ids) and ids[0] == labels[i]
        hits3 += labels[i] in ids[:3]
        reciprocal += 1.0 / (ids.index(labels[i]) + 1) if labels[i] in ids else 0.0

    automatic = config.threshold == "auto"  # the rulebook's own similarity gate (docs/matching.md, "The gate")

    def score(m: Any) -> float:
        return float(m.similarity_score) if automatic else float(m.explanation.threshold_score)

    def at(threshold: float) -> tuple[float, float, float]:
        correct = predicted = rejected = 0
        for i, matches in enumerate(results):
            top = next((m for m in matches if score(m) >= threshold), None)
            if labels[i] is None:
                rejected += top is None
            elif top is not None:
                predicted += 1
                correct += top.rule.id == labels[i]
        for i in unknown:
            top = next((m for m in results[i] if score(m) >= threshold), None)
            predicted += top is not None
        precision = correct / predicted if predicted else 1.0
        return precision, correct / len(known), rejected / max(len(unknown), 1)

    gate = matcher.gate(config).threshold
    own = at(gate if gate is not None else -1e9)
    return {
        "gate": gate,
        "acc@1": hits1 / len(known),
        "recall@3": hits3 / len(known),
        "mrr": reciprocal / len(known),
        "precision": own[0],
        "recall": own[1],
        "rejection": own[2],
        "ms_per_message": per_message,
        "sweep": {t: at(t) for t in thresholds},
    }


def _gate(config: MatchConfig, threshold: float | None) -> str:
    if config.threshold == "auto":
        return f"auto: {threshold:.4f} on similarity" if threshold is not None else "auto"
    return f"{config.threshold} on {config.threshold_on}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sweep", action="store_true", help="print precision/recall/rejection per threshold")
    parser.add_argument("--json", type=Path, default=None, help="also write every figure to this JSON file")
    args = parser.parse_args()
    train, test = read(DATA / "train.csv"), read(DATA / "test.csv")
    intents = sorted(json.loads((DATA / "categories.json").read_text(encoding="utf-8")))
    held_out = set(random.Random(SEED).sample(intents, HELD_OUT))
    kept = [i for i in intents if i not in held_out]
    CACHE.parent.mkdir(exist_ok=True)
    embedder = CachedEmbedder(get_embedder(), EmbeddingCache(CACHE))
    messages = [text for text, _ in test]
    labels: list[str | None] = [None if label in held_out else label for _, label in test]
    vectors = embedder.embed(messages)
    thresholds = [round(x, 2) for x in np.arange(0.2, 0.91, 0.05)]
    print(f"BANKING77: {len(kept)} rules, {len(held_out)} intents held out ({sorted(held_out)})")
    print(f"{sum(lab is not None for lab in labels)} known + {sum(lab is None for lab in labels)} held-out messages")
    print()
    print("| config | examples | acc@1 | recall@3 | MRR@10 | threshold | precision | recall | held-out rejected |")
    print("|---|---:|---:|---:|---:|---|---:|---:|---:|")
    everything: dict[str, Any] = {}
    for examples in EXAMPLE_COUNTS:
        rules = build_rules(train, kept, examples)
        matcher = RuleMatcher(rules, embedder=embedder)
        for name, config in CONFIGS.items():
            row = evaluate(matcher, config, messages, vectors, labels, thresholds)
            everything[f"{name}/{examples}"] = row
            print(
                f"| {name} | {examples} | {row['acc@1']:.3f} | {row['recall@3']:.3f} | {row['mrr']:.3f} | "
                f"{_gate(config, row['gate'])} | {row['precision']:.3f} | {row['recall']:.3f} | "
                f"{row['rejection']:.3f} |",
                flush=True,
            )
    if args.sweep:
        for key, row in everything.items():
            print(f"\n{key}: threshold -> precision / recall / held-out rejected")
            print(" ".join(f"{t}:{p:.2f}/{r:.2f}/{j:.2f}" for t, (p, r, j) in row["sweep"].items()))
    if args.json:
        args.json.write_text(json.dumps(everything, indent=1, default=str), encoding="utf-8")


if __name__ == "__main__":
    main()
