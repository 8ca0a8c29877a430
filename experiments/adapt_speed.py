"""Adapting in minutes (issue #56, item 3): fewer training pairs, chosen by quality on the tune draws.

The shipped options (3 epochs, 4 positive pairs a text, the cross-fitted run with holdout 0.3) take about 30 minutes
on a 150-rule, 10-example rulebook (``benchmarks/matching_adapt_speed.py``); the target is 5. Candidates, declared
before measuring (all keep the cross-fitted run: the adapted confidence's statistics need it, iteration 11):

* ``A`` — shipped: 3 epochs, 4 pairs a text;
* ``B`` — 3 epochs, 1 pair a text (about 6 minutes projected);
* ``C`` — 2 epochs, 1 pair a text (about 4);
* ``D`` — 2 epochs, 1 pair a text, learning rate 1e-4 (fewer steps, larger ones).

Per tune draw (NLU++ banking and hotels 101, BANKING77 25 rules 101 and 12 rules 102), each candidate adapts the
rulebook's own encoder and the shipped decision (a rule governs from 0.7, cross-fitted statistics) is measured as in
``experiments/adapted_confidence.py``: good answers not failed, bad caught, near misses and off-topic turns not
failed. Decision rule: the fastest candidate projected under 5 minutes whose worst over the draws of
min(good, bad, near, off) is within 0.02 of ``A``'s becomes the default; if none, ``A`` stays and the cost is said.
``--report C`` measures the shipped and the chosen options once on the report draws of iteration 11 (``--only C``:
the chosen alone, the shipped options' figures on the same draws being iteration 11's).

Usage: .venv/bin/python experiments/adapt_speed.py [--report C]
"""

from __future__ import annotations

import argparse
import shutil
import sys
import tempfile
import time
from dataclasses import replace
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "benchmarks"))
sys.path.insert(0, str(REPO / "experiments"))

from adapted_confidence import measure  # noqa: E402

from _devsets import banking77_subset, dev_sets  # noqa: E402
from norma.embeddings import AdaptOptions, BertEmbedder, CachedEmbedder, EmbeddingCache, adapt_encoder  # noqa: E402
from norma.matching import read_held_out  # noqa: E402
from norma.rules import rule_texts  # noqa: E402

CANDIDATES = {
    "A": AdaptOptions(),
    "B": replace(AdaptOptions(), pairs_per_text=1),
    "C": replace(AdaptOptions(), pairs_per_text=1, epochs=2),
    "D": replace(AdaptOptions(), pairs_per_text=1, epochs=2, learning_rate=1e-4),
}


def draws(part: str) -> list:
    seed = 101 if part == "tune" else 201
    out = [d for d in dev_sets(part) if d.name in (f"nlupp-banking/{seed}", f"nlupp-hotels/{seed}")]
    out += [
        banking77_subset(seed, part, kept=25, held_out=6),
        banking77_subset(seed + 1, part, kept=12, held_out=4),
    ]
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--report", help="measure A and this candidate on the report draws")
    parser.add_argument("--only", default="ABCD", help="candidates to run (default ABCD)")
    args = parser.parse_args()
    part = "report" if args.report else "tune"
    names = [n for n in ("A", args.report) if n in args.only] if args.report else list(args.only)
    print("| draw | options | adapting s | good | bad caught | multi | near not failed | off not failed | worst |")
    print("|---|---|--:|--:|--:|--:|--:|--:|--:|", flush=True)
    for dev in draws(part):
        for name in names:
            folder = Path(tempfile.mkdtemp(prefix="adapt-speed-"))
            try:
                started = time.perf_counter()
                adapt_encoder([rule_texts(r) for r in dev.rules], folder / "model", options=CANDIDATES[name])
                took = time.perf_counter() - started
                held = read_held_out(folder / "model")
                embedder = CachedEmbedder(BertEmbedder(folder / "model"), EmbeddingCache())
                f = measure(dev, embedder, held)
                print(
                    f"| {dev.name} | {name} | {took:.0f} | {f['good']:.3f} | {f['bad']:.3f} | {f['multi']:.3f} "
                    f"| {f['near']:.3f} | {f['off']:.3f} | {f['worst']:.3f} |",
                    flush=True,
                )
            finally:
                shutil.rmtree(folder, ignore_errors=True)


if __name__ == "__main__":
    main()
