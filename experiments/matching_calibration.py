"""Calibrating a gate from labelled messages: how much it needs, and the prior of the balanced calibration.

No rulebook-only gate is within 0.05 of the best single threshold on every development draw (``matching_gate.py``,
noise table; ``matching_gate_fresh.py``: within one kind of traffic its quantile misses a threshold the rulebook
largely fixes), and none serves both kinds of out-of-scope traffic (``matching_gate_methods.py``): which kind a
tenant gets is not in its rulebook. Labelled messages show both. The draws: the tune and report draws of
``_devsets.py`` with the smaller BANKING77 rulebooks (and, for reporting, BANKING77's test.csv draws), each with
three kinds of messages that must match nothing: held-out intents of the rulebook's domain (the gate protocol's),
NLU++ queries of another domain (``foreign``), and both (``mixed``). Per draw and per size N (at most half the
draw's messages), 5 seeded samples of N of the draw's messages (whatever they expect, none included) set the gate;
the draw's *other* messages measure it: min(acc@1, rejection), against the best single similarity threshold on those
same other messages (the oracle).

1. **Choose** the balanced calibration's ``prior`` on the tune draws only: the value with the smallest mean gap
   over every tune draw, kind, size and sample (ties: the larger prior, nearer the rulebook's gate). Each sample's
   best shift of the rulebook gate is fitted once (``fit_gate`` with prior 0) and shrunk per prior by
   ``n / (n + prior)``, n the sample's messages that expect no rule.
2. **Report** on the report draws, for each kind and size: the rulebook's gate (no labels), ``calibrate_gate``'s
   balanced default with the chosen prior, the same unshrunk (prior 0), and the best-F1 target.
3. **Edits**: what a calibration is worth once the rules changed (a fifth of the rules added after calibrating;
   sizes 100 and 400), stored as it is or as a shift of the new rulebook's gate, against none and a new one.

The calibrated gates come from the library (``observe`` then ``fit_gate``, what ``calibrate_gate`` does, with every
message matched once); they are measured with this script's own replay of the gate (``matching_gate.Draw``: the
band applies on the ten best candidates kept per message).

Usage::

    .venv/bin/python benchmarks/matching_calibration.py           # prints the tables
    .venv/bin/python benchmarks/matching_calibration.py --write   # and replaces its tables in docs/benchmarks.md
"""

from __future__ import annotations

import math
import platform
import sys
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _devsets import DevSet, Labelled, banking77_test, dev_sets, foreign
from matching_gate import Draw, objective, subsets, table_script, write
from norma.embeddings import CachedEmbedder
from norma.errors import InvalidInputError
from norma.matching import CALIBRATION_PRIOR, AppliedGate, LabelledMessage, Observed, fit_gate, observe
from norma.matching._gate import gate_band

SIZES = (50, 100, 200, 400)
SAMPLES = 5
PRIORS = (0.0, 1.0, 2.0, 3.0, 5.0, 7.0, 10.0, 15.0, 20.0, 40.0, 80.0, math.inf)
KINDS = ("held-out", "foreign", "mixed")
GRID = np.round(np.arange(0.2, 0.95, 0.005), 3)
UNCALIBRATED: list[tuple[str, int]] = []
"""Report samples a balanced calibration refused (none of their messages expects no rule): the rulebook gate stays."""


class Kind:
    """One draw with one kind of out-of-scope messages: the matched draw, every message observed once."""

    def __init__(self, dev: DevSet, kind: str, embedder: CachedEmbedder) -> None:
        self.kind, self.dev = kind, dev
        self.draw = Draw(dev, embedder)
        self.base = self.draw.matcher.measured_gate()
        items = [LabelledMessage(message=m.text, expected=tuple(sorted(m.expected))) for m in dev.messages]
        self.observed = observe(self.draw.matcher, items)
        self.size = len(dev.messages)

    def measure(self, rest: list[int], threshold: float, band: tuple[float, float] | None) -> float:
        """min(acc@1, rejection) of a gate on the messages ``rest`` (this script's replay, not the library's)."""
        d = self.draw
        limits = []
        for i in rest:
            lowered = band is not None and band[0] <= d.first[i] < threshold and d.first[i] - d.second[i] >= band[1]
            limits.append(band[0] if band is not None and lowered else threshold)
        expected, ranked = [d.expected[i] for i in rest], [d.ranked[i] for i in rest]
        return min(objective(expected, ranked, None, limits))

    def oracle(self, rest: list[int]) -> float:
        return max(self.measure(rest, float(t), None) for t in GRID)


def _split(size: int, taken: int, seed: int) -> tuple[list[int], list[int]]:
    picked = set(np.random.default_rng(seed).choice(size, taken, replace=False).tolist())
    return sorted(picked), [i for i in range(size) if i not in picked]


def _moved(base: AppliedGate, shift: float) -> tuple[float, tuple[float, float] | None]:
    assert base.threshold is not None
    band = gate_band(base)
    return round(base.threshold + shift, 4), None if band is None else (round(band[0] + shift, 4), band[1])


Samples = list[tuple[Kind, int, list[Observed], list[int]]]
"""(draw, size, the sample's observations, the held-back message indices)."""


def samples(kinds: list[Kind]) -> Samples:
    out: Samples = []
    for k in kinds:
        for size in SIZES:
            taken = min(size, k.size // 2)
            for seed in range(SAMPLES):
                chosen, rest = _split(k.size, taken, seed)
                out.append((k, size, [k.observed[i] for i in chosen], rest))
    return out


def choose(tune: Samples) -> tuple[float, list[str]]:
    """The prior with the smallest mean gap over the tune samples, and the table of every prior."""
    gaps: dict[float, dict[str, list[float]]] = {p: {kind: [] for kind in KINDS} for p in PRIORS}
    for k, _, sample, rest in tune:
        try:
            fitted = fit_gate(sample, k.base, prior=0.0).terms
        except InvalidInputError:  # no message of the sample expects none: the rulebook gate stays
            fitted = {"expecting_none": 0, "fitted_shift": 0.0}
        best = k.oracle(rest)
        n = fitted["expecting_none"]
        for prior in PRIORS:
            weight = 0.0 if math.isinf(prior) or not n else n / (n + prior)
            gaps[prior][k.kind].append(
                best - k.measure(rest, *_moved(k.base, round(weight * fitted["fitted_shift"], 4)))
            )

    def mean(prior: float) -> float:
        return float(np.mean([g for kind in KINDS for g in gaps[prior][kind]]))

    chosen = min(PRIORS, key=lambda p: (round(mean(p), 6), -p))
    lines = [
        "| prior | " + " | ".join(f"{kind}: mean / worst gap" for kind in KINDS) + " | all: mean gap |",
        "|---:|" + "---:|" * (len(KINDS) + 1),
    ]
    for prior in PRIORS:
        name = "inf (the rulebook gate)" if math.isinf(prior) else f"{prior:g}"
        mark = "**" if prior == chosen else ""
        cells = " | ".join(f"{np.mean(gaps[prior][kind]):.3f} / {np.max(gaps[prior][kind]):.3f}" for kind in KINDS)
        lines.append(f"| {mark}{name}{mark} | {cells} | {mark}{mean(prior):.3f}{mark} |")
    return chosen, lines


Way = Callable[[Kind, list[Observed]], tuple[float, tuple[float, float] | None]]


def _fitted(**options: object) -> Way:
    def way(k: Kind, sample: list[Observed]) -> tuple[float, tuple[float, float] | None]:
        try:
            gate = fit_gate(sample, k.base, **options)  # type: ignore[arg-type]
        except InvalidInputError:  # a balanced calibration of a sample with no message that expects none
            UNCALIBRATED.append((k.kind, len(sample)))
            return _moved(k.base, 0.0)
        assert gate.threshold is not None
        return gate.threshold, gate_band(gate)

    return way


def report(kinds: list[Kind], prior: float) -> list[str]:
    ways: dict[str, Way] = {
        "the rulebook (no labels)": lambda k, _: _moved(k.base, 0.0),
        f"balanced, prior {prior:g} (the default)": _fitted(prior=prior),
        "balanced, prior 0 (unshrunk)": _fitted(prior=0.0),
        "best F1": _fitted(best_f1=True),
    }
    cells: dict[tuple[str, str, int], list[tuple[float, float]]] = {}
    for k, size, sample, rest in samples(kinds):
        best = k.oracle(rest)
        for name, way in ways.items():
            reached = k.measure(rest, *way(k, sample))
            cells.setdefault((k.kind, name, size), []).append((best - reached, reached))
    lines = [
        "| out-of-scope messages | gate set by | "
        + " | ".join(f"N = {n}: mean / worst gap (within 0.05)" for n in SIZES)
        + " | min(acc@1, rejection), N = 400: mean (worst) |",
        "|---|---|" + "---:|" * (len(SIZES) + 1),
    ]
    for kind in KINDS:
        for name in ways:
            row = []
            for n in SIZES:
                gaps = np.array([g for g, _ in cells[(kind, name, n)]])
                row.append(f"{gaps.mean():.3f} / {gaps.max():.3f} ({int((gaps <= 0.05).sum())}/{len(gaps)})")
            reached = np.array([r for _, r in cells[(kind, name, SIZES[-1])]])
            lines.append(f"| {kind} | {name} | " + " | ".join(row) + f" | {reached.mean():.3f} ({reached.min():.3f}) |")
    return lines


def edits(kinds: list[Kind], embedder: CachedEmbedder) -> list[str]:
    """A calibration the rules then outgrew: calibrated on the draw's rulebook without a fifth of its rules (drawn
    with ``default_rng(5)``; their messages expect none there), judged on the full rulebook's other messages: the
    stored gate as it is, its shift applied to the full rulebook's gate instead, no calibration, and a calibration
    made again on the full rulebook with the same sample."""
    gaps: dict[str, list[tuple[float, float, float, float]]] = {kind: [] for kind in KINDS}
    for full in kinds:
        dev = full.dev
        ids = sorted(r.id for r in dev.rules)
        gone = set(np.random.default_rng(5).choice(ids, max(1, len(ids) // 5), replace=False).tolist())
        messages = [Labelled(m.text, frozenset(m.expected - gone)) for m in dev.messages]
        before = Kind(DevSet(f"{dev.name} -20%", dev.part, [r for r in dev.rules if r.id not in gone], messages),
                      full.kind, embedder)  # fmt: skip
        for size in (100, 400):
            for seed in range(SAMPLES):
                chosen, rest = _split(full.size, min(size, full.size // 2), seed)
                try:
                    old = fit_gate([before.observed[i] for i in chosen], before.base)
                    new = fit_gate([full.observed[i] for i in chosen], full.base)
                except InvalidInputError:
                    continue
                assert old.threshold is not None
                assert new.threshold is not None
                best = full.oracle(rest)
                gaps[full.kind].append(
                    (
                        best - full.measure(rest, old.threshold, gate_band(old)),
                        best - full.measure(rest, *_moved(full.base, old.terms["shift"])),
                        best - full.measure(rest, *_moved(full.base, 0.0)),
                        best - full.measure(rest, new.threshold, gate_band(new)),
                    )
                )
    lines = [
        "| out-of-scope messages | samples | calibrated before the edit, as stored | its shift on the new "
        "rulebook's gate | no calibration | calibrated again after the edit |",
        "|---|---:|---:|---:|---:|---:|",
    ]
    for kind in KINDS:
        g = np.array(gaps[kind])
        cells = " | ".join(f"{g[:, j].mean():.3f} / {g[:, j].max():.3f}" for j in range(4))
        lines.append(f"| {kind} | {len(g)} | {cells} |")
    return lines


def build(devs: list[DevSet], embedder: CachedEmbedder) -> list[Kind]:
    out = []
    for dev in devs:
        for kind, made in zip(KINDS, (dev, foreign(dev), foreign(dev, mixed=True)), strict=True):
            out.append(Kind(made, kind, embedder))
        print(f"  {dev.name}: {len(dev.messages)} messages", flush=True)
    return out


def main() -> None:
    args, embedder = table_script(__doc__ or "")
    tune = build([*dev_sets("tune"), *subsets("tune")], embedder)
    prior, chosen = choose(samples(tune))
    print("\n".join(chosen), "\n", flush=True)
    if prior != CALIBRATION_PRIOR:
        print(f"NOTE: the tune draws choose prior {prior:g}; CALIBRATION_PRIOR is {CALIBRATION_PRIOR:g}", flush=True)
    devs = [*dev_sets("report"), *subsets("report"), *(banking77_test(seed) for seed in (1, 2, 3))]
    built = build(devs, embedder)
    reported = report(built, CALIBRATION_PRIOR)
    stamp = (
        f"Run: {datetime.now(UTC):%Y-%m-%d %H:%M} UTC, {platform.processor() or platform.machine()}, "
        f"Python {platform.python_version()}; {len(tune) // len(KINDS)} tune and {len(devs)} report draws x 3 kinds "
        f"x {SAMPLES} samples per size (at most half a draw's messages)."
    )
    chosen += ["", stamp]
    refused = sorted({(kind, n, UNCALIBRATED.count((kind, n))) for kind, n in UNCALIBRATED})
    if refused:
        reported.append("")
        reported.append(
            "Samples whose messages all expect some rule (the balanced calibration refuses them; the rulebook gate "
            "is counted): " + ", ".join(f"{kind} N = {n}: {c}" for kind, n, c in refused) + "."
        )
    reported += ["", stamp]
    print("\n".join(reported), "\n", flush=True)
    edited = [*edits(built, embedder), "", stamp]
    print("\n".join(edited))
    if args.write:
        write({"prior": chosen, "calibration": reported, "edits": edited}, "matching_calibration.py")


if __name__ == "__main__":
    main()
