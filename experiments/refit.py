"""A tenant's confidence refitted on its labelled traffic (issue #56, ``norma rules calibrate``): does it carry over?

Ran against the commit that adds this file (public API, plus ``fit_refit``, what the command fits with; the
labels are the command's: a rule scored for a message governs it when the message expects it).

Per draw, the traffic is the draw's labelled messages (in scope, and its held-out intents expecting none) plus the
off-topic NLU++ queries of the other domain (``_devsets.foreign``), shuffled with the draw's seed. The first ``n``
messages are the labelled traffic a user calibrates on (``n`` = 50 and 200); the rest are reported. The matcher is
the shipped one (no gate; every scored rule with its confidence). Per draw and ``n``: the ECE of every candidate's
confidence on the rest (10 bins, as ``norma rules eval``) and of the top candidate's, shipped and refitted, and the
turn figures of ``experiments/turn_enforcement.py`` (a rule governs from 0.7) on the rest, shipped and refitted.

Declared before measuring: ``REFIT_PRIOR`` is the prior (in candidates' worth) among 2, 5, 10, 20, 50, 100, 200 with
the lowest mean rest-ECE over the tune draws and both ``n``; the largest within 0.002 of the best wins (the more
conservative). Reported on the fresh draws (``_devsets.fresh_sets``, every ``--fresh-every``-th) at that prior:
mean and worst per data set.

Usage: .venv/bin/python experiments/refit.py [--fresh-every 3]
"""

from __future__ import annotations

import argparse
import sys
from dataclasses import dataclass
from pathlib import Path
from types import SimpleNamespace

import numpy as np

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "benchmarks"))
sys.path.insert(0, str(REPO / "experiments"))

from turn_enforcement import figures as turn_figures  # noqa: E402

from _devsets import DevSet, banking77_subset, dev_sets, foreign, fresh_sets  # noqa: E402
from norma.embeddings import CachedEmbedder, EmbeddingCache, get_embedder  # noqa: E402
from norma.matching import GOVERNS, MatchConfig, Refit, RuleMatcher, fit_refit  # noqa: E402

CACHE = REPO / ".cache" / "matching_bench.sqlite"
PRIORS = (2.0, 5.0, 10.0, 20.0, 50.0, 100.0, 200.0)
SIZES = (50, 200)


@dataclass(frozen=True)
class Observed:
    """One message matched without a gate: its candidates (rule id, shipped confidence) and the rules it expects."""

    candidates: tuple[tuple[str, float], ...]
    expected: frozenset[str]

    @property
    def confidences(self) -> list[float]:
        return [c for _, c in self.candidates]


def refit_confidence(traffic: list[Observed], prior: float) -> Refit:
    conf = np.array([c for o in traffic for c in o.confidences])
    right = np.array([rule in o.expected for o in traffic for rule, _ in o.candidates])
    return fit_refit(conf, right, prior)


@dataclass
class Draw:
    name: str
    observed: list[Observed]  # every message, shuffled: the first n are the traffic


def load(dev: DevSet, embedder: CachedEmbedder, seed: int) -> Draw:
    off = foreign(dev)
    messages = dev.messages + [m for m in off.messages if not m.expected]
    order = np.random.default_rng(seed).permutation(len(messages))
    messages = [messages[i] for i in order]
    matcher = RuleMatcher(dev.rules, MatchConfig(threshold=None, max_matched=len(dev.rules)), embedder=embedder)
    found = matcher.match_many([m.text for m in messages])
    observed = [
        Observed(tuple((m.rule.id, m.confidence) for m in result), labelled.expected)
        for labelled, result in zip(messages, found, strict=True)
    ]
    return Draw(dev.name, observed)


def ece(conf: np.ndarray, right: np.ndarray) -> float:
    """10 equal bins, as ``norma rules eval``."""
    total = 0.0
    which = np.minimum((conf * 10).astype(int), 9)
    for b in range(10):
        members = which == b
        if members.any():
            total += members.sum() * abs(conf[members].mean() - right[members].mean())
    return float(total / len(conf))


def rest_figures(observed: list[Observed], refit: Refit | None, rng: np.random.Generator) -> dict[str, float]:
    conf = np.array([c for o in observed for c in o.confidences], dtype=np.float64)
    right = np.array([rule in o.expected for o in observed for rule, _ in o.candidates], dtype=np.float64)
    if refit is not None:
        conf = refit.apply(conf)
    starts = np.cumsum([0] + [len(o.candidates) for o in observed])[:-1]
    firsts = np.array([s for s, o in zip(starts, observed, strict=True) if o.candidates], dtype=int)
    out = {"ece": ece(conf, right), "top_ece": ece(conf[firsts], right[firsts])}
    chosen, at = [], 0
    for o in observed:
        values = conf[at : at + len(o.candidates)]
        at += len(o.candidates)
        ids = sorted(rule for (rule, _), c in zip(o.candidates, values, strict=True) if c >= GOVERNS)
        chosen.append(SimpleNamespace(expected=o.expected, ids=ids))
    turns = turn_figures(chosen, lambda view: set(range(len(view.ids))), rng)  # type: ignore[arg-type]
    out.update({k: turns[k] for k in ("good", "bad", "oos")})
    return out


def run(draws: list[Draw], prior: float) -> dict[tuple[str, int], tuple[dict[str, float], dict[str, float]]]:
    """Per (draw, n): the rest's figures shipped and refitted."""
    out = {}
    for draw in draws:
        for n in SIZES:
            traffic, rest = draw.observed[:n], draw.observed[n:]
            refit = refit_confidence(traffic, prior)
            out[(draw.name, n)] = (
                rest_figures(rest, None, np.random.default_rng(7)),
                rest_figures(rest, refit, np.random.default_rng(7)),
            )
    return out


def dataset(name: str) -> str:
    head = name.split("/")[0]
    return "banking77-small" if head.startswith("banking77-") else head


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--fresh-every", type=int, default=3)
    args = parser.parse_args()
    embedder = CachedEmbedder(get_embedder(), EmbeddingCache(str(CACHE)))
    tune_sets = [*dev_sets("tune")]
    tune_sets += [banking77_subset(s, "tune", kept=k, held_out=h) for k, h in ((12, 4), (25, 6)) for s in (101, 102)]
    tune = [load(dev, embedder, 1000 + i) for i, dev in enumerate(tune_sets)]
    print("prior  mean rest-ECE (tune draws, n = 50 and 200)")
    scores = {}
    for prior in PRIORS:
        figures = run(tune, prior)
        scores[prior] = float(np.mean([after["ece"] for _, after in figures.values()]))
        shipped = float(np.mean([before["ece"] for before, _ in figures.values()]))
        print(f"{prior:6g} {scores[prior]:.4f}  (shipped {shipped:.4f})")
    best = min(scores.values())
    chosen = max(p for p, s in scores.items() if s <= best + 0.002)
    print(f"chosen prior: {chosen:g}\n")
    fresh = [load(dev, embedder, 5000 + i) for i, dev in enumerate(fresh_sets()[:: args.fresh_every])]
    figures = run(fresh, chosen)
    print(
        "| set | n | draws | ECE shipped | ECE refitted | top ECE shipped | top ECE refitted | good shipped "
        "| good refitted | bad shipped | bad refitted | oos shipped | oos refitted |"
    )
    print("|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|")
    for n in SIZES:
        by_set: dict[str, list[tuple[dict[str, float], dict[str, float]]]] = {}
        for (name, size), pair in figures.items():
            if size == n:
                by_set.setdefault(dataset(name), []).append(pair)
        for name, pairs in sorted(by_set.items()):
            cells = []
            for key, worst in (("ece", max), ("top_ece", max), ("good", min), ("bad", min), ("oos", min)):
                for side in (0, 1):
                    values = [p[side][key] for p in pairs]
                    cells.append(f"{np.mean(values):.3f} ({worst(values):.3f})")
            print(f"| {name} | {n} | {len(pairs)} | " + " | ".join(cells) + " |")


if __name__ == "__main__":
    main()
