"""Batch engines: the same output from every engine and from merged shards; Ray against the process pool.

1. **Identity**: each batch command is run as a separate ``norma`` process with ``--engine local``, ``--engine pool
   --workers 2``, ``--engine ray --workers 2`` (a local Ray cluster started by the command) and as three
   ``--shard i/3`` runs joined by ``norma merge``; the outputs (JSON, and SARIF for the audit) must be equal byte
   for byte. Inputs: the example files, a generated names file (``--names-records``, default 100,000 records: the
   example records with their variations perturbed, seeded) and a generated audit file (``--audit-records``,
   default 10,000 requests: the example requests with numbered prompts), audited with ``--no-embeddings`` (with
   the embedding checks a request costs about 60 ms, 10 minutes an engine; the example file is also audited with
   them).
2. **Throughput** on the generated names file, in one process (Ray started once beforehand, so that its start is
   measured apart): ``run_job`` with the process pool and with Ray actors, 2 workers each, ``--repeat`` times,
   medians. Target (issue 25): Ray within 25 % of the pool.
3. **Start of a Ray job**: ``ray.init`` of a local cluster, and a 5-record job on it (the actors start, import
   norma and start the job).
4. **README examples** (issue 24): ``--workers 1`` against ``--workers 2`` (which ``auto`` now caps: one process
   for these small files) and against the pool forced (``--engine pool --workers 2``), wall time of the command,
   medians of ``--repeat``.

Run ``.venv/bin/python benchmarks/batch_engines.py [--write]``; ``--write`` replaces the section between this
script's markers in docs/benchmarks.md.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import platform
import random
import statistics
import subprocess
import sys
import tempfile
import time
import warnings
from collections.abc import Callable
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
DOC = REPO / "docs" / "benchmarks.md"
BEGIN, END = "<!-- batch_engines.py:begin -->", "<!-- batch_engines.py:end -->"
sys.path.insert(0, str(REPO / "src"))

from norma.batch import BatchRecord, NamesJob, run_job, start_ray  # noqa: E402

EXAMPLES = REPO / "examples"
ENV = {**os.environ, "PYTHONPATH": os.pathsep.join([str(REPO / "src"), os.environ.get("PYTHONPATH", "")])}


def norma(*args: str) -> tuple[str, float, int]:
    """stdout, wall seconds and exit code of one ``norma`` process."""
    started = time.perf_counter()
    done = subprocess.run(
        [sys.executable, "-m", "norma", *args], capture_output=True, text=True, env=ENV, check=False, timeout=3600
    )
    seconds = time.perf_counter() - started
    if done.returncode not in (0, 1):
        raise SystemExit(f"norma {' '.join(args)} failed ({done.returncode}): {done.stderr[-2000:]}")
    return done.stdout, seconds, done.returncode


def names_file(path: Path, count: int) -> Path:
    """``count`` records: the example records in turn, their variations shuffled and one letter changed (seeded)."""
    examples = [json.loads(line) for line in (EXAMPLES / "names" / "records.jsonl").read_text().splitlines() if line]
    draw = random.Random(25)
    with path.open("w", encoding="utf-8") as handle:
        for index in range(count):
            record = json.loads(json.dumps(examples[index % len(examples)]))
            variations = list(record["variations"])
            draw.shuffle(variations)
            spot = draw.randrange(len(variations))
            word = variations[spot]
            if len(word) > 2:
                at = draw.randrange(1, len(word) - 1)
                variations[spot] = word[:at] + draw.choice("aeiouy") + word[at + 1 :]
            record["variations"] = variations
            handle.write(json.dumps(record, ensure_ascii=False) + "\n")
    return path


def audit_file(path: Path, count: int) -> Path:
    """``count`` requests: the example requests in turn, each prompt numbered so that no two are the same."""
    examples = [json.loads(line) for line in (EXAMPLES / "audit" / "requests.jsonl").read_text().splitlines() if line]
    with path.open("w", encoding="utf-8") as handle:
        for index in range(count):
            request = dict(examples[index % len(examples)])
            request["input"] = f"{request['input']} (#{index})"
            handle.write(json.dumps(request, ensure_ascii=False) + "\n")
    return path


def identity(label: str, args: list[str], work: Path) -> dict[str, object]:
    """Run ``args`` on every engine and as merged shards; whether all outputs are equal, and the wall times."""
    outputs: dict[str, str] = {}
    times: dict[str, float] = {}
    codes: set[int] = set()
    for engine, extra in (("local", ["--engine", "local"]), ("pool", ["--engine", "pool", "--workers", "2"]),
                          ("ray", ["--engine", "ray", "--workers", "2"])):  # fmt: skip
        outputs[engine], times[engine], code = norma(*args, *extra)
        codes.add(code)
    parts = []
    shard_seconds = 0.0
    for index in (1, 2, 3):
        text, seconds, code = norma(*args, "--engine", "local", "--shard", f"{index}/3")
        shard_seconds = max(shard_seconds, seconds)
        parts.append(work / f"{''.join(c if c.isalnum() else '_' for c in label)}.{index}")
        parts[-1].write_text(text, encoding="utf-8")
    outputs["shards"], merge_seconds, code = norma("merge", *map(str, parts))
    codes.add(code)
    times["shards"] = shard_seconds + merge_seconds
    same = len(set(outputs.values())) == 1 and len(codes) == 1
    print(f"{label}: {'identical' if same else 'DIFFERENT'}; " + ", ".join(f"{k} {v:.1f} s" for k, v in times.items()))
    return {"label": label, "same": same, "bytes": len(outputs["local"]), "times": times}


def median_time(action: Callable[[], object], repeat: int) -> float:
    samples = []
    for _ in range(repeat):
        started = time.perf_counter()
        action()
        samples.append(time.perf_counter() - started)
    return statistics.median(samples)


def throughput(path: Path, repeat: int) -> dict[str, float]:
    """Records a second of the pool and of Ray (2 workers each) on the names file; Ray's start apart."""
    lines = [line for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
    records = [BatchRecord(index, f"line {index + 1}", text) for index, text in enumerate(lines)]
    job = NamesJob.make()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        import ray

        started = time.perf_counter()
        start_ray()  # a local cluster on every core, norma shipped to the workers
        init_seconds = time.perf_counter() - started
        tiny = records[:5]
        first_job = median_time(lambda: run_job(job, tiny, engine="ray", workers=2), 1)
        small_job = median_time(lambda: run_job(job, tiny, engine="ray", workers=2), repeat)
        local = median_time(lambda: run_job(job, records[: len(records) // 10]), 1) * 10
        pool = median_time(lambda: run_job(job, records, engine="pool", workers=2), repeat)
        on_ray = median_time(lambda: run_job(job, records, engine="ray", workers=2), repeat)
        ray.shutdown()
    return {
        "records": len(records),
        "init": init_seconds,
        "first_job": first_job,
        "small_job": small_job,
        "local": local,
        "pool": pool,
        "ray": on_ray,
    }


def readme_examples(repeat: int) -> list[tuple[str, float, float, float]]:
    """Wall time of the README's batch commands with 1 worker, --workers 2 (auto-capped) and the pool forced."""
    commands = [
        ("names score examples/names/records.jsonl", ["names", "score", str(EXAMPLES / "names" / "records.jsonl")]),
        (
            "audit --batch examples/audit/requests.jsonl --no-embeddings",
            [
                "audit",
                "--batch",
                str(EXAMPLES / "audit" / "requests.jsonl"),
                "--docs",
                str(EXAMPLES / "audit" / "docs"),
                "--no-embeddings",
            ],
        ),
    ]
    rows = []
    for label, args in commands:
        one = statistics.median(norma(*args, "--workers", "1")[1] for _ in range(repeat))
        two = statistics.median(norma(*args, "--workers", "2")[1] for _ in range(repeat))
        forced = statistics.median(norma(*args, "--engine", "pool", "--workers", "2")[1] for _ in range(repeat))
        print(f"{label}: --workers 1 {one:.2f} s, --workers 2 {two:.2f} s, pool forced {forced:.2f} s")
        rows.append((label, one, two, forced))
    return rows


def render(checks: list[dict[str, object]], speed: dict[str, float], readme: list[tuple[str, float, float, float]],
           command: str) -> str:  # fmt: skip
    load = ", ".join(f"{x:.1f}" for x in os.getloadavg())
    cpu = platform.processor() or platform.machine()
    lines = [
        BEGIN,
        f"`{command}`. Measured {dt.date.today().isoformat()} on {os.cpu_count()} cores ({cpu}), Python "
        f"{platform.python_version()}, Ray {__import__('ray').__version__}; load average {load} (a shared machine: "
        "medians, and figures vary by +-20 % between runs).",
        "",
        "| input | local, pool, Ray and 3 merged shards | local | pool (2) | Ray (2) | slowest shard of 3 + merge |",
        "|---|---|---:|---:|---:|---:|",
    ]
    for check in checks:
        times = check["times"]
        assert isinstance(times, dict)
        lines.append(
            f"| {check['label']} | {'identical' if check['same'] else '**different**'} ({check['bytes']:,} bytes) | "
            + " | ".join(f"{times[k]:.1f} s" for k in ("local", "pool", "ray", "shards"))
            + " |"
        )
    rate = {key: speed["records"] / speed[key] for key in ("local", "pool", "ray")}
    lines += [
        "",
        f"Throughput on {speed['records']:,.0f} generated name records, in one process (`run_job`, median of "
        "the repeats; Ray's run includes starting its 2 actors):",
        "",
        "| engine | seconds | records/s | vs pool |",
        "|---|---:|---:|---:|",
        f"| local (1 process, a tenth of the file x 10) | {speed['local']:.1f} | {rate['local']:,.0f} | "
        f"{rate['local'] / rate['pool']:.2f} |",
        f"| pool, 2 workers | {speed['pool']:.1f} | {rate['pool']:,.0f} | 1.00 |",
        f"| Ray local cluster, 2 actors | {speed['ray']:.1f} | {rate['ray']:,.0f} | {rate['ray'] / rate['pool']:.2f} |",
        "",
        f"Start of a Ray job: `ray.init` of a local cluster {speed['init']:.1f} s; then a 5-record job "
        f"{speed['first_job']:.1f} s the first time and {speed['small_job']:.1f} s after (each job starts its "
        "actors, which import norma and start the job).",
        "",
        "README batch examples, wall time of the command (median):",
        "",
        "| command | --workers 1 | --workers 2 (auto-capped) | --engine pool --workers 2 |",
        "|---|---:|---:|---:|",
    ]
    for label, one, two, forced in readme:
        lines.append(f"| `norma {label}` | {one:.2f} s | {two:.2f} s | {forced:.2f} s |")
    lines.append(END)
    return "\n".join(lines)


def write_section(text: str) -> None:
    content = DOC.read_text(encoding="utf-8")
    start, end = content.find(BEGIN), content.find(END)
    if start < 0 or end < start:
        raise SystemExit(f"{DOC} has no {BEGIN} ... {END} markers: add them, then run again")
    DOC.write_text(content[:start] + text + content[end + len(END) :], encoding="utf-8")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--names-records", type=int, default=100_000)
    parser.add_argument("--audit-records", type=int, default=10_000)
    parser.add_argument("--repeat", type=int, default=3, help="timed runs of each throughput and README figure")
    parser.add_argument("--write", action="store_true", help="replace this script's section in docs/benchmarks.md")
    args = parser.parse_args()
    command = f".venv/bin/python benchmarks/batch_engines.py --names-records {args.names_records} " + (
        f"--audit-records {args.audit_records} --repeat {args.repeat}"
    )
    docs = str(EXAMPLES / "audit" / "docs")
    with tempfile.TemporaryDirectory() as folder:
        work = Path(folder)
        names = names_file(work / "names.jsonl", args.names_records)
        audit = audit_file(work / "audit.jsonl", args.audit_records)
        messages = work / "messages.txt"
        messages.write_text((REPO / "benchmarks" / "data" / "messages.txt").read_text(encoding="utf-8"))
        checks = [
            identity("names: example file", ["names", "score", str(EXAMPLES / "names" / "records.jsonl"),
                                             "--format", "json"], work),
            identity(f"names: {args.names_records:,} generated records", ["names", "score", str(names),
                                                                          "--format", "json"], work),
            identity("audit: example file, embedding checks on (SARIF)", ["audit", "--batch",
                     str(EXAMPLES / "audit" / "requests.jsonl"), "--docs", docs, "--format", "sarif"], work),
            identity(f"audit: {args.audit_records:,} generated requests, --no-embeddings", ["audit", "--batch",
                     str(audit), "--docs", docs, "--no-embeddings", "--format", "json"], work),
            identity("match: benchmarks/data/messages.txt", ["match", "--rules",
                     str(EXAMPLES / "matching" / "support_rules.yaml"), "--batch", str(messages), "--format",
                     "json"], work),
        ]  # fmt: skip
        speed = throughput(names, args.repeat)
        print(json.dumps(speed, indent=2))
    readme = readme_examples(args.repeat)
    text = render(checks, speed, readme, command)
    print(text)
    ratio = (speed["records"] / speed["ray"]) / (speed["records"] / speed["pool"])
    verdict = "met" if ratio >= 0.75 else "NOT met"
    print(f"\nTarget (issue 25): Ray throughput >= 0.75 of the pool's: {ratio:.2f} -> {verdict}")
    print(f"Identity: {'met' if all(check['same'] for check in checks) else 'NOT met'}")
    if args.write:
        write_section(text)


if __name__ == "__main__":
    main()
