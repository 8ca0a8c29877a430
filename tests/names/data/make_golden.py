"""Generate golden values for the names differential test by running the MIID validator's own code.

This script does not contain the validator: it imports ``rule_evaluator.py`` and ``reward.py`` from the directory
given with ``--validator-dir`` (a local copy of ``MIID/validator/`` of yanez-compliance/MIID-subnet; see
``README.md`` in this folder for how ``golden_miid.json`` was made). ``bittensor`` is replaced by a stub with no-op
logging; ``Levenshtein`` (python-Levenshtein) and ``jellyfish`` must be installed in the interpreter that runs it.

The validator's results depend on ``PYTHONHASHSEED``; the value used is recorded in the output, and the test
replays the cases in a subprocess with the same value. Floats are stored with ``float.hex()`` (exact).

Usage::

    PYTHONHASHSEED=20261122 python make_golden.py --validator-dir /path/to/validator --out golden_miid.json
"""

from __future__ import annotations

import argparse
import importlib
import json
import os
import random
import sys
import types
from typing import Any

LEVELS = ("Light", "Medium", "Far")
DISTRIBUTIONS = [
    {"Light": 0.3, "Medium": 0.4, "Far": 0.3},
    {"Light": 0.2, "Medium": 0.6, "Far": 0.2},
    {"Light": 0.1, "Medium": 0.3, "Far": 0.6},
    {"Light": 0.5, "Medium": 0.5},
    {"Light": 0.1, "Medium": 0.5, "Far": 0.4},
    {"Medium": 1.0},
    {"Light": 0.7, "Medium": 0.3},
    {"Far": 1.0},
    {"Light": 1.0},
]
FIRST = [
    "John", "William", "Anna", "Isabella", "Matthew", "Emma", "Oliver", "Sophia", "Aaron", "Philippe", "Yusuf",
    "Giovanni", "Bjorn", "Chloe", "Dmitri", "Ellie", "Francesca", "Gregory", "Hannah", "Ivy", "Jasmine", "Kyle",
    "Lloyd", "Mohammed", "Nnamdi", "Otto", "Pietro", "Quinn", "Rebecca", "Sven", "Terry", "Ulrich",
]  # fmt: skip
LAST = [
    "Smith", "Johnson", "Williams", "Brown", "Jones", "Garcia", "Miller", "Davis", "Rodriguez", "Martinez",
    "Hernandez", "Lopez", "Gonzalez", "Wilson", "Anderson", "Thomas", "Taylor", "Moore", "Jackson", "Martin",
    "Lee", "Perez", "Thompson", "White", "Harris", "Sanchez", "Clark", "Ramirez", "Lewis", "Robinson", "Kowalski",
    "Nguyen", "O'Connor", "McDonald", "Schmitt", "Abbott", "Russo", "Haddad",
]  # fmt: skip
ODD = ["", " ", "Иван Петров", "李 小龙", "İstanbul Ağa", "Straße Groß", "José María", "  John  Smith ", "A B",
       "Mr. John Smith", "Dr Anna Lee", "J. Smith", "john-paul jones", "Ааа Ббб", "Zzz", " Anna "]  # fmt: skip
ALL_RULES = [
    "replace_spaces_with_random_special_characters", "replace_double_letters_with_single_letter",
    "replace_random_vowel_with_random_vowel", "replace_random_consonant_with_random_consonant",
    "swap_adjacent_consonants", "swap_adjacent_syllables", "swap_random_letter", "delete_random_letter",
    "remove_random_vowel", "remove_random_consonant", "remove_all_spaces", "duplicate_random_letter_as_double_letter",
    "insert_random_letter", "add_random_leading_title", "add_random_trailing_title", "initial_only_first_name",
    "shorten_name_to_initials", "shorten_name_to_abbreviations", "name_parts_permutations",
]  # fmt: skip
EXTRA = [
    "remove_title", "remove_random_special_character",
    "replace_random_special_character_with_random_special_character", "not_a_rule",
]  # fmt: skip
TITLES = ["Mr.", "Dr", "Prof.", "Sir", "Lady", "Capt.", "mrs"]
SUFFIXES = ["Jr.", "III", "PhD", "md", "Sr"]
LETTERS = "abcdefghijklmnopqrstuvwxyzAEIOUBCDY"
SPECIAL = "!@#$%^&*()_+-=[]{}|;:,.<>?"


def _stub_bittensor() -> None:
    module = types.ModuleType("bittensor")

    class _Logging:
        def __getattr__(self, name: str) -> Any:
            return lambda *args, **kwargs: None

    module.logging = _Logging()  # type: ignore[attr-defined]
    sys.modules["bittensor"] = module


def hexf(value: float) -> str:
    return float(value).hex()


def mutate(rng: random.Random, name: str) -> str:
    """One random edit of ``name`` (rule-like or noise)."""
    if not name:
        return rng.choice(["", "a", "Jon"])
    kind = rng.randrange(20)
    i = rng.randrange(len(name))
    parts = name.split()
    if kind == 0:
        return name[:i] + name[i + 1 :]
    if kind == 1:
        return name[:i] + rng.choice(LETTERS) + name[i:]
    if kind == 2 and i + 1 < len(name):
        return name[:i] + name[i + 1] + name[i] + name[i + 2 :]
    if kind == 3:
        return name[:i] + name[i] + name[i:]
    if kind == 4:
        return name[:i] + rng.choice(LETTERS) + name[i + 1 :]
    if kind == 5:
        return name.replace(" ", rng.choice(SPECIAL + "_"))
    if kind == 6:
        return name.replace(" ", "")
    if kind == 7:
        return rng.choice(TITLES) + " " + (mutate(rng, name) if rng.random() < 0.3 else name)
    if kind == 8:
        return (mutate(rng, name) if rng.random() < 0.3 else name) + " " + rng.choice(SUFFIXES)
    if kind == 9 and len(parts) >= 2:
        return rng.choice(
            [".".join(p[0] for p in parts) + ".", ". ".join(p[0] for p in parts) + ".", "".join(p[0] for p in parts)]
        )
    if kind == 10 and len(parts) >= 2:
        return parts[0][0] + rng.choice([". ", "."]) + " ".join(parts[1:])
    if kind == 11 and len(parts) >= 2:
        shuffled = parts[:]
        rng.shuffle(shuffled)
        return " ".join(shuffled)
    if kind == 12:
        return " ".join(p[: max(1, rng.randrange(len(p)))] for p in parts) if parts else name
    if kind == 13:
        return name.upper() if rng.random() < 0.5 else name.lower()
    if kind == 14:
        return name[:i] + name[i] * 3 + name[i + 1 :]
    if kind == 15:
        return mutate(rng, mutate(rng, name))
    if kind == 16:
        return name
    if kind == 17:
        return rng.choice(FIRST) + " " + rng.choice(LAST)
    if kind == 18 and len(parts) >= 2:
        return parts[0]
    return mutate(rng, mutate(rng, mutate(rng, name)))


def random_name(rng: random.Random) -> str:
    roll = rng.random()
    if roll < 0.1:
        return rng.choice(ODD[2:])
    if roll < 0.25:
        return rng.choice(FIRST)
    if roll < 0.4:
        return f"{rng.choice(FIRST)} {rng.choice(FIRST)} {rng.choice(LAST)}"
    return f"{rng.choice(FIRST)} {rng.choice(LAST)}"


def random_rules(rng: random.Random) -> list[str]:
    roll = rng.random()
    if roll < 0.05:
        return []
    rules = rng.sample(ALL_RULES, rng.randint(1, 3))
    if roll < 0.15:
        rules.append(rng.choice(EXTRA))
    if roll > 0.95:
        rules.append(rules[0])
    return rules


def run(validator_dir: str, seed: int, out: str) -> None:
    _stub_bittensor()
    sys.path.insert(0, validator_dir)
    evaluator = importlib.import_module("rule_evaluator")
    reward = importlib.import_module("reward")
    rng = random.Random(seed)
    data: dict[str, Any] = {
        "pythonhashseed": os.environ["PYTHONHASHSEED"],
        "python": sys.version.split()[0],
        "case_seed": seed,
    }

    pairs = []
    for _ in range(1200):
        a = random_name(rng) if rng.random() < 0.7 else rng.choice(ODD)
        b = mutate(rng, a)
        pairs.append([a, b, hexf(reward.calculate_phonetic_similarity(a, b)),
                      hexf(reward.calculate_orthographic_similarity(a, b))])  # fmt: skip
    data["similarity"] = pairs

    rows = []
    for _ in range(4000):
        original = random_name(rng) if rng.random() < 0.85 else rng.choice(ODD)
        variation = mutate(rng, original)
        rule = rng.choice(ALL_RULES + EXTRA[:3])
        if rule in ("remove_title",) and rng.random() < 0.5:
            original = rng.choice(TITLES) + " " + original
        if "special" in rule and rng.random() < 0.7:
            original = original.replace(" ", rng.choice(SPECIAL), 1) + rng.choice(["", "-", "."])
            variation = mutate(rng, original)
        if rng.random() < 0.5:  # prefer a compliant variation half of the time
            candidates = [mutate(rng, original) for _ in range(30)]
            hits = [c for c in candidates if evaluator.RULE_EVALUATORS[rule](original, c)]
            variation = hits[0] if hits else variation
        rows.append([rule, original, variation, bool(evaluator.RULE_EVALUATORS[rule](original, variation))])
    data["evaluators"] = rows

    compliance = []
    for _ in range(600):
        original = random_name(rng)
        variations = [mutate(rng, original) for _ in range(rng.randint(0, 12))]
        rules = random_rules(rng)
        target = rng.choice([0.1, 0.25, 0.3, 0.33, 0.5, 0.6, 1.0, 0.0])
        by_rule, ratio = evaluator.evaluate_rule_compliance(original, variations, rules)
        score, _ = reward.calculate_rule_compliance_score(original, variations, rules, target)
        compliance.append([original, variations, rules, hexf(target), by_rule, hexf(ratio), hexf(score)])
    data["compliance"] = compliance

    weights = []
    for _ in range(400):
        name = random_name(rng) if rng.random() < 0.8 else rng.choice(ODD[2:])
        got = reward.get_name_part_weights(name)
        weights.append([name, hexf(got["first_name_weight"]), hexf(got["last_name_weight"])])
    data["part_weights"] = weights

    parts = []
    for index in range(300):
        part = rng.choice(FIRST + LAST) if index % 50 else rng.choice(["", " ", "Li"])
        variations = [mutate(rng, part) for _ in range(rng.randint(0, 12))]
        if index % 25 == 1:
            variations.append("")
        expected = rng.choice([0, 0.5, 3, 7, 7.7, 10, 15, 10.5, 21, 40]) if index % 5 == 0 else rng.randint(1, 15)
        phonetic = rng.choice(DISTRIBUTIONS)
        orthographic = rng.choice(DISTRIBUTIONS)
        try:
            score, _ = reward.calculate_part_score(part, variations, phonetic, orthographic, expected)
            result = [hexf(score)]
        except Exception as error:
            result = ["error", type(error).__name__]
        parts.append([part, variations, phonetic, orthographic, expected, result])
    data["part_score"] = parts

    quality = []
    for index in range(700):
        name = random_name(rng)
        count = rng.randint(6, 15)
        extra = rng.choice([-3, -1, 0, 0, 0, 1, 3])
        variations = [mutate(rng, name) for _ in range(max(0, count + extra))]
        if index % 10 == 0:
            variations.append(rng.choice(["", "   ", name]))
        phonetic = rng.choice(DISTRIBUTIONS)
        orthographic = rng.choice(DISTRIBUTIONS)
        roll = rng.random()
        if roll < 0.08:
            rule_based: Any = None
        elif roll < 0.12:
            rule_based = {}
        elif roll < 0.16:
            rule_based = {"selected_rules": [], "rule_percentage": 30}
        elif roll < 0.19:
            rule_based = {"rule_percentage": 40}
        elif roll < 0.21:
            rule_based = {"selected_rules": random_rules(rng) or ["swap_random_letter"], "rule_percentage": 100}
        elif roll < 0.23:
            rule_based = {"selected_rules": random_rules(rng) or ["delete_random_letter"]}
        else:
            rule_based = {"selected_rules": random_rules(rng), "rule_percentage": rng.randint(10, 60)}
        expected = 0 if index % 97 == 5 else count
        try:
            final, base, _ = reward.calculate_variation_quality(
                name, variations, phonetic, orthographic, expected, rule_based
            )
            result: Any = [hexf(final), hexf(base)]
        except Exception as error:  # the validator raises: the test expects InvalidInputError
            result = ["error", type(error).__name__]
        quality.append([name, variations, phonetic, orthographic, expected, rule_based, result])
    data["quality"] = quality

    with open(out, "w", encoding="utf-8") as handle:
        json.dump(data, handle, ensure_ascii=False, separators=(",", ":"))
        handle.write("\n")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--validator-dir", required=True, help="folder holding rule_evaluator.py and reward.py")
    parser.add_argument("--out", required=True, help="JSON file to write")
    parser.add_argument("--seed", type=int, default=4, help="seed of the case generator")
    args = parser.parse_args()
    if "PYTHONHASHSEED" not in os.environ:
        parser.error("set PYTHONHASHSEED: the validator's results depend on it")
    run(args.validator_dir, args.seed, args.out)


if __name__ == "__main__":
    main()
