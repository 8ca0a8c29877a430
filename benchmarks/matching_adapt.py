"""A higher ceiling: the encoder adapted to each rulebook (``norma rules adapt``), chosen and reported honestly.

Protocol (docs/design/040-matching.md, "Adapting the encoder"): the development draws of ``_devsets.py``
(BANKING77 train.csv, NLU++ banking and hotels; 3 *tune* and 3 *report* draws each, 10 examples per rule).

1. **Choose** the fine-tuning options (epochs, learning rate) on the tune draws only: for each candidate, every
   tune draw's rulebook adapts its own encoder from its own rule texts (condition and examples, nothing else), and
   the objective is the mean over the three data sets of their mean acc@1 without a gate (as for the ranking
   weights).
2. **Report** on the report draws and on BANKING77's test.csv draws built as an outside user would (held-out intents
   ``default_rng(seed).choice(sorted intents, 10)``, the first 10 train utterances as examples; seeds 1-3), with the
   chosen options: acc@1 without a gate with the base encoder and with the adapted one, and, with the adapted
   encoder, the automatic gate's min(acc@1, rejection) against the best single threshold of that draw (oracle).

Every draw adapts a fresh copy of the base model (all-MiniLM-L6-v2); the adapted models live in a temporary folder
and are deleted after use. The whole run takes about 40 minutes on 2 cores (``--report-only`` skips the choice and
uses the shipped defaults: about 15 minutes).

Usage::

    .venv/bin/python benchmarks/matching_adapt.py            # prints the tables
    .venv/bin/python benchmarks/matching_adapt.py --write    # and replaces its tables in docs/benchmarks.md
"""

from __future__ import annotations

import argparse
import os
import platform
import shutil
import sys
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _devsets import DevSet, banking77_test, dev_sets
from matching_gate import CACHE, QUANTILES, Draw, write
from norma.embeddings import AdaptOptions, BertEmbedder, CachedEmbedder, EmbeddingCache, adapt_encoder, get_embedder
from norma.matching import MatchConfig
from norma.rules import rule_texts

CANDIDATES = ((1, 5e-5), (2, 5e-5), (1, 1e-4))
"""(epochs, learning rate) tried on the tune draws; batch 32, 4 pairs per text, scale 20 throughout."""
GATE_QUANTILE = MatchConfig().gate_quantile


def _family(name: str) -> str:
    return name.split("/")[0]


class Adapted:
    """One draw with an encoder adapted to its rulebook: the draw matched with it, and how long adapting took."""

    def __init__(self, dev: DevSet, options: AdaptOptions, root: Path) -> None:
        folder = root / f"{dev.name.replace('/', '-')}-e{options.epochs}-lr{options.learning_rate:g}"
        result = adapt_encoder([rule_texts(rule) for rule in dev.rules], folder, options=options, label=dev.name)
        self.seconds = result.seconds
        embedder = CachedEmbedder(BertEmbedder(folder), EmbeddingCache())
        self.draw = Draw(dev, embedder)
        self.acc = self.draw.at_similarity(-1.0)[0]
        self.threshold = self.draw.gate(GATE_QUANTILE)
        self.gated = self.draw.at_similarity(self.threshold)
        self.gaps = {q: self.draw.oracle - min(self.draw.at_similarity(self.draw.gate(q))) for q in QUANTILES}
        shutil.rmtree(folder, ignore_errors=True)


def choose(root: Path) -> tuple[AdaptOptions, list[str]]:
    tune = dev_sets("tune")
    lines = [
        "| epochs | learning rate | " + " | ".join(sorted({_family(d.name) for d in tune})) + " | mean | "
        "adapting (median) |",
        "|---:|---:|" + "---:|" * (len({_family(d.name) for d in tune}) + 2),
    ]
    best: tuple[float, AdaptOptions] | None = None
    for epochs, rate in CANDIDATES:
        options = AdaptOptions(epochs=epochs, learning_rate=rate)
        per: dict[str, list[float]] = {}
        seconds = []
        gaps: dict[float, list[float]] = {}
        for dev in tune:
            adapted = Adapted(dev, options, root)
            per.setdefault(_family(dev.name), []).append(adapted.acc)
            seconds.append(adapted.seconds)
            for q, gap in adapted.gaps.items():
                gaps.setdefault(q, []).append(gap)
            print(
                f"  tune {dev.name} e{epochs} lr{rate:g}: acc@1 {adapted.acc:.3f} ({adapted.seconds:.0f} s)", flush=True
            )
        means = {name: float(np.mean(values)) for name, values in sorted(per.items())}
        overall = float(np.mean(list(means.values())))
        lines.append(
            f"| {epochs} | {rate:g} | " + " | ".join(f"{v:.3f}" for v in means.values()) + f" | {overall:.3f} | "
            f"{np.median(seconds):.0f} s |"
        )
        print(
            "  gate gaps (worst, mean) per quantile: "
            + ", ".join(f"{q}: {max(v):.3f} {np.mean(v):.3f}" for q, v in gaps.items()),
            flush=True,
        )
        if best is None or overall > best[0] + 1e-12:
            best = (overall, options)
    assert best is not None
    return best[1], lines


def report(options: AdaptOptions, root: Path, base: CachedEmbedder) -> list[str]:
    draws = [*dev_sets("report"), *(banking77_test(seed) for seed in (1, 2, 3))]
    lines = [
        "| draw | rules | acc@1 base encoder | acc@1 adapted | adapting | gate (adapted) | acc@1 / rejection | min | "
        "oracle min (threshold) | gap |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    families: dict[str, list[tuple[float, float, float]]] = {}
    for dev in draws:
        before = Draw(dev, base).at_similarity(-1.0)[0]
        adapted = Adapted(dev, options, root)
        acc, rej = adapted.gated
        gap = adapted.draw.oracle - min(acc, rej)
        families.setdefault(_family(dev.name), []).append((before, adapted.acc, gap))
        print(f"  report {dev.name}: {before:.3f} -> {adapted.acc:.3f}, gate gap {gap:.3f}", flush=True)
        lines.append(
            f"| {dev.name} | {len(dev.rules)} | {before:.3f} | {adapted.acc:.3f} | {adapted.seconds:.0f} s | "
            f"{adapted.threshold:.4f} | {acc:.3f} / {rej:.3f} | {min(acc, rej):.3f} | {adapted.draw.oracle:.3f} "
            f"({adapted.draw.oracle_threshold:.3f}) | {gap:.3f} |"
        )
    lines += [
        "",
        "| data set | mean acc@1 base | mean acc@1 adapted | worst acc@1 adapted | mean gate gap | worst gate gap |",
        "|---|---:|---:|---:|---:|---:|",
    ]
    for name, rows in families.items():
        b, a, g = (np.array(column) for column in zip(*rows, strict=True))
        lines.append(f"| {name} | {b.mean():.3f} | {a.mean():.3f} | {a.min():.3f} | {g.mean():.3f} | {g.max():.3f} |")
    return lines


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--write", action="store_true", help="replace this script's tables in docs/benchmarks.md")
    parser.add_argument("--report-only", action="store_true", help="skip the choice; report the shipped defaults")
    args = parser.parse_args()
    stamp = (
        f"{datetime.now(UTC):%Y-%m-%d %H:%M} UTC, {platform.processor() or platform.machine()}, "
        f"Python {platform.python_version()}, {os.cpu_count()} cores"
    )
    CACHE.parent.mkdir(exist_ok=True)
    base = CachedEmbedder(get_embedder(), EmbeddingCache(CACHE))
    started = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="norma-adapt-bench-") as folder:
        os.environ["NORMA_CACHE_DIR"] = str(Path(folder) / "cache")  # derived encoders of throwaway models
        sections: dict[str, list[str]] = {}
        if args.report_only:
            options = AdaptOptions()
        else:
            options, selection = choose(Path(folder))
            selection += [
                "",
                f"Chosen: **{options.epochs} epoch(s) at learning rate {options.learning_rate:g}**. Run: {stamp}.",
            ]
            print("\n".join(selection), "\n", flush=True)
            sections["selection"] = selection
        reported = report(options, Path(folder), base)
    minutes = (time.perf_counter() - started) / 60
    reported += ["", f"Run: {stamp}; {minutes:.0f} min in all."]
    print("\n".join(reported))
    sections["report"] = reported
    if args.write:
        write(sections, "matching_adapt.py")


if __name__ == "__main__":
    main()
