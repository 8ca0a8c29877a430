"""What adapting a 150-rule, 10-example rulebook costs on 2 cores, and where the time goes (issue #56).

The rulebook: BANKING77's 77 intents, then NLU++ banking's and hotels' intents (prefixed by domain) up to 150 rules,
each with its condition and 10 examples (``_devsets``' tune folds). Each variant of the fine-tuning options runs for
``--steps`` steps (the progress callback stops it); the table gives seconds per step and the projected time of the
whole run (steps in all x seconds per step), with the steps a full run takes.

Usage: .venv/bin/python experiments/adapt_speed.py [--steps 30]
"""

from __future__ import annotations

import argparse
import contextlib
import sys
import tempfile
import time
from dataclasses import replace
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "benchmarks"))

from _devsets import banking77, nlupp  # noqa: E402
from norma.embeddings import AdaptOptions, adapt_encoder  # noqa: E402
from norma.rules import rule_texts  # noqa: E402


class Enough(Exception):
    pass


def rulebook() -> list[list[str]]:
    groups: list[list[str]] = []
    for dev in (banking77(101, "tune", held_out=0), nlupp("banking", 101, "tune", held_out=0),
                nlupp("hotels", 101, "tune", held_out=0)):  # fmt: skip
        for rule in dev.rules:
            texts = rule_texts(rule)
            if len(texts) >= 6 and len(groups) < 150:
                groups.append(texts[:11])
    return groups


def timed(groups: list[list[str]], options: AdaptOptions, steps: int) -> tuple[float, int]:
    """(seconds per step after the first 3, steps in all)."""
    stamps: list[float] = []
    total = [0]

    def progress(done: int, of: int) -> None:
        stamps.append(time.perf_counter())
        total[0] = of
        if done >= steps:
            raise Enough

    with tempfile.TemporaryDirectory() as folder, contextlib.suppress(Enough):
        adapt_encoder(groups, Path(folder) / "m", options=options, progress=progress)
    per_step = (stamps[-1] - stamps[2]) / (len(stamps) - 3)
    return per_step, total[0]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--steps", type=int, default=30)
    args = parser.parse_args()
    groups = rulebook()
    print(f"{len(groups)} rules, {sum(len(g) for g in groups)} texts")
    base = AdaptOptions()
    variants = {
        "shipped (3 epochs, 4 pairs/text, holdout 0.3)": base,
        "holdout 0": replace(base, holdout=0.0),
        "holdout 0, 1 pair/text": replace(base, holdout=0.0, pairs_per_text=1),
        "holdout 0, max 32 tokens": replace(base, holdout=0.0, max_tokens=32),
        "holdout 0, batch 64": replace(base, holdout=0.0, batch_size=64),
    }
    print("| options | s / step | steps in all | projected |")
    print("|---|--:|--:|--:|")
    for name, options in variants.items():
        per_step, total = timed(groups, options, args.steps)
        print(f"| {name} | {per_step:.3f} | {total} | {per_step * total / 60:.1f} min |", flush=True)


if __name__ == "__main__":
    main()
