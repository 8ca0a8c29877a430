"""The guarded turn (norma.guard): what the guard itself costs beyond the model call.

The 28-rule banking rulebook (examples/rulebooks/banking-support.yaml), no judge, no audit. Each turn is one labelled
message of the rulebook (banking-support.labelled.jsonl) with an answer from examples/turns/banking.jsonl made unique
by its index; the "model" is an in-process client that returns that answer at once, so what is timed is the guard's
own work: matching the message, writing the rules into the system message, the turn check of the answer and the
decision (``GuardResult.guard_ms``: the turn's time less the model call). Policy ``flag`` (one model call per turn).
Then a match end to end on a 150-rule rulebook (BANKING77's, then NLU++ banking's and hotels' intents, a condition
and up to 10 examples each, as benchmarks/matching_adapt_speed.py builds it), the message's embedding included: each
of the draws' messages matched once, unseen (made unique by its index). Targets (issue #58): ``Guard.run`` beyond the
model call <= 3 ms p50, match end to end <= 3 ms p50. Measured with the default fp32 encoder and with the int8 one
(``norma serve --int8``), in alternating rounds. No tuned default is involved (the guard has no thresholds; matching
uses its defaults).

Run ``.venv/bin/python benchmarks/guard_overhead.py`` (``--turns N`` a round, ``--rounds N`` per encoder,
``--no-write`` to leave docs/benchmarks.md alone).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))
sys.path.insert(0, str(ROOT / "benchmarks"))

import norma  # noqa: E402
from _docs import machine_line, write_section  # noqa: E402
from norma.embeddings import INT8_ENV  # noqa: E402
from norma.guard import Guard  # noqa: E402

BEGIN, END = "<!-- guard_overhead.py:begin -->", "<!-- guard_overhead.py:end -->"
BEFORE = "## audit\n"
TARGET_MS = 3.0
RULEBOOK = ROOT / "examples" / "rulebooks" / "banking-support.yaml"
LABELLED = ROOT / "examples" / "rulebooks" / "banking-support.labelled.jsonl"
TURNS = ROOT / "examples" / "turns" / "banking.jsonl"


class _Answers:
    """A chat model that answers at once with the next scripted answer (the model's time is not the guard's)."""

    model = "scripted"

    def __init__(self) -> None:
        self.next = ""

    def complete(
        self,
        prompt_or_messages: str | Sequence[Mapping[str, str]],
        *,
        temperature: float = 0.0,
        max_tokens: int | None = None,
        seed: int | None = None,
    ) -> str:
        return self.next

    async def acomplete(
        self,
        prompt_or_messages: str | Sequence[Mapping[str, str]],
        *,
        temperature: float = 0.0,
        max_tokens: int | None = None,
        seed: int | None = None,
    ) -> str:
        return self.next


def _pct(samples: list[float], q: float) -> float:
    ordered = sorted(samples)
    return ordered[min(len(ordered) - 1, int(len(ordered) * q))]


ENCODERS = ("fp32", "int8")
"""The default encoder, then the int8 one (``norma serve --int8``, ``NORMA_EMBEDDINGS_INT8=1``)."""


def _guard(encoder: str) -> Guard:
    os.environ[INT8_ENV] = "1" if encoder == "int8" else "0"  # read when the matcher first needs its embedder:
    guard = Guard(norma.open(RULEBOOK, judge=None), _Answers(), policy="flag")  # type: ignore[arg-type]
    guard.prepare([{"role": "user", "content": "hello"}])  # now, while the variable says this encoder
    return guard


def _round(guard: Guard, turns: int, messages: list[str], outputs: list[str]) -> dict[str, float | int]:
    model = guard.llm
    assert isinstance(model, _Answers)
    for i in range(20):  # warm-up: the model session, the caches of the first messages
        model.next = outputs[i % len(outputs)]
        guard.run([{"role": "user", "content": messages[i % len(messages)]}])
    totals, prepares, checks, injected, failed = [], [], [], [], 0
    for i in range(turns):
        model.next = f"{outputs[i % len(outputs)]} ({i})"
        result = guard.run([{"role": "user", "content": f"{messages[i % len(messages)]} ({i})"}])
        totals.append(result.guard_ms)
        prepares.append(result.prepare_ms)
        checks.append(result.attempts[0].check_ms)
        injected.append(len(result.rules))
        failed += not result.passed
    return {
        "guard_p50": statistics.median(totals),
        "guard_p95": _pct(totals, 0.95),
        "prepare_p50": statistics.median(prepares),
        "check_p50": statistics.median(checks),
        "rules_injected": statistics.mean(injected),
        "failed": failed,
    }


def _matcher_150(encoder: str) -> tuple[Any, list[str]]:
    """The 150-rule matcher (rule vectors embedded once, with ``encoder``) and the draws' messages."""
    from _devsets import banking77, nlupp
    from matching_adapt_speed import rulebook
    from norma.embeddings import get_embedder
    from norma.matching import Rule, RuleMatcher

    groups = rulebook()
    rules = [
        Rule(id=f"r{n}", tenant_id="bench", condition_text=texts[0], action_text="follow it", examples=texts[1:])
        for n, texts in enumerate(groups)
    ]
    embedder = get_embedder(quantize=encoder == "int8")
    dev_messages = [
        m.text
        for dev in (banking77(201, "report"), nlupp("banking", 201, "report"), nlupp("hotels", 201, "report"))
        for m in dev.messages
    ]
    return RuleMatcher(rules, embedder=embedder), dev_messages


def _match_round(matcher: Any, messages: list[str], count: int, offset: int) -> dict[str, float | int]:
    times = []
    for i in range(count):
        started = time.perf_counter()
        matcher.match(f"{messages[i % len(messages)]} ({offset + i})")
        times.append((time.perf_counter() - started) * 1000)
    return {"match_p50": statistics.median(times), "match_p95": _pct(times, 0.95)}


def measure(turns: int, rounds: int) -> dict[str, Any]:
    """Each encoder ``rounds`` times, alternately (so that both see the same machine), ``turns`` turns a round, then
    as many matches on the 150-rule rulebook."""
    messages = [json.loads(line)["message"] for line in LABELLED.read_text(encoding="utf-8").splitlines() if line]
    outputs = [json.loads(line)["output"] for line in TURNS.read_text(encoding="utf-8").splitlines() if line]
    load_start = os.getloadavg()[0]
    default = os.environ.get(INT8_ENV)
    guards = {encoder: _guard(encoder) for encoder in ENCODERS}
    if default is None:  # as it was: the machine line names the default encoder
        os.environ.pop(INT8_ENV, None)
    else:
        os.environ[INT8_ENV] = default
    matchers = {encoder: _matcher_150(encoder) for encoder in ENCODERS}
    runs: dict[str, list[dict[str, float | int]]] = {encoder: [] for encoder in ENCODERS}
    for number in range(rounds):
        for encoder in ENCODERS:
            row = _round(guards[encoder], turns, messages, outputs)
            matcher, dev_messages = matchers[encoder]
            row.update(_match_round(matcher, dev_messages, turns, number * turns))
            runs[encoder].append(row)
    rules_150 = len(matchers[ENCODERS[0]][0])
    return {
        "turns": turns,
        "rounds": rounds,
        "runs": runs,
        "rules_150": rules_150,
        "load_start": load_start,
        "load_end": os.getloadavg()[0],
    }


def render(data: dict[str, Any]) -> str:
    table = [
        "| encoder | guard p50 ms (median of rounds) | worst round p50 ms | guard p95 ms | prepare p50 ms "
        "| check p50 ms | rules injected (mean) | answers failed | match end to end, 150 rules, p50 ms | p95 ms |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    verdicts = []
    for encoder, runs in data["runs"].items():

        def mid(key: str, runs: list[dict[str, float | int]] = runs) -> float:
            return statistics.median(float(r[key]) for r in runs)

        label = "fp32 (default)" if encoder == "fp32" else "int8 (`--int8`)"
        worst = max(float(r["guard_p50"]) for r in runs)
        table.append(
            f"| {label} | {mid('guard_p50'):.2f} | {worst:.2f} | {mid('guard_p95'):.2f} | {mid('prepare_p50'):.2f} "
            f"| {mid('check_p50'):.2f} | {mid('rules_injected'):.1f} | {mid('failed'):,.0f} "
            f"| {mid('match_p50'):.2f} | {mid('match_p95'):.2f} |"
        )
        for what, key in (("Guard.run", "guard_p50"), ("match end to end", "match_p50")):
            met = "met" if mid(key) <= TARGET_MS else "not met"
            verdicts.append(f"{what} with {encoder}: {mid(key):.2f} ms, {met}")
    lines = [
        BEGIN,
        "## guard: overhead",
        "",
        f"{machine_line()}; `benchmarks/guard_overhead.py` (no tuned defaults involved: the guard has no thresholds, "
        f"matching runs on its defaults); load average {data['load_start']:.1f} at the start, "
        f"{data['load_end']:.1f} at the end.",
        "",
        "The guard's own work per turn beyond the model call (match, rules into the system message, turn check, "
        "decision), on the 28-rule banking rulebook, no judge, an in-process model that answers at once "
        f"({data['turns']:,} distinct turns a round, {data['rounds']} rounds per encoder, the encoders alternating); "
        f"then {data['turns']:,} matches a round of unseen messages on a {data['rules_150']}-rule rulebook, the "
        f"message's embedding included. Targets (issue #58): <= {TARGET_MS:g} ms p50 each.",
        "",
        *table,
        "",
        "Against the targets: " + "; ".join(verdicts) + ".",
        END,
    ]
    return "\n".join(lines) + "\n"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--turns", type=int, default=1000)
    parser.add_argument("--rounds", type=int, default=3, help="rounds per encoder")
    parser.add_argument("--no-write", action="store_true", help="print the table, leave docs/benchmarks.md alone")
    args = parser.parse_args()
    text = render(measure(args.turns, args.rounds))
    print(text)
    if not args.no_write:
        write_section(text, BEGIN, END, BEFORE)


if __name__ == "__main__":
    main()
