"""The turn check (norma check): what checking a turn costs beyond matching, and a 10,000-turn batch.

* **Beyond matching.** 10 rules, each with four deterministic checks (``contains``, ``not_regex``, ``no_pii``,
  ``max_words``) that apply on every output (``when: always``), so all 10 rules apply to every turn. The message is
  matched once; what is timed is :meth:`norma.turns.Norma.review` on that match: every check, each rule's
  verdict, the reward through norma.rubrics and the report model. Outputs of about 500 characters (a chat answer)
  and 10,000 characters (a long one). Target: <= 1 ms p50 for the short one.
* **Batch.** ``norma check --batch`` of 10,000 turns on the 28-rule example rulebook
  (examples/rulebooks/banking-support.yaml), no judge, no audit, as a user runs it (a subprocess, default engine,
  ``--format jsonl`` to a file). The turns cycle through the labelled messages of the rulebook
  (banking-support.labelled.jsonl) with outputs from examples/turns/banking.jsonl, each made unique by its index.
  Target: <= 60 s on 2 cores. The figure includes start-up (Python, the model, the rulebook snapshot).

Run ``.venv/bin/python benchmarks/check_turns.py`` (``--turns N``, ``--no-write`` to leave docs/benchmarks.md alone).
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))

from _docs import write_section  # noqa: E402
from norma.rules import Rule  # noqa: E402
from norma.turns import open as open_rules  # noqa: E402

BEGIN, END = "<!-- check_turns.py:begin -->", "<!-- check_turns.py:end -->"
BEFORE = "## audit\n"
RULEBOOK = ROOT / "examples" / "rulebooks" / "banking-support.yaml"
LABELLED = ROOT / "examples" / "rulebooks" / "banking-support.labelled.jsonl"
TURNS = ROOT / "examples" / "turns" / "banking.jsonl"


def _rules(n: int = 10) -> list[Rule]:
    return [
        Rule(
            id=f"rule-{i:02d}",
            condition_text=f"customer asks about product number {i}",
            action_text=f"describe product {i} and its fees",
            checks=[
                {"id": "fees", "kind": "contains", "terms": [f"product {i}", "fees"], "when": "always"},
                {"id": "no-secret", "kind": "not_regex", "pattern": r"(?i)\b(pin|password)\s*[:=]", "when": "always"},
                {"id": "no-card", "kind": "no_pii", "kinds": ["card", "iban"], "when": "always"},
                {"id": "short", "kind": "max_words", "limit": 400, "when": "always", "severity": "warning"},
            ],
        )
        for i in range(n)
    ]


def _output(chars: int) -> str:
    sentence = "Product 3 has no monthly fees; transfers abroad cost 1% and arrive in two working days. "
    return (sentence * (chars // len(sentence) + 1))[:chars]


def beyond_matching(repeats: int) -> list[dict[str, object]]:
    opened = open_rules(_rules(), judge=None)
    message = "what are the fees of product 3"
    match = opened.match(message)
    rows = []
    for chars in (500, 10_000):
        output = _output(chars)
        report = opened.review(message, output, match)
        assert len(report.rules) == 10, len(report.rules)
        samples = []
        for _ in range(repeats):
            start = time.perf_counter()
            opened.review(message, output, match)
            samples.append(time.perf_counter() - start)
        samples.sort()
        rows.append(
            {
                "output": f"{chars:,} characters",
                "rules": len(report.rules),
                "checks": len(report.checks),
                "p50_ms": statistics.median(samples) * 1000,
                "p95_ms": samples[int(len(samples) * 0.95)] * 1000,
            }
        )
    return rows


def _turns_file(path: Path, n: int) -> None:
    messages = [json.loads(line)["message"] for line in LABELLED.read_text(encoding="utf-8").splitlines() if line]
    outputs = [json.loads(line)["output"] for line in TURNS.read_text(encoding="utf-8").splitlines() if line]
    with path.open("w", encoding="utf-8") as handle:
        for i in range(n):
            turn = {"id": i, "message": messages[i % len(messages)], "output": f"{outputs[i % len(outputs)]} ({i})"}
            handle.write(json.dumps(turn) + "\n")


def batch(n: int) -> dict[str, object]:
    norma = Path(sys.executable).with_name("norma")
    with tempfile.TemporaryDirectory() as tmp:
        turns, out = Path(tmp) / "turns.jsonl", Path(tmp) / "out.jsonl"
        _turns_file(turns, n)
        command = [str(norma), "check", "--rules", str(RULEBOOK), "--batch", str(turns), "--format", "jsonl"]
        command += ["--out", str(out)]
        env = {**os.environ, "NORMA_LLM_URL": ""}
        start = time.perf_counter()
        done = subprocess.run(command, env=env, capture_output=True, text=True, check=False)
        seconds = time.perf_counter() - start
        if done.returncode not in (0, 1):
            raise SystemExit(f"norma check failed ({done.returncode}): {done.stderr[-2000:]}")
        rows = [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]
    verdicts = {v: sum(1 for r in rows if r["verdict"] == v) for v in ("pass", "fail", "skip")}
    return {"turns": len(rows), "seconds": seconds, "per_second": len(rows) / seconds, **verdicts}


def render(rows: list[dict[str, object]], batch_row: dict[str, object], args: argparse.Namespace) -> str:
    load = os.getloadavg()[0]
    lines = [
        BEGIN,
        "## check: turns",
        "",
        f"{dt.date.today().isoformat()}, {platform.machine()}, {os.cpu_count()} cores, Python "
        f"{platform.python_version()}, load average {load:.1f} at the end; `benchmarks/check_turns.py` (no tuned "
        "defaults involved: checks have no thresholds).",
        "",
        f"Beyond matching: `Norma.review` on a matched message, 10 rules applied, {args.repeats:,} runs "
        "(target <= 1 ms p50 for a chat-sized output).",
        "",
        "| output | rules applied | checks | p50 ms | p95 ms |",
        "|---|---:|---:|---:|---:|",
    ]
    for row in rows:
        lines.append(
            f"| {row['output']} | {row['rules']} | {row['checks']} | {row['p50_ms']:.3f} | {row['p95_ms']:.3f} |"
        )
    lines += [
        "",
        "`norma check --batch` on the 28-rule banking rulebook, no judge (target <= 60 s for 10,000 turns on 2 "
        "cores; start-up included):",
        "",
        "| turns | seconds | turns/s | pass | fail | skip |",
        "|---:|---:|---:|---:|---:|---:|",
        f"| {batch_row['turns']:,} | {batch_row['seconds']:.1f} | {batch_row['per_second']:.0f} | "
        f"{batch_row['pass']:,} | {batch_row['fail']:,} | {batch_row['skip']:,} |",
        END,
    ]
    return "\n".join(lines) + "\n"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--turns", type=int, default=10_000, help="turns in the batch (default 10,000)")
    parser.add_argument("--repeats", type=int, default=2_000, help="timed runs per output size (default 2,000)")
    parser.add_argument("--no-write", action="store_true", help="print only; leave docs/benchmarks.md alone")
    args = parser.parse_args()
    rows = beyond_matching(args.repeats)
    batch_row = batch(args.turns)
    text = render(rows, batch_row, args)
    print(text)
    if not args.no_write:
        write_section(text, BEGIN, END, BEFORE)


if __name__ == "__main__":
    main()
