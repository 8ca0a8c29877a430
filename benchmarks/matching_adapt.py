"""A higher ceiling: the encoder adapted to each rulebook (``norma rules adapt``), chosen and reported honestly.

Protocol (docs/design/040-matching.md, "Adapting the encoder"): the development draws of ``_devsets.py``
(BANKING77 train.csv, NLU++ banking and hotels; 3 *tune* and 3 *report* draws each, 10 examples per rule).

1. **Choose** the fine-tuning options (epochs, learning rate) on the tune draws only: for each candidate, every
   tune draw's rulebook adapts its own encoder from its own rule texts (condition and examples, nothing else), and
   the objective is the mean over the three data sets of their mean acc@1 without a gate (as for the ranking
   weights).
2. **Gate** (cross-fitted, ``AdaptOptions.gate_holdout``): with the chosen options, every tune draw adapts its
   encoder (which first trains without a CRC-chosen 30 % of the examples and stores their similarities), and the
   table gives, per ``gate_quantile``, the worst and mean gap of the stored gate to the draw's best single
   threshold; the quantile with the smallest worst gap is the one to use.
3. **Report** on the report draws and on BANKING77's test.csv draws built as an outside user would (held-out intents
   ``default_rng(seed).choice(sorted intents, 10)``, the first 10 train utterances as examples; seeds 1-3), with the
   chosen options and the matcher's default ``gate_quantile``: acc@1 without a gate with the base encoder and with
   the adapted one, and, with the adapted encoder, the automatic gate's min(acc@1, rejection) against the best
   single threshold of that draw (oracle), with the gate the matcher would measure on the rulebook for comparison.

Every draw adapts a fresh copy of the base model (all-MiniLM-L6-v2); the adapted models live in a temporary folder
and are deleted after use. Each draw's figures are kept in ``.cache/matching_adapt.json`` (keyed by draw and
options), so an interrupted run resumes where it stopped (``--fresh`` ignores them). Adapting with the gate trains
twice: the options stage takes about 40 minutes on 2 cores, the gate and report stages about 30 and 50.

Usage::

    .venv/bin/python benchmarks/matching_adapt.py                      # every stage, prints the tables
    .venv/bin/python benchmarks/matching_adapt.py --stages gate,report # skip the options choice (shipped defaults)
    .venv/bin/python benchmarks/matching_adapt.py --write              # and replaces its tables in docs/benchmarks.md
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

from _devsets import DevSet, banking77_test, dev_sets
from matching_gate import CACHE, REPO, Draw, write
from norma.embeddings import AdaptOptions, BertEmbedder, CachedEmbedder, EmbeddingCache, adapt_encoder, get_embedder
from norma.matching import MatchConfig
from norma.matching._gate import ADAPTED_QUANTILE, rulebook_gate
from norma.rules import rule_texts

CANDIDATES = ((1, 5e-5), (2, 5e-5), (3, 5e-5), (1, 1e-4))
"""(epochs, learning rate) tried on the tune draws; batch 32, 4 pairs per text, scale 20 throughout."""
QUANTILES = (0.15, 0.2, 0.22, 0.25, 0.28, 0.3, 0.35, 0.4)
"""The grid of the adapted gate's quantile."""
GATE_QUANTILE = ADAPTED_QUANTILE  # the adapted gate's default; the base encoder compared at that quantile alone
RESULTS = REPO / ".cache" / "matching_adapt.json"
MEASURED_AT: set[str] = set()
"""When the draws reported were adapted (UTC minutes), for the tables' run line."""


def _family(name: str) -> str:
    return name.split("/")[0]


class Adapted:
    """One draw with an encoder adapted to its rulebook: acc@1, the gates and their gaps, how long adapting took.
    Figures are kept in :data:`RESULTS` (per draw and options) and read back instead of adapting again."""

    def __init__(self, dev: DevSet, options: AdaptOptions, root: Path, fresh: bool = False) -> None:
        key = f"{dev.name}|{dev.part}|{sorted(vars(options).items())}"
        kept = _load_results()
        if key not in kept or fresh:
            kept[key] = {**self._measure(dev, options, root), "at": f"{datetime.now(UTC):%Y-%m-%d %H:%M}"}
            RESULTS.write_text(json.dumps(kept, indent=1, sort_keys=True), encoding="utf-8")
        record = kept[key]
        MEASURED_AT.add(str(record.get("at", "2026-11-25 04:47")))  # the first run kept no time: it began then
        self.seconds: float = record["seconds"]
        self.acc: float = record["acc"]
        self.kind: str = record["kind"]
        self.threshold: float = record["threshold"]
        self.gated: tuple[float, float] = tuple(record["gated"])
        self.oracle: float = record["oracle"]
        self.oracle_threshold: float = record["oracle_threshold"]
        self.gaps: dict[float, float] = {float(q): g for q, g in record["gaps"].items()}
        self.measured: tuple[float, float, float] = tuple(record["measured"])

    @staticmethod
    def _measure(dev: DevSet, options: AdaptOptions, root: Path) -> dict[str, Any]:
        folder = root / f"{dev.name.replace('/', '-')}-e{options.epochs}-lr{options.learning_rate:g}"
        result = adapt_encoder([rule_texts(rule) for rule in dev.rules], folder, options=options, label=dev.name)
        embedder = CachedEmbedder(BertEmbedder(folder), EmbeddingCache())
        draw = Draw(dev, embedder)
        gate = draw.matcher.gate(MatchConfig(gate_quantile=GATE_QUANTILE))
        assert gate.threshold is not None
        # what the matcher would measure on the rulebook itself (its examples, seen in training), for comparison
        index = draw.matcher._index  # the two measurements on one index
        measured = rulebook_gate(index, MatchConfig(gate_quantile=GATE_QUANTILE, gate_band_quantile=None)).threshold
        assert measured is not None
        shutil.rmtree(folder, ignore_errors=True)
        return {
            "seconds": result.seconds,
            "acc": draw.at_similarity(-1.0)[0],
            "kind": gate.kind,
            "threshold": gate.threshold,
            "gated": draw.at_similarity(gate.threshold),
            "oracle": draw.oracle,
            "oracle_threshold": draw.oracle_threshold,
            "gaps": {str(q): draw.oracle - min(draw.at_similarity(draw.gate(q))) for q in QUANTILES},
            "measured": (measured, *draw.at_similarity(measured)),
        }


def _load_results() -> dict[str, dict[str, Any]]:
    if not RESULTS.is_file():
        return {}
    data = json.loads(RESULTS.read_text(encoding="utf-8"))
    return data if isinstance(data, dict) else {}


def _cross_fitted(dev: DevSet, options: AdaptOptions) -> dict[str, Any] | None:
    """A kept record of ``dev`` adapted with the same options and the default ``gate_holdout``: its final encoder
    is the one ``options`` (without holdout) trains, byte for byte (tested in tests/embeddings/test_adapt.py), so its
    acc@1 is the same; its seconds cover two runs."""
    with_gate = AdaptOptions(**{**vars(options), "gate_holdout": AdaptOptions().gate_holdout})
    return _load_results().get(f"{dev.name}|{dev.part}|{sorted(vars(with_gate).items())}")


def choose(root: Path, fresh: bool) -> tuple[AdaptOptions, list[str]]:
    tune = dev_sets("tune")
    lines = [
        "| epochs | learning rate | " + " | ".join(sorted({_family(d.name) for d in tune})) + " | mean | "
        "adapting (median) |",
        "|---:|---:|" + "---:|" * (len({_family(d.name) for d in tune}) + 2),
    ]
    best: tuple[float, AdaptOptions] | None = None
    for epochs, rate in CANDIDATES:
        options = AdaptOptions(epochs=epochs, learning_rate=rate, gate_holdout=0.0)
        per: dict[str, list[float]] = {}
        seconds = []
        gaps: dict[float, list[float]] = {}
        for dev in tune:
            shared = None if fresh else _cross_fitted(dev, options)
            if shared is not None:  # the same final encoder, adapted with the gate (one run of two timed)
                acc, spent = shared["acc"], shared["seconds"] / 2
            else:
                adapted = Adapted(dev, options, root, fresh)
                acc, spent = adapted.acc, adapted.seconds
                for q, gap in adapted.gaps.items():
                    gaps.setdefault(q, []).append(gap)
            per.setdefault(_family(dev.name), []).append(acc)
            seconds.append(spent)
            print(f"  tune {dev.name} e{epochs} lr{rate:g}: acc@1 {acc:.3f} ({spent:.0f} s)", flush=True)
        means = {name: float(np.mean(values)) for name, values in sorted(per.items())}
        overall = float(np.mean(list(means.values())))
        lines.append(
            f"| {epochs} | {rate:g} | " + " | ".join(f"{v:.3f}" for v in means.values()) + f" | {overall:.3f} | "
            f"{np.median(seconds):.0f} s |"
        )
        print(
            "  rulebook-gate gaps (worst, mean) per quantile: "
            + ", ".join(f"{q}: {max(v):.3f} {np.mean(v):.3f}" for q, v in gaps.items()),
            flush=True,
        )
        if best is None or overall > best[0] + 1e-12:
            best = (overall, options)
    assert best is not None
    return best[1], lines


def choose_gate(options: AdaptOptions, root: Path, fresh: bool) -> tuple[float, list[str]]:
    """The gate quantile with the smallest worst gap over the tune draws, with the cross-fitted gate."""
    tune = [Adapted(dev, options, root, fresh) for dev in dev_sets("tune")]
    for dev, adapted in zip(dev_sets("tune"), tune, strict=True):
        print(f"  gate {dev.name}: {adapted.kind} gate, gaps {adapted.gaps}", flush=True)
    lines = ["| gate_quantile | worst gap (tune) | mean gap (tune) |", "|---:|---:|---:|"]
    best: tuple[float, float] | None = None
    for q in QUANTILES:
        gaps = [adapted.gaps[q] for adapted in tune]
        lines.append(f"| {q} | {max(gaps):.3f} | {np.mean(gaps):.3f} |")
        if best is None or max(gaps) < best[0] - 1e-12:
            best = (max(gaps), q)
    assert best is not None
    lines += [
        "",
        f"Best on the tune draws: `gate_quantile` = **{best[1]}** (worst gap {best[0]:.3f}); the matcher's default "
        f"is {GATE_QUANTILE}.",
    ]
    return best[1], lines


def report(options: AdaptOptions, root: Path, base: CachedEmbedder, fresh: bool) -> list[str]:
    draws = [*dev_sets("report"), *(banking77_test(seed) for seed in (1, 2, 3))]
    lines = [
        "| draw | rules | acc@1 base encoder | acc@1 adapted | adapting | gate (adapted) | acc@1 / rejection | min | "
        "oracle min (threshold) | gap | measured on the rulebook: gate, min, gap | base encoder: min at its gate |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    families: dict[str, list[tuple[float, float, float, float, float, float]]] = {}
    for dev in draws:
        plain = Draw(dev, base)
        before = plain.at_similarity(-1.0)[0]
        base_min = min(plain.at_similarity(plain.gate(GATE_QUANTILE)))
        adapted = Adapted(dev, options, root, fresh)
        acc, rej = adapted.gated
        gap = adapted.oracle - min(acc, rej)
        measured, m_acc, m_rej = adapted.measured
        old_gap = adapted.oracle - min(m_acc, m_rej)
        families.setdefault(_family(dev.name), []).append((before, adapted.acc, gap, old_gap, min(acc, rej), base_min))
        print(f"  report {dev.name}: {before:.3f} -> {adapted.acc:.3f}, gate gap {gap:.3f} ({old_gap:.3f})", flush=True)
        lines.append(
            f"| {dev.name} | {len(dev.rules)} | {before:.3f} | {adapted.acc:.3f} | {adapted.seconds:.0f} s | "
            f"{adapted.threshold:.4f} ({adapted.kind}) | {acc:.3f} / {rej:.3f} | {min(acc, rej):.3f} | "
            f"{adapted.oracle:.3f} ({adapted.oracle_threshold:.3f}) | {gap:.3f} | {measured:.4f}, "
            f"{min(m_acc, m_rej):.3f}, {old_gap:.3f} | {base_min:.3f} |"
        )
    lines += [
        "",
        "| data set | mean acc@1 base | mean acc@1 adapted | worst acc@1 adapted | mean gate gap | worst gate gap | "
        "gap, gate measured on the rulebook: mean / worst | min at the gate, adapted / base: mean (worst) |",
        "|---|---:|---:|---:|---:|---:|---:|---:|",
    ]
    everything: list[tuple[float, float]] = []
    for name, rows in families.items():
        b, a, g, o, m, bm = (np.array(column) for column in zip(*rows, strict=True))
        everything += list(zip(g, o, strict=True))
        lines.append(
            f"| {name} | {b.mean():.3f} | {a.mean():.3f} | {a.min():.3f} | {g.mean():.3f} | {g.max():.3f} | "
            f"{o.mean():.3f} / {o.max():.3f} | {m.mean():.3f} ({m.min():.3f}) / {bm.mean():.3f} ({bm.min():.3f}) |"
        )
    g_all, o_all = (np.array(column) for column in zip(*everything, strict=True))
    lines.append(
        f"| **all report draws** | | | | **{g_all.mean():.3f}** | **{g_all.max():.3f}** | "
        f"{o_all.mean():.3f} / {o_all.max():.3f} | |"
    )
    return lines


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--write", action="store_true", help="replace this script's tables in docs/benchmarks.md")
    parser.add_argument(
        "--stages",
        default="options,gate,report",
        help="comma-separated: options (choose epochs and learning rate), gate (the quantile table), report",
    )
    parser.add_argument("--fresh", action="store_true", help=f"adapt again instead of reading {RESULTS.name}")
    args = parser.parse_args()
    stages = {stage.strip() for stage in args.stages.split(",") if stage.strip()}
    if not stages or stages - {"options", "gate", "report"}:
        raise SystemExit(f"--stages takes options, gate and report, not {args.stages!r}")
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
        options = AdaptOptions()
        if "options" in stages:
            chosen, selection = choose(Path(folder), args.fresh)
            options = AdaptOptions(epochs=chosen.epochs, learning_rate=chosen.learning_rate)
            selection += [
                "",
                f"Chosen: **{options.epochs} epoch(s) at learning rate {options.learning_rate:g}**. Run: {stamp}.",
            ]
            print("\n".join(selection), "\n", flush=True)
            sections["selection"] = selection
        if "gate" in stages:
            _, gate_lines = choose_gate(options, Path(folder), args.fresh)
            gate_lines[-1] += f" Run: {stamp}."
            print("\n".join(gate_lines), "\n", flush=True)
            sections["gate"] = gate_lines
        if "report" in stages:
            reported = report(options, Path(folder), base, args.fresh)
            minutes = (time.perf_counter() - started) / 60
            span = sorted(MEASURED_AT)
            reported += [
                "",
                f"Run: {stamp}; {minutes:.0f} min in all (stages: {', '.join(sorted(stages))}); the draws were adapted "
                f"from {span[0]} UTC"
                + (f" to {span[-1]} UTC" if len(span) > 1 else "")
                + " (.cache/matching_adapt.json, read back if present).",
            ]
            print("\n".join(reported))
            sections["report"] = reported
    if args.write:
        write(sections, "matching_adapt.py")


if __name__ == "__main__":
    main()
