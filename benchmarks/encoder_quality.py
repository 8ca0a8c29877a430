"""The int8 encoder against fp32, side by side on the development sets (issue #58, item 2): may int8 be the default?

The declared rule (issue #58): int8 becomes the default encoder if, on every development set, matching (acc@1,
rejection) and the turn benchmark (good not failed, bad caught) move by no more than 0.005 against fp32; else the
table says per set what it costs and fp32 stays the default. Nothing is chosen here: both encoders are measured on
draws that chose none of the defaults, with the shipped defaults.

**Encoders.** fp32: ``get_embedder(quantize=False)`` (``sentence-transformers/all-MiniLM-L6-v2``); int8:
``get_embedder(quantize=True)`` (``...#int8.2``: dynamic quantisation, every text embedded alone, so its vector does
not depend on its batch). Both behind ``CachedEmbedder(..., EmbeddingCache(CACHE))``, the benchmarks' vector cache
(keyed by model id: the int8 vectors are kept apart from the fp32 ones). Every vector a figure reads (rules, their
examples, the messages, the rulebook's statistics) comes from the encoder of its column.

**Matching** (``benchmarks/matching_gate.py``'s ``Draw``): what ``norma match`` returns with the default
``MatchConfig()`` (the rules whose confidence that they govern the message reaches ``GOVERNS`` 0.7). acc@1: the first
returned rule is expected, over the messages that expect some rule; rejection: nothing returned, over the messages
that expect none, for both kinds of out-of-scope traffic (the draw's held-out intents; off-topic messages,
``_devsets.foreign``). acc@1 reads only the in-scope messages, the same in both kinds (the script checks it).

**Turns** (``benchmarks/check_enforcement.py``'s ``figures``): per draw one rule per intent with one ``contains``
check of a made-up token; good answers not failed, bad answers caught, out-of-scope (held-out intents, off-topic)
turns not failed.

**Data** (none of them chose anything): the report draws (``dev_sets("report")``, seeds 201-203; the smaller
BANKING77 rulebooks' report draws, ``matching_gate.subsets("report")``), BANKING77's test.csv (``banking77_test``
seeds 1-3), the fresh draws (``fresh_sets()[::N]``, ``--fresh-every N``, default 3) and, for the turns only, the
shipped banking rulebook (``examples/rulebooks/banking-support.yaml`` and its 56 labelled messages, matched in their
sessions). Each figure is the mean over a set's draws; a difference is int8 minus fp32.

Usage::

    .venv/bin/python benchmarks/encoder_quality.py                  # prints the table (tens of minutes on 2 cores)
    .venv/bin/python benchmarks/encoder_quality.py --write          # and replaces its section of docs/benchmarks.md
    .venv/bin/python benchmarks/encoder_quality.py --quick          # the first draw of each set (a smoke run)
"""

from __future__ import annotations

import argparse
import math
import os
import statistics
import sys
import time
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import check_enforcement as turns
import matching_gate as gate
from _devsets import DevSet, banking77_test, dev_sets, foreign, fresh_sets
from _docs import machine_line, write_section
from norma.embeddings import CachedEmbedder, EmbeddingCache, get_embedder

BEGIN, END = "<!-- encoder_quality.py:begin -->", "<!-- encoder_quality.py:end -->"
BEFORE = "## llm\n"
CACHE = gate.CACHE
WITHIN = 0.005
"""The declared rule's bound on |int8 - fp32| per set and figure."""
EPSILON = 1e-9
"""Float slack on the bound (a difference of exactly 0.005 is within)."""
ENCODERS = ("fp32", "int8")
SHIPPED = "shipped banking rulebook"
"""The name ``check_enforcement.data_sets`` gives the shipped rulebook's set."""

FIGURES: list[tuple[str, str, bool]] = [
    # (key, label, in the declared rule)
    ("acc", "acc@1", True),
    ("rej_held", "rejection (held-out)", True),
    ("rej_off", "rejection (off-topic)", True),
    ("good", "good not failed", True),
    ("bad", "bad caught", True),
    ("held", "held-out not failed", False),
    ("off", "off-topic not failed", False),
]
LABELS = {key: label for key, label, _ in FIGURES}
DECLARED = [key for key, _, declared in FIGURES if declared]


@dataclass
class DevelopmentSet:
    """One data set: its draws for matching (``DevSet``, empty if none) and for the turns (``None`` if none)."""

    name: str
    matching: list[DevSet]
    turns: turns.DataSet | None


Figures = dict[str, float]
"""A set's mean per figure (NaN where the set has no such message or no such benchmark)."""


def development_sets(fresh_every: int, quick: bool) -> list[DevelopmentSet]:
    """The sets of ``check_enforcement.data_sets`` (their names), each with its matching draws, and the smaller
    BANKING77 rulebooks' report draws of ``matching_gate`` (matching and turns)."""
    report = dev_sets("report")
    fresh = fresh_sets()[::fresh_every]
    small = gate.subsets("report")

    def named(draws: list[DevSet], prefix: str) -> list[DevSet]:
        return [d for d in draws if d.name.startswith(prefix)]

    matching: dict[str, list[DevSet]] = {
        "BANKING77 report": named(report, "banking77/"),
        "NLU++ banking report": named(report, "nlupp-banking/"),
        "NLU++ hotels report": named(report, "nlupp-hotels/"),
        "BANKING77 test.csv": [banking77_test(s) for s in turns.TEST_SEEDS],
        "BANKING77 12-40 rules report": small,
        "fresh BANKING77, 67 rules": named(fresh, "banking77/"),
        "fresh BANKING77, 12-40 rules": named(fresh, "banking77-"),
        "fresh NLU++ banking": named(fresh, "nlupp-banking/"),
        "fresh NLU++ hotels": named(fresh, "nlupp-hotels/"),
    }
    turn_sets = {d.name: d for d in turns.data_sets(fresh_every)}
    turn_sets["BANKING77 12-40 rules report"] = turns.DataSet(
        "BANKING77 12-40 rules report", [turns._draw(d) for d in small]
    )
    order = [*matching, *(name for name in turn_sets if name not in matching)]
    out = []
    for name in order:
        devs, data = matching.get(name, []), turn_sets.get(name)
        if quick:
            devs = devs[:1]
            if data is not None:
                data = turns.DataSet(data.name, data.draws[:1])
        out.append(DevelopmentSet(name, devs, data))
    return out


def _mean(values: list[float]) -> float:
    kept = [v for v in values if not math.isnan(v)]
    return statistics.fmean(kept) if kept else math.nan


def measure(data: DevelopmentSet, embedder: CachedEmbedder, notes: list[str], encoder: str) -> Figures:
    """The set's figures with ``embedder``: matching (both kinds) and the turns, means over its draws."""
    out: Figures = dict.fromkeys(LABELS, math.nan)
    if data.matching:
        held = [gate.Draw(d, embedder).shipped() for d in data.matching]
        off = [gate.Draw(foreign(d), embedder).shipped() for d in data.matching]
        out["acc"] = _mean([acc for acc, _ in held])
        out["rej_held"] = _mean([rejection for _, rejection in held])
        out["rej_off"] = _mean([rejection for _, rejection in off])
        acc_off = _mean([acc for acc, _ in off])
        if abs(acc_off - out["acc"]) > EPSILON:  # the in-scope messages are the same in both kinds
            notes.append(f"{data.name}, {encoder}: acc@1 {out['acc']:.4f} with held-out, {acc_off:.4f} off-topic")
    if data.turns is not None:
        outcomes = [turns.figures(draw, embedder).after for draw in data.turns.draws]
        for key in ("good", "bad", "held", "off"):
            out[key] = _mean([getattr(f, key) for f in outcomes])
    return out


def _moved(fp32: Figures, int8: Figures, keys: list[str]) -> list[tuple[str, float]]:
    """The figures (among ``keys``) that move by more than :data:`WITHIN`, with their difference."""
    moved = []
    for key in keys:
        if math.isnan(fp32[key]) or math.isnan(int8[key]):
            continue
        diff = int8[key] - fp32[key]
        if abs(diff) > WITHIN + EPSILON:
            moved.append((key, diff))
    return moved


Results = list[tuple[DevelopmentSet, dict[str, Figures]]]


def _cell(fp32: float, int8: float) -> str:
    if math.isnan(fp32) or math.isnan(int8):
        return "-"
    return f"{fp32:.3f} / {int8:.3f} ({int8 - fp32:+.4f})"


def _draws(data: DevelopmentSet) -> str:
    matched = len(data.matching)
    checked = len(data.turns.draws) if data.turns is not None else 0
    if matched == checked:
        return str(matched)
    return f"{matched or '-'} / {checked or '-'}"


def table(results: Results) -> list[str]:
    """Per set: fp32 / int8 (difference) per figure, and whether every figure is within the bound."""
    lines = [
        "| data set | draws | " + " | ".join(label for _, label, _ in FIGURES) + f" | within {WITHIN} |",
        "|---|---:|" + "---:|" * len(FIGURES) + "---|",
    ]
    for data, by in results:
        fp32, int8 = by["fp32"], by["int8"]
        moved = _moved(fp32, int8, list(LABELS))
        marked = [LABELS[k] + ("" if k in DECLARED else "*") for k, _ in moved]
        within = "no: " + ", ".join(marked) if moved else "yes"
        cells = [_cell(fp32[key], int8[key]) for key in LABELS]
        lines.append(f"| {data.name} | {_draws(data)} | " + " | ".join(cells) + f" | {within} |")
    return lines


def spread(results: Results) -> list[str]:
    """Per figure, over the sets: the mean, lowest and highest difference, and the sets within the bound."""
    lines = [
        f"| figure | in the declared rule | mean int8 - fp32 over the sets | lowest (set) | highest (set) | "
        f"sets within {WITHIN} | sets lower / higher with int8 |",
        "|---|---|---:|---:|---:|---:|---:|",
    ]
    for key, label, declared in FIGURES:
        diffs = [
            (by["int8"][key] - by["fp32"][key], data.name)
            for data, by in results
            if not (math.isnan(by["int8"][key]) or math.isnan(by["fp32"][key]))
        ]
        if not diffs:
            continue
        low, high = min(diffs), max(diffs)
        within = sum(abs(d) <= WITHIN + EPSILON for d, _ in diffs)
        lines.append(
            f"| {label} | {'yes' if declared else 'no'} | {statistics.fmean(d for d, _ in diffs):+.4f} | "
            f"{low[0]:+.4f} ({low[1]}) | {high[0]:+.4f} ({high[1]}) | {within}/{len(diffs)} | "
            f"{sum(d < -EPSILON for d, _ in diffs)} / {sum(d > EPSILON for d, _ in diffs)} |"
        )
    return lines


def _same_as_rejection(results: Results) -> str:
    """Whether the out-of-scope turn figures equal the matching rejections on every set with both (they should: the
    default gate returns exactly the rules that govern, and an answer without a token fails iff one is enforced)."""
    pairs = [
        (by[encoder][turn], by[encoder][match])
        for _, by in results
        for encoder in ENCODERS
        for turn, match in (("held", "rej_held"), ("off", "rej_off"))
        if not (math.isnan(by[encoder][turn]) or math.isnan(by[encoder][match]))
    ]
    differ = sum(abs(a - b) > EPSILON for a, b in pairs)
    if not differ:
        return (
            "Held-out / off-topic not failed equal the matching rejections on every set with both, for both encoders "
            "(the default gate returns exactly the rules that govern, and an out-of-scope answer without a token "
            "fails iff a rule is enforced): they are the same figure, seen through a turn check."
        )
    return f"Held-out / off-topic not failed differ from the matching rejections in {differ} of {len(pairs)} cells."


def verdict(results: Results) -> list[str]:
    """The declared rule's verdict (the figures that move more, per set), and the out-of-scope turn figures."""

    def moved(keys: list[str]) -> list[str]:
        out = []
        for data, by in results:
            figures = _moved(by["fp32"], by["int8"], keys)
            if figures:
                out.append(f"{data.name}: " + ", ".join(f"{LABELS[key]} {diff:+.4f}" for key, diff in figures))
        return out

    declared, extra = moved(DECLARED), moved([k for k in LABELS if k not in DECLARED])
    names = ", ".join(LABELS[k] for k in DECLARED)
    rule = f"Verdict (issue #58, item 2: on every set, {names} within {WITHIN} of fp32): "
    if not declared:
        line = rule + "every set within, **int8 may become the default encoder**."
    else:
        line = (
            rule + f"**fp32 stays the default**: {len(declared)} of {len(results)} sets move more than {WITHIN} "
            "(int8 - fp32): " + "; ".join(declared) + "."
        )
        shipped = [m for m in declared if m.startswith(SHIPPED)]
        if shipped:  # 56 messages: one message moves a figure by 0.02 or more
            line += (
                f" Without the {SHIPPED} (a single message there moves a figure by more than the bound), "
                f"{len(declared) - len(shipped)} of {len(results) - 1} sets still move more."
            )
    tail = "The out-of-scope turn figures (held-out / off-topic not failed, *: not in the declared rule) " + (
        "move more than the bound on: " + "; ".join(extra) + "." if extra else f"stay within {WITHIN} on every set."
    )
    return [line, "", tail, "", _same_as_rejection(results)]


def _fresh_line(every: int, quick: bool) -> str:
    if quick:
        return "Quick run: the first draw of each set only."
    if every == 1:
        return "Fresh draws: all 48 of `_devsets.fresh_sets()` (seeds 401-442)."
    kept = len(range(48)[::every])
    return f"Fresh draws: `_devsets.fresh_sets()[::{every}]` ({kept} of 48, to keep the run short)."


def render(
    results: Results,
    notes: list[str],
    spent: dict[str, tuple[float, int, int]],
    args: argparse.Namespace,
    load: tuple[float, float],
) -> str:
    total = sum(seconds for seconds, _, _ in spent.values())
    work = ", ".join(
        f"{name} {seconds / 60:.1f} min, {embedded:,} texts embedded and {cached:,} vectors read from the cache"
        for name, (seconds, embedded, cached) in spent.items()
    )
    lines = [
        BEGIN,
        "## embeddings: int8 against fp32",
        "",
        machine_line() + f"; load average {load[0]:.1f} at the start, {load[1]:.1f} at the end (2 cores, shared; "
        f"alongside: {args.alongside}); whole run {total / 60:.1f} min ({work}); "
        "`benchmarks/encoder_quality.py"
        + (f" --fresh-every {args.fresh_every}" if args.fresh_every != 1 else "")
        + (" --quick" if args.quick else "")
        + "`.",
        "",
        "May the int8 encoder (`get_embedder(quantize=True)`, `all-MiniLM-L6-v2#int8.2`: dynamic quantisation, every "
        "text embedded alone, so its vector does not depend on its batch) be the default? Issue #58's declared rule: "
        f"yes if, on every development set, matching (acc@1, rejection) and the turn benchmark (good not failed, bad "
        f"caught) move by no more than {WITHIN} against fp32; else fp32 stays. Both encoders are measured in the same "
        "run, on the same draws, each with its own vectors for everything (rules, examples, messages, the rulebook's "
        "statistics), with the shipped defaults. Matching (`matching_gate.py`'s protocol): what `norma match` "
        "returns with the default `MatchConfig()` (the rules whose confidence that they govern the message reaches "
        "0.7); acc@1 over the messages that expect a rule, rejection over those that expect none, against the "
        "draw's held-out intents and against off-topic messages (another domain's NLU++ queries). Turns "
        "(`check_enforcement.py`'s protocol): one `contains` check of a made-up token per rule; good answers not "
        "failed, bad answers caught, out-of-scope turns not failed. The draws are the report draws (seeds 201-203, "
        "and the 12/25/40-rule BANKING77 report draws), BANKING77's test.csv (seeds 1-3), fresh draws and, for the "
        "turns only, the shipped banking rulebook (56 labelled messages: one message moves a figure by 0.02 or "
        "more). The defaults (`GOVERNS`, the confidence's coefficients and priors) were chosen with fp32 on the "
        "tune draws; nothing was chosen on these draws, nor for int8.",
        _fresh_line(args.fresh_every, args.quick),
        "",
        "Each cell: fp32 / int8 (int8 - fp32), the mean over the set's draws; draws: matching / turns where they "
        "differ; within: the figures that move more than the bound (*: not in the declared rule).",
        "",
        *table(results),
        "",
        "Per figure, over the sets:",
        "",
        *spread(results),
        "",
        *verdict(results),
    ]
    if notes:
        lines += ["", "Notes: " + "; ".join(notes) + "."]
    lines.append(END)
    return "\n".join(lines) + "\n"


def _embedders() -> dict[str, CachedEmbedder]:
    CACHE.parent.mkdir(exist_ok=True)
    return {name: CachedEmbedder(get_embedder(quantize=name == "int8"), EmbeddingCache(CACHE)) for name in ENCODERS}


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n")[0])
    parser.add_argument("--fresh-every", type=int, default=3, help="keep every Nth fresh draw (default 3; 1: all 48)")
    parser.add_argument("--quick", action="store_true", help="the first draw of each data set only (a smoke run)")
    parser.add_argument("--alongside", default="not noted", help="what else ran on the machine, for the doc")
    parser.add_argument("--write", action="store_true", help="replace this script's section of docs/benchmarks.md")
    args = parser.parse_args()
    load = os.getloadavg()[0]
    embedders = _embedders()
    seconds = dict.fromkeys(ENCODERS, 0.0)
    before = {name: (e.misses, e.hits) for name, e in embedders.items()}
    notes: list[str] = []
    results: Results = []
    for data in development_sets(args.fresh_every, args.quick):
        by: dict[str, Figures] = {}
        for name, embedder in embedders.items():
            misses, started = embedder.misses, time.perf_counter()
            by[name] = measure(data, embedder, notes, name)
            seconds[name] += time.perf_counter() - started
            print(
                f"{data.name}, {name}: {', '.join(f'{k} {v:.4f}' for k, v in by[name].items())}; "
                f"{embedder.misses - misses} texts embedded; {sum(seconds.values()) / 60:.1f} min so far; "
                f"load {os.getloadavg()[0]:.1f}",
                file=sys.stderr,
                flush=True,
            )
        results.append((data, by))
    spent = {
        name: (seconds[name], e.misses - before[name][0], e.hits - before[name][1]) for name, e in embedders.items()
    }
    text = render(results, notes, spent, args, (load, os.getloadavg()[0]))
    print(text)
    if args.write:
        write_section(text, BEGIN, END, BEFORE)


if __name__ == "__main__":
    main()
