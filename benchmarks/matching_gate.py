"""The shipped gate on rulebooks it was not tuned on: fresh draws, two kinds of out-of-scope traffic, and its cost.

A deployed agent gets two kinds of messages that no rule should match, and cannot tell which: *near misses*
(intents of the rulebook's own domain that it lacks: held-out intents) and *off-topic* messages (another domain:
NLU++ hotels queries against a banking rulebook and the reverse, ``_devsets.foreign``). The default gate
(``MatchConfig()``: the rulebook gate with its margin band) was chosen on the *tune* draws by the smallest worst
gap over both kinds (``experiments/gate_mixed.py``, docs/design/040-matching.md); here it is only measured.

1. **Fresh draws** (``_devsets.fresh_sets``: 48 draws created after every default was chosen: BANKING77 with 67
   rules, or 12 / 25 / 40 of the 77 intents as rules; NLU++ banking and hotels with 8, 12 or 16 intents held out),
   each with its held-out intents and with off-topic messages instead. Per draw, min(acc@1, rejection) of what
   the matcher returns by default (the gate, and every rule that governs the message by its confidence, issue
   #56) against the best single similarity threshold on that draw itself (the oracle, for reference only): the
   gap. Per kind and data set: mean and worst gap, draws within 0.05, the objective as matched, and the objective
   of the similarity gate alone (what was matched before the confidence).
2. **Report draws** of the development protocol (``dev_sets("report")``, BANKING77 test.csv as an outside user
   would build it, the smaller rulebooks' report draws), both kinds, the same figures.
3. **Cost**: measuring a rulebook's gate (once per rules version) at 1k and 10k rules; the probe similarities it
   takes (2,048 probes x 16,384 rows, exact on every CPU) against a plain float32 product; calibrating a 1k-rule
   tenant from 1k labelled messages.

Usage::

    .venv/bin/python benchmarks/matching_gate.py            # prints the tables (about 10 minutes, cached vectors)
    .venv/bin/python benchmarks/matching_gate.py --write    # and replaces its tables in docs/benchmarks.md
    .venv/bin/python benchmarks/matching_gate.py --cost-only --write   # only the cost tables (about 3 minutes)
"""

from __future__ import annotations

import argparse
import platform
import re
import sys
import time
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _devsets import DevSet, banking77_subset, banking77_test, dev_sets, foreign, fresh_sets
from norma.embeddings import CachedEmbedder, EmbeddingCache, get_embedder, probe_similarities
from norma.matching import Gate, HeldOut, MatchConfig, MatchResult, Rule, RuleMatcher

REPO = Path(__file__).resolve().parents[1]
CACHE = REPO / ".cache" / "matching_bench.sqlite"
DOC = REPO / "docs" / "benchmarks.md"
GRID = np.round(np.arange(0.2, 0.95, 0.005), 3)
WITHIN = 0.05
SUBSETS = ((12, 4), (25, 6), (40, 8))
"""Smaller BANKING77 rulebooks: (intents kept as rules, intents held out)."""
KINDS = ("held-out", "off-topic")

Candidates = list[tuple[str, float]]  # (rule id, similarity), best final score first


def _candidates(results: list[MatchResult]) -> list[Candidates]:
    return [[(m.rule.id, m.similarity_score) for m in result] for result in results]


def objective(expected: list[frozenset[str]], ranked: list[Candidates], limits: list[float]) -> tuple[float, float]:
    """(acc@1, rejection) when a message's candidates pass if their similarity reaches its limit: acc@1 over the
    messages that expect some rule (the first passing rule is expected), rejection over those that expect none."""
    ok = inside = rejected = outside = 0
    for want, cands, limit in zip(expected, ranked, limits, strict=True):
        top = next((c for c in cands if c[1] >= limit), None)
        if want:
            inside += 1
            ok += top is not None and top[0] in want
        else:
            outside += 1
            rejected += top is None
    return ok / max(inside, 1), rejected / max(outside, 1)


class Draw:
    """One draw matched once without a gate (every candidate kept, at most 10), with its best single threshold."""

    def __init__(self, dev: DevSet, embedder: CachedEmbedder, held_out: HeldOut | None = None) -> None:
        self.name, self.part = dev.name, dev.part
        self.matcher = RuleMatcher(dev.rules, embedder=embedder, gate=held_out)  # an adapted encoder's gate, if any
        texts = [m.text for m in dev.messages]
        ungated = MatchConfig(threshold=None, max_matched=10)
        vectors = list(embedder.embed(texts))
        self.ranked = _candidates(self.matcher.match_many(texts, config=ungated, query_vectors=vectors))
        self.expected = [m.expected for m in dev.messages]
        self.returned = [  # what the matcher returns by default (`norma match`): the first rule, or none
            result[0].rule.id if result else None for result in self.matcher.match_many(texts, query_vectors=vectors)
        ]
        tops = [sorted((c[1] for c in cands), reverse=True)[:2] for cands in self.ranked]
        self.first = np.array([t[0] if t else -np.inf for t in tops])
        self.second = np.array([t[1] if len(t) > 1 else -np.inf for t in tops])
        self.oracle, self.oracle_threshold = max((min(self.at_similarity(float(t))), float(t)) for t in GRID)

    def at_similarity(self, threshold: float) -> tuple[float, float]:
        return objective(self.expected, self.ranked, [threshold] * len(self.expected))

    def at_gate(self, gate: Gate) -> tuple[float, float]:
        """(acc@1, rejection) at a gate the matcher resolved: per message, its band's threshold when the best rule
        reaches it, is below the gate and stands the band's margin above the second (the matcher's rule)."""
        assert gate.threshold is not None
        limit = np.full(len(self.expected), gate.threshold)
        if gate.band is not None:
            band = gate.band
            lowered = (self.first >= band.threshold) & (self.first < gate.threshold)
            limit[lowered & (self.first - self.second >= band.margin)] = band.threshold
        return objective(self.expected, self.ranked, [float(x) for x in limit])

    def shipped(self) -> tuple[float, float]:
        """(acc@1, rejection) of what the matcher returns with its default config: the automatic gate, and every
        rule whose confidence says it governs the message (issue #56)."""
        ok = inside = rejected = outside = 0
        for want, first in zip(self.expected, self.returned, strict=True):
            if want:
                inside += 1
                ok += first is not None and first in want
            else:
                outside += 1
                rejected += first is None
        return ok / max(inside, 1), rejected / max(outside, 1)

    def gate(self, quantile: float) -> float:
        """The automatic gate's threshold at ``quantile`` without a band (the rulebook's, or an adapted encoder's)."""
        threshold = self.matcher.gate(MatchConfig(gate_quantile=quantile, gate_band_quantile=None)).threshold
        assert threshold is not None
        return threshold


def _data_set(name: str) -> str:
    base = re.sub(r"/.*$", "", name.split(" ")[0])
    if base == "banking77-test":
        return "banking77 test.csv"
    return "banking77 (12-40 rules)" if base.startswith("banking77-") else base


def quality(draws: dict[str, list[Draw]], title: str) -> list[str]:
    """Per kind and data set: the default gate's gap to each draw's oracle, and the objective it reaches."""
    lines = [
        f"| {title}: kind | data set | draws | rules | mean gap | worst gap | within {WITHIN} | "
        "min(acc@1, rejection) as matched: mean (worst) | the similarity gate alone: mean | oracle: mean |",
        "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    worst: list[tuple[float, str, str]] = []
    for kind, group in draws.items():
        rows: dict[str, list[tuple[float, float, float, int, float]]] = {}
        for d in group:
            reached, alone = min(d.shipped()), min(d.at_gate(d.matcher.gate()))
            rows.setdefault(_data_set(d.name), []).append(
                (d.oracle - reached, reached, d.oracle, len(d.matcher), alone)
            )
            worst.append((d.oracle - reached, kind, d.name))
        every = [row for values in rows.values() for row in values]
        for name, values in [*sorted(rows.items()), (f"**all {kind}**", every)]:
            a = np.array(values)
            sizes = sorted({int(x) for x in a[:, 3]})
            size = f"{sizes[0]}" if len(sizes) == 1 else f"{sizes[0]}-{sizes[-1]}"
            lines.append(
                f"| {kind} | {name} | {len(a)} | {size} | {a[:, 0].mean():.3f} | {a[:, 0].max():.3f} | "
                f"{int((a[:, 0] <= WITHIN).sum())}/{len(a)} | {a[:, 1].mean():.3f} ({a[:, 1].min():.3f}) | "
                f"{a[:, 4].mean():.3f} | {a[:, 2].mean():.3f} |"
            )
    worst.sort(reverse=True)
    return [*lines, "", "Largest gaps: " + ", ".join(f"{n} ({k}) {g:.3f}" for g, k, n in worst[:5]) + "."]


def both_kinds(sets: list[DevSet], embedder: CachedEmbedder) -> dict[str, list[Draw]]:
    """Each draw with its own held-out intents, and with off-topic messages in their place."""
    return {"held-out": [Draw(d, embedder) for d in sets], "off-topic": [Draw(foreign(d), embedder) for d in sets]}


def cost() -> list[str]:
    rng = np.random.default_rng(0)
    lines = ["| rules | texts per rule | gate measurement (median of 3) |", "|---:|---:|---:|"]
    for n, per in ((1_000, 4), (10_000, 4), (10_000, 11)):
        rules = [
            Rule(id=f"r{i}", condition_text=f"rule {i}", examples=[f"ex {i} {k}" for k in range(per - 1)])
            for i in range(n)
        ]
        vectors = {}
        for rule in rules:
            m = rng.standard_normal((per, 384)).astype(np.float32)
            vectors[rule.id] = m / np.linalg.norm(m, axis=1, keepdims=True)
        times = []
        for _ in range(3):
            matcher = RuleMatcher(rules, vectors=vectors, embedder=_NoEmbedder())
            started = time.perf_counter()
            matcher.gate()
            times.append(time.perf_counter() - started)
        lines.append(f"| {n:,} | {per} | {np.median(times) * 1000:.0f} ms |")
    return lines


def probe_cost(probes: int = 2_048, rows: int = 16_384, rounds: int = 5) -> list[str]:
    """``probe_similarities`` (exact on every CPU: float64 on an integer grid) of ``probes`` texts against ``rows``
    384-dim rows, next to the plain float32 product and row max it replaced (not the same bits across block shapes
    or CPUs, issue #55), in alternating rounds."""
    rng = np.random.default_rng(3)
    matrix = rng.standard_normal((rows, 384)).astype(np.float32)
    matrix /= np.linalg.norm(matrix, axis=1, keepdims=True)
    texts: list[str | None] = [f"t{i}" for i in range(rows)]
    picked = list(range(0, rows, rows // probes))[:probes]

    def float32_product() -> None:
        block = matrix[picked]
        for first in range(0, probes, 256):
            (block[first : first + 256] @ matrix.T).max(axis=1)

    times: dict[str, list[float]] = {"exact (float64 on the grid, shipped)": [], "float32 product (before)": []}
    for _ in range(rounds):
        for name, work in zip(times, (lambda: probe_similarities(matrix, texts, picked), float32_product), strict=True):
            started = time.perf_counter()
            work()
            times[name].append(time.perf_counter() - started)
    lines = [
        f"| probe similarities, {probes:,} probes x {rows:,} rows | median of {rounds} | worst |",
        "|---|---:|---:|",
    ]
    lines += [f"| {name} | {np.median(t) * 1000:.0f} ms | {max(t) * 1000:.0f} ms |" for name, t in times.items()]
    return lines


def calibration_cost(embedder: CachedEmbedder, rules: int = 1_000, messages: int = 1_000) -> list[str]:
    """``calibrate_gate`` for a ``rules``-rule tenant from ``messages`` labelled messages: the rule vectors are the
    tenant's stored ones (precomputed, not timed); the messages are embedded by the plain model (timed)."""
    from norma.matching import calibrate_gate

    rng = np.random.default_rng(7)
    words = [f"{a}{b}" for a in ("card", "loan", "fee", "pay", "bank", "cash", "rate", "app") for b in range(40)]

    def sentence(n: int) -> str:
        return " ".join(str(w) for w in rng.choice(words, n))

    book = [
        Rule(id=f"r{i}", condition_text=f"the user asks about {sentence(4)}", examples=[sentence(6) for _ in range(2)])
        for i in range(rules)
    ]
    vectors = {rule.id: embedder.embed([rule.embedding_text, *rule.examples]) for rule in book}
    labelled = []
    for _ in range(messages):
        target = book[int(rng.integers(rules))]
        labelled.append((f"{target.examples[0]} {sentence(2)}", [target.id] if rng.random() < 0.8 else []))
    lines = [
        "| rules | labelled messages | target | calibration (median of 3, messages embedded) | gate |",
        "|---:|---:|---|---:|---:|",
    ]
    options: dict[str, dict[str, float]] = {"balanced (default)": {}, "precision >= 0.5": {"target_precision": 0.5}}
    for name, option in options.items():
        times = []
        for _ in range(3):
            matcher = RuleMatcher(book, vectors=vectors, embedder=get_embedder())
            started = time.perf_counter()
            gate = calibrate_gate(matcher, labelled, **option)
            times.append(time.perf_counter() - started)
        lines.append(f"| {rules:,} | {messages:,} | {name} | {np.median(times):.1f} s | {gate.threshold:.4f} |")
    return lines


class _NoEmbedder:
    model_id = "none"
    dim = 384

    def embed(self, texts: object) -> np.ndarray:
        raise AssertionError("the cost benchmark passes every vector")


def write(sections: dict[str, list[str]], script: str = "matching_gate.py") -> None:
    """Replace ``script``'s tables (between its ``<!-- script:name:begin/end -->`` markers) in docs/benchmarks.md."""
    text = DOC.read_text(encoding="utf-8")
    for name, lines in sections.items():
        begin, end = f"<!-- {script}:{name}:begin -->", f"<!-- {script}:{name}:end -->"
        if begin not in text:
            raise SystemExit(f"docs/benchmarks.md has no {begin} marker: add the section's prose first")
        head, rest = text.split(begin, 1)
        _, tail = rest.split(end, 1)
        text = head + begin + "\n" + "\n".join(lines) + "\n" + end + tail
    DOC.write_text(text, encoding="utf-8")


def machine_stamp() -> str:
    """The time (UTC, to the minute), processor and Python of a run, for a table's run line."""
    return (
        f"{datetime.now(UTC):%Y-%m-%d %H:%M} UTC, {platform.processor() or platform.machine()}, "
        f"Python {platform.python_version()}"
    )


def subsets(part: str) -> list[DevSet]:
    """The smaller BANKING77 rulebooks' draws of ``part``."""
    seeds = (101, 102, 103) if part == "tune" else (201, 202, 203)
    return [banking77_subset(seed, part, kept=kept, held_out=held) for kept, held in SUBSETS for seed in seeds]


def _timed(name: str, work: Callable[[], list[str]]) -> list[str]:
    started = time.perf_counter()
    lines = work()
    print("\n".join(lines), "\n", flush=True)
    print(f"({name}: {time.perf_counter() - started:.0f} s)\n", file=sys.stderr)
    return lines


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--write", action="store_true", help="replace this script's tables in docs/benchmarks.md")
    parser.add_argument("--no-cost", action="store_true", help="skip the cost tables")
    parser.add_argument("--cost-only", action="store_true", help="only the cost tables")
    args = parser.parse_args()
    CACHE.parent.mkdir(exist_ok=True)
    embedder = CachedEmbedder(get_embedder(), EmbeddingCache(CACHE))
    started = time.perf_counter()
    stamp = machine_stamp()
    outside = [banking77_test(seed) for seed in (1, 2, 3)]
    report_sets = [*dev_sets("report"), *outside, *subsets("report")]
    sections: dict[str, list[str]] = {}
    if not args.cost_only:
        sections["fresh"] = _timed("fresh", lambda: quality(both_kinds(fresh_sets(), embedder), "fresh draws"))
        sections["report"] = _timed("report", lambda: quality(both_kinds(report_sets, embedder), "report draws"))
    if not args.no_cost:
        sections["cost"] = _timed("cost", lambda: [*cost(), "", *probe_cost(), "", *calibration_cost(embedder)])
    minutes = (time.perf_counter() - started) / 60
    for lines in sections.values():
        lines += ["", f"Run: {stamp}; {minutes:.0f} min for the whole script."]
    if args.write:
        write(sections)


if __name__ == "__main__":
    main()
