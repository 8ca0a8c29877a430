"""The matching gate on rulebooks it was not tuned on: how its defaults are chosen, and what they give.

Protocol (docs/design/040-matching.md, "The gate"): the development draws of ``_devsets.py`` (BANKING77 train.csv
and NLU++ banking / hotels, 3 *tune* and 3 *report* draws each, never sharing a message, a held-out intent draw or
an example draw). Objective per draw: min(acc@1, held-out rejection) — acc@1: the top returned rule is one the
message expects (messages that expect some rule); rejection: messages that expect none get no match.

1. **Choose** on the tune draws only (the three data sets' tune draws, and smaller BANKING77 rulebooks of 12, 25
   and 40 rules): the rulebook gate — its quantile (grid 0.20-0.28), its margin band's lower quantile (none, or
   0.06-0.18) and margin (0.03-0.12) — that minimises the worst gap to each draw's best single similarity threshold
   (the oracle, tuned on that draw itself, for reference only), ties broken by the mean gap; the
   ``FALLBACK_SIMILARITY`` of rulebooks without examples: the single similarity threshold with the best worst-case
   objective over the tune draws with every example removed. The gates are computed from each draw's probes
   (:meth:`RuleMatcher.probe_similarities`), checked against the matcher's own gate; a message's band applies when
   its best candidate's similarity reaches the band and stands the margin above its second one (over the ten best
   candidates kept per message; the matcher compares all the candidates it scored).
2. **Report** on the report draws (and on BANKING77's test.csv as an outside user would build it: held-out
   intents ``default_rng(seed).choice(sorted intents, 10)`` for seeds 1-3, the first 10 train utterances as
   examples; and the smaller rulebooks' report draws), with the matcher's defaults: the default ``MatchConfig()``
   (automatic gate), the
   oracle threshold, and the gate before this change (0.62 on max(hybrid, similarity - 0.15)), plus micro
   precision / recall of every returned rule (NLU++ messages expect 0-6 rules).
3. **Noise floor** of the per-draw target: how far the best threshold of a draw (the oracle) sits above what that
   same threshold gives on another sample of the same messages (bootstrap resamples of the draw, same size). The
   oracle maximises over thresholds on the very messages it is scored on, so it is optimistic; a gap of that size
   says nothing about the default. Reported per data set: the mean and 90th percentile over 200 resamples.
4. **Cost** of measuring a rulebook's gate (once per index version) at 1k and 10k rules, and of calibrating a
   1k-rule tenant from 1k labelled messages.

Usage::

    .venv/bin/python benchmarks/matching_gate.py            # prints the tables
    .venv/bin/python benchmarks/matching_gate.py --write    # and replaces its tables in docs/benchmarks.md
"""

from __future__ import annotations

import argparse
import platform
import sys
import time
from datetime import UTC, datetime
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _devsets import DevSet, banking77_subset, banking77_test, dev_sets
from norma.embeddings import CachedEmbedder, EmbeddingCache, get_embedder
from norma.matching import AppliedGate, MatchConfig, MatchResult, Rule, RuleMatcher
from norma.matching._gate import RULEBOOK_QUANTILE

REPO = Path(__file__).resolve().parents[1]
CACHE = REPO / ".cache" / "matching_bench.sqlite"
DOC = REPO / "docs" / "benchmarks.md"
QUANTILES = (0.2, 0.22, 0.24, 0.26, 0.28)
BANDS = (None, 0.06, 0.08, 0.1, 0.12, 0.14, 0.16, 0.18)
MARGINS = (0.03, 0.04, 0.05, 0.06, 0.07, 0.08, 0.09, 0.1, 0.12)
SUBSETS = ((12, 4), (25, 6), (40, 8))
"""Smaller BANKING77 rulebooks: (intents kept as rules, intents held out)."""
Setting = tuple[float, float | None, float]  # (gate quantile, band quantile or None, margin)
GRID = np.round(np.arange(0.2, 0.95, 0.005), 3)
OLD = MatchConfig(threshold=0.62, threshold_on="hybrid_or_similarity", similarity_slack=0.15)

Candidates = list[tuple[str, float, float, float]]  # (rule id, similarity, hybrid, final), best final first


def _candidates(results: list[MatchResult]) -> list[Candidates]:
    return [
        [(m.rule.id, m.similarity_score, m.explanation.hybrid, m.final_score) for m in result] for result in results
    ]


def objective(
    expected: list[frozenset[str]], ranked: list[Candidates], passes: object, limits: list[float] | None = None
) -> tuple[float, float]:
    """(acc@1, rejection) when a candidate passes if ``passes(similarity, hybrid)`` (with ``limits``: if its
    similarity reaches the message's limit)."""
    ok = inside = rejected = outside = 0
    for m, (want, cands) in enumerate(zip(expected, ranked, strict=True)):
        if limits is not None:
            top = next((c for c in cands if c[1] >= limits[m]), None)
        else:
            top = next((c for c in cands if passes(c[1], c[2])), None)  # type: ignore[operator]
        if want:
            inside += 1
            ok += top is not None and top[0] in want
        else:
            outside += 1
            rejected += top is None
    return ok / max(inside, 1), rejected / max(outside, 1)


def micro(expected: list[frozenset[str]], ranked: list[Candidates], limits: list[float]) -> tuple[float, float]:
    """Micro precision and recall of every returned rule (similarity at or above the message's threshold)."""
    tp = fp = fn = 0
    for want, cands, limit in zip(expected, ranked, limits, strict=True):
        got = {c[0] for c in cands if c[1] >= limit}
        tp += len(got & want)
        fp += len(got - want)
        fn += len(want - got)
    return tp / max(tp + fp, 1), tp / max(tp + fn, 1)


def oracle(expected: list[frozenset[str]], ranked: list[Candidates]) -> tuple[float, float]:
    """The best single similarity threshold on this draw itself: (objective, threshold)."""
    scored = [(min(objective(expected, ranked, lambda s, h, t=t: s >= t)), float(t)) for t in GRID]
    return max(scored)


class Draw:
    """One draw, matched once without a gate (every candidate kept), with its rulebook gates measured."""

    def __init__(self, dev: DevSet, embedder: CachedEmbedder, strip_examples: bool = False) -> None:
        rules = [r.model_copy(update={"examples": []}) for r in dev.rules] if strip_examples else dev.rules
        self.name, self.part = dev.name, dev.part
        self.matcher = RuleMatcher(rules, embedder=embedder)
        texts = [m.text for m in dev.messages]
        vectors = embedder.embed(texts)
        ungated = MatchConfig(threshold=None, max_matched=10)
        self.ranked = _candidates(self.matcher.match_many(texts, config=ungated, query_vectors=list(vectors)))
        self.expected = [m.expected for m in dev.messages]
        self.oracle, self.oracle_threshold = oracle(self.expected, self.ranked)

        own, rival = self.matcher.probe_similarities()
        best = np.maximum(own, rival)
        self.probes = np.where(np.isfinite(best), best, 0.0)
        tops = [sorted((c[1] for c in cands), reverse=True)[:2] for cands in self.ranked]
        self.first = np.array([t[0] if t else -np.inf for t in tops])
        self.second = np.array([t[1] if len(t) > 1 else -np.inf for t in tops])

    def at_similarity(self, threshold: float) -> tuple[float, float]:
        return objective(self.expected, self.ranked, lambda s, h: s >= threshold)

    def gate(self, quantile: float) -> float:
        threshold = self.matcher.gate(MatchConfig(gate_quantile=quantile, gate_band_quantile=None)).threshold
        assert threshold is not None
        return threshold

    def thresholds(self, setting: Setting) -> tuple[float, float | None, float]:
        """(gate, band threshold or None, margin) of ``setting`` on this draw's probes (the matcher's arithmetic)."""
        quantile, band, margin = setting
        gate = round(float(np.quantile(self.probes, quantile)), 4)
        return gate, None if band is None else round(float(np.quantile(self.probes, band)), 4), margin

    def at_band(self, gate: float, band: float | None, margin: float) -> tuple[float, float]:
        """(acc@1, rejection) with a gate and its margin band: per message, the band's threshold is in force when
        its best similarity is in [band, gate) and stands ``margin`` above its second."""
        return objective(self.expected, self.ranked, None, self.limits(gate, band, margin))

    def limits(self, gate: float, band: float | None, margin: float) -> list[float]:
        """Per message, the threshold in force: the band's when it applies, else the gate."""
        if band is None:
            return [gate] * len(self.expected)
        lowered = (self.first >= band) & (self.first < gate) & (self.first - self.second >= margin)
        return [float(x) for x in np.where(lowered, band, gate)]

    def at_gate(self, gate: AppliedGate) -> tuple[float, float]:
        """(acc@1, rejection) at a gate the matcher measured (with its band, if it has one)."""
        assert gate.threshold is not None
        t = gate.terms
        return self.at_band(gate.threshold, t.get("band_threshold"), float(t.get("margin", 0.0)))

    def micro_at(self, gate: AppliedGate) -> tuple[float, float]:
        """Micro precision and recall of every rule returned at a gate the matcher measured."""
        assert gate.threshold is not None
        t = gate.terms
        return micro(
            self.expected, self.ranked, self.limits(gate.threshold, t.get("band_threshold"), t.get("margin", 0.0))
        )


def choose(tune: list[Draw]) -> tuple[Setting, list[str]]:
    """The setting with the smallest (worst gap, mean gap) over the tune draws; per gate quantile, the best band."""
    lines = [
        "| quantile | no band: worst gap (tune) | mean gap | best band: band quantile / margin | worst gap (tune) | "
        "mean gap |",
        "|---:|---:|---:|---:|---:|---:|",
    ]
    scored: dict[Setting, tuple[float, float]] = {}
    for q in QUANTILES:
        for band in BANDS:
            for margin in MARGINS if band is not None else (0.0,):
                if band is not None and band >= q:
                    continue
                gaps = [d.oracle - min(d.at_band(*d.thresholds((q, band, margin)))) for d in tune]
                scored[(q, band, margin)] = (round(max(gaps), 6), round(float(np.mean(gaps)), 6))
        single = scored[(q, None, 0.0)]
        banded = min((k for k in scored if k[0] == q and k[1] is not None), key=lambda k: scored[k])
        lines.append(
            f"| {q} | {single[0]:.3f} | {single[1]:.3f} | {banded[1]} / {banded[2]} | {scored[banded][0]:.3f} | "
            f"{scored[banded][1]:.3f} |"
        )
    return min(scored, key=lambda k: scored[k]), lines


def fallback(stripped: list[Draw]) -> tuple[float, float]:
    scored = [(min(min(d.at_similarity(float(t))) for d in stripped), float(t)) for t in GRID]
    worst, threshold = max(scored)
    return threshold, worst


def report(draws: list[Draw]) -> list[str]:
    """Per report draw, the matcher's default gate (``MatchConfig()``) against the oracle; the single 0.22
    quantile (the default before the band) beside it."""
    lines = [
        "| draw | rules | messages (expect none) | acc@1 no gate | default gate (band) | acc@1 / rejection | min | "
        "oracle min (threshold) | gap | quantile 0.22 alone: gap | before: acc@1 / rejection | micro P / R |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    gaps: dict[str, list[tuple[float, float]]] = {}
    ceiling: dict[str, list[float]] = {}
    for d in draws:
        gate = d.matcher.gate(MatchConfig())
        acc, rej = d.at_gate(gate)
        no_gate = d.at_similarity(-1.0)[0]
        old = objective(d.expected, d.ranked, lambda s, h: max(h, s - 0.15) >= 0.62)
        gap = d.oracle - min(acc, rej)
        single = d.oracle - min(d.at_similarity(d.gate(0.22)))
        p, r = d.micro_at(gate)
        gaps.setdefault(d.name.split("/")[0], []).append((gap, single))
        ceiling.setdefault(d.name.split("/")[0], []).append(no_gate)
        band = f" ({gate.terms['band_threshold']:.4f})" if "band_threshold" in gate.terms else ""
        lines.append(
            f"| {d.name} | {len(d.matcher)} | {len(d.expected)} ({sum(not e for e in d.expected)}) | {no_gate:.3f} | "
            f"{gate.threshold:.4f}{band} | {acc:.3f} / {rej:.3f} | {min(acc, rej):.3f} | {d.oracle:.3f} "
            f"({d.oracle_threshold:.3f}) | {gap:.3f} | {single:.3f} | {old[0]:.3f} / {old[1]:.3f} | "
            f"{p:.3f} / {r:.3f} |"
        )
    lines.append("")
    lines.append(
        "| data set | default: mean gap | worst gap | within 0.05 | quantile 0.22 alone: mean gap | worst gap | "
        "within 0.05 | mean acc@1 without a gate |"
    )
    lines.append("|---|---:|---:|---:|---:|---:|---:|---:|")
    groups = [*gaps.items(), ("**all report draws**", [g for values in gaps.values() for g in values])]
    for name, values in groups:
        a = np.array(values)
        cells = [
            f"{a[:, k].mean():.3f} | {a[:, k].max():.3f} | {int((a[:, k] <= 0.05).sum())}/{len(a)}" for k in (0, 1)
        ]
        acc = f"{np.mean(ceiling[name]):.3f}" if name in ceiling else ""
        lines.append(f"| {name} | {cells[0]} | {cells[1]} | {acc} |")
    return lines


def noise(draws: list[Draw], resamples: int = 200) -> list[str]:
    """Per draw: the oracle's optimism (over bootstrap resamples of the messages, the resample's own best
    min(acc@1, rejection) minus what the full draw's best threshold gives on it), and the range of
    ``gate_quantile`` values whose gate lands within 0.05 of the oracle (the grid 0.05-0.59 by 0.01)."""
    rng = np.random.default_rng(20)
    quantiles = np.round(np.arange(0.05, 0.60, 0.01), 2)
    lines = [
        "| draw | messages that expect none | oracle optimism: mean / 90th percentile | `gate_quantile` within 0.05 "
        "of the oracle | best |",
        "|---|---:|---:|---:|---:|",
    ]
    within: dict[str, set[float]] = {}
    for d in draws:
        inside = np.array([bool(e) for e in d.expected])
        # per message and grid threshold: did the message come out right (top passing rule expected / nothing)?
        right = np.zeros((len(d.expected), len(GRID)), dtype=bool)
        for m, (want, cands) in enumerate(zip(d.expected, d.ranked, strict=True)):
            for t, threshold in enumerate(GRID):
                top = next((c for c in cands if c[1] >= threshold), None)
                right[m, t] = (top is not None and top[0] in want) if want else top is None
        at = int(np.argmin(np.abs(GRID - d.oracle_threshold)))
        optimism = np.empty(resamples)
        for b in range(resamples):
            counts = np.bincount(rng.integers(0, len(inside), len(inside)), minlength=len(inside))
            acc = (counts * inside) @ right / max((counts * inside).sum(), 1)
            rej = (counts * ~inside) @ right / max((counts * ~inside).sum(), 1)
            objective_at = np.minimum(acc, rej)
            optimism[b] = objective_at.max() - objective_at[at]
        mins = np.array([min(d.at_similarity(d.gate(float(q)))) for q in quantiles])
        good = quantiles[mins >= d.oracle - 0.05 - 1e-12]
        within[d.part] = within.get(d.part, set(map(float, quantiles))) & set(map(float, good))
        span = f"{good.min():.2f}-{good.max():.2f}" if len(good) else "none"
        lines.append(
            f"| {d.name} | {int((~inside).sum())} | {optimism.mean():.3f} / {np.quantile(optimism, 0.9):.3f} | "
            f"{span} | {quantiles[int(mins.argmax())]:.2f} |"
        )
    lines.append("")
    for part, common in within.items():
        shown = ", ".join(f"{q:.2f}" for q in sorted(common)) or "**none**"
        lines.append(f"`gate_quantile` values within 0.05 of the oracle on every {part} draw: {shown}.")
    return lines


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


def calibration_cost(embedder: CachedEmbedder, rules: int = 1_000, messages: int = 1_000) -> list[str]:
    """``calibrate_gate`` for a ``rules``-rule tenant from ``messages`` labelled messages: the rule vectors are the
    tenant's stored ones (precomputed, not timed); the messages are embedded by the plain model (timed), as a
    user's new labelled file would be."""
    from norma.matching import calibrate_gate

    rng = np.random.default_rng(7)
    words = [f"{a}{b}" for a in ("card", "loan", "fee", "pay", "bank", "cash", "rate", "app") for b in range(40)]

    def sentence(n: int) -> str:
        return " ".join(str(w) for w in rng.choice(words, n))

    book = [
        Rule(id=f"r{i}", condition_text=f"the user asks about {sentence(4)}", examples=[sentence(6) for _ in range(2)])
        for i in range(rules)
    ]
    vectors = {}
    for rule in book:
        vectors[rule.id] = embedder.embed([rule.embedding_text, *rule.examples])
    labelled = []
    for _ in range(messages):
        target = book[int(rng.integers(rules))]
        labelled.append((f"{target.examples[0]} {sentence(2)}", [target.id] if rng.random() < 0.8 else []))
    lines = [
        "| rules | labelled messages | target | calibration (median of 3, messages embedded) | gate |",
        "|---:|---:|---|---:|---:|",
    ]
    for name, options in (("balanced (default)", {}), ("precision >= 0.5", {"target_precision": 0.5})):
        times = []
        for _ in range(3):
            matcher = RuleMatcher(book, vectors=vectors, embedder=get_embedder())
            started = time.perf_counter()
            gate = calibrate_gate(matcher, labelled, **options)  # type: ignore[arg-type]
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


def publish(sections: dict[str, list[str]], script: str, *, to_docs: bool) -> None:
    """Print ``script``'s tables and, with ``to_docs`` (its ``--write``), replace them in docs/benchmarks.md."""
    for lines in sections.values():
        print("\n".join(lines), "\n")
    if to_docs:
        write(sections, script)


def machine_stamp() -> str:
    """The time (UTC, to the minute), processor and Python of a run, for a table's run line."""
    return (
        f"{datetime.now(UTC):%Y-%m-%d %H:%M} UTC, {platform.processor() or platform.machine()}, "
        f"Python {platform.python_version()}"
    )


def table_script(doc: str) -> tuple[argparse.Namespace, CachedEmbedder]:
    """The ``--write`` option of a script that prints one table, and the development draws' cached embedder."""
    parser = argparse.ArgumentParser(description=doc.splitlines()[0])
    parser.add_argument("--write", action="store_true", help="replace this script's table in docs/benchmarks.md")
    args = parser.parse_args()
    CACHE.parent.mkdir(exist_ok=True)
    return args, CachedEmbedder(get_embedder(), EmbeddingCache(CACHE))


_DEFAULTS = MatchConfig()
DEFAULT: Setting = (RULEBOOK_QUANTILE, _DEFAULTS.gate_band_quantile, _DEFAULTS.gate_margin)


def subsets(part: str) -> list[DevSet]:
    """The smaller BANKING77 rulebooks' draws of ``part``."""
    seeds = (101, 102, 103) if part == "tune" else (201, 202, 203)
    return [banking77_subset(seed, part, kept=kept, held_out=held) for kept, held in SUBSETS for seed in seeds]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--write", action="store_true", help="replace this script's tables in docs/benchmarks.md")
    parser.add_argument("--noise-only", action="store_true", help="only the noise floor table (no choice, no cost)")
    args = parser.parse_args()
    CACHE.parent.mkdir(exist_ok=True)
    embedder = CachedEmbedder(get_embedder(), EmbeddingCache(CACHE))
    stamp = (
        f"{datetime.now(UTC):%Y-%m-%d %H:%M} UTC, {platform.processor() or platform.machine()}, "
        f"Python {platform.python_version()}"
    )
    outside = [banking77_test(seed) for seed in (1, 2, 3)]
    if args.noise_only:
        every = [Draw(d, embedder) for d in [*dev_sets("tune"), *dev_sets("report"), *outside]]
        floor = [*noise(every), "", f"Run: {stamp}."]
        print("\n".join(floor))
        if args.write:
            write({"noise": floor})
        return
    tune = [Draw(d, embedder) for d in [*dev_sets("tune"), *subsets("tune")]]
    for d in tune:  # the probes' arithmetic is the matcher's
        gate = d.matcher.gate(MatchConfig())
        assert (gate.threshold, gate.terms.get("band_threshold")) == d.thresholds(DEFAULT)[:2], d.name
    chosen, selection = choose(tune)
    stripped = [Draw(d, embedder, strip_examples=True) for d in dev_sets("tune")]
    fallback_threshold, fallback_worst = fallback(stripped)
    agrees = "the matcher's defaults" if chosen == DEFAULT else f"**not** the matcher's defaults {DEFAULT}"

    def within(setting: Setting) -> int:
        return sum(d.oracle - min(d.at_band(*d.thresholds(setting))) <= 0.05 for d in tune)

    selection += [
        "",
        f"Chosen (smallest worst gap, then mean gap): quantile **{chosen[0]}**, band quantile **{chosen[1]}**, "
        f"margin **{chosen[2]}** ({agrees}); fallback similarity for rulebooks without examples (best worst case "
        f"over the tune draws, examples removed): **{fallback_threshold:.3f}** (worst min(acc@1, rejection) "
        f"{fallback_worst:.3f}). Tune draws within 0.05 of their oracle: {within(chosen)} of {len(tune)} with the "
        f"chosen setting, {within((0.22, None, 0.0))} with the 0.22 quantile alone. Run: {stamp}.",
    ]
    print("\n".join(selection), "\n")
    report_draws = [Draw(d, embedder) for d in [*dev_sets("report"), *outside, *subsets("report")]]
    reported = report(report_draws)
    print("\n".join(reported), "\n")
    floor = [*noise([*tune, *report_draws]), "", f"Run: {stamp}."]
    print("\n".join(floor), "\n")
    costs = [*cost(), "", *calibration_cost(embedder), "", f"Run: {stamp}."]
    print("\n".join(costs))
    if args.write:
        write({"selection": selection, "report": reported, "noise": floor, "cost": costs})


if __name__ == "__main__":
    main()
