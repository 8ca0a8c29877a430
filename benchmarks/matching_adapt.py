"""A higher ceiling: the encoder adapted to each rulebook (``norma rules adapt``), under the default decision.

Protocol (docs/design/040-matching.md, "Adapting the encoder"): the report draws of ``_devsets.py`` (BANKING77
train.csv, NLU++ banking and hotels, 10 examples per rule) and BANKING77's test.csv draws built as an outside user
would (seeds 1-3), each judged with two kinds of messages that must match nothing: its held-out intents (near
misses) and off-topic messages (``_devsets.foreign``), as ``matching_gate.py`` judges the base encoder. Each draw
adapts a fresh copy of the base model (all-MiniLM-L6-v2) with the shipped ``AdaptOptions()`` (chosen on tune draws
by ``experiments/adapt_speed.py``), in a temporary folder deleted after use, and is matched with the default
``MatchConfig()`` (the confidence gate, its statistics cross-fitted on the examples adapting held out). Per draw:
acc@1 without a gate, base and adapted; per kind, min(acc@1, rejection) as matched, base and adapted, and the
adapted encoder's gap to the best single confidence threshold of that draw. Nothing is chosen here.

Each draw's figures are kept in ``benchmarks/data/matching_adapt.json`` (keyed by protocol, draw and options, in the
repository), so an interrupted run resumes where it stopped, on any machine (``--fresh`` ignores them). Adapting
with the cross-fitted run takes about 2-4 minutes a draw on 2 cores.

Usage::

    .venv/bin/python benchmarks/matching_adapt.py            # prints the table
    .venv/bin/python benchmarks/matching_adapt.py --write    # and replaces its table in docs/benchmarks.md
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
from norma.matching import read_held_out
from norma.rules import rule_texts

KINDS = ("held-out", "off-topic")
RESULTS = REPO / "benchmarks" / "data" / "matching_adapt.json"
"""Every draw measured (kept in the repository: the protocol takes hours, and a run on another machine resumes)."""
_FORMAT = "confidence-1"  # records of this protocol in RESULTS (those of the former adapted gate are kept beside)
MEASURED_AT: set[str] = set()
"""When the draws reported were adapted (UTC minutes), for the tables' run line."""


def _family(name: str) -> str:
    return name.split("/")[0]


class Adapted:
    """One draw with an encoder adapted to its rulebook: acc@1 without a gate, and per kind min(acc@1, rejection) as
    matched by default and the best single confidence threshold's. Kept in :data:`RESULTS`."""

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
        self.reached: dict[str, float] = record["reached"]
        self.oracle: dict[str, float] = record["oracle"]

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
            "acc": draws["held-out"].at(draws["held-out"].ranked, -1.0)[0],
            "reached": {k: min(d.shipped()) for k, d in draws.items()},
            "oracle": {k: d.confidence_oracle for k, d in draws.items()},
        }


def _load_results() -> dict[str, dict[str, Any]]:
    if not RESULTS.is_file():
        return {}
    data = json.loads(RESULTS.read_text(encoding="utf-8"))
    return data if isinstance(data, dict) else {}


def _kept(dev: DevSet, options: AdaptOptions) -> bool:
    """Whether :data:`RESULTS` holds ``dev``'s figures for ``options`` already."""
    return f"{_FORMAT}|{dev.name}|{dev.part}|{sorted(vars(options).items())}" in _load_results()


def report(
    options: AdaptOptions, root: Path, base: CachedEmbedder, fresh: bool, cached_only: bool = False
) -> list[str]:
    draws = [*dev_sets("report"), *(banking77_test(seed) for seed in (1, 2, 3))]
    every_draw = len(draws)
    if cached_only:
        draws = [dev for dev in draws if _kept(dev, options)]
        if not draws:
            raise SystemExit(f"{RESULTS.name} holds no draw of this protocol yet: run without --cached-only")
    lines = [
        "| data set | draws | acc@1 without a gate: base / adapted | held-out: min as matched, base / adapted | "
        "gap adapted (mean / worst) | off-topic: min as matched, base / adapted | gap adapted (mean / worst) | "
        "adapting (median) |",
        "|---|---:|---:|---:|---:|---:|---:|---:|",
    ]
    families: dict[str, list[list[float]]] = {}
    for dev in draws:
        plain = {"held-out": Draw(dev, base), "off-topic": Draw(foreign(dev), base)}
        adapted = Adapted(dev, options, root, fresh)
        row = [plain["held-out"].at(plain["held-out"].ranked, -1.0)[0], adapted.acc]
        for kind in KINDS:
            row += [min(plain[kind].shipped()), adapted.reached[kind], adapted.oracle[kind] - adapted.reached[kind]]
        row.append(adapted.seconds)
        families.setdefault(_family(dev.name), []).append(row)
        print(f"  report {dev.name}: {[round(x, 3) for x in row]}", flush=True)
    every = [row for rows in families.values() for row in rows]
    total = "**all report draws**" if len(draws) == every_draw else f"**the {len(draws)} of {every_draw} draws done**"
    for name, rows in [*families.items(), (total, every)]:
        a = np.array(rows)
        lines.append(
            f"| {name} | {len(a)} | {a[:, 0].mean():.3f} / {a[:, 1].mean():.3f} | {a[:, 2].mean():.3f} / "
            f"{a[:, 3].mean():.3f} | {a[:, 4].mean():.3f} / {a[:, 4].max():.3f} | {a[:, 5].mean():.3f} / "
            f"{a[:, 6].mean():.3f} | {a[:, 7].mean():.3f} / {a[:, 7].max():.3f} | {np.median(a[:, 8]):.0f} s |"
        )
    return lines


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--write", action="store_true", help="replace this script's table in docs/benchmarks.md")
    parser.add_argument("--fresh", action="store_true", help=f"adapt again instead of reading {RESULTS.name}")
    parser.add_argument(
        "--cached-only", action="store_true", help=f"report only the draws {RESULTS.name} holds (adapt nothing)"
    )
    args = parser.parse_args()
    stamp = (
        f"{datetime.now(UTC):%Y-%m-%d %H:%M} UTC, {platform.processor() or platform.machine()}, "
        f"Python {platform.python_version()}, {os.cpu_count()} cores"
    )
    CACHE.parent.mkdir(exist_ok=True)
    base = CachedEmbedder(get_embedder(), EmbeddingCache(CACHE))
    started = time.perf_counter()
    options = AdaptOptions()
    with tempfile.TemporaryDirectory(prefix="norma-adapt-bench-") as folder:
        os.environ["NORMA_CACHE_DIR"] = str(Path(folder) / "cache")  # derived encoders of throwaway models
        reported = report(options, Path(folder), base, args.fresh, args.cached_only)
    minutes = (time.perf_counter() - started) / 60
    span = sorted(MEASURED_AT)
    reported += [
        "",
        f"Shipped options ({options.epochs} epochs, {options.pairs_per_text} pair a text, holdout "
        f"{options.holdout}). Run: {stamp}; {minutes:.0f} min in all; the draws were adapted from {span[0]} UTC"
        + (f" to {span[-1]} UTC" if len(span) > 1 else "")
        + " (benchmarks/data/matching_adapt.json, read back if present).",
    ]
    print("\n".join(reported))
    if args.write:
        write({"report": reported}, "matching_adapt.py")


if __name__ == "__main__":
    main()
