"""Judge checks against the loopback fake LLM server: model calls per run, and the time per judge check.

A rulebook of ``--rules`` rules, each with one ``judge`` check (half with 1 vote, half with 3), is checked on one
output per rule with :func:`norma.checks.evaluate_checks` and a :class:`norma.llm.Judge` over real HTTP to the fake
server of the tests (tests/_llm_server.py: it answers at once, no model runs; its replies are verdicts derived
from the prompt). Runs:

* no cache: every vote is a call;
* first run with a SQLite cache file: exactly checks x votes calls (the issue's target);
* a re-run with a new Judge and a new JudgeCache on the same file (as a second process would): no call, the same
  results;
* a re-run on the in-memory cache of the first judge.

The time per judge check is the loopback cost (prompt, HTTP, strict parsing, cache), not a model's.
Run ``.venv/bin/python benchmarks/check_judge.py`` (``--no-write`` to leave docs/benchmarks.md alone).
"""

from __future__ import annotations

import argparse
import datetime as dt
import hashlib
import json
import os
import platform
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tests._llm_server import FakeLLMServer

from _docs import write_section
from norma.checks import CheckResult, evaluate_checks
from norma.llm import Judge, JudgeCache, OllamaClient, RetryPolicy
from norma.rules import Rule

BEGIN, END = "<!-- check_judge.py:begin -->", "<!-- check_judge.py:end -->"
BEFORE = "## audit\n"
"""The section goes right before this heading (after the llm section) the first time."""


def _verdict(messages: list[dict[str, str]]) -> str:
    """A verdict that depends on the prompt and the seed-free content only (the fake server does not see seeds)."""
    digest = hashlib.sha256(messages[-1]["content"].encode("utf-8")).digest()
    score = digest[0] / 255
    return json.dumps({"pass": score >= 0.3, "score": round(score, 3), "reason": f"digest {digest[:2].hex()}"})


def _rules(n: int) -> list[Rule]:
    return [
        Rule(
            id=f"rule-{i}",
            condition_text=f"customer asks about topic {i}",
            action_text=f"answer about topic {i} politely and never give a PIN",
            checks=[{"id": "judged", "kind": "judge", "votes": 1 if i % 2 == 0 else 3}],
        )
        for i in range(n)
    ]


def _run(rules: list[Rule], judge: Judge) -> tuple[list[list[CheckResult]], list[float]]:
    results, times = [], []
    for i, rule in enumerate(rules):
        started = time.perf_counter()
        results.append(
            evaluate_checks(
                rule, f"Answer {i}: sorry, I cannot give a PIN.", matched=True, message=f"topic {i}?", judge=judge
            )
        )
        times.append(time.perf_counter() - started)
    return results, times


def _ms(samples: list[float]) -> tuple[float, float]:
    ordered = sorted(samples)
    p95 = ordered[min(len(ordered) - 1, round(0.95 * (len(ordered) - 1)))]
    return statistics.median(ordered) * 1000, p95 * 1000


def measure(args: argparse.Namespace) -> tuple[list[dict[str, object]], int]:
    rules = _rules(args.rules)
    votes = sum(rule.checks[0].votes for rule in rules)  # type: ignore[union-attr]
    fast = RetryPolicy(max_retries=0)
    rows: list[dict[str, object]] = []
    with FakeLLMServer(responder=_verdict) as server, tempfile.TemporaryDirectory(prefix="norma-judge-") as tmp:
        client = OllamaClient(server.url, "judge-model", retry=fast)
        client.complete("warm up")

        def row(case: str, judge: Judge, expected: int, reference: list[list[CheckResult]] | None = None) -> list:
            before = len(server.requests)
            results, times = _run(rules, judge)
            calls = len(server.requests) - before
            median, p95 = _ms(times)
            per_call = sum(times) / calls * 1000 if calls else None
            same = "" if reference is None else ("yes" if results == reference else "NO")
            rows.append(
                {"case": case, "calls": calls, "expected": expected, "median": median, "p95": p95, "same": same}
                | {"per_call": per_call}
            )
            return results

        row("no cache", Judge(client), votes)
        path = Path(tmp) / "judge.sqlite3"
        cache = JudgeCache(path)
        first_judge = Judge(client, cache=cache)
        first = row("first run, SQLite cache file", first_judge, votes)
        row("re-run, new Judge + JudgeCache on the same file", Judge(client, cache=JudgeCache(path)), 0, first)
        memory = Judge(client, cache=JudgeCache())
        reference = row("first run, in-memory cache", memory, votes)
        row("re-run, in-memory cache", memory, 0, reference)
    return rows, votes


def render(rows: list[dict[str, object]], votes: int, args: argparse.Namespace) -> str:
    load = os.getloadavg()
    lines = [
        BEGIN,
        "## check: judge",
        "",
        f"`.venv/bin/python benchmarks/check_judge.py --rules {args.rules}`: {args.rules} rules with one `judge` check "
        f"each (half with 1 vote, half with 3: {votes} votes in all), checked on one output each by `evaluate_checks` "
        "with a `Judge` over real HTTP to the loopback fake server of the tests (it answers at once: no model runs, "
        "so the time is norma's own per judge check: prompt, HTTP round trips, strict parsing, cache). Target "
        "(issue #38): one model call per check and vote, none on a cached re-run. Measured "
        f"{dt.datetime.now(dt.UTC):%Y-%m-%d %H:%M} UTC on {os.cpu_count()} cores (shared with other work; load "
        f"average {load[0]:.1f}, {load[1]:.1f}, {load[2]:.1f} at the end), Python {platform.python_version()}, "
        f"{platform.machine()}.",
        "",
        "| run | model calls | expected | target | same results as its first run | per check, median | p95 | "
        "per model call |",
        "|---|---:|---:|---|---|---:|---:|---:|",
    ]
    for r in rows:
        met = "met" if r["calls"] == r["expected"] else "MISSED"
        per_call = "" if r["per_call"] is None else f"{r['per_call']:.2f} ms"
        lines.append(
            f"| {r['case']} | {r['calls']} | {r['expected']} | {met} | {r['same']} | {r['median']:.2f} ms | "
            f"{r['p95']:.2f} ms | {per_call} |"
        )
    lines.append(END)
    return "\n".join(lines) + "\n"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rules", type=int, default=40, help="rules, each with one judge check (default 40)")
    parser.add_argument("--no-write", action="store_true", help="print only; leave docs/benchmarks.md alone")
    args = parser.parse_args()
    rows, votes = measure(args)
    text = render(rows, votes, args)
    print(text)
    if not args.no_write:
        write_section(text, BEGIN, END, BEFORE)
    if any(r["calls"] != r["expected"] or r["same"] == "NO" for r in rows):
        sys.exit(1)


if __name__ == "__main__":
    main()
