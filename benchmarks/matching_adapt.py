"""A higher ceiling: the encoder adapted to each rulebook (``norma rules adapt``), chosen on what users get.

Protocol (docs/design/040-matching.md, "Adapting the encoder"): the development draws of ``_devsets.py``
(BANKING77 train.csv, NLU++ banking and hotels; 3 *tune* and 3 *report* draws each, 10 examples per rule), each
judged with two kinds of messages that must match nothing: its held-out intents (near misses) and off-topic
messages (``_devsets.foreign``), as the base encoder's default gate is (``matching_gate.py``).

1. **Choose** on the tune draws only, on the gated objective: for each candidate of fine-tuning options (epochs),
   every tune draw adapts its own encoder with the cross-fitted gate (``AdaptOptions.holdout``: a first run
   without a CRC-chosen 30 % of the examples stores their similarities); per candidate, the adapted gate's quantile
   with the smallest worst gap over both kinds (then the smallest mean), and the candidate whose gate gives the best
   mean min(acc@1, rejection) over draws and kinds. acc@1 without a gate is shown beside it.
2. **Report** on the report draws and BANKING77's test.csv draws built as an outside user would (seeds 1-3), with the
   shipped options and quantile: acc@1 without a gate, base and adapted; per kind, min(acc@1, rejection) at the
   adapted gate and its gap to the draw's best single threshold, against the base encoder at its default gate.

Every draw adapts a fresh copy of the base model (all-MiniLM-L6-v2) in a temporary folder, deleted after use. Each
draw's figures are kept in ``benchmarks/data/matching_adapt.json`` (keyed by draw and options, in the repository),
so an interrupted run resumes where it stopped, on any machine (``--fresh`` ignores them). Adapting with the gate
trains twice: about 2-4 minutes a draw on 2 cores, 8-10 for BANKING77.

Usage::

    .venv/bin/python benchmarks/matching_adapt.py                    # both stages, prints the tables
    .venv/bin/python benchmarks/matching_adapt.py --stages report    # the shipped options only
    .venv/bin/python benchmarks/matching_adapt.py --write            # and replaces its tables in docs/benchmarks.md
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import sys
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _devsets import DevSet, banking77_test, dev_sets, foreign
from matching_gate import CACHE, REPO, Draw, write
from norma.embeddings import AdaptOptions, BertEmbedder, CachedEmbedder, EmbeddingCache, adapt_encoder, get_embedder
from norma.matching import ADAPTED_QUANTILE, read_held_out
from norma.rules import rule_texts

CANDIDATES = (3, 2)
"""Epochs tried on the tune draws (learning rate 5e-5, batch 32, 4 pairs per text, scale 20 throughout)."""
QUANTILES = (0.05, 0.08, 0.1, 0.12, 0.15, 0.18, 0.2, 0.22, 0.25, 0.3)
"""The grid of the adapted gate's quantile."""
KINDS = ("held-out", "off-topic")
RESULTS = REPO / "benchmarks" / "data" / "matching_adapt.json"
"""Every draw measured (kept in the repository: the protocol takes hours, and a run on another machine resumes)."""
_FORMAT = "mixed-1"  # records of this protocol (both kinds) in RESULTS
MEASURED_AT: set[str] = set()
"""When the draws reported were adapted (UTC minutes), for the tables' run line."""


def _family(name: str) -> str:
    return name.split("/")[0]


class Adapted:
    """One draw with an encoder adapted to its rulebook (cross-fitted gate): acc@1 without a gate, and per kind and
    gate quantile min(acc@1, rejection) and the gap to that kind's best single threshold. Kept in :data:`RESULTS`."""

    def __init__(self, dev: DevSet, options: AdaptOptions, root: Path, fresh: bool = False) -> None:
        key = f"{_FORMAT}|{dev.name}|{dev.part}|{sorted(vars(options).items())}"
        kept = _load_results()
        if key not in kept or fresh:
            kept[key] = {**self._measure(dev, options, root), "when": f"{datetime.now(UTC):%Y-%m-%d %H:%M}"}
            RESULTS.write_text(json.dumps(kept, indent=1, sort_keys=True), encoding="utf-8")
        record = kept[key]
        MEASURED_AT.add(str(record["when"]))
        self.seconds: float = record["seconds"]
        self.acc: float = record["acc"]
        reached = record["reached"]
        self.at: dict[str, dict[float, float]] = {k: {float(q): v for q, v in reached[k].items()} for k in KINDS}
        self.oracle: dict[str, float] = record["oracle"]

    def gap(self, kind: str, quantile: float) -> float:
        return self.oracle[kind] - self.at[kind][quantile]

    @staticmethod
    def _measure(dev: DevSet, options: AdaptOptions, root: Path) -> dict[str, Any]:
        folder = root / f"{dev.name.replace('/', '-')}-e{options.epochs}-lr{options.learning_rate:g}"
        result = adapt_encoder([rule_texts(rule) for rule in dev.rules], folder, options=options, label=dev.name)
        embedder = CachedEmbedder(BertEmbedder(folder), EmbeddingCache())
        held = read_held_out(folder)
        draws = {"held-out": Draw(dev, embedder, held), "off-topic": Draw(foreign(dev), embedder, held)}
        shutil.rmtree(folder, ignore_errors=True)
        return {
            "seconds": result.seconds,
            "acc": draws["held-out"].at_similarity(-1.0)[0],
            "kind": draws["held-out"].matcher.gate().kind,
            "reached": {k: {str(q): min(d.at_similarity(d.gate(q))) for q in QUANTILES} for k, d in draws.items()},
            "oracle": {k: d.oracle for k, d in draws.items()},
        }


def _load_results() -> dict[str, dict[str, Any]]:
    if not RESULTS.is_file():
        return {}
    data = json.loads(RESULTS.read_text(encoding="utf-8"))
    return data if isinstance(data, dict) else {}


def minimax(adapted: list[Adapted]) -> tuple[float, float, float]:
    """(quantile, worst gap, mean gap): the quantile with the smallest worst gap over both kinds, then mean gap."""
    scored = []
    for q in QUANTILES:
        gaps = [a.gap(k, q) for a in adapted for k in KINDS]
        scored.append((round(max(gaps), 6), round(float(np.mean(gaps)), 6), q))
    worst, mean, q = min(scored)
    return q, worst, mean


def choose(root: Path, fresh: bool) -> tuple[AdaptOptions, float, list[str]]:
    """The options and gate quantile with the best gated objective over the tune draws and both kinds."""
    tune = dev_sets("tune")
    lines = [
        "| epochs | acc@1 without a gate (mean) | gate quantile (minimax) | tune worst gap: held-out / off-topic | "
        "mean gap | min(acc@1, rejection) at that gate: held-out / off-topic / both | adapting (median) |",
        "|---:|---:|---:|---:|---:|---:|---:|",
    ]
    best: tuple[float, AdaptOptions, float] | None = None
    for epochs in CANDIDATES:
        options = AdaptOptions(epochs=epochs)
        adapted = []
        for dev in tune:
            adapted.append(Adapted(dev, options, root, fresh))
            print(f"  tune {dev.name} e{epochs}: acc@1 {adapted[-1].acc:.3f} ({adapted[-1].seconds:.0f} s)", flush=True)
        q, _, mean_gap = minimax(adapted)
        worst = {k: max(a.gap(k, q) for a in adapted) for k in KINDS}
        reached = {k: float(np.mean([a.at[k][q] for a in adapted])) for k in KINDS}
        both = float(np.mean(list(reached.values())))
        lines.append(
            f"| {epochs} | {np.mean([a.acc for a in adapted]):.3f} | {q} | {worst['held-out']:.3f} / "
            f"{worst['off-topic']:.3f} | {mean_gap:.3f} | {reached['held-out']:.3f} / {reached['off-topic']:.3f} / "
            f"{both:.3f} | {np.median([a.seconds for a in adapted]):.0f} s |"
        )
        if best is None or both > best[0] + 1e-12:
            best = (both, options, q)
    assert best is not None
    lines += [
        "",
        f"Chosen: **{best[1].epochs} epochs, gate quantile {best[2]}** (the shipped defaults: "
        f"{AdaptOptions().epochs} epochs, quantile {ADAPTED_QUANTILE}).",
    ]
    return best[1], best[2], lines


def report(options: AdaptOptions, quantile: float, root: Path, base: CachedEmbedder, fresh: bool) -> list[str]:
    draws = [*dev_sets("report"), *(banking77_test(seed) for seed in (1, 2, 3))]
    lines = [
        "| data set | draws | acc@1 without a gate: base / adapted | held-out: min at the gate, base / adapted | "
        "gap adapted (mean / worst) | off-topic: min at the gate, base / adapted | gap adapted (mean / worst) |",
        "|---|---:|---:|---:|---:|---:|---:|",
    ]
    families: dict[str, list[list[float]]] = {}
    for dev in draws:
        plain = {"held-out": Draw(dev, base), "off-topic": Draw(foreign(dev), base)}
        adapted = Adapted(dev, options, root, fresh)
        row = [plain["held-out"].at_similarity(-1.0)[0], adapted.acc]
        for kind in KINDS:
            row += [min(plain[kind].at_gate(plain[kind].matcher.gate())), adapted.at[kind][quantile]]
            row.append(adapted.gap(kind, quantile))
        families.setdefault(_family(dev.name), []).append(row)
        print(f"  report {dev.name}: {row}", flush=True)
    every = [row for rows in families.values() for row in rows]
    for name, rows in [*families.items(), ("**all report draws**", every)]:
        a = np.array(rows)
        lines.append(
            f"| {name} | {len(a)} | {a[:, 0].mean():.3f} / {a[:, 1].mean():.3f} | {a[:, 2].mean():.3f} / "
            f"{a[:, 3].mean():.3f} | {a[:, 4].mean():.3f} / {a[:, 4].max():.3f} | {a[:, 5].mean():.3f} / "
            f"{a[:, 6].mean():.3f} | {a[:, 7].mean():.3f} / {a[:, 7].max():.3f} |"
        )
    return lines


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--write", action="store_true", help="replace this script's tables in docs/benchmarks.md")
    parser.add_argument("--stages", default="choose,report", help="comma-separated: choose, report")
    parser.add_argument("--fresh", action="store_true", help=f"adapt again instead of reading {RESULTS.name}")
    args = parser.parse_args()
    stages = {stage.strip() for stage in args.stages.split(",") if stage.strip()}
    if not stages or stages - {"choose", "report"}:
        raise SystemExit(f"--stages takes choose and report, not {args.stages!r}")
    stamp = (
        f"{datetime.now(UTC):%Y-%m-%d %H:%M} UTC, {platform.processor() or platform.machine()}, "
        f"Python {platform.python_version()}, {os.cpu_count()} cores"
    )
    CACHE.parent.mkdir(exist_ok=True)
    base = CachedEmbedder(get_embedder(), EmbeddingCache(CACHE))
    started = time.perf_counter()
    sections: dict[str, list[str]] = {}
    with tempfile.TemporaryDirectory(prefix="norma-adapt-bench-") as folder:
        os.environ["NORMA_CACHE_DIR"] = str(Path(folder) / "cache")  # derived encoders of throwaway models
        options, quantile = AdaptOptions(), ADAPTED_QUANTILE
        if "choose" in stages:
            _, _, selection = choose(Path(folder), args.fresh)
            selection[-1] += f" Run: {stamp}."
            print("\n".join(selection), "\n", flush=True)
            sections["selection"] = selection
        if "report" in stages:
            reported = report(options, quantile, Path(folder), base, args.fresh)
            minutes = (time.perf_counter() - started) / 60
            span = sorted(MEASURED_AT)
            reported += [
                "",
                f"Shipped options ({options.epochs} epochs) and quantile ({quantile}). Run: {stamp}; {minutes:.0f} min "
                f"in all (stages: {', '.join(sorted(stages))}); the draws were adapted from {span[0]} UTC"
                + (f" to {span[-1]} UTC" if len(span) > 1 else "")
                + " (benchmarks/data/matching_adapt.json, read back if present).",
            ]
            print("\n".join(reported))
            sections["report"] = reported
    if args.write:
        write(sections, "matching_adapt.py")


if __name__ == "__main__":
    main()
