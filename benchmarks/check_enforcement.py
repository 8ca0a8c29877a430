"""Enforcement at the turn level (issue #47): the shipped defaults (``ENFORCE_MARGIN`` 0.01, a requirement applies
when its rule is enforced) on draws that chose nothing, against the behaviour before (every matched rule's
requirement applied), and what deciding enforcement costs a match.

**Protocol.** Each draw is a rulebook of one rule per intent; each rule gets exactly one check, ``contains`` (id
``says-token``, severity ``error``, the kind's default ``when``) of a made-up token unique to its intent
(``zqx017k``: never a real word). Per labelled message (expected: the rules it states; empty: out of scope),
:meth:`norma.turns.TurnChecker.check_many` on the real matcher (default :class:`~norma.matching.MatchConfig`, the
cached encoder) checks:

* a good answer (a sentence holding the token of every expected rule): "good not failed" = share not ``fail``;
* a bad answer (the sentence without any token), in-scope messages: "bad caught" = share ``fail``;
* multi-label messages (2+ expected): the good answer without one expected token (which one: a seeded draw):
  "missing one caught" = share ``fail``;
* out-of-scope messages, the answer without any token: "out-of-scope not failed", apart for held-out intents (the
  draw's own messages expecting nothing) and off-topic messages (``_devsets.foreign``: another domain's);
* "wrong rule enforced": in-scope messages where a rule is enforced and none of the enforced is expected;
* rules matched and rules enforced per in-scope turn.

The *before* rows give the same checks ``when: matched`` (every matched rule's requirement applies: the behaviour
before issue #47); for them "enforced" means "its requirement applied". Each figure is the mean and the worst over a
data set's draws.

**Data** (none of them chose anything; ``ENFORCE_MARGIN`` was chosen on the tune draws 101-103 by
``experiments/turn_enforcement.py``): the report draws of ``_devsets.dev_sets("report")`` (seeds 201-203),
``banking77_test`` seeds 1-3 (BANKING77's test.csv), the 48 draws of ``_devsets.fresh_sets()`` (``--fresh-every
N`` keeps every Nth, by index), and the shipped rulebook examples/rulebooks/banking-support.yaml (its checks
replaced by one token check per rule) with its labelled messages (banking-support.labelled.jsonl, scenario and
step as the session); off-topic: NLU++ queries of the other domain (hotels; banking for NLU++ hotels).

**Cost.** ``RuleMatcher.match`` with a precomputed query vector, on the shipped rulebook (default config) and on a
1,000-rule synthetic rulebook (``matching_speed.synthetic``, ``threshold=None``: every call returns ``top_k``
matches, the most decisions a call makes), with the real decision and with a stand-in returning a constant
``Enforcement`` per match, in alternating rounds; and ``enforcements()`` alone on 10 matches. Target: <= 0.1 ms p50
added to a match.

Run ``.venv/bin/python benchmarks/check_enforcement.py`` (``--write`` replaces its section of docs/benchmarks.md).
"""

from __future__ import annotations

import argparse
import math
import os
import statistics
import sys
import time
import zlib
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))

from _devsets import DevSet, Labelled, banking77_test, dev_sets, foreign, fresh_sets  # noqa: E402
from _docs import machine_line, write_section  # noqa: E402
from norma.embeddings import CachedEmbedder, EmbeddingCache, get_embedder  # noqa: E402
from norma.matching import (  # noqa: E402
    Enforcement,
    EnforcementReason,
    MatchConfig,
    RuleMatcher,
    SessionState,
    load_labelled,
    load_rules,
)
from norma.rules import Rule  # noqa: E402
from norma.turns import TurnChecker, TurnReport, TurnVerdict  # noqa: E402

BEGIN, END = "<!-- check_enforcement.py:begin -->", "<!-- check_enforcement.py:end -->"
BEFORE = "## audit\n"
CACHE = ROOT / ".cache" / "matching_bench.sqlite"
RULEBOOK = ROOT / "examples" / "rulebooks" / "banking-support.yaml"
LABELLED = ROOT / "examples" / "rulebooks" / "banking-support.labelled.jsonl"
BATCH = 512
REPORT_SEEDS = (201, 202, 203)
TEST_SEEDS = (1, 2, 3)
SENTENCE = "Thank you for your message, I have taken care of it"

TARGETS: list[tuple[str, str, float, bool]] = [
    # (figure, label, threshold, higher is better)
    ("good", "good answers not failed", 0.95, True),
    ("bad", "bad answers caught", 0.85, True),
    ("held", "out-of-scope (held-out intents) not failed", 0.95, True),
    ("off", "out-of-scope (off-topic) not failed", 0.95, True),
    ("multi", "missing one of 2+ required tokens caught (NLU++)", 0.70, True),
]


@dataclass(frozen=True)
class Item:
    """A labelled message, with the session it is matched in (scenario and step of the shipped rulebook)."""

    text: str
    expected: frozenset[str]
    session: SessionState | None = None


@dataclass
class Draw:
    """One rulebook and its messages: in scope and held out (``items``), off-topic (``off``)."""

    name: str
    rules: list[Rule]
    items: list[Item]
    off: list[Item]


@dataclass
class DataSet:
    name: str
    draws: list[Draw] = field(default_factory=list)


# --- the data -----------------------------------------------------------------------------------------------------


def _items(messages: Sequence[Labelled]) -> list[Item]:
    return [Item(m.text, m.expected) for m in messages]


def _draw(dev: DevSet) -> Draw:
    off = [m for m in foreign(dev).messages if not m.expected]
    return Draw(dev.name, dev.rules, _items(dev.messages), _items(off))


def _shipped() -> Draw:
    rules = load_rules(RULEBOOK)
    items = []
    for m in load_labelled(LABELLED):
        session = None
        if m.scenario or m.step:
            session = SessionState(active_scenario_id=m.scenario, active_step_id=m.step)
        items.append(Item(m.message, frozenset(m.expected), session))
    as_dev = DevSet("banking-support", "report", rules, [Labelled(i.text, i.expected) for i in items])
    off = [m for m in foreign(as_dev).messages if not m.expected]  # NLU++ hotels queries (folds 15-19)
    return Draw("banking-support", rules, items, _items(off))


def data_sets(fresh_every: int) -> list[DataSet]:
    report = dev_sets("report")
    sets = [
        DataSet("BANKING77 report", [_draw(d) for d in report if d.name.startswith("banking77/")]),
        DataSet("NLU++ banking report", [_draw(d) for d in report if d.name.startswith("nlupp-banking/")]),
        DataSet("NLU++ hotels report", [_draw(d) for d in report if d.name.startswith("nlupp-hotels/")]),
        DataSet("BANKING77 test.csv", [_draw(banking77_test(s)) for s in TEST_SEEDS]),
    ]
    fresh = fresh_sets()[::fresh_every]
    sets += [
        DataSet("fresh BANKING77, 67 rules", [_draw(d) for d in fresh if d.name.startswith("banking77/")]),
        DataSet("fresh BANKING77, 12-40 rules", [_draw(d) for d in fresh if d.name.startswith("banking77-")]),
        DataSet("fresh NLU++ banking", [_draw(d) for d in fresh if d.name.startswith("nlupp-banking/")]),
        DataSet("fresh NLU++ hotels", [_draw(d) for d in fresh if d.name.startswith("nlupp-hotels/")]),
        DataSet("shipped banking rulebook", [_shipped()]),
    ]
    return [s for s in sets if s.draws]


# --- the turns ----------------------------------------------------------------------------------------------------


def tokens_of(rules: Sequence[Rule]) -> dict[str, str]:
    """A made-up word per rule id (``zqx000k``, ``zqx001k``, ... by sorted id): in no message, no real word."""
    return {rule_id: f"zqx{i:03d}k" for i, rule_id in enumerate(sorted(r.id for r in rules))}


def token_rules(rules: Sequence[Rule], tokens: dict[str, str], when: str | None) -> list[Rule]:
    """``rules`` with their checks replaced by one ``contains`` check of their token (``when`` unset: the kind's
    default, ``enforced``)."""
    out = []
    for rule in rules:
        check: dict[str, object] = {"id": "says-token", "kind": "contains", "terms": [tokens[rule.id]]}
        check["severity"] = "error"
        if when is not None:
            check["when"] = when
        out.append(Rule(**{**rule.model_dump(exclude={"checks"}), "checks": [check]}))
    return out


def answer(tokens: Sequence[str]) -> str:
    return f"{SENTENCE} ({', '.join(tokens)})." if tokens else f"{SENTENCE}."


@dataclass
class Figures:
    """One draw's figures under one behaviour (NaN where the draw has no such message)."""

    good: float
    bad: float
    multi: float
    held: float
    off: float
    wrong: float
    matched: float
    enforced: float
    n_in: int
    n_multi: int
    n_held: int
    n_off: int


def _applied(report: TurnReport) -> set[str]:
    """The rules whose requirement applied (for the shipped behaviour: the enforced matches)."""
    return {rule.rule_id for rule in report.rules if any(c.enforced for c in rule.checks)}


def _share(flags: list[bool]) -> float:
    return sum(flags) / len(flags) if flags else math.nan


def figures(draw: Draw, when: str | None, embedder: CachedEmbedder) -> Figures:
    tokens = tokens_of(draw.rules)
    matcher = RuleMatcher(token_rules(draw.rules, tokens, when), embedder=embedder)
    checker = TurnChecker(matcher)
    rng = np.random.default_rng(zlib.crc32(draw.name.encode()))
    inside = [i for i in draw.items if i.expected]
    held = [i for i in draw.items if not i.expected]
    multi = [i for i in inside if len(i.expected) >= 2]
    dropped = [sorted(i.expected)[int(rng.integers(len(i.expected)))] for i in multi]
    turns: list[tuple[str, Item, str]] = []  # (kind, item, output)
    turns += [("good", i, answer([tokens[r] for r in sorted(i.expected)])) for i in inside]
    turns += [("bad", i, answer([])) for i in inside]
    turns += [
        ("multi", i, answer([tokens[r] for r in sorted(i.expected - {d})])) for i, d in zip(multi, dropped, strict=True)
    ]
    turns += [("held", i, answer([])) for i in held]
    turns += [("off", i, answer([])) for i in draw.off]
    reports: list[TurnReport] = []
    for start in range(0, len(turns), BATCH):
        part = turns[start : start + BATCH]
        reports += checker.check_many([(item.text, output, item.session) for _, item, output in part])
    by: dict[str, list[bool]] = {k: [] for k in ("good", "bad", "multi", "held", "off", "wrong")}
    matched, enforced = [], []
    for (kind, item, _), report in zip(turns, reports, strict=True):
        failed = report.verdict is TurnVerdict.FAIL
        if kind == "good":
            applied = _applied(report)
            if when is None:  # the shipped behaviour: what applied is what the matcher enforced
                assert applied == {m.rule_id for m in report.matches if m.enforced}, report.matches
            by["good"].append(not failed)
            by["wrong"].append(bool(applied) and not applied & item.expected)
            matched.append(len(report.matches))
            enforced.append(len(applied))
        elif kind in ("bad", "multi"):
            by[kind].append(failed)
        else:
            by[kind].append(not failed)
    return Figures(
        good=_share(by["good"]),
        bad=_share(by["bad"]),
        multi=_share(by["multi"]),
        held=_share(by["held"]),
        off=_share(by["off"]),
        wrong=_share(by["wrong"]),
        matched=statistics.fmean(matched) if matched else math.nan,
        enforced=statistics.fmean(enforced) if enforced else math.nan,
        n_in=len(inside),
        n_multi=len(multi),
        n_held=len(held),
        n_off=len(draw.off),
    )


# --- the cost -----------------------------------------------------------------------------------------------------


def _constant(similarities: Sequence[float], relevance: Sequence[float]) -> list[Enforcement]:
    return [_CONSTANT] * len(similarities)


_CONSTANT = Enforcement(True, EnforcementReason.TOP, "stand-in")


def _timed_rounds(
    matcher: RuleMatcher,
    calls: list[tuple[str, np.ndarray]],
    rounds: int,
    config: MatchConfig | None = None,
) -> dict[str, float]:
    # The stand-in replaces the decision where the matcher calls it: in the explain stage (internal names of
    # norma.matching, not in its __all__).
    from norma.matching import explain_module as _explain

    real = _explain.enforcements
    samples: dict[str, list[float]] = {"real": [], "stand-in": []}
    matches = []
    try:
        for _ in range(rounds):
            for variant, decide in (("real", real), ("stand-in", _constant)):
                _explain.enforcements = decide
                for message, vector in calls:
                    started = time.perf_counter()
                    result = matcher.match(message, query_vector=vector, config=config)
                    samples[variant].append(time.perf_counter() - started)
                    matches.append(len(result))
    finally:
        _explain.enforcements = real
    p50 = {k: statistics.median(v) * 1000 for k, v in samples.items()}
    return {
        "real_p50_ms": p50["real"],
        "stand_in_p50_ms": p50["stand-in"],
        "added_ms": p50["real"] - p50["stand-in"],
        "matches": statistics.fmean(matches),
        "calls": len(samples["real"]),
    }


def cost(embedder: CachedEmbedder, rounds: int) -> tuple[list[dict[str, object]], float]:
    from matching_speed import synthetic  # the 1,000-rule rulebook of the speed benchmark

    # internal too: the decision alone is not in __all__ (norma.matching exports Enforcement, not enforcements)
    from norma.matching import enforcements

    rows: list[dict[str, object]] = []
    shipped = RuleMatcher(load_rules(RULEBOOK), embedder=embedder)
    messages = [m.message for m in load_labelled(LABELLED) if not m.scenario and not m.step]
    vectors = embedder.embed(messages)
    calls = [(m, np.asarray(v)) for m, v in zip(messages, vectors, strict=True)]
    shipped.match(calls[0][0], query_vector=calls[0][1])  # lexical index built before timing
    rows.append({"rulebook": "shipped banking (28 rules), default config", **_timed_rounds(shipped, calls, rounds)})
    rng = np.random.default_rng(20261122)
    rules, rule_vectors = synthetic(1_000, rng)
    config = MatchConfig(threshold=None)
    synth = RuleMatcher(rules, config, embedder=embedder, vectors=rule_vectors)
    picks = rng.integers(0, len(rules), 100)
    queries = [rule_vectors[rules[i].id][0] + rng.standard_normal(384).astype(np.float32) * 0.05 for i in picks]
    words = [" ".join(rules[i].condition_text.split()[:4]) for i in picks]
    synth_calls = [(w, q / np.linalg.norm(q)) for w, q in zip(words, queries, strict=True)]
    synth.match(synth_calls[0][0], query_vector=synth_calls[0][1])
    rows.append(
        {"rulebook": "synthetic 1,000 rules, threshold None", **_timed_rounds(synth, synth_calls, rounds, config)}
    )
    result = shipped.match("there's a payment I don't recognise on my statement", config=MatchConfig(threshold=None))
    sims = [m.similarity_score for m in result][:10]
    sims += [sims[-1] - 0.01 * i for i in range(1, 11 - len(sims))]
    relevance = [m.explanation.hybrid for m in result][:10]
    relevance += [relevance[-1] - 0.01 * i for i in range(1, 11 - len(relevance))]
    alone = []
    for _ in range(2_000):
        started = time.perf_counter()
        for _ in range(10):
            enforcements(sims, relevance)
        alone.append((time.perf_counter() - started) / 10)
    return rows, statistics.median(alone) * 1e6


# --- the tables ---------------------------------------------------------------------------------------------------


def _fmt(values: list[float], worst: Callable[[list[float]], float]) -> str:
    kept = [v for v in values if not math.isnan(v)]
    if not kept:
        return "-"
    return f"{statistics.fmean(kept):.3f} ({worst(kept):.3f})"


def quality_table(results: list[tuple[DataSet, dict[str, list[Figures]]]]) -> list[str]:
    lines = [
        "| data set | behaviour | good not failed | bad caught | missing one caught | held-out not failed | "
        "off-topic not failed | wrong rule enforced | matched / turn | enforced / turn |",
        "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for data, by in results:
        for label, key in (("before (every match)", "before"), ("after (enforced)", "after")):
            figs = by[key]
            cells = [
                _fmt([f.good for f in figs], min),
                _fmt([f.bad for f in figs], min),
                _fmt([f.multi for f in figs], min),
                _fmt([f.held for f in figs], min),
                _fmt([f.off for f in figs], min),
                _fmt([f.wrong for f in figs], max),
                f"{statistics.fmean(f.matched for f in figs):.2f}",
                f"{statistics.fmean(f.enforced for f in figs):.2f}",
            ]
            lines.append(f"| {data.name} | {label} | " + " | ".join(cells) + " |")
    return lines


def draws_table(results: list[tuple[DataSet, dict[str, list[Figures]]]]) -> list[str]:
    lines = [
        "| data set | draws | rules | in scope (2+ intents) | held out | off-topic |",
        "|---|---|---:|---:|---:|---:|",
    ]
    for data, by in results:
        figs = by["after"]
        names = _names([d.name for d in data.draws])
        rules = sorted({len(d.rules) for d in data.draws})
        span = str(rules[0]) if len(rules) == 1 else f"{rules[0]}-{rules[-1]}"
        lines.append(
            f"| {data.name} | {names} | {span} | {sum(f.n_in for f in figs):,} ({sum(f.n_multi for f in figs):,}) | "
            f"{sum(f.n_held for f in figs):,} | {sum(f.n_off for f in figs):,} |"
        )
    return lines


def _names(names: list[str]) -> str:
    """``banking77/401, 405, 409`` for draws of one kind (the part before ``/``) in a row."""
    out: list[str] = []
    last = None
    for name in names:
        kind, _, seed = name.rpartition("/")
        out.append(seed if kind == last and kind else name)
        last = kind
    return ", ".join(out)


def changes(results: list[tuple[DataSet, dict[str, list[Figures]]]]) -> str:
    """Before -> after, the range over data sets of the change of each set mean."""

    def span(key: str) -> str:
        deltas = []
        for _, by in results:
            after = [getattr(f, key) for f in by["after"] if not math.isnan(getattr(f, key))]
            before = [getattr(f, key) for f in by["before"] if not math.isnan(getattr(f, key))]
            if after:
                deltas.append(statistics.fmean(after) - statistics.fmean(before))
        return f"{min(deltas):+.3f} to {max(deltas):+.3f}"

    return (
        f"Before -> after, the change of the set means: good not failed {span('good')}, bad caught {span('bad')}, "
        f"missing one caught {span('multi')}, held-out not failed {span('held')}, off-topic not failed "
        f"{span('off')}, wrong rule enforced {span('wrong')}."
    )


def target_table(
    results: list[tuple[DataSet, dict[str, list[Figures]]]], cost_rows: list[dict[str, object]]
) -> list[str]:
    lines = [
        "| target | threshold | lowest set mean (set) | sets whose mean misses | draws that miss | met |",
        "|---|---:|---:|---|---:|---|",
    ]
    for key, label, threshold, _ in TARGETS:
        means, missing_draws, total_draws = [], 0, 0
        for data, by in results:
            values = [getattr(f, key) for f in by["after"] if not math.isnan(getattr(f, key))]
            if not values:
                continue
            means.append((statistics.fmean(values), data.name))
            missing_draws += sum(v < threshold for v in values)
            total_draws += len(values)
        low = min(means)
        missing = ", ".join(f"{n} {m:.3f}" for m, n in means if m < threshold) or "none"
        lines.append(
            f"| {label} | >= {threshold:.2f} | {low[0]:.3f} ({low[1]}) | {missing} | {missing_draws} of "
            f"{total_draws} | {'pass' if low[0] >= threshold else 'miss'} |"
        )
    added = max(float(r["added_ms"]) for r in cost_rows)  # type: ignore[arg-type]
    lines.append(
        f"| enforcement's cost added to a match (p50) | <= 0.100 ms | {added:.4f} ms (the larger of the two "
        f"rulebooks) | - | - | {'pass' if added <= 0.1 else 'miss'} |"
    )
    return lines


def cost_table(rows: list[dict[str, object]], alone_us: float) -> list[str]:
    lines = [
        "| rulebook | calls per variant | matches per call | p50 ms, real decision | p50 ms, stand-in | added ms |",
        "|---|---:|---:|---:|---:|---:|",
    ]
    for r in rows:
        lines.append(
            f"| {r['rulebook']} | {r['calls']:,} | {r['matches']:.1f} | {r['real_p50_ms']:.4f} | "
            f"{r['stand_in_p50_ms']:.4f} | {r['added_ms']:+.4f} |"
        )
    lines += ["", f"`enforcements()` alone on 10 matches: {alone_us:.1f} µs p50 per call."]
    return lines


def _fresh_line(every: int) -> str:
    if every == 1:
        return "Fresh draws: all 48 of `_devsets.fresh_sets()` (seeds 401-442)."
    kept = len(fresh_sets()[::every])
    return f"Fresh draws: `_devsets.fresh_sets()[::{every}]` ({kept} of 48, to keep the run short)."


def render(
    results: list[tuple[DataSet, dict[str, list[Figures]]]],
    cost_rows: list[dict[str, object]],
    alone_us: float,
    seconds: float,
    fresh_every: int,
    load: tuple[float, float],
    alongside: str,
) -> str:
    lines = [
        BEGIN,
        "## check: enforcement",
        "",
        machine_line() + f"; load average {load[0]:.1f} at the start, {load[1]:.1f} at the end (2 cores, shared; "
        f"alongside: {alongside}); whole run {seconds / 60:.1f} min; `benchmarks/check_enforcement.py`.",
        "",
        "Which matches a turn check enforces (issue #47): the top match and the matches within `ENFORCE_MARGIN` "
        "0.01 similarity of it; a neighbour's requirement is `skip`. ENFORCE_MARGIN 0.01 was chosen on the tune "
        "draws 101-103 by experiments/turn_enforcement.py; these draws chose nothing.",
        "",
        "Protocol: per draw, one rule per intent, each with one `contains` check (`error`, default `when`) of a "
        "made-up token unique to its intent; per labelled message, `TurnChecker.check_many` on the real matcher "
        "(default `MatchConfig`) checks a good answer (every expected token), a bad one (no token), for messages "
        "stating 2+ intents the good answer without one token (a seeded draw), and for out-of-scope messages "
        "(held-out intents; off-topic: another domain's NLU++ queries) an answer without a token. *Before*: the "
        "same checks with `when: matched` (every matched rule's requirement applied, the behaviour before the "
        "change). Each cell: mean over the draws (worst draw: the lowest, the highest for wrong rule enforced); "
        "matched / enforced: rules per in-scope turn, mean.",
        _fresh_line(fresh_every),
        "",
        *quality_table(results),
        "",
        changes(results),
        "",
        "Targets (after; held-out and off-topic are the gate's job: the top match is always enforced):",
        "",
        *target_table(results, cost_rows),
        "",
        "Cost: `RuleMatcher.match` with a precomputed query vector, the real decision against a stand-in returning "
        "a constant `Enforcement` per match, alternating rounds:",
        "",
        *cost_table(cost_rows, alone_us),
        "",
        "The draws:",
        "",
        *draws_table(results),
        END,
    ]
    return "\n".join(lines) + "\n"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--fresh-every", type=int, default=1, help="keep every Nth fresh draw (default 1: all 48)")
    parser.add_argument("--rounds", type=int, default=20, help="alternating rounds of the cost measure (default 20)")
    parser.add_argument("--quick", action="store_true", help="the first draw of each data set only (a smoke run)")
    parser.add_argument("--alongside", default="not noted", help="what else ran on the machine, for the doc")
    parser.add_argument("--write", action="store_true", help="replace this script's section of docs/benchmarks.md")
    args = parser.parse_args()
    started, load = time.perf_counter(), os.getloadavg()[0]
    embedder = CachedEmbedder(get_embedder(), EmbeddingCache(str(CACHE)))
    results = []
    for data in data_sets(args.fresh_every):
        if args.quick:
            data.draws = data.draws[:1]
        by: dict[str, list[Figures]] = {"before": [], "after": []}
        for draw in data.draws:
            t0 = time.perf_counter()
            by["before"].append(figures(draw, "matched", embedder))
            by["after"].append(figures(draw, None, embedder))
            print(f"{draw.name}: {time.perf_counter() - t0:.1f} s", file=sys.stderr, flush=True)
        results.append((data, by))
    cost_rows, alone_us = cost(embedder, args.rounds)
    seconds = time.perf_counter() - started
    text = render(results, cost_rows, alone_us, seconds, args.fresh_every, (load, os.getloadavg()[0]), args.alongside)
    print(text)
    if args.write:
        write_section(text, BEGIN, END, BEFORE)


if __name__ == "__main__":
    main()
