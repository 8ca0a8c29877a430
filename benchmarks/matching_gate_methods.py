"""Other ways to set the gate from the rulebook, and out-of-scope messages of another domain.

Questions about the matcher's automatic gate (a quantile of the rulebook's leave-one-out example similarities;
docs/design/040-matching.md), measured with the protocol of ``matching_gate.py`` (the development draws of
``_devsets.py``, tune and report parts never sharing a message). The first compares with the single 0.22 quantile
(the default before the margin band); the others show the default gate (``MatchConfig()``: the 0.24 quantile with
its band) and single quantiles a tenant can set:

1. **A gate that balances the objective itself** (``balanced``, no parameter). Each probe (a sampled example,
   its own text left out; :meth:`RuleMatcher.probe_similarities`) counts twice: as a message of its rule (acc@1 at
   threshold t when its rule is its nearest and its similarity reaches t) and, its rule left out, as a message of
   an intent the rulebook lacks (rejected when its best other rule stays below t). The gate is the middle of the
   thresholds that maximise min(estimated acc@1, estimated rejection): the issue's objective estimated on the
   rulebook alone, with held-out intents simulated by leaving each probe's rule out. Compared with the quantile on
   the usual draws and on smaller BANKING77 rulebooks (12, 25 and 40 of the 77 intents as rules, 4 / 6 / 8 held
   out), where the quantile, chosen on the 67-rule draws, was never tuned.
2. **Out-of-scope messages from another domain** (``_devsets.foreign``): the development draws keep their rules and
   their messages that expect a rule, but what must match nothing is NLU++ queries of the other domain (hotel
   requests against a banking rulebook, and the reverse) instead of held-out intents of the same domain. The
   table shows how far each draw's best threshold moves and what the default gate leaves.
   Then, for a tenant who knows its out-of-scope traffic is of that kind (``foreign``), or of both kinds
   (``mixed``: held-out intents and foreign messages together), which ``gate_quantile`` to set: chosen on the
   tune draws (smallest worst gap), measured once on the report draws; and the quantile with the smallest worst
   gap over all three kinds together.
3. **What a quantile costs** (descriptive, report draws): per quantile, and for the default gate, the share of
   ungated acc@1 the gate keeps and the gap per kind of out-of-scope message.

Usage::

    .venv/bin/python benchmarks/matching_gate_methods.py           # prints the tables
    .venv/bin/python benchmarks/matching_gate_methods.py --write   # and replaces them in docs/benchmarks.md
"""

from __future__ import annotations

import platform
import sys
from datetime import UTC, datetime
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _devsets import DevSet, banking77_subset, banking77_test, dev_sets, foreign
from matching_gate import Draw, table_script, write
from norma.matching import MatchConfig

SUBSETS = ((12, 4), (25, 6), (40, 8))
"""Smaller BANKING77 rulebooks: (intents kept as rules, intents held out)."""
QUANTILES = (0.02, 0.04, 0.06, 0.08, 0.1, 0.12, 0.14, 0.16, 0.18, 0.2, 0.22)


def balanced_threshold(own: np.ndarray, rival: np.ndarray) -> float:
    """The middle of the similarity thresholds that maximise min(estimated acc@1, estimated rejection) over the
    probes (``own``: best similarity to the probe's own rule; ``rival``: to any other rule), rounded to 4
    decimals like the matcher's gates."""
    n = len(own)
    kept = np.sort(own[own >= rival])
    rivals = np.sort(rival)
    candidates = np.unique(np.concatenate([kept, np.nextafter(rivals, np.inf)]))
    candidates = candidates[np.isfinite(candidates)]
    acc = (len(kept) - np.searchsorted(kept, candidates, side="left")) / n
    rejection = np.searchsorted(rivals, candidates, side="left") / n
    score = np.minimum(acc, rejection)
    tied = np.flatnonzero(score == score.max())
    return round(float(candidates[tied[0]] + candidates[tied[-1]]) / 2, 4)


def _family(name: str) -> str:
    return name.split("/")[0]


def methods(draws: list[Draw]) -> list[str]:
    """Per family of draws: the gap to the oracle and the objective reached, quantile 0.22 against balanced."""
    rows: dict[tuple[str, str], list[tuple[float, float, float, float]]] = {}
    for d in draws:
        quantile = d.gate(0.22)
        balanced = balanced_threshold(*d.matcher.probe_similarities())
        q, b = min(d.at_similarity(quantile)), min(d.at_similarity(balanced))
        rows.setdefault((_family(d.name), d.part), []).append((d.oracle - q, d.oracle - b, q, b))
    lines = [
        "| draws | part | n | quantile 0.22: worst gap | mean gap | within 0.05 | min reached, mean | "
        "balanced: worst gap | mean gap | within 0.05 | min reached, mean |",
        "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for part in ("tune", "report"):
        every: list[tuple[float, float, float, float]] = []
        for (family, p), values in rows.items():
            if p != part:
                continue
            every += values
            lines.append(_method_row(family, part, values))
        lines.append(_method_row(f"**all {part} draws**", part, every))
    return lines


def _method_row(label: str, part: str, values: list[tuple[float, float, float, float]]) -> str:
    a = np.array(values)
    cells = [label, part, str(len(a))]
    for gap, reached in ((0, 2), (1, 3)):
        cells += [
            f"{a[:, gap].max():.3f}",
            f"{a[:, gap].mean():.3f}",
            f"{int((a[:, gap] <= 0.05).sum())}/{len(a)}",
            f"{a[:, reached].mean():.3f}",
        ]
    return "| " + " | ".join(cells) + " |"


def foreign_table(pairs: list[tuple[Draw, Draw]]) -> list[str]:
    """Per draw: the default gate against held-out intents (its own draw) and against another domain's messages."""
    lines = [
        "| draw | out-of-scope messages: held-out / foreign | default gate | held-out: min (oracle at threshold) | "
        "foreign: acc@1 / rejection | min | oracle min (threshold) | gap |",
        "|---|---:|---:|---:|---:|---:|---:|---:|",
    ]
    gaps: list[float] = []
    for near, far in pairs:
        gate = near.matcher.gate(MatchConfig())  # the same rulebook as ``far``'s
        assert gate.threshold is not None
        acc, rejection = far.at_gate(gate)
        gaps.append(far.oracle - min(acc, rejection))
        lines.append(
            f"| {near.name} | {sum(not e for e in near.expected)} / {sum(not e for e in far.expected)} | "
            f"{gate.threshold:.4f} | {min(near.at_gate(gate)):.3f} ({near.oracle:.3f} at "
            f"{near.oracle_threshold:.3f}) | {acc:.3f} / {rejection:.3f} | {min(acc, rejection):.3f} | "
            f"{far.oracle:.3f} ({far.oracle_threshold:.3f}) | {gaps[-1]:.3f} |"
        )
    lines += ["", f"Foreign out-of-scope messages: mean gap **{np.mean(gaps):.3f}**, worst **{max(gaps):.3f}**."]
    return lines


def _default_gaps(draws: list[Draw]) -> list[float]:
    """Each draw's gap at the matcher's default gate (``MatchConfig()``: the quantile with its margin band)."""
    return [d.oracle - min(d.at_gate(d.matcher.gate(MatchConfig()))) for d in draws]


def quantile_for(kind: str, draws: list[Draw]) -> list[str]:
    """The ``gate_quantile`` with the smallest worst gap on the tune draws of ``kind``, measured on its report draws."""
    tune = [d for d in draws if d.part == "tune"]
    report = [d for d in draws if d.part == "report"]

    def gaps(group: list[Draw], q: float) -> list[float]:
        return [d.oracle - min(d.at_similarity(d.gate(q))) for d in group]

    chosen = min(QUANTILES, key=lambda q: (max(gaps(tune, q)), -q))
    at_default, at_chosen = _default_gaps(report), gaps(report, chosen)
    return [
        f"| {kind} | {chosen} | {max(gaps(tune, chosen)):.3f} | {max(at_default):.3f} / {np.mean(at_default):.3f} | "
        f"{max(at_chosen):.3f} / {np.mean(at_chosen):.3f} | {sum(g <= 0.05 for g in at_chosen)}/{len(at_chosen)} |"
    ]


def cost_table(kinds: dict[str, list[Draw]]) -> list[str]:
    """Per ``gate_quantile``, on the report draws: the share of acc@1 without a gate that the gate keeps (the
    in-scope price of a quantile, whatever the out-of-scope messages), and the gap per kind of out-of-scope
    message. Descriptive: nothing is chosen here."""
    names = list(kinds)
    lines = [
        "| gate_quantile | acc@1 kept: mean | worst | "
        + " | ".join(f"{name}: worst / mean gap | within 0.05" for name in names)
        + " |",
        "|---:|---:|---:|" + "---:|---:|" * len(names),
    ]
    first = next(iter(kinds.values()))
    report = [d for d in first if d.part == "report"]
    for q in QUANTILES:
        kept = [d.at_similarity(d.gate(q))[0] / d.at_similarity(-1.0)[0] for d in report]
        cells = [str(q), f"{np.mean(kept):.3f}", f"{min(kept):.3f}"]
        for draws in kinds.values():
            gaps = [d.oracle - min(d.at_similarity(d.gate(q))) for d in draws if d.part == "report"]
            cells += [f"{max(gaps):.3f} / {np.mean(gaps):.3f}", f"{sum(g <= 0.05 for g in gaps)}/{len(gaps)}"]
        lines.append("| " + " | ".join(cells) + " |")
    kept = [d.at_gate(d.matcher.gate(MatchConfig()))[0] / d.at_similarity(-1.0)[0] for d in report]
    cells = ["default (0.24, band from 0.12)", f"{np.mean(kept):.3f}", f"{min(kept):.3f}"]
    for draws in kinds.values():
        gaps = _default_gaps([d for d in draws if d.part == "report"])
        cells += [f"{max(gaps):.3f} / {np.mean(gaps):.3f}", f"{sum(g <= 0.05 for g in gaps)}/{len(gaps)}"]
    lines.append("| " + " | ".join(cells) + " |")
    return lines


def minimax_for(kinds: dict[str, list[Draw]]) -> list[str]:
    """The ``gate_quantile`` with the smallest worst gap over every kind's tune draws together, on the report draws."""

    def worst(part: str, q: float) -> float:
        return max(d.oracle - min(d.at_similarity(d.gate(q))) for ds in kinds.values() for d in ds if d.part == part)

    chosen = min(QUANTILES, key=lambda q: (worst("tune", q), -q))
    at_default = max(g for ds in kinds.values() for g in _default_gaps([d for d in ds if d.part == "report"]))
    return [
        f"| all three kinds (the worst of them) | {chosen} | {worst('tune', chosen):.3f} | {at_default:.3f} | "
        f"{worst('report', chosen):.3f} | |"
    ]


def main() -> None:
    args, embedder = table_script(__doc__ or "")
    stamp = (
        f"{datetime.now(UTC):%Y-%m-%d %H:%M} UTC, {platform.processor() or platform.machine()}, "
        f"Python {platform.python_version()}"
    )
    usual: list[DevSet] = [*dev_sets("tune"), *dev_sets("report"), *(banking77_test(s) for s in (1, 2, 3))]
    smaller = [
        banking77_subset(seed, part, kept=kept, held_out=held)
        for kept, held in SUBSETS
        for part, seeds in (("tune", (101, 102, 103)), ("report", (201, 202, 203)))
        for seed in seeds
    ]
    near = [Draw(d, embedder) for d in usual]
    compared = [*methods([*near, *(Draw(d, embedder) for d in smaller)]), "", f"Run: {stamp}."]
    print("\n".join(compared), "\n")
    far = [Draw(foreign(d), embedder) for d in usual]
    mixed = [Draw(foreign(d, mixed=True), embedder) for d in usual]
    moved = [
        *foreign_table(list(zip(near, far, strict=True))),
        "",
        "| out-of-scope messages | `gate_quantile` chosen on the tune draws | worst gap, tune | report at the default: "
        "worst / mean gap | report at the chosen one: worst / mean gap | report within 0.05 |",
        "|---|---:|---:|---:|---:|---:|",
        *quantile_for("held-out intents (the default's protocol)", near),
        *quantile_for("foreign", far),
        *quantile_for("mixed", mixed),
        *minimax_for({"held-out": near, "foreign": far, "mixed": mixed}),
        "",
        f"Run: {stamp}.",
    ]
    print("\n".join(moved), "\n")
    cost = [*cost_table({"held-out": near, "foreign": far, "mixed": mixed}), "", f"Run: {stamp}."]
    print("\n".join(cost))
    if args.write:
        write({"balanced": compared, "foreign": moved, "cost": cost}, script="matching_gate_methods.py")


if __name__ == "__main__":
    main()
