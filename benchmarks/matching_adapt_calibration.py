"""Calibrating the gate of an adapted encoder from labelled messages: does it help, and is cross-fitting still needed?

``matching_calibration.py`` measures the balanced calibration (``calibrate_gate`` without a target, the shipped
prior) on the base encoder. This script asks the same of an encoder adapted to each rulebook (``norma rules adapt``
with the default ``AdaptOptions``, cross-fitted gate included): on the 12 report draws of ``matching_adapt.py``
(the report draws of ``_devsets.py`` and BANKING77's test.csv draws 1-3), each with the three kinds of messages that
must match nothing (held-out intents, NLU++ queries of another domain, both), 5 seeded samples of N = 100 and 400
of the draw's messages (at most half) set the gate and the draw's other messages judge it against their own best
single threshold, exactly as ``matching_calibration.py`` does. Gates compared, per sample:

* the adapted encoder's cross-fitted gate, no labels (what ``matching_adapt.py`` reports);
* the balanced calibration moving that gate (what ``norma rules calibrate --model-dir`` does);
* the gate the matcher would measure on the rulebook itself with the adapted encoder (its trained examples: too
  high), no labels, and the balanced calibration moving *it*: whether labels make cross-fitting (half the adapting
  time) unnecessary;
* the base encoder's rulebook gate and its balanced calibration, on the same samples, for comparison.

Nothing is chosen here: every option and the prior are the shipped ones. Adapting takes about 7.5 minutes per
67-rule rulebook and 2-3 per NLU++ one on 2 cores (about 65 minutes in all); each draw's gaps are kept in
``.cache/matching_adapt_calibration.json`` and read back, so an interrupted run resumes (``--fresh`` ignores them).

Usage::

    .venv/bin/python benchmarks/matching_adapt_calibration.py           # prints the table
    .venv/bin/python benchmarks/matching_adapt_calibration.py --write   # and replaces it in docs/benchmarks.md
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import tempfile
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _devsets import DevSet, banking77_test, dev_sets, foreign
from matching_calibration import KINDS, SAMPLES, Kind, _moved, _split
from matching_gate import CACHE, REPO, machine_stamp, publish
from norma.embeddings import AdaptOptions, BertEmbedder, CachedEmbedder, EmbeddingCache, adapt_encoder, get_embedder
from norma.errors import InvalidInputError
from norma.matching import CALIBRATION_PRIOR, AppliedGate, MatchConfig, fit_gate
from norma.matching._gate import gate_band, rulebook_gate
from norma.rules import rule_texts

SIZES = (100, 400)
RESULTS = REPO / ".cache" / "matching_adapt_calibration.json"
WAYS = (
    "adapted: cross-fitted gate, no labels",
    "adapted: cross-fitted gate, balanced calibration",
    "adapted: gate measured on the rulebook, no labels",
    "adapted: gate measured on the rulebook, balanced calibration",
    "base encoder: rulebook gate, no labels",
    "base encoder: rulebook gate, balanced calibration",
)


def _gaps(k: Kind, bases: tuple[AppliedGate, AppliedGate]) -> dict[str, list[float]]:
    """Per way (no labels / calibrated, for each base gate), the gap of every (size, sample) and what it reached."""
    out: dict[str, list[float]] = {}
    for size in SIZES:
        for seed in range(SAMPLES):
            chosen, rest = _split(k.size, min(size, k.size // 2), seed)
            best = k.oracle(rest)
            sample = [k.observed[i] for i in chosen]
            for name, base in zip(("cross", "rulebook"), bases, strict=True):
                try:
                    fitted = fit_gate(sample, base, prior=CALIBRATION_PRIOR)
                    assert fitted.threshold is not None
                    calibrated = (fitted.threshold, gate_band(fitted))
                except InvalidInputError:  # no message of the sample expects none: the gate stays
                    calibrated = _moved(base, 0.0)
                for way, gate in (("none", _moved(base, 0.0)), ("calibrated", calibrated)):
                    reached = k.measure(rest, *gate)
                    out.setdefault(f"{name}|{way}|{size}", []).append(best - reached)
                    out.setdefault(f"{name}|{way}|{size}|reached", []).append(reached)
    return out


def _kinds(dev: DevSet, embedder: CachedEmbedder) -> list[Kind]:
    return [
        Kind(made, kind, embedder)
        for kind, made in zip(KINDS, (dev, foreign(dev), foreign(dev, mixed=True)), strict=True)
    ]


def measure_draw(dev: DevSet, base: CachedEmbedder, root: Path) -> dict[str, Any]:
    """Adapt ``dev``'s encoder, then every kind's gaps with the adapted and the base encoder."""
    record: dict[str, Any] = {}
    for k in _kinds(dev, base):
        gate = k.draw.matcher.measured_gate()
        record[f"base|{k.kind}"] = _gaps(k, (gate, gate))
    folder = root / dev.name.replace("/", "-")
    report = adapt_encoder([rule_texts(rule) for rule in dev.rules], folder, label=dev.name)
    adapted = CachedEmbedder(BertEmbedder(folder), EmbeddingCache())
    for k in _kinds(dev, adapted):
        cross = k.draw.matcher.measured_gate()
        assert cross.kind == "adapted", cross.kind
        measured = rulebook_gate(k.draw.matcher._index, MatchConfig())  # on the trained examples: too high
        record[f"adapted|{k.kind}"] = _gaps(k, (cross, measured))
    shutil.rmtree(folder, ignore_errors=True)
    record["seconds"] = report.seconds
    record["at"] = f"{datetime.now(UTC):%Y-%m-%d %H:%M}"
    return record


def table(records: dict[str, dict[str, Any]]) -> list[str]:
    lines = [
        "| out-of-scope messages | gate | "
        + " | ".join(f"N = {n}: mean / worst gap (within 0.05)" for n in SIZES)
        + f" | min(acc@1, rejection), N = {SIZES[-1]}: mean (worst) |",
        "|---|---|" + "---:|" * (len(SIZES) + 1),
    ]
    keys = {
        WAYS[0]: ("adapted", "cross|none"),
        WAYS[1]: ("adapted", "cross|calibrated"),
        WAYS[2]: ("adapted", "rulebook|none"),
        WAYS[3]: ("adapted", "rulebook|calibrated"),
        WAYS[4]: ("base", "cross|none"),
        WAYS[5]: ("base", "cross|calibrated"),
    }
    for kind in KINDS:
        for way, (encoder, key) in keys.items():
            cells = []
            for n in SIZES:
                gaps = np.array([g for r in records.values() for g in r[f"{encoder}|{kind}"][f"{key}|{n}"]])
                cells.append(f"{gaps.mean():.3f} / {gaps.max():.3f} ({int((gaps <= 0.05).sum())}/{len(gaps)})")
            reached = np.array(
                [x for r in records.values() for x in r[f"{encoder}|{kind}"][f"{key}|{SIZES[-1]}|reached"]]
            )
            lines.append(
                f"| {kind} | {way} | " + " | ".join(cells) + f" | {reached.mean():.3f} ({reached.min():.3f}) |"
            )
    return lines


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--write", action="store_true", help="replace this script's table in docs/benchmarks.md")
    parser.add_argument("--fresh", action="store_true", help=f"adapt again instead of reading {RESULTS.name}")
    args = parser.parse_args()
    CACHE.parent.mkdir(exist_ok=True)
    base = CachedEmbedder(get_embedder(), EmbeddingCache(CACHE))
    kept: dict[str, dict[str, Any]] = {}
    if RESULTS.is_file() and not args.fresh:
        kept = json.loads(RESULTS.read_text(encoding="utf-8"))
    draws = [*dev_sets("report"), *(banking77_test(seed) for seed in (1, 2, 3))]
    draws.sort(key=lambda d: len(d.rules))  # the quick ones first
    options = sorted(vars(AdaptOptions()).items())
    with tempfile.TemporaryDirectory(prefix="norma-adapt-calibration-") as folder:
        os.environ["NORMA_CACHE_DIR"] = str(Path(folder) / "cache")  # derived encoders of throwaway models
        for dev in draws:
            key = f"{dev.name}|{options}"
            if key not in kept:
                kept[key] = measure_draw(dev, base, Path(folder))
                RESULTS.write_text(json.dumps(kept, sort_keys=True), encoding="utf-8")
            print(f"  {dev.name}: adapted in {kept[key]['seconds']:.0f} s at {kept[key]['at']} UTC", flush=True)
    records = {k: v for k, v in kept.items() if k.split("|")[0] in {d.name for d in draws}}
    span = sorted(r["at"] for r in records.values())
    lines = [
        *table(records),
        "",
        f"Run: {machine_stamp()}, {os.cpu_count()} cores; {len(records)} report draws x {len(KINDS)} kinds x "
        f"{SAMPLES} samples per size, adapted from {span[0]} to {span[-1]} UTC (default AdaptOptions, prior "
        f"{CALIBRATION_PRIOR:g}).",
    ]
    publish({"calibration": lines}, "matching_adapt_calibration.py", to_docs=args.write)


if __name__ == "__main__":
    main()
