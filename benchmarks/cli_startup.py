"""CLI start-up and cached ``norma match``: wall time of real ``norma`` processes (issue 24).

* ``norma --version``, ``norma --help`` and ``norma <cmd> --help`` for every command (target: median <= 0.25 s);
* TAB completion as bash, zsh and fish ask for it (``_NORMA_COMPLETE=..._complete``; target <= 0.3 s);
* ``norma match --rules FILE MESSAGE`` on a synthetic 3,000-rule file (2 examples each: 9,000 rule texts) with an
  empty embedding cache (the first run embeds every rule text), then again with the cache filled by the first run
  (target: <= 1 s). The cache is a temporary ``$NORMA_CACHE_DIR``.

Each case runs ``--runs`` times (the match cases ``--match-runs`` times) as ``python -m norma`` in a fresh process;
the table gives the median and the spread. Run ``.venv/bin/python benchmarks/cli_startup.py``; it prints the table
and rewrites its own marked section of docs/benchmarks.md unless ``--no-write`` is given.
"""

from __future__ import annotations

import argparse
import datetime as dt
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
DOC = REPO / "docs" / "benchmarks.md"
BEGIN = "<!-- cli_startup.py:begin -->"
END = "<!-- cli_startup.py:end -->"
COMMANDS = ["audit", "demo", "embed", "keys", "llm", "match", "names", "rubric", "rules", "serve"]
TOPICS = ["refund", "card", "loan", "mortgage", "transfer", "fees", "balance", "pin", "account", "savings"]
VERBS = ["asks about", "complains about", "wants to change", "cannot find", "needs help with", "reports a problem with"]


def _env(extra: dict[str, str] | None = None) -> dict[str, str]:
    env = {**os.environ, **(extra or {})}
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(REPO / "src"), env.get("PYTHONPATH", "")) if p)
    return env


def timed(args: list[str], runs: int, extra_env: dict[str, str] | None = None) -> list[float]:
    """Wall seconds of ``runs`` fresh ``python -m norma ARGS`` processes."""
    env = _env(extra_env)
    out = []
    for _ in range(runs):
        start = time.perf_counter()
        proc = subprocess.run(
            [sys.executable, "-m", "norma", *args], env=env, capture_output=True, check=False, cwd=REPO
        )
        out.append(time.perf_counter() - start)
        if proc.returncode not in (0, 1):
            raise SystemExit(f"norma {' '.join(args)} failed ({proc.returncode}): {proc.stderr.decode()[-500:]}")
    return out


def synthetic_rulebook(path: Path, n: int) -> None:
    lines = ["tenant: bench", "rules:"]
    for i in range(n):
        topic, verb = TOPICS[i % len(TOPICS)], VERBS[(i // len(TOPICS)) % len(VERBS)]
        lines += [
            f"  - id: r{i:05d}",
            f"    condition_text: customer {verb} their {topic} (case {i})",
            f"    action_text: follow procedure {i} for {topic}",
            f"    priority: {i % 50}",
            f"    tags: [{topic}]",
            f"    examples: ['my {topic} issue number {i}', 'question {i} about the {topic}']",
        ]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")


def row(case: str, times: list[float], target: float | None) -> dict[str, object]:
    median = statistics.median(times)
    return {
        "case": case,
        "runs": len(times),
        "median": median,
        "min": min(times),
        "max": max(times),
        "target": target,
        "ok": None if target is None else median <= target,
    }


def measure(args: argparse.Namespace) -> list[dict[str, object]]:
    rows = [
        row("norma --version", timed(["--version"], args.runs), 0.25),
        row("norma --help", timed(["--help"], args.runs), 0.25),
    ]
    for name in COMMANDS:
        rows.append(row(f"norma {name} --help", timed([name, "--help"], args.runs), 0.25))
    completions = [
        ("bash", "norma ", "1"),
        ("bash", "norma rules ", "2"),
        ("zsh", "norma match --", "2"),
        ("fish", "norma names s", "2"),
    ]
    for shell, words, cword in completions:
        env = {"_NORMA_COMPLETE": f"{shell}_complete", "COMP_WORDS": words, "COMP_CWORD": cword}
        rows.append(row(f"{shell} completion of `{words}`", timed([], args.runs, env), 0.3))
    with tempfile.TemporaryDirectory(prefix="norma-cli-bench-") as tmp:
        book = Path(tmp) / "rules.yaml"
        synthetic_rulebook(book, args.rules)
        env = {"NORMA_CACHE_DIR": str(Path(tmp) / "cache")}
        match = ["match", "--rules", str(book), "my card was swallowed by the machine"]
        rows.append(row(f"norma match, {args.rules:,} rules, empty cache", timed(match, 1, env), None))
        rows.append(row(f"norma match, {args.rules:,} rules, cached vectors", timed(match, args.match_runs, env), 1.0))
    return rows


def render(rows: list[dict[str, object]], args: argparse.Namespace) -> str:
    load = os.getloadavg()
    lines = [
        BEGIN,
        "## cli",
        "",
        f"`.venv/bin/python benchmarks/cli_startup.py --runs {args.runs} --match-runs {args.match_runs} --rules "
        f"{args.rules}`. Measured {dt.datetime.now(dt.UTC):%Y-%m-%d %H:%M} UTC on {os.cpu_count()} cores (shared "
        f"with other work; load average {load[0]:.1f}, {load[1]:.1f}, {load[2]:.1f} at the end), Python "
        f"{platform.python_version()}, {platform.machine()}. Wall time of a fresh `python -m norma` process per "
        "run (interpreter start included; `python -c pass` alone takes about 0.02 s). Completion: the request a shell "
        "sends on TAB (`_NORMA_COMPLETE=<shell>_complete`). Match: a synthetic rulebook (2 examples a rule, so 3 "
        "texts a rule), the first run with an empty `$NORMA_CACHE_DIR`, then runs reading the rule vectors it cached.",
        "",
        "| case | runs | median | min | max | target |",
        "|---|---:|---:|---:|---:|---|",
    ]
    for r in rows:
        target = "" if r["target"] is None else f"<= {r['target']} s: {'met' if r['ok'] else 'MISSED'}"
        lines.append(
            f"| {r['case']} | {r['runs']} | {r['median']:.3f} s | {r['min']:.3f} s | {r['max']:.3f} s | {target} |"
        )
    lines.append(END)
    return "\n".join(lines) + "\n"


def write_section(text: str) -> None:
    doc = DOC.read_text(encoding="utf-8") if DOC.exists() else "# Benchmarks\n"
    start, end = doc.find(BEGIN), doc.find(END)
    if start == -1 or end == -1:
        doc = doc.rstrip("\n") + "\n\n" + text
    else:
        doc = doc[:start] + text + doc[end + len(END) + 1 :]
    DOC.write_text(doc, encoding="utf-8")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--runs", type=int, default=15, help="runs of each start-up and completion case")
    parser.add_argument("--match-runs", type=int, default=5, help="runs of the cached match")
    parser.add_argument("--rules", type=int, default=3000, help="rules in the synthetic rulebook")
    parser.add_argument("--no-write", action="store_true", help="print only; leave docs/benchmarks.md alone")
    args = parser.parse_args()
    text = render(measure(args), args)
    print(text)
    if not args.no_write:
        write_section(text)


if __name__ == "__main__":
    main()
