"""The default gate on rulebooks it was not tuned on: fresh draws, two kinds of out-of-scope traffic, and its cost.

A deployed agent gets two kinds of messages that no rule should match, and cannot tell which: *near misses*
(intents of the rulebook's own domain that it lacks: held-out intents) and *off-topic* messages (another domain:
NLU++ hotels queries against a banking rulebook and the reverse, ``_devsets.foreign``). The default gate
(``MatchConfig()``, issue #56: the rules whose confidence that they govern the message reaches ``GOVERNS`` 0.7) was
chosen on the *tune* draws (``experiments/confidence.py``, iteration 9; docs/design/040-matching.md); here it is only
measured.

1. **Fresh draws** (``_devsets.fresh_sets``: 48 draws created after every default was chosen: BANKING77 with 67
   rules, or 12 / 25 / 40 of the 77 intents as rules; NLU++ banking and hotels with 8, 12 or 16 intents held out),
   each with its held-out intents and with off-topic messages instead. Per draw, min(acc@1, rejection) of what
   the matcher returns by default against the best single confidence threshold on that draw itself (the oracle of
   the same scorer, for reference only): the gap. Per kind and data set: mean and worst gap, draws within 0.05,
   the objective as matched, acc@1 and rejection, and the oracle of a single similarity threshold beside it.
2. **Report draws** of the development protocol (``dev_sets("report")``, BANKING77 test.csv as an outside user
   would build it, the smaller rulebooks' report draws), both kinds, the same figures.
3. **Cost**: the rulebook's statistics the confidence reads (once per rules version) at 1k and 10k rules; the
   probe similarities they take (2,048 probes x 16,384 rows, exact on every CPU) against a plain float32 product;
   calibrating a 1k-rule tenant from 1k labelled messages.

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
from norma.matching import HeldOut, MatchConfig, MatchResult, Rule, RuleMatcher

REPO = Path(__file__).resolve().parents[1]
CACHE = REPO / ".cache" / "matching_bench.sqlite"
DOC = REPO / "docs" / "benchmarks.md"
GRID = np.round(np.arange(0.2, 0.95, 0.005), 3)
"""Similarity thresholds tried for the similarity oracle."""
CONFIDENCE_GRID = np.round(np.arange(0.0, 1.0, 0.005), 3)
"""Confidence levels tried for the oracle of the default gate's own scorer."""
WITHIN = 0.05
SUBSETS = ((12, 4), (25, 6), (40, 8))
"""Smaller BANKING77 rulebooks: (intents kept as rules, intents held out)."""
KINDS = ("held-out", "off-topic")

Candidates = list[tuple[str, float]]  # (rule id, score), best final score first


def _candidates(results: list[MatchResult], score: str = "similarity") -> list[Candidates]:
    return [
        [(m.rule.id, m.confidence if score == "confidence" else m.similarity_score) for m in result]
        for result in results
    ]


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
    """One draw matched once without a gate (every candidate kept, at most 10, with its similarity and confidence),
    with the best single threshold of each score, and what the matcher returns by default."""

    def __init__(self, dev: DevSet, embedder: CachedEmbedder, held_out: HeldOut | None = None) -> None:
        self.name, self.part = dev.name, dev.part
        self.matcher = RuleMatcher(dev.rules, embedder=embedder, gate=held_out)  # an adapted encoder's statistics
        texts = [m.text for m in dev.messages]
        ungated = MatchConfig(threshold=None, max_matched=10)
        vectors = list(embedder.embed(texts))
        every = self.matcher.match_many(texts, config=ungated, query_vectors=vectors)
        self.ranked = _candidates(every)
        self.confident = _candidates(every, "confidence")
        self.expected = [m.expected for m in dev.messages]
        self.returned = [  # what the matcher returns by default (`norma match`): the first rule, or none
            result[0].rule.id if result else None for result in self.matcher.match_many(texts, query_vectors=vectors)
        ]
        self.oracle = max(min(self.at(self.ranked, float(t))) for t in GRID)
        self.confidence_oracle = max(min(self.at(self.confident, float(t))) for t in CONFIDENCE_GRID)

    def at(self, ranked: list[Candidates], threshold: float) -> tuple[float, float]:
        return objective(self.expected, ranked, [threshold] * len(self.expected))

    def shipped(self) -> tuple[float, float]:
        """(acc@1, rejection) of what the matcher returns with its default config."""
        ok = inside = rejected = outside = 0
        for want, first in zip(self.expected, self.returned, strict=True):
            if want:
                inside += 1
                ok += first is not None and first in want
            else:
                outside += 1
                rejected += first is None
        return ok / max(inside, 1), rejected / max(outside, 1)


def _data_set(name: str) -> str:
    base = re.sub(r"/.*$", "", name.split(" ")[0])
    if base == "banking77-test":
        return "banking77 test.csv"
    return "banking77 (12-40 rules)" if base.startswith("banking77-") else base


def quality(draws: dict[str, list[Draw]], title: str) -> list[str]:
    """Per kind and data set: the default gate's gap to each draw's oracle of the same scorer (the confidence), and
    what it reaches."""
    lines = [
        f"| {title}: kind | data set | draws | rules | mean gap | worst gap | within {WITHIN} | "
        "min(acc@1, rejection) as matched: mean (worst) | acc@1 | rejection | oracle, confidence | "
        "oracle, similarity |",
        "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    worst: list[tuple[float, str, str]] = []
    for kind, group in draws.items():
        rows: dict[str, list[tuple[float, ...]]] = {}
        for d in group:
            acc, rejection = d.shipped()
            reached = min(acc, rejection)
            gap = d.confidence_oracle - reached
            rows.setdefault(_data_set(d.name), []).append(
                (gap, reached, d.confidence_oracle, len(d.matcher), d.oracle, acc, rejection)
            )
            worst.append((gap, kind, d.name))
        every = [row for values in rows.values() for row in values]
        for name, values in [*sorted(rows.items()), (f"**all {kind}**", every)]:
            a = np.array(values)
            sizes = sorted({int(x) for x in a[:, 3]})
            size = f"{sizes[0]}" if len(sizes) == 1 else f"{sizes[0]}-{sizes[-1]}"
            lines.append(
                f"| {kind} | {name} | {len(a)} | {size} | {a[:, 0].mean():.3f} | {a[:, 0].max():.3f} | "
                f"{int((a[:, 0] <= WITHIN).sum())}/{len(a)} | {a[:, 1].mean():.3f} ({a[:, 1].min():.3f}) | "
                f"{a[:, 5].mean():.3f} | {a[:, 6].mean():.3f} | {a[:, 2].mean():.3f} | {a[:, 4].mean():.3f} |"
            )
    worst.sort(reverse=True)
    return [*lines, "", "Largest gaps: " + ", ".join(f"{n} ({k}) {g:.3f}" for g, k, n in worst[:5]) + "."]


def both_kinds(sets: list[DevSet], embedder: CachedEmbedder) -> dict[str, list[Draw]]:
    """Each draw with its own held-out intents, and with off-topic messages in their place."""
    return {"held-out": [Draw(d, embedder) for d in sets], "off-topic": [Draw(foreign(d), embedder) for d in sets]}


def cost() -> list[str]:
    """The confidence's statistics of a rulebook (``RuleMatcher.stats()``, once per version of the rules)."""
    rng = np.random.default_rng(0)
    lines = ["| rules | texts per rule | the rulebook's statistics (median of 3) |", "|---:|---:|---:|"]
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
            matcher.stats()
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
        "|---:|---:|---|---:|---|",
    ]
    options: dict[str, float | None] = {"balanced (default)": None, "precision >= 0.5": 0.5}
    for name, precision in options.items():
        times = []
        for _ in range(3):
            matcher = RuleMatcher(book, vectors=vectors, embedder=get_embedder())
            started = time.perf_counter()
            gate = calibrate_gate(matcher, labelled, target_precision=precision)
            times.append(time.perf_counter() - started)
        lines.append(
            f"| {rules:,} | {messages:,} | {name} | {np.median(times):.1f} s | {gate.score} >= {gate.threshold:.4g} |"
        )
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
