"""Rule-matcher update costs at 10k / 100k synthetic rules: one update call, and what it adds to the next match.

The same synthetic rules as ``matching_speed.py`` (precomputed vectors, so embedding is not measured). For each kind
of update (a rule's text edited; its priority changed; a new rule added then removed; ten rules edited in one
``upsert``), 30 rounds of: the update, then a match, then a second match; reported are the median update time and
the median of (first match - second match), which is what the update costs the next match (values the matcher
derives from its rules and keeps between matches, recomputed when an update invalidates them).

Usage::

    .venv/bin/python benchmarks/matching_updates.py
"""

from __future__ import annotations

import time

import numpy as np

from matching_speed import SEED, pseudo_words, synthetic
from norma.matching import MatchConfig, Rule, RuleMatcher

KINDS = ("text edit", "priority change", "add + remove", "10-rule edit")
ROUNDS = 30


def update(matcher: RuleMatcher, kind: str, rules: list[Rule], vectors: dict[str, np.ndarray], i: int) -> None:
    rule = rules[(i * 7919) % len(rules)]
    if kind == "text edit":
        matcher.upsert([Rule(id=rule.id, condition_text=f"{rule.condition_text} e{i}x")], {rule.id: vectors[rule.id]})
    elif kind == "priority change":
        changed = Rule(id=rule.id, condition_text=rule.condition_text, priority=i % 3 + 1)
        matcher.upsert([changed], {rule.id: vectors[rule.id]})
    elif kind == "add + remove":
        new = Rule(id=f"new-{i}", condition_text=rule.condition_text)
        matcher.upsert([new], {new.id: vectors[rule.id]})
        matcher.remove([new.id])
    else:
        batch = [Rule(id=r.id, condition_text=f"{r.condition_text} f{i}x") for r in rules[i * 10 : i * 10 + 10]]
        matcher.upsert(batch, {r.id: vectors[r.id] for r in batch})


def main() -> None:
    print("| rules | update | update call p50 ms | added to the next match p50 ms |")
    print("|---:|---|---:|---:|")
    for n in (10_000, 100_000):
        rng = np.random.default_rng(SEED)
        rules, vectors = synthetic(n, rng)
        config = MatchConfig(threshold=None, hnsw_min_rows=10**9)  # the exact path at 100k too: no HNSW build
        matcher = RuleMatcher(rules, config, embedder=None, vectors=vectors)
        query = vectors[rules[5].id][0]
        message = " ".join(pseudo_words(rng, 8))
        matcher.match(message, query_vector=query)
        for kind in KINDS:
            calls, first, second = [], [], []
            for i in range(ROUNDS):
                started = time.perf_counter()
                update(matcher, kind, rules, vectors, i)
                calls.append(time.perf_counter() - started)
                for out in (first, second):
                    started = time.perf_counter()
                    matcher.match(message, query_vector=query)
                    out.append(time.perf_counter() - started)
            added = (np.median(first) - np.median(second)) * 1000
            print(f"| {n:,} | {kind} | {np.median(calls) * 1000:.3f} | {added:.2f} |", flush=True)


if __name__ == "__main__":
    main()
