"""An adapted encoder after the rulebook grew: how its gate and its ranking age, and a gate that follows new rules.

An encoder adapted to a rulebook (``norma rules adapt``) stores a cross-fitted gate measured on that rulebook. Rules
added afterwards are texts the encoder never saw. The matcher reports the share of its texts the encoder was
trained on (``trained_share``), and it now also probes the examples new to the encoder (``unseen_probes``,
docs/design/040-matching.md); this script measures how things degrade, with and without those probes.

Protocol: the report draws of the gate protocol (``_devsets.dev_sets("report")``: BANKING77 train.csv, NLU++ banking
and hotels, 3 each). Per draw and per share s in :data:`WITHHELD`, the rules with the smallest CRC-32 of their id
(a share s of them) are left out of the adaptation (default ``AdaptOptions``, cross-fitted gate); the draw's full
rulebook is then matched with that encoder, as if those rules had been added after adapting. Per draw:

- acc@1 without a gate, base encoder / encoder adapted on the whole rulebook (``matching_adapt.py``'s record) /
  the stale one, and the stale one's on messages of the rules it was trained on and of the added rules;
- min(acc@1, rejection) at each gate, against the stale encoder's own best single threshold (oracle):
  the base encoder at its default gate; the stale encoder at its *stored* gate (the stored held-out similarities
  alone: what the matcher did before), at the gate the matcher would measure on the rulebook's examples (most of
  them trained on, so too high), and at the *refreshed* gate the matcher now applies: the ``ADAPTED_QUANTILE``
  quantile of the stored similarities together with the leave-one-out similarities of the added rules' examples
  (texts the encoder never saw, so honest probes like the held-out ones), each set weighted by the share of the
  rulebook's examples it stands for.

Nothing is chosen here: the refreshed gate has no parameter of its own (the quantile is the adapted gate's).
Per-draw figures are kept in ``.cache/matching_adapt_stale.json`` (a run resumes; ``--fresh`` adapts again). About
an hour on 2 cores (18 adaptations, each trained twice for the cross-fitted gate).

Usage::

    .venv/bin/python benchmarks/matching_adapt_stale.py           # prints the tables
    .venv/bin/python benchmarks/matching_adapt_stale.py --write   # and replaces them in docs/benchmarks.md
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import tempfile
import time
import zlib
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _devsets import DevSet, dev_sets
from matching_gate import CACHE, REPO, Draw, machine_stamp, publish
from norma.embeddings import (
    AdaptOptions,
    BertEmbedder,
    CachedEmbedder,
    EmbeddingCache,
    adapt_encoder,
    adapted_gate_similarities,
    get_embedder,
)
from norma.matching import MatchConfig
from norma.matching._gate import ADAPTED_QUANTILE, adapted_gate, rulebook_gate
from norma.rules import rule_texts

WITHHELD = (0.1, 0.3)
"""Shares of the rules left out of the adaptation (added after it)."""
RESULTS = REPO / ".cache" / "matching_adapt_stale.json"
FULL = REPO / ".cache" / "matching_adapt.json"
"""``matching_adapt.py``'s records: the same draws adapted on their whole rulebook, same options."""


def withheld(dev: DevSet, share: float) -> set[str]:
    """The ids of the share ``share`` of ``dev``'s rules with the smallest CRC-32 of their id."""
    ranked = sorted(dev.rules, key=lambda rule: (zlib.crc32(rule.id.encode()), rule.id))
    return {rule.id for rule in ranked[: round(share * len(ranked))]}


def full_record(dev: DevSet) -> dict[str, Any] | None:
    """``matching_adapt.py``'s record of ``dev`` adapted on its whole rulebook with the default options."""
    if not FULL.is_file():
        return None
    kept = json.loads(FULL.read_text(encoding="utf-8"))
    record = kept.get(f"{dev.name}|{dev.part}|{sorted(vars(AdaptOptions()).items())}")
    return record if isinstance(record, dict) else None


def measure(dev: DevSet, share: float, root: Path, base_min: float, base_acc: float) -> dict[str, Any]:
    added = withheld(dev, share)
    folder = root / f"{dev.name.replace('/', '-')}-{share:g}"
    kept_rules = [rule_texts(rule) for rule in dev.rules if rule.id not in added]
    result = adapt_encoder(kept_rules, folder, options=AdaptOptions(), label=f"{dev.name} without {len(added)} rules")
    embedder = CachedEmbedder(BertEmbedder(folder), EmbeddingCache())
    draw = Draw(dev, embedder)
    refreshed_gate = draw.matcher.gate(MatchConfig())  # the matcher's: stored and new examples' probes
    assert refreshed_gate.kind == "adapted", refreshed_gate
    assert refreshed_gate.threshold is not None
    found = adapted_gate_similarities(folder)
    assert found is not None
    stored = adapted_gate(found[0], found[1], MatchConfig())  # what the matcher did before it probed new examples
    assert stored.threshold is not None
    refreshed = refreshed_gate.threshold
    index = draw.matcher._index  # the gate the matcher would measure on these examples, for comparison
    measured = rulebook_gate(index, MatchConfig(gate_quantile=ADAPTED_QUANTILE, gate_band_quantile=None)).threshold
    assert measured is not None
    shutil.rmtree(folder, ignore_errors=True)
    on_added = [i for i, want in enumerate(draw.expected) if want & added]
    on_kept = [i for i, want in enumerate(draw.expected) if want and not want & added]

    def acc_on(rows: list[int]) -> float:
        return float(np.mean([bool(draw.ranked[i]) and draw.ranked[i][0][0] in draw.expected[i] for i in rows]))

    return {
        "rules_added": len(added),
        "rules": len(dev.rules),
        "trained_share": refreshed_gate.terms.get("trained_share"),
        "seconds": result.seconds,
        "acc": draw.at_similarity(-1.0)[0],
        "acc_kept": acc_on(on_kept),
        "acc_added": acc_on(on_added),
        "messages_added": len(on_added),
        "oracle": draw.oracle,
        "stored": (stored.threshold, min(draw.at_similarity(stored.threshold))),
        "refreshed": (refreshed, min(draw.at_similarity(refreshed)), refreshed_gate.terms.get("unseen_probes")),
        "measured": (measured, min(draw.at_similarity(measured))),
        "base_min": base_min,
        "base_acc": base_acc,
        "probes_stored": len(found[0]),
        "held_out": found[1].get("held_out"),
        "at": f"{datetime.now(UTC):%Y-%m-%d %H:%M}",
    }


def records(
    root: Path, base: CachedEmbedder, fresh: bool, part: str, shares: tuple[float, ...]
) -> list[tuple[DevSet, float, dict[str, Any]]]:
    kept: dict[str, dict[str, Any]] = {}
    if RESULTS.is_file():
        kept = json.loads(RESULTS.read_text(encoding="utf-8"))
    if fresh:
        kept = {key: record for key, record in kept.items() if f"|{part}|" not in key}
    out = []
    for dev in sorted(dev_sets(part), key=lambda d: len(d.rules)):  # the quick ones first
        plain = None
        for share in shares:
            key = f"{dev.name}|{dev.part}|{share:g}"
            if key not in kept:
                if plain is None:
                    plain = Draw(dev, base)
                gate = plain.matcher.gate(MatchConfig())
                base_min, base_acc = min(plain.at_gate(gate)), plain.at_similarity(-1.0)[0]
                kept[key] = measure(dev, share, root, base_min, base_acc)
                RESULTS.write_text(json.dumps(kept, indent=1, sort_keys=True), encoding="utf-8")
            record = kept[key]
            print(
                f"  {dev.name} without {record['rules_added']} rules: acc@1 {record['acc']:.3f}, gates "
                f"stored {record['stored'][1]:.3f} refreshed {record['refreshed'][1]:.3f} (oracle "
                f"{record['oracle']:.3f}) ({record['seconds']:.0f} s)",
                flush=True,
            )
            out.append((dev, share, record))
    return out


def tables(
    rows: list[tuple[DevSet, float, dict[str, Any]]], minutes: float, part: str, shares: tuple[float, ...]
) -> dict[str, list[str]]:
    per_draw = [
        "| draw | rules added | trained share | acc@1: base / adapted on all / stale (trained rules, added rules) | "
        "added rules, base encoder | min at the gate: base | adapted on all | stale, stored gate | refreshed gate | "
        "gate measured on the rulebook | stale oracle |",
        "|---|---:|---:|---|---:|---:|---:|---:|---:|---:|---:|",
    ]
    summary = [
        "| rules added | data set | trained share (mean) | acc@1: base / adapted on all / stale | added rules' "
        "messages: acc@1 stale / base | min at the gate: base / adapted on all / stale stored / stale refreshed | "
        "gap to the stale oracle: stored / refreshed (mean, worst) | refreshed - stored: mean (worst) |",
        "|---:|---|---:|---|---|---|---|---:|",
    ]
    for share in shares:
        groups: dict[str, dict[str, list[float]]] = {}
        for dev, s, r in rows:
            if s != share:
                continue
            full = full_record(dev)
            full_acc = full["acc"] if full else float("nan")
            full_min = min(full["gated"]) if full else float("nan")
            base_added = base_on_added(dev, share)
            for group in (dev.name.split("/")[0], "all"):
                figures = groups.setdefault(group, {})
                for name, value in (
                    ("share", r["trained_share"]),
                    ("base_acc", r["base_acc"]),
                    ("full_acc", full_acc),
                    ("acc", r["acc"]),
                    ("acc_added", r["acc_added"]),
                    ("base_added", base_added),
                    ("base_min", r["base_min"]),
                    ("full_min", full_min),
                    ("stored", r["stored"][1]),
                    ("refreshed", r["refreshed"][1]),
                    ("gap_stored", r["oracle"] - r["stored"][1]),
                    ("gap_refreshed", r["oracle"] - r["refreshed"][1]),
                    ("gain", r["refreshed"][1] - r["stored"][1]),
                ):
                    figures.setdefault(name, []).append(float(value))
            per_draw.append(
                f"| {dev.name} | {r['rules_added']} of {r['rules']} | {r['trained_share']:.3f} | {r['base_acc']:.3f} / "
                f"{full_acc:.3f} / {r['acc']:.3f} ({r['acc_kept']:.3f}, {r['acc_added']:.3f}) | {base_added:.3f} | "
                f"{r['base_min']:.3f} | {full_min:.3f} | {r['stored'][1]:.3f} ({r['stored'][0]:.4f}) | "
                f"{r['refreshed'][1]:.3f} ({r['refreshed'][0]:.4f}) | {r['measured'][1]:.3f} "
                f"({r['measured'][0]:.4f}) | {r['oracle']:.3f} |"
            )
        for group, figures in sorted(groups.items(), key=lambda item: item[0] == "all"):  # all last
            f = {name: np.array(values) for name, values in figures.items()}
            label = f"**all ({len(f['acc'])} draws)**" if group == "all" else group
            summary.append(
                f"| {share:.0%} | {label} | {f['share'].mean():.3f} | {f['base_acc'].mean():.3f} / "
                f"{np.nanmean(f['full_acc']):.3f} / {f['acc'].mean():.3f} | {f['acc_added'].mean():.3f} / "
                f"{f['base_added'].mean():.3f} | {f['base_min'].mean():.3f} / {np.nanmean(f['full_min']):.3f} / "
                f"{f['stored'].mean():.3f} / {f['refreshed'].mean():.3f} | {f['gap_stored'].mean():.3f}, "
                f"{f['gap_stored'].max():.3f} / {f['gap_refreshed'].mean():.3f}, {f['gap_refreshed'].max():.3f} | "
                f"{f['gain'].mean():+.3f} ({f['gain'].min():+.3f}) |"
            )
    span = sorted(r["at"] for _, _, r in rows)
    run = (
        f"Run: {machine_stamp()}, {os.cpu_count()} cores; {minutes:.0f} min; {part} draws adapted from {span[0]} to "
        f"{span[-1]} UTC (.cache/{RESULTS.name}, read back if present)."
    )
    suffix = "" if part == "report" else f"-{part}"
    return {f"stale{suffix}": [*summary, "", run], f"stale-draws{suffix}": per_draw}


_BASE: dict[str, Draw] = {}


def base_on_added(dev: DevSet, share: float) -> float:
    """acc@1 without a gate of the base encoder on the messages of the rules :func:`withheld` leaves out."""
    draw = _BASE.get(dev.name)
    if draw is None:
        draw = _BASE[dev.name] = Draw(dev, CachedEmbedder(get_embedder(), EmbeddingCache(CACHE)))
    added = withheld(dev, share)
    rows = [i for i, want in enumerate(draw.expected) if want & added]
    return float(np.mean([bool(draw.ranked[i]) and draw.ranked[i][0][0] in draw.expected[i] for i in rows]))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--write", action="store_true", help="replace this script's tables in docs/benchmarks.md")
    parser.add_argument("--fresh", action="store_true", help=f"adapt again instead of reading {RESULTS.name}")
    parser.add_argument("--part", choices=("report", "tune"), default="report", help="which draws (default: report)")
    parser.add_argument(
        "--shares", default=",".join(f"{s:g}" for s in WITHHELD), help="shares of the rules added after adapting"
    )
    args = parser.parse_args()
    try:
        shares = tuple(float(x) for x in args.shares.split(","))
    except ValueError:
        raise SystemExit(f"--shares takes numbers separated by commas, not {args.shares!r}") from None
    if not shares or not all(0 < s < 1 for s in shares):
        raise SystemExit(f"--shares takes shares between 0 and 1 (exclusive), not {args.shares!r}")
    CACHE.parent.mkdir(exist_ok=True)
    base = CachedEmbedder(get_embedder(), EmbeddingCache(CACHE))
    started = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="norma-adapt-stale-") as folder:
        os.environ["NORMA_CACHE_DIR"] = str(Path(folder) / "cache")  # derived encoders of throwaway models
        rows = records(Path(folder), base, args.fresh, args.part, shares)
    minutes = (time.perf_counter() - started) / 60
    publish(tables(rows, minutes, args.part, shares), "matching_adapt_stale.py", to_docs=args.write)


if __name__ == "__main__":
    main()
