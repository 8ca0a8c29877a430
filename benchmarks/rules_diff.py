"""What ``norma rules diff`` costs (issue #60): 10,000 recorded turns checked against two versions of a rulebook,
timed against one ``norma check --batch`` of the same turns on the old version. Target: the diff under twice the
check, on 2 cores.

**Rulebook** (OLD): ``_devsets.banking77_test(1)``'s 67 rules (BANKING77 intents, 10 examples each), each with one
``contains`` check of a made-up token of its own (``zqx017k``, as ``check_enforcement.py`` does). **NEW**: one edit
of each kind a pull request makes: the first rule (by id) reworded, the second given 5 more examples, the third
removed, the first held-out intent added as a rule, the fourth's check made stricter (its token and a second one,
``mode: all``), the fifth's priority raised to 10.

**Turns**: 10,000 BANKING77 messages (test.csv, then train.csv's utterances that are no rule's example), shuffled
with seed 7; the answer holds the token of the message's intent for half of them (a seeded draw), none for the other
half and for held-out intents. Written as ``norma check --batch`` reads them.

**Timing**: each command as a user runs it (a subprocess, start-up included, no LLM), ``--format jsonl`` /
``--format json`` to a file; ``--rounds`` alternating rounds (check, diff, check, diff...), the median of each.

Usage::

    .venv/bin/python benchmarks/rules_diff.py [--turns 10000] [--rounds 2]
    .venv/bin/python benchmarks/rules_diff.py --write   # and replaces its table in docs/benchmarks.md
"""

from __future__ import annotations

import argparse
import csv
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _devsets import DATA, banking77_test
from _docs import write_section
from matching_gate import machine_stamp
from norma.rules import Rule, dump_rulebook

BEGIN, END = "<!-- rules_diff.py:begin -->", "<!-- rules_diff.py:end -->"
BEFORE = "<!-- cli_startup.py:begin -->"
SENTENCE = "Thanks for your message: here is what we can do for you"
NORMA = Path(sys.executable).with_name("norma")


def _words(intent: str) -> str:
    return intent.replace("_", " ")


def _token_rule(rule: Rule, token: str, **changes: object) -> Rule:
    check = {"id": "says-token", "kind": "contains", "terms": [token]}
    return Rule.model_validate({**rule.model_dump(exclude={"checks"}), "checks": [check], **changes})


def rulebooks() -> tuple[list[Rule], list[Rule], dict[str, str], set[str]]:
    """(OLD, NEW, the token of each intent, the intents OLD has no rule for)."""
    draw = banking77_test(1)
    by_intent = _train()
    intents = sorted(by_intent)
    tokens = {intent: f"zqx{i:03d}k" for i, intent in enumerate(intents)}
    old = [_token_rule(rule, tokens[rule.id]) for rule in sorted(draw.rules, key=lambda r: r.id)]
    held = sorted(set(intents) - {r.id for r in old})
    reworded, more, removed, stricter, priority = (rule.id for rule in old[:5])
    new: list[Rule] = []
    for rule in old:
        if rule.id == reworded:
            new.append(rule.model_copy(update={"condition_text": f"A question about {_words(rule.id)}"}))
        elif rule.id == more:
            new.append(rule.model_copy(update={"examples": (*rule.examples, *by_intent[rule.id][10:15])}))
        elif rule.id == stricter:
            check = {"id": "says-token", "kind": "contains", "terms": [tokens[rule.id], "zqx999k"], "mode": "all"}
            new.append(Rule.model_validate({**rule.model_dump(exclude={"checks"}), "checks": [check]}))
        elif rule.id == priority:
            new.append(rule.model_copy(update={"priority": 10}))
        elif rule.id != removed:
            new.append(rule)
    added = Rule(id=held[0], condition_text=f"The user wants to {_words(held[0])}", examples=by_intent[held[0]][:10])
    new.append(_token_rule(added, tokens[held[0]]))
    return old, sorted(new, key=lambda r: r.id), tokens, set(held)


def _read(name: str) -> list[tuple[str, str]]:
    with (DATA / "banking77" / name).open(encoding="utf-8", newline="") as handle:
        return [(row["text"], row["category"]) for row in csv.DictReader(handle)]


def _train() -> dict[str, list[str]]:
    by_intent: dict[str, list[str]] = {}
    for text, label in _read("train.csv"):
        by_intent.setdefault(label, []).append(text)
    return by_intent


def turns(count: int, tokens: dict[str, str]) -> list[dict[str, object]]:
    """``count`` turns (see the module docstring)."""
    rest = [(text, label) for label, texts in _train().items() for text in texts[10:]]
    labelled = _read("test.csv") + rest
    rng = np.random.default_rng(7)
    order = rng.permutation(len(labelled))[:count]
    if len(order) < count:
        raise SystemExit(f"only {len(order)} messages: ask for fewer turns")
    good = rng.random(count) < 0.5
    out = []
    for i, (index, says) in enumerate(zip(order, good, strict=True)):
        text, label = labelled[index]
        answer = f"{SENTENCE} ({tokens[label]})." if says else f"{SENTENCE}."
        out.append({"id": i, "message": text, "output": answer})
    return out


def _run(command: list[str]) -> float:
    start = time.perf_counter()
    done = subprocess.run(command, env={**os.environ, "NORMA_LLM_URL": ""}, capture_output=True, text=True, check=False)
    seconds = time.perf_counter() - start
    if done.returncode not in (0, 1):
        raise SystemExit(f"{' '.join(command[:3])} failed ({done.returncode}): {done.stderr[-2000:]}")
    return seconds


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--turns", type=int, default=10_000, help="Turns (default 10,000).")
    parser.add_argument("--rounds", type=int, default=2, help="Alternating rounds of the two commands (default 2).")
    parser.add_argument("--write", action="store_true", help="Replace this script's table in docs/benchmarks.md.")
    args = parser.parse_args()
    old, new, tokens, _ = rulebooks()
    with tempfile.TemporaryDirectory() as folder:
        tmp = Path(folder)
        (tmp / "old.yaml").write_text(dump_rulebook(old, tenant_id="bank"), encoding="utf-8")
        (tmp / "new.yaml").write_text(dump_rulebook(new, tenant_id="bank"), encoding="utf-8")
        with (tmp / "turns.jsonl").open("w", encoding="utf-8") as handle:
            handle.writelines(json.dumps(turn) + "\n" for turn in turns(args.turns, tokens))
        check = [str(NORMA), "check", "--rules", str(tmp / "old.yaml"), "--batch", str(tmp / "turns.jsonl")]
        check += ["--format", "jsonl", "--out", str(tmp / "check.jsonl")]
        diff = [str(NORMA), "rules", "diff", str(tmp / "old.yaml"), str(tmp / "new.yaml")]
        diff += ["--turns", str(tmp / "turns.jsonl"), "--format", "json", "--out", str(tmp / "diff.json")]
        _run([*check[:4], "--message", "warm the rulebook snapshots", "--output", "x"])  # compiled once, cached
        _run([*check[:3], str(tmp / "new.yaml"), "--message", "warm the rulebook snapshots", "--output", "x"])
        times: dict[str, list[float]] = {"check": [], "diff": []}
        for round_ in range(args.rounds):
            for name, command in (("check", check), ("diff", diff)):
                times[name].append(_run(command))
                print(f"round {round_ + 1}: {name} {times[name][-1]:.1f} s", file=sys.stderr, flush=True)
        result = json.loads((tmp / "diff.json").read_text(encoding="utf-8"))
    check_s, diff_s = statistics.median(times["check"]), statistics.median(times["diff"])
    ratio = diff_s / check_s
    runs = lambda xs: ", ".join(f"{x:.1f}" for x in xs)  # noqa: E731
    lines = [
        f"{args.turns:,} turns, OLD {len(old)} rules, NEW {len(new)} rules; {args.rounds} alternating rounds.",
        "",
        "| command | runs (s) | median (s) | turns/s |",
        "|---|---|--:|--:|",
        f"| `norma check --rules OLD --batch` | {runs(times['check'])} | {check_s:.1f} | {args.turns / check_s:,.0f} |",
        f"| `norma rules diff OLD NEW --turns` | {runs(times['diff'])} | {diff_s:.1f} | {args.turns / diff_s:,.0f} |",
        "",
        f"diff / check: {ratio:.2f}x (target < 2x: {'met' if ratio < 2 else 'missed'}). The diff: "
        f"{result['summary']} {result['reused']:,} rule evaluations of NEW reused from OLD.",
        "",
        f"Run: {machine_stamp()}, {os.cpu_count()} cores, load average {os.getloadavg()[0]:.1f} at the end (the "
        "machine shared with other work: the ratio of alternating rounds is the figure to read).",
    ]
    print("\n".join(lines))
    if args.write:
        write_section("\n".join([BEGIN, *lines, END]) + "\n", BEGIN, END, BEFORE)


if __name__ == "__main__":
    main()
