"""The matching gate on draws that chose nothing, and on twin draws: how far the defaults hold, and why they miss.

Two questions the protocol's 21 report draws answer only narrowly (docs/design/040-matching.md, "The gate").

1. **Fresh draws** (``_devsets.fresh_sets``; seeds 401-442, created after every default was chosen): 24 BANKING77
   draws (67 rules, or 12 / 25 / 40 of the 77 intents as rules) and 12 draws per NLU++ domain with 8, 12 or 16
   intents held out. Measured once with the matcher's defaults (``MatchConfig()``: the rulebook gate with its band)
   and with the single 0.22 quantile; per draw the gap to its own best single similarity threshold (the oracle).
2. **Twins** (``_devsets.twin_sets``): two draws with one rulebook and the same in-scope messages that differ only
   in which held-out intents supply the messages that must match nothing. A gate that sees only the rulebook gives
   both twins the same threshold, so: is there a threshold within 0.05 of *both* twins' oracles (then the
   rulebook alone could in principle have found it), and how far apart are the twins' oracles?
3. **Spread of the gate's own estimate** on the fresh draws: the rulebook gate is a quantile of a sample (its
   example texts); over 300 bootstrap resamples of a draw's probes (examples drawn with replacement, a lower bound
   on the spread: examples of one rule are not independent), the standard deviation of that quantile, and what a
   threshold off the draw's best by that much costs (the mean of the objective one deviation above and below it).
4. **Calibration on the fresh draws**: ``matching_calibration.py``'s report table (the balanced calibration with the
   shipped prior, unshrunk, best F1, against the rulebook gate; 5 samples per size, the rest of the draw measures)
   on the fresh draws, with their held-out intents and with the two other kinds of out-of-scope messages.

Usage::

    .venv/bin/python benchmarks/matching_gate_fresh.py            # prints the tables (about 10 minutes)
    .venv/bin/python benchmarks/matching_gate_fresh.py --write    # and replaces its tables in docs/benchmarks.md
    .venv/bin/python benchmarks/matching_gate_fresh.py --tables twins  # some (fresh, spread, twins, calibration)
"""

from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _devsets import FRESH_NLUPP_HELD_OUT, fresh_sets, twin_sets
from matching_calibration import KINDS, SAMPLES, UNCALIBRATED, build, report
from matching_gate import CACHE, GRID, Draw, machine_stamp, publish
from norma.embeddings import CachedEmbedder, EmbeddingCache, get_embedder
from norma.matching import CALIBRATION_PRIOR, MatchConfig
from norma.matching._gate import RULEBOOK_QUANTILE

WITHIN = 0.05


def _group(name: str) -> str:
    """The data set of a draw name, with its size for BANKING77 and its held-out count for NLU++."""
    return re.sub(r"/\d+.*$", "", name)


def fresh(draws: list[Draw], held: dict[str, int]) -> list[str]:
    """Per data set: the default gate's and the single 0.22 quantile's gaps to each draw's oracle."""
    lines = [
        "| data set | draws | rules | default: mean gap | worst gap | within 0.05 | 0.22 alone: mean gap | worst gap | "
        "within 0.05 | min(acc@1, rejection) at the default: mean (worst) | oracle: mean |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    rows: dict[str, list[tuple[float, float, float, float, int]]] = {}
    for d in draws:
        reached = min(d.at_gate(d.matcher.gate(MatchConfig())))
        single = min(d.at_similarity(d.gate(0.22)))
        key = _group(d.name) + (f", {held[d.name]} held out" if d.name.startswith("nlupp") else "")
        rows.setdefault(key, []).append((d.oracle - reached, d.oracle - single, reached, d.oracle, len(d.matcher)))
    every = [row for values in rows.values() for row in values]
    for name, values in [*rows.items(), ("**all fresh draws**", every)]:
        a = np.array(values)
        sizes = sorted({int(x) for x in a[:, 4]})
        size = f"{sizes[0]}" if len(sizes) == 1 else f"{sizes[0]}-{sizes[-1]}"
        cells = [
            f"{a[:, k].mean():.3f} | {a[:, k].max():.3f} | {int((a[:, k] <= WITHIN).sum())}/{len(a)}" for k in (0, 1)
        ]
        lines.append(
            f"| {name} | {len(a)} | {size} | {cells[0]} | {cells[1]} | {a[:, 2].mean():.3f} ({a[:, 2].min():.3f}) | "
            f"{a[:, 3].mean():.3f} |"
        )
    worst = sorted(((d.oracle - min(d.at_gate(d.matcher.gate(MatchConfig()))), d.name) for d in draws), reverse=True)
    lines += ["", "Largest gaps at the default: " + ", ".join(f"{name} {gap:.3f}" for gap, name in worst[:5]) + "."]
    return lines


def spread(draws: list[Draw], resamples: int = 300) -> list[str]:
    """Per data set: the bootstrap spread of the rulebook gate's quantile and its cost at the draw's oracle."""
    rng = np.random.default_rng(30)
    quantile = MatchConfig().gate_quantile or RULEBOOK_QUANTILE
    rows: dict[str, list[tuple[int, float, float]]] = {}
    for d in draws:
        probes = d.probes
        estimates = [
            float(np.quantile(probes[rng.integers(0, len(probes), len(probes))], quantile)) for _ in range(resamples)
        ]
        deviation = float(np.std(estimates))
        lost = d.oracle - float(
            np.mean([min(d.at_similarity(d.oracle_threshold + sign * deviation)) for sign in (-1.0, 1.0)])
        )
        rows.setdefault(_group(d.name), []).append((len(probes), deviation, lost))
    lines = [
        f"| data set | draws | probes: mean | standard deviation of the {quantile} quantile: mean (most) | "
        "objective lost one deviation off the best threshold: mean (most) |",
        "|---|---:|---:|---:|---:|",
    ]
    for name, values in rows.items():
        a = np.array(values)
        lines.append(
            f"| {name} | {len(a)} | {a[:, 0].mean():.0f} | {a[:, 1].mean():.4f} ({a[:, 1].max():.4f}) | "
            f"{a[:, 2].mean():.3f} ({a[:, 2].max():.3f}) |"
        )
    return lines


def twins(pairs: list[tuple[Draw, Draw]]) -> list[str]:
    """Per twin pair: both oracles, the thresholds within 0.05 of both, and the default gate's gaps."""
    lines = [
        "| rulebook | rules | messages that expect none: A / B | oracle A (threshold) | oracle B (threshold) | "
        "thresholds within 0.05 of both | best one threshold for both: larger gap (threshold) | default gate: "
        "gap A / B |",
        "|---|---:|---:|---:|---:|---:|---:|---:|",
    ]
    families: dict[str, list[tuple[bool, float, bool]]] = {}
    for a, b in pairs:
        curve_a = np.array([min(a.at_similarity(float(t))) for t in GRID])
        curve_b = np.array([min(b.at_similarity(float(t))) for t in GRID])
        larger = np.maximum(a.oracle - curve_a, b.oracle - curve_b)
        shared = GRID[larger <= WITHIN + 1e-12]
        best = int(np.argmin(larger))
        gate = a.matcher.gate(MatchConfig())
        span = f"{shared.min():.3f}-{shared.max():.3f}" if len(shared) else "none"
        gap_a, gap_b = a.oracle - min(a.at_gate(gate)), b.oracle - min(b.at_gate(gate))
        families.setdefault(_group(a.name), []).append(
            (bool(len(shared)), abs(a.oracle_threshold - b.oracle_threshold), max(gap_a, gap_b) > WITHIN)
        )
        lines.append(
            f"| {a.name[:-2]} | {len(a.matcher)} | {sum(not e for e in a.expected)} / {sum(not e for e in b.expected)} "
            f"| {a.oracle:.3f} ({a.oracle_threshold:.3f}) | {b.oracle:.3f} ({b.oracle_threshold:.3f}) | {span} | "
            f"{larger[best]:.3f} ({GRID[best]:.3f}) | {gap_a:.3f} / {gap_b:.3f} |"
        )
    lines += [
        "",
        "| rulebooks | pairs | a threshold within 0.05 of both twins | twins' best thresholds apart: mean (most) | "
        "the default gate misses a twin by more than 0.05 |",
        "|---|---:|---:|---:|---:|",
    ]
    for name, rows in families.items():
        apart = [row[1] for row in rows]
        lines.append(
            f"| {name} | {len(rows)} | {sum(row[0] for row in rows)} | {np.mean(apart):.3f} ({max(apart):.3f}) | "
            f"{sum(row[2] for row in rows)} |"
        )
    return lines


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--write", action="store_true", help="replace this script's tables in docs/benchmarks.md")
    parser.add_argument(
        "--tables", default="fresh,spread,twins,calibration", help="comma-separated: which tables to make"
    )
    args = parser.parse_args()
    tables = {t.strip() for t in args.tables.split(",") if t.strip()}
    if not tables or tables - {"fresh", "spread", "twins", "calibration"}:
        raise SystemExit(f"--tables takes fresh, spread, twins and calibration, not {args.tables!r}")
    CACHE.parent.mkdir(exist_ok=True)
    embedder = CachedEmbedder(get_embedder(), EmbeddingCache(CACHE))
    stamp = machine_stamp()
    sets = fresh_sets()
    sections: dict[str, list[str]] = {}
    draws = [Draw(d, embedder) for d in sets] if tables & {"fresh", "spread"} else []
    if "fresh" in tables:
        held = {d.name: FRESH_NLUPP_HELD_OUT[int(d.name.rsplit("/", 1)[1]) % 3] for d in sets}
        sections["fresh"] = [*fresh(draws, held), "", f"Run: {stamp}."]
    if "spread" in tables:
        sections["spread"] = [*spread(draws), "", f"Run: {stamp}."]
    if "twins" in tables:
        pairs = [(Draw(a, embedder), Draw(b, embedder)) for a, b in twin_sets()]
        sections["twins"] = [*twins(pairs), "", f"Run: {stamp}."]
    if "calibration" in tables:
        calibrated = report(build(sets, embedder), CALIBRATION_PRIOR)
        refused = sorted({(kind, n, UNCALIBRATED.count((kind, n))) for kind, n in UNCALIBRATED})
        if refused:
            calibrated.append("")
            calibrated.append(
                "Samples whose messages all expect some rule (refused; the rulebook gate is counted): "
                + ", ".join(f"{kind} N = {n}: {c}" for kind, n, c in refused)
                + "."
            )
        sections["calibration"] = [
            *calibrated,
            "",
            f"Run: {stamp}; {len(sets)} fresh draws x {len(KINDS)} kinds x {SAMPLES} samples per size.",
        ]
    publish(sections, "matching_gate_fresh.py", to_docs=args.write)


if __name__ == "__main__":
    main()
