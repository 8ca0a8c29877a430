"""How many labelled messages does calibrating a gate need to land near each draw's best threshold?

No rulebook-only gate is within 0.05 of the best single threshold on every development draw (``matching_gate.py``,
noise table): what moves that threshold is what the messages that must match nothing look like, and a rulebook
does not contain them. Labelled messages do. Measured on the report draws of ``_devsets.py`` and BANKING77's
test.csv draws: per draw and per size N (at most half the draw's messages), 5 seeded samples of N of the draw's
messages (whatever they expect, none included) set the gate; the draw's *other* messages measure it,
min(acc@1, rejection), against the best single similarity threshold on those same other messages (the oracle).
Two ways to set it from the sample:

* ``calibrate_gate`` as shipped (``norma rules calibrate`` without a target: the best F1 of every returned rule);
* the development objective itself: the threshold (0.005 grid) with the best min(acc@1, rejection) on the sample,
  what a calibration target aimed at that objective would pick.

Nothing is chosen here: N is the variable reported, the targets are given.

Usage::

    .venv/bin/python benchmarks/matching_calibration.py           # prints the table
    .venv/bin/python benchmarks/matching_calibration.py --write   # and replaces its table in docs/benchmarks.md
"""

from __future__ import annotations

import platform
import sys
from datetime import UTC, datetime
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _devsets import DevSet, banking77_test, dev_sets
from matching_gate import Draw, objective, oracle, table_script, write
from norma.matching import calibrate_gate

SIZES = (50, 100, 200, 400)
SAMPLES = 5


Outcome = dict[str, dict[int, list[tuple[float, float]]]]
"""Per way of setting the gate, per N: (gap to the oracle of the held-back messages, min(acc@1, rejection))."""
WAYS = ("calibrate_gate, best F1 (shipped)", "best min(acc@1, rejection) on the sample")


def measure(dev: DevSet, draw: Draw) -> Outcome:
    out: Outcome = {way: {} for way in WAYS}
    for size in SIZES:
        taken = min(size, len(dev.messages) // 2)
        for seed in range(SAMPLES):
            picked = set(np.random.default_rng(seed).choice(len(dev.messages), taken, replace=False).tolist())
            chosen = sorted(picked)
            rest = [i for i in range(len(dev.messages)) if i not in picked]
            labelled = [(dev.messages[i].text, sorted(dev.messages[i].expected)) for i in chosen]
            f1 = calibrate_gate(draw.matcher, labelled).threshold
            assert f1 is not None
            _, balanced = oracle([draw.expected[i] for i in chosen], [draw.ranked[i] for i in chosen])
            expected = [draw.expected[i] for i in rest]
            ranked = [draw.ranked[i] for i in rest]
            best, _ = oracle(expected, ranked)
            for way, threshold in zip(WAYS, (f1, balanced), strict=True):
                reached = min(objective(expected, ranked, lambda s, h, t=threshold: s >= t))
                out[way].setdefault(size, []).append((best - reached, reached))
    return out


def table(results: list[Outcome], default: list[tuple[float, float]]) -> list[str]:
    def row(name: str, pairs: list[tuple[float, float]]) -> str:
        gaps = np.array([g for g, _ in pairs])
        reached = np.array([r for _, r in pairs])
        return (
            f"| {name} | {gaps.mean():.3f} | {gaps.max():.3f} | {int((gaps <= 0.05).sum())}/{len(gaps)} | "
            f"{reached.mean():.3f} ({reached.min():.3f}) |"
        )

    lines = [
        "| gate set by | labelled messages | mean gap | worst gap | within 0.05 | "
        "min(acc@1, rejection): mean (worst) |",
        "|---|---:|---:|---:|---:|---:|",
        "| the rulebook (`gate_quantile` 0.22) " + row("none", default),
    ]
    for way in WAYS:
        for size in SIZES:
            lines.append(f"| {way} " + row(str(size), [pair for result in results for pair in result[way][size]]))
            print(lines[-1], flush=True)
    return lines


def main() -> None:
    args, embedder = table_script(__doc__)
    devs = [*dev_sets("report"), *(banking77_test(seed) for seed in (1, 2, 3))]
    results, default = [], []
    for dev in devs:
        draw = Draw(dev, embedder)
        results.append(measure(dev, draw))
        reached = min(draw.at_similarity(draw.gate(0.22)))
        default.append((draw.oracle - reached, reached))
        print(f"  {dev.name}: {len(dev.messages)} messages", flush=True)
    lines = table(results, default)
    lines += [
        "",
        f"Run: {datetime.now(UTC):%Y-%m-%d %H:%M} UTC, {platform.processor() or platform.machine()}, "
        f"Python {platform.python_version()}; {len(devs)} report draws x {SAMPLES} samples per size "
        "(at most half a draw's messages: 125 on NLU++ hotels, 260 on NLU++ banking).",
    ]
    print("\n".join(lines))
    if args.write:
        write({"calibration": lines}, "matching_calibration.py")


if __name__ == "__main__":
    main()
