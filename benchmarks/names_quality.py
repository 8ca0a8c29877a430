"""Names/second for ``norma.names.variation_quality`` on 1,000 seeds x 15 variations x 3 rules (one process).

The workload is generated from a fixed seed: realistic Latin first/last names (20 % three-part), 15 variations per
seed made by typical miner edits (deletions, swaps, replacements, titles, initials, ...), three rules sampled from
the catalog, rule percentage 10-60 and MIID label distributions. Each configuration is timed ``--repeat`` times
over the whole workload and the best run is reported (caches warm: a validator scores many miners' answers for
the same seeds). ``--cold`` also reports a first pass with empty caches. The compat=miid rows are measured twice:
with the process's own ``hash()`` (``hash_seed=None``) and with ``hash_seed=0`` (norma computes CPython's keyed string
hash of that ``PYTHONHASHSEED`` itself, cached per string; the cold and unseen-names rows include that work).

Usage::

    .venv/bin/python benchmarks/names_quality.py            # print the table
    .venv/bin/python benchmarks/names_quality.py --write    # also replace the section in docs/benchmarks.md
"""

from __future__ import annotations

import argparse
import datetime as dt
import os
import platform
import random
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from norma.names import (
    QUERY_DISTRIBUTIONS,
    RULE_CATALOG,
    rule_compliance_score,
    variation_quality,
)

SECTION = "## names: scoring"
BEGIN = "<!-- names_quality.py:begin -->"
END = "<!-- names_quality.py:end -->"
TARGET = 5000.0
FIRST = """James Mary John Patricia Robert Jennifer Michael Linda William Elizabeth David Barbara Richard Susan Joseph
Jessica Thomas Sarah Charles Karen Christopher Nancy Daniel Lisa Matthew Betty Anthony Margaret Mark Sandra Donald
Ashley Steven Kimberly Paul Emily Andrew Donna Joshua Michelle Kenneth Carol Kevin Amanda Brian Melissa George
Deborah Edward Stephanie Ronald Rebecca Timothy Sharon Jason Laura Jeffrey Cynthia Ryan Kathleen Jacob Amy Gary
Angela Nicholas Shirley Eric Anna Jonathan Brenda Stephen Pamela Larry Emma Justin Nicole Scott Helen Brandon
Samantha Benjamin Katherine Samuel Christine Gregory Debra Alexander Rachel Frank Carolyn Patrick Janet Raymond
Catherine Jack Maria Dennis Heather Jerry Diane Tyler Ruth Aaron Julie Jose Olivia Adam Joyce Nathan Virginia Henry
Victoria Douglas Kelly Zachary Lauren Peter Christina Kyle Joan Ethan Evelyn Walter Judith Noah Megan Jeremy Andrea
Christian Cheryl Keith Hannah Roger Jacqueline Terry Martha Gerald Gloria Harold Teresa Sean Ann Austin Sara Carl
Madison Arthur Frances Lawrence Kathryn Dylan Janice Jesse Jean Jordan Abigail Bryan Alice Billy Julia Joe Judy Bruce
Sophia Gabriel Grace Logan Denise Albert Amber Willie Doris Alan Marilyn Juan Danielle Wayne Beverly Elijah Isabella
Randy Theresa Roy Diana Vincent Natalie Ralph Brittany Eugene Charlotte Russell Marie Bobby Kayla Mason Alexis Philip
Lori Louis Giovanni Francesca Matteo Chiara Pierre Camille Hans Greta Sven Ingrid Pablo Lucia Diego Sofia""".split()  # noqa: SIM905
LAST = """Smith Johnson Williams Brown Jones Garcia Miller Davis Rodriguez Martinez Hernandez Lopez Gonzalez Wilson
Anderson Thomas Taylor Moore Jackson Martin Lee Perez Thompson White Harris Sanchez Clark Ramirez Lewis Robinson
Walker Young Allen King Wright Scott Torres Nguyen Hill Flores Green Adams Nelson Baker Hall Rivera Campbell Mitchell
Carter Roberts Gomez Phillips Evans Turner Diaz Parker Cruz Edwards Collins Reyes Stewart Morris Morales Murphy Cook
Rogers Gutierrez Ortiz Morgan Cooper Peterson Bailey Reed Kelly Howard Ramos Kim Cox Ward Richardson Watson Brooks
Chavez Wood James Bennett Gray Mendoza Ruiz Hughes Price Alvarez Castillo Sanders Patel Myers Long Ross Foster
Jimenez Powell Jenkins Perry Russell Sullivan Bell Coleman Butler Henderson Barnes Gonzales Fisher Vasquez Simmons
Romero Jordan Patterson Alexander Hamilton Graham Reynolds Griffin Wallace Moreno West Cole Hayes Bryant Herrera
Gibson Ellis Tran Medina Aguilar Stevens Murray Ford Castro Marshall Owens Harrison Fernandez McDonald Woods
Washington Kennedy Wells Vargas Henry Chen Freeman Webb Tucker Guzman Burns Crawford Olson Simpson Porter Hunter
Gordon Mendez Silva Shaw Snyder Mason Dixon Munoz Hunt Hicks Holmes Palmer Wagner Black Robertson Boyd Rose Stone
Salazar Fox Warren Mills Meyer Rice Schmidt Garza Daniels Ferguson Nichols Stephens Soto Weaver Ryan Gardner Payne
Grant Dunn Kelley Spencer Hawkins Arnold Pierce Hansen Peters Santos Hart Bradley Knight Elliott Cunningham Duncan
Armstrong Hudson Carroll Lane Riley Andrews Alvarado Ray Delgado Berry Perkins Hoffman Johnston Matthews Rossi
Bianchi Romano Dubois Lefebvre Muller Schneider Larsen Johansson Kowalski Novak""".split()  # noqa: SIM905
VOWELS = "aeiou"
CONSONANTS = "bcdfghjklmnprstvwz"


def _edit(rng: random.Random, name: str) -> str:
    """One variation of the kind miners return."""
    i = rng.randrange(len(name))
    kind = rng.randrange(12)
    parts = name.split()
    if kind == 0:
        return name[:i] + name[i + 1 :]
    if kind == 1 and i + 1 < len(name):
        return name[:i] + name[i + 1] + name[i] + name[i + 2 :]
    if kind == 2:
        return name[:i] + rng.choice(VOWELS) + name[i + 1 :]
    if kind == 3:
        return name[:i] + rng.choice(CONSONANTS) + name[i + 1 :]
    if kind == 4:
        return name[:i] + name[i] + name[i:]
    if kind == 5:
        return name[:i] + rng.choice(CONSONANTS + VOWELS) + name[i:]
    if kind == 6:
        return rng.choice(["Mr.", "Dr.", "Ms.", "Prof."]) + " " + name
    if kind == 7:
        return name + " " + rng.choice(["Jr.", "Sr.", "III", "PhD"])
    if kind == 8 and len(parts) > 1:
        return parts[0][0] + ". " + " ".join(parts[1:])
    if kind == 9 and len(parts) > 1:
        return " ".join(reversed(parts))
    if kind == 10:
        return name.replace(" ", rng.choice("-_."))
    return _edit(rng, _edit(rng, name))


def workload(seeds: int = 1000, per_seed: int = 15, seed: int = 20261122) -> list[dict[str, Any]]:
    """The benchmark's records: ``{name, variations, phonetic, orthographic, count, rule_based}``."""
    rng = random.Random(seed)
    levels, weights = zip(*QUERY_DISTRIBUTIONS, strict=True)
    records = []
    for _ in range(seeds):
        name = f"{rng.choice(FIRST)} {rng.choice(LAST)}"
        if rng.random() < 0.2:
            name = f"{rng.choice(FIRST)} {rng.choice(FIRST)} {rng.choice(LAST)}"
        variations: list[str] = []
        while len(variations) < per_seed:
            candidate = _edit(rng, name)
            if candidate != name and candidate not in variations:
                variations.append(candidate)
        records.append(
            {
                "name": name,
                "variations": variations,
                "phonetic": rng.choices(levels, weights)[0],
                "orthographic": rng.choices(levels, weights)[0],
                "count": per_seed,
                "rule_based": {"selected_rules": rng.sample(RULE_CATALOG, 3), "rule_percentage": rng.randint(10, 60)},
            }
        )
    return records


def _time(fn: Callable[[], None], repeat: int) -> float:
    best = float("inf")
    for _ in range(repeat):
        start = time.process_time()
        fn()
        best = min(best, time.process_time() - start)
    return best


def _quality(records: list[dict[str, Any]], compat: str, hash_seed: int | None = None) -> Callable[[], None]:
    def run() -> None:
        for r in records:
            variation_quality(
                r["name"], r["variations"], r["phonetic"], r["orthographic"], r["count"], r["rule_based"],
                compat=compat, hash_seed=hash_seed,
            )  # fmt: skip

    return run


def _rules_only(records: list[dict[str, Any]]) -> Callable[[], None]:
    def run() -> None:
        for r in records:
            rule = r["rule_based"]
            rule_compliance_score(r["name"], r["variations"], rule["selected_rules"], rule["rule_percentage"] / 100)

    return run


def _clear_caches(keep_seed_tables: bool) -> None:
    """Empty norma's caches; the per-seed tables (10,000 possible seeds, filled once per process) may stay."""
    loaded = [module for name, module in sys.modules.items() if name.startswith("norma.names.")]
    for module in loaded:  # every module of norma.names this process has loaded (the scorer's caches live there)
        for name, value in vars(module).items():
            if keep_seed_tables and name in ("phonetic_plan", "_draws"):
                continue
            if hasattr(value, "cache_clear"):
                value.cache_clear()


def measure(repeat: int, cold: bool) -> list[tuple[str, float, float]]:
    records = workload()
    rows: list[tuple[str, float, float]] = []
    for hash_seed, seeded in ((None, ""), (0, ", hash_seed=0")):
        if cold:
            _clear_caches(keep_seed_tables=False)
            seconds = _time(_quality(records, "miid", hash_seed), 1)
            rows.append(
                (f"variation_quality, compat=miid{seeded}, cold caches (first pass)", seconds, len(records) / seconds)
            )
        # Unseen names: every pass scores a new workload with the string caches emptied; only the per-seed tables
        # stay, as they do in a long-running validator (the first pass above filled them).
        _quality(records, "miid", hash_seed)()
        fresh = float("inf")
        for index in range(repeat):
            unseen = workload(seed=1000 + index)
            _clear_caches(keep_seed_tables=True)
            fresh = min(fresh, _time(_quality(unseen, "miid", hash_seed), 1))
        rows.append(
            (f"variation_quality, compat=miid{seeded}, unseen names (seed tables warm)", fresh, len(records) / fresh)
        )
    for label, fn in (
        ("variation_quality, compat=miid", _quality(records, "miid")),
        ("variation_quality, compat=miid, hash_seed=0", _quality(records, "miid", 0)),
        ("variation_quality, compat=stable", _quality(records, "stable")),
        ("rule_compliance_score only (3 rules x 15 variations)", _rules_only(records)),
    ):
        seconds = _time(fn, repeat)
        rows.append((label, seconds, len(records) / seconds))
    return rows


def _cpu_model() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text(encoding="utf-8").splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def render(rows: list[tuple[str, float, float]], command: str) -> str:
    machine = f"{os.cpu_count()} cores, {_cpu_model()}, Python {platform.python_version()}"
    load = ", ".join(f"{value:.1f}" for value in os.getloadavg())
    lines = [
        BEGIN,
        f"`{command}`: 1,000 seeds x 15 variations x 3 rules, one process; CPU seconds (`time.process_time`) of the",
        f"best of the repeated passes. Measured {dt.date.today().isoformat()} on {machine}; load average during the",
        f"run {load} (other work shared the machine, so figures vary by about +-20 % between runs).",
        "",
        "| workload | CPU seconds | names/s |",
        "|---|---:|---:|",
    ]
    lines += [f"| {label} | {seconds:.3f} | {rate:,.0f} |" for label, seconds, rate in rows]
    lines += [END]
    return "\n".join(lines)


def write_section(text: str, path: Path) -> None:
    """Replace what lies between this benchmark's markers in ``path`` (its table and the line saying how it was
    measured); the prose around them is left as it is. Without the markers, nothing is written."""
    content = path.read_text(encoding="utf-8")
    start, end = content.find(BEGIN), content.find(END)
    if start < 0 or end < start:
        raise SystemExit(f"{path} has no {BEGIN} ... {END} markers under {SECTION!r}: add them, then run again")
    path.write_text(content[:start] + text + content[end + len(END) :], encoding="utf-8")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--repeat", type=int, default=5, help="timed passes per configuration (best is kept)")
    parser.add_argument("--cold", action="store_true", help="also time a first pass with empty caches")
    parser.add_argument("--write", action="store_true", help="replace the section in docs/benchmarks.md")
    args = parser.parse_args()
    rows = measure(args.repeat, args.cold)
    command = f".venv/bin/python benchmarks/names_quality.py --repeat {args.repeat}" + (" --cold" if args.cold else "")
    text = render(rows, command)
    print(text)
    print(f"\nTarget (issue 4): >= {TARGET:,.0f} names/s per core for compat=miid.")
    if args.write:
        write_section(text, Path(__file__).resolve().parents[1] / "docs" / "benchmarks.md")


if __name__ == "__main__":
    main()
