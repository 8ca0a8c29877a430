"""What adapting a 150-rule, 10-example rulebook costs on this machine (issue #56: the target is 5 minutes on 2 cores).

The rulebook: BANKING77's 77 intents, then NLU++ banking's and hotels' intents up to 150 rules, each with its
condition and up to 10 examples (``_devsets``' tune draws 101). Each option set runs ``--steps`` training steps (the
progress callback stops it); the table gives the median seconds of a step (after 3 of warm-up), the steps a whole
run takes and their product: the projected time of ``norma rules adapt`` on that rulebook. The shipped options first
(chosen for quality and time by ``experiments/adapt_speed.py``: docs/design/040), then without the cross-fitted run,
then the options shipped before that study.

Usage::

    .venv/bin/python benchmarks/matching_adapt_speed.py [--steps 20]
    .venv/bin/python benchmarks/matching_adapt_speed.py --write   # and replaces its table in docs/benchmarks.md
"""

from __future__ import annotations

import argparse
import contextlib
import itertools
import os
import statistics
import sys
import tempfile
import time
from dataclasses import replace
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _devsets import banking77, nlupp
from matching_gate import machine_stamp, write
from norma.embeddings import AdaptOptions, adapt_encoder
from norma.rules import rule_texts

RULES = 150
EXAMPLES = 10


class _Enough(Exception):
    """Raised by the progress callback to stop a run after the steps timed."""


def rulebook() -> list[list[str]]:
    """The texts of each rule: its condition, then up to 10 examples; rules with 5 examples or more, up to 150."""
    groups: list[list[str]] = []
    for dev in (banking77(101, "tune", held_out=0), nlupp("banking", 101, "tune", held_out=0),
                nlupp("hotels", 101, "tune", held_out=0)):  # fmt: skip
        for rule in dev.rules:
            texts = rule_texts(rule)
            if len(texts) >= 6 and len(groups) < RULES:
                groups.append(texts[: EXAMPLES + 1])
    return groups


def timed(groups: list[list[str]], options: AdaptOptions, steps: int) -> tuple[float, int]:
    """(median seconds of a step after 3 of warm-up, steps a whole run takes)."""
    stamps: list[float] = []
    total = [0]

    def progress(done: int, of: int) -> None:
        stamps.append(time.perf_counter())
        total[0] = of
        if done >= steps:
            raise _Enough

    with tempfile.TemporaryDirectory() as folder, contextlib.suppress(_Enough):
        adapt_encoder(groups, Path(folder) / "m", options=options, progress=progress)
    return statistics.median(b - a for a, b in itertools.pairwise(stamps[2:])), total[0]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--steps", type=int, default=20, help="Steps timed per option set (default 20).")
    parser.add_argument("--write", action="store_true", help="Replace this script's table in docs/benchmarks.md.")
    args = parser.parse_args()
    groups = rulebook()
    base = AdaptOptions()
    variants = {
        f"shipped: {base.epochs} epochs, {base.pairs_per_text} pair a text, cross-fitted run (holdout 0.3)": base,
        "without the cross-fitted run (`--gate-holdout 0`)": replace(base, holdout=0.0),
        "the options before issue #56's study: 3 epochs, 4 pairs a text": replace(base, epochs=3, pairs_per_text=4),
    }
    lines = [
        f"{len(groups)} rules, {sum(len(g) for g in groups)} texts; {args.steps} steps timed per row.",
        "",
        "| options | s a step (median) | steps in all | projected |",
        "|---|--:|--:|--:|",
    ]
    print("\n".join(lines), flush=True)
    for name, options in variants.items():
        per_step, total = timed(groups, options, args.steps)
        lines.append(f"| {name} | {per_step:.2f} | {total} | {per_step * total / 60:.1f} min |")
        print(lines[-1], flush=True)
    lines += ["", f"Run: {machine_stamp()}, {os.cpu_count()} cores."]
    print(lines[-1])
    if args.write:
        write({"speed": lines}, "matching_adapt_speed.py")


if __name__ == "__main__":
    main()
