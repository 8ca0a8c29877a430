"""Quality and speed of ``norma.names.generate_variations`` on 200 seed names with random MIID labels.

The workload is fixed by ``--seed``: Latin first and last names, a share of them (``--three-part``) with a middle
name, and one query's labels per name drawn by :func:`norma.names.random_labels`. Each name's variations are
generated and scored with the real ``variation_quality`` (compat="miid"), in the same process.

Two three-part shares are measured by default:

* **8 %, the validator's own mix.** The MIID validator whose query facts the names issue lists builds its seeds
  as one third "FirstName LastName" from its sanctioned-persons list and two thirds Faker ``en_*`` names that are
  always two-part (``first last``). In two samples of that list (about 350 entries) 82, 24 %, have three or more
  parts, so about 8 % of its seeds do; they are modelled here as three-part names (four or more parts would score
  lower).
* **20 %**, a harder mix, where the target cannot be met (see "Mean upper bound").

compat="miid" depends on ``PYTHONHASHSEED`` (the validator's phonetic weights and part weights come from
``hash()``), so every figure is measured in a child process per hash seed (``--hash-seeds``). The last column
re-scores the same variations in another process (hash seed + 1000), as a validator elsewhere would: the generator
aims at the weights it can see, and this shows what is left when they differ. A ``stable`` row does the same in
compat="stable". "Mean ceiling" is the mean of the highest final score the part weights allow (1.0 for two-part
names; ``0.8 * (w_first + w_last) + 0.2`` for three-part names in miid, whose two weights add to less than 1).
"Mean upper bound" is :func:`norma.names.score_upper_bound` per name: no variations can score above it (it also
takes the phonetic scores each part's weights allow and the counting rules into account); the next column is the
same bound for variations that never match Metaphone and NYSIIS without Soundex, a subset of codes only a respelled
first sound reaches (names starting with C/K, N or F).

Usage::

    .venv/bin/python benchmarks/names_generate.py                  # 200 names, hash seeds 0, 1, 2, plus stable
    .venv/bin/python benchmarks/names_generate.py --names 50 --hash-seeds 0 --three-part 0.2
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import random
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from norma.names import (
    generate_from_labels,
    name_part_weights,
    quality_from_labels,
    random_labels,
    score_jsonl,
    upper_bound_from_labels,
)

_FIRST = (
    "James Mary Robert Patricia John Jennifer Michael Linda David Elizabeth William Barbara Richard Susan Joseph "
    "Jessica Thomas Sarah Charles Karen Christopher Lisa Daniel Nancy Matthew Betty Anthony Margaret Mark Sandra "
    "Donald Ashley Steven Kimberly Paul Emily Andrew Donna Joshua Michelle Kenneth Carol Kevin Amanda Brian Dorothy "
    "George Melissa Timothy Deborah Ronald Stephanie Edward Rebecca Jason Sharon Jeffrey Laura Ryan Cynthia Jacob "
    "Kathleen Gary Amy Nicholas Angela Eric Shirley Jonathan Anna Stephen Brenda Larry Pamela Justin Emma Scott "
    "Nicole Brandon Helen Benjamin Samantha Samuel Katherine Gregory Christine Alexander Debra Frank Rachel Patrick"
)
_LAST = (
    "Smith Johnson Williams Brown Jones Garcia Miller Davis Rodriguez Martinez Hernandez Lopez Gonzalez Wilson "
    "Anderson Thomas Taylor Moore Jackson Martin Lee Perez Thompson White Harris Sanchez Clark Ramirez Lewis Robinson "
    "Walker Young Allen King Wright Scott Torres Nguyen Hill Flores Green Adams Nelson Baker Hall Rivera Campbell "
    "Mitchell Carter Roberts Gomez Phillips Evans Turner Diaz Parker Cruz Edwards Collins Reyes Stewart Morris Morales "
    "Murphy Cook Rogers Gutierrez Ortiz Morgan Cooper Peterson Bailey Reed Kelly Howard Ramos Kim Cox Ward Richardson"
)
FIRST = _FIRST.split()
VALIDATOR_THREE_PART = 0.08
"""The share of the validator's seeds with three or more parts (module docstring)."""
LAST = _LAST.split()


def workload(count: int, seed: int, three_part: float) -> list[tuple[str, dict[str, Any]]]:
    """``count`` (name, labels) pairs, the same for the same arguments."""
    rng = random.Random(seed)
    out = []
    for _ in range(count):
        middle = [rng.choice(FIRST)] if rng.random() < three_part else []
        name = " ".join([rng.choice(FIRST), *middle, rng.choice(LAST)])
        out.append((name, random_labels(rng)))
    return out


def ceiling(name: str, compat: str) -> float:
    """The highest final score any variations can get for ``name`` (with rules): 0.8 (w_first + w_last) + 0.2.

    1.0 for one- and two-part names; below 1 for three-part names in compat="miid", whose last-name score is
    weighted with the middle part's weight.
    """
    first, last = name_part_weights(name, "miid" if compat == "miid" else "stable")
    return 0.8 * (first + last) + 0.2


def _summary(finals: list[float], parts: list[int], seconds: list[float]) -> dict[str, Any]:
    ordered = sorted(finals)
    two = [f for f, p in zip(finals, parts, strict=True) if p == 2]
    three = [f for f, p in zip(finals, parts, strict=True) if p == 3]
    return {
        "mean": statistics.mean(finals),
        "min": ordered[0],
        "p10": ordered[len(ordered) // 10],
        "median": statistics.median(finals),
        "two_part": statistics.mean(two) if two else None,
        "three_part": statistics.mean(three) if three else None,
        "ms_per_name": 1000 * statistics.mean(seconds) if seconds else None,
    }


_NO_METAPHONE_NYSIIS_ONLY = tuple(mask for mask in range(8) if mask != 6)
"""Code subsets without {Metaphone, NYSIIS} (both match, Soundex not): Soundex keeps the first letter as written,
so only a respelled first sound gets there ("Karen"/"Caren", "Nancy"/"Knancy", "Frank"/"Phrank"); every one- to
three-letter respelling of the first one or two letters of the benchmark's 169 names finds it for 26 of them, all
starting with C, K, N or F (and edits after the first letter, searched within two edits, never)."""


def _with_ceiling(summary: dict[str, Any], cases: list[tuple[str, dict[str, Any]]], compat: str) -> dict[str, Any]:
    summary["ceiling"] = statistics.mean(ceiling(name, compat) for name, _ in cases)
    summary["bound"] = statistics.mean(upper_bound_from_labels(name, labels, compat=compat) for name, labels in cases)
    summary["bound_no6"] = statistics.mean(
        upper_bound_from_labels(name, labels, compat=compat, phonetic_masks=_NO_METAPHONE_NYSIIS_ONLY)
        for name, labels in cases
    )
    return summary


def child_generate(args: argparse.Namespace) -> None:
    """Generate and score in this process; write the records to ``--records``; print a JSON summary."""
    finals, parts, seconds, cases = [], [], [], []
    with open(args.records, "w", encoding="utf-8") as out:
        for index, (name, labels) in enumerate(workload(args.names, args.seed, args.three_part)):
            start = time.perf_counter()
            variations = generate_from_labels(name, labels, seed=index, compat=args.compat)
            seconds.append(time.perf_counter() - start)
            final, _, _ = quality_from_labels(name, variations, labels, compat=args.compat)
            finals.append(final)
            parts.append(len(name.split()))
            cases.append((name, labels))
            out.write(json.dumps({"name": name, "variations": variations, "labels": labels}) + "\n")
    print(json.dumps(_with_ceiling(_summary(finals, parts, seconds), cases, args.compat)))


def child_score(args: argparse.Namespace) -> None:
    """Score ``--records`` in this process; print a JSON summary."""
    finals, parts = [], []
    for item in score_jsonl(args.records, compat=args.compat):
        finals.append(item.result["final"])
        parts.append(len(item.result["name"].split()))
    print(json.dumps(_summary(finals, parts, [])))


def _run_child(
    mode: str, hash_seed: int, args: argparse.Namespace, records: Path, compat: str, share: float
) -> dict[str, Any]:
    env = {**os.environ, "PYTHONHASHSEED": str(hash_seed)}
    command = [
        sys.executable,
        __file__,
        "--child",
        mode,
        "--records",
        str(records),
        "--names",
        str(args.names),
        "--seed",
        str(args.seed),
        "--three-part",
        str(share),
        "--compat",
        compat,
    ]
    done = subprocess.run(command, env=env, capture_output=True, text=True, check=True)
    return dict(json.loads(done.stdout.strip().splitlines()[-1]))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--names", type=int, default=200)
    parser.add_argument("--seed", type=int, default=20261122)
    parser.add_argument(
        "--three-part",
        default=f"{VALIDATOR_THREE_PART},0.2",
        help="shares of names with a middle name, comma-separated: one workload each (default: the validator's "
        "own share, then a harder 20%%)",
    )
    parser.add_argument("--hash-seeds", default="0,1,2", help="PYTHONHASHSEED values to measure miid under")
    parser.add_argument("--no-stable", action="store_true", help="skip the compat='stable' rows")
    parser.add_argument("--child", choices=["generate", "score"], help=argparse.SUPPRESS)
    parser.add_argument("--records", default="", help=argparse.SUPPRESS)
    parser.add_argument("--compat", default="miid", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        args.three_part = float(args.three_part)
        (child_generate if args.child == "generate" else child_score)(args)
        return

    shares = [float(x) for x in str(args.three_part).split(",") if x.strip()]
    rows: list[tuple[float, str, dict[str, Any], dict[str, Any]]] = []
    runs = [("miid", int(h)) for h in args.hash_seeds.split(",") if h.strip()]
    if not args.no_stable:
        runs.append(("stable", 0))
    with tempfile.TemporaryDirectory() as folder:
        for share in shares:
            for compat, hash_seed in runs:
                records = Path(folder) / f"{share}-{compat}-{hash_seed}.jsonl"
                same = _run_child("generate", hash_seed, args, records, compat, share)
                other = _run_child("score", hash_seed + 1000, args, records, compat, share)
                label = f"miid, PYTHONHASHSEED={hash_seed}" if compat == "miid" else "stable"
                rows.append((share, label, same, other))

    print(
        f"names_generate: {args.names} names, seed {args.seed}, Python {platform.python_version()}, "
        f"{os.cpu_count()} CPUs"
    )
    header = (
        "| three-part share | scored as | mean final | min | p10 | median | two-part mean | three-part mean "
        "| ms per name | mean ceiling | mean upper bound | mean upper bound, no {Metaphone, NYSIIS}-only match "
        "| mean final, scored in another process |"
    )
    print(header)
    print("|---" * (header.count("|") - 1) + "|")
    for share, label, same, other in rows:
        three = "-" if same["three_part"] is None else f"{same['three_part']:.4f}"
        print(
            f"| {share:.1%} | {label} | {same['mean']:.4f} | {same['min']:.4f} | {same['p10']:.4f} "
            f"| {same['median']:.4f} | {same['two_part']:.4f} | {three} | {same['ms_per_name']:.1f} "
            f"| {same['ceiling']:.4f} | {same['bound']:.4f} | {same['bound_no6']:.4f} | {other['mean']:.4f} |"
        )


if __name__ == "__main__":
    main()
