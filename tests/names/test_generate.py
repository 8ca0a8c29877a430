"""The generator: valid, deterministic variations that the real scorer rates highly."""

from __future__ import annotations

import math
import random
import re
import statistics

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from norma.errors import InvalidInputError
from norma.names import (
    evaluate_rule,
    evaluate_rule_compliance,
    generate_from_labels,
    generate_variations,
    quality_from_labels,
    random_labels,
    variation_quality,
)

TRIPLE = re.compile(r"(?i)(.)\1{2,}")
MEDIUM = {"Light": 0.2, "Medium": 0.6, "Far": 0.2}
NAMES = ["John Smith", "Maria Garcia", "William Johnson", "Anna Lee", "Christopher Walker", "Olivia Brown"]


@pytest.mark.parametrize("compat", ["miid", "stable"])
def test_mean_score_on_random_queries_is_high(compat: str) -> None:
    rng = random.Random(11)
    finals = []
    for i in range(10):
        name = NAMES[i % len(NAMES)]
        labels = random_labels(rng)
        finals.append(
            quality_from_labels(name, generate_from_labels(name, labels, seed=i, compat=compat), labels, compat=compat)[
                0
            ]
        )
    assert statistics.mean(finals) >= 0.85, finals
    assert min(finals) >= 0.6, finals


def test_beats_a_naive_miner() -> None:
    labels = {
        "variation_count": 10,
        "phonetic_similarity": MEDIUM,
        "orthographic_similarity": MEDIUM,
        "rule_based": {"selected_rules": ["swap_adjacent_consonants"], "rule_percentage": 30},
    }
    naive = ["Jon Smith", "Jhon Smith", "John Smyth", "Johnny Smith", "Jon Smyth", "John Smithe", "Jean Smit"]
    ours = quality_from_labels(
        "John Smith", generate_from_labels("John Smith", labels, seed=1, compat="stable"), labels, compat="stable"
    )[0]
    assert ours > quality_from_labels("John Smith", naive, labels, compat="stable")[0] + 0.2


@given(
    first=st.text(alphabet="abcdefghijklmnopqrstuvwxyz", min_size=2, max_size=9),
    last=st.text(alphabet="abcdefghijklmnopqrstuvwxyz", min_size=2, max_size=9),
    seed=st.integers(min_value=0, max_value=10_000),
)
@settings(max_examples=12, deadline=None)
def test_variations_are_valid(first: str, last: str, seed: int) -> None:
    name = f"{first.capitalize()} {last.capitalize()}"
    labels = random_labels(random.Random(seed))
    variations = generate_from_labels(name, labels, seed=seed, compat="stable")
    assert len(variations) == len(set(variations))
    assert name not in variations
    assert all(v.strip() for v in variations)
    assert not [v for v in variations if any(TRIPLE.search(part) for part in v.split())]
    assert variations == generate_from_labels(name, labels, seed=seed, compat="stable")


def test_count_stays_inside_the_tolerance_and_rules_take_their_share() -> None:
    rules = ["replace_random_vowel_with_random_vowel", "delete_random_letter"]
    variations = generate_variations("Jonathan Miller", 12, MEDIUM, MEDIUM, rules, 25, seed=3)
    compliant = set().union(*evaluate_rule_compliance("Jonathan Miller", variations, rules)[0].values())
    others = [v for v in variations if v not in compliant]
    expected = 12 * (1 - 0.25)
    spread = expected * 0.2
    assert math.ceil(expected - spread) - 1 <= len(others) <= math.floor(expected + spread) + 1
    assert len(compliant) == max(1, int(len(variations) * 0.25))
    for rule in rules:  # every rule is satisfied at least once
        assert any(evaluate_rule(rule, "Jonathan Miller", v) for v in compliant)
    assert all(len(v.split()) == 2 for v in others)  # no last-name penalty


def test_one_slot_for_three_rules_goes_to_a_variation_that_follows_them_all() -> None:
    rules = ["swap_random_letter", "swap_adjacent_syllables", "swap_adjacent_consonants"]
    variations = generate_variations("Walter Black", 6, MEDIUM, MEDIUM, rules, 10, seed=0)
    by_rule = evaluate_rule_compliance("Walter Black", variations, rules)[0]
    assert all(by_rule[rule] for rule in rules)
    assert len(set().union(*by_rule.values())) == 1


@pytest.mark.parametrize("name", ["Melissa Garcia", "John Smith", "Peter Novak"])
def test_one_slot_for_two_rules_goes_to_a_variation_built_by_both(name: str) -> None:
    # No single construction follows both rules (a vowel change is not a consonant change); one vowel change plus
    # one consonant change follows both, since each rule allows one other change.
    rules = ["replace_random_vowel_with_random_vowel", "replace_random_consonant_with_random_consonant"]
    variations = generate_variations(name, 6, MEDIUM, MEDIUM, rules, 10, seed=0, compat="stable")
    by_rule = evaluate_rule_compliance(name, variations, rules)[0]
    assert len(set().union(*by_rule.values())) == 1
    assert by_rule[rules[0]] == by_rule[rules[1]]
    labels = {"selected_rules": rules, "rule_percentage": 10}
    assert variation_quality(name, variations, MEDIUM, MEDIUM, 6, labels, compat="stable")[2]["rule_compliance"][
        "score"
    ] == pytest.approx(1.0)


def test_a_larger_total_gives_each_of_three_rules_its_own_variation() -> None:
    # No variation follows two of these rules, so all three need a variation each. With 7 variations the rule
    # target is int(7 * 0.29) = 2 and three rule variations score 0.75; 11 variations make the target 3 and the
    # rule score 1.0, which is worth more than the count score lost to the extra non-rule variations.
    balanced = {"Light": 0.3, "Medium": 0.4, "Far": 0.3}
    rules = ["replace_random_vowel_with_random_vowel", "swap_adjacent_consonants", "initial_only_first_name"]
    variations = generate_variations("George Ward", 7, balanced, balanced, rules, 29, seed=0, compat="stable")
    labels = {"selected_rules": rules, "rule_percentage": 29}
    final, _, metrics = variation_quality("George Ward", variations, balanced, balanced, 7, labels, compat="stable")
    assert metrics["rule_compliance"]["score"] == pytest.approx(1.0)
    assert len(variations) >= 11
    assert final > 0.81  # 0.799 when the total stays inside the count tolerance


def test_two_part_names_stay_near_their_ceiling() -> None:
    # Measured 0.923 (compat="stable", which does not depend on the hash seed); the best any variations could reach
    # on such queries is about 0.94 (docs/benchmarks.md, "names: generator").
    rng = random.Random(11)
    finals = []
    for i in range(12):
        name = NAMES[i % len(NAMES)]
        labels = random_labels(rng)
        finals.append(
            quality_from_labels(
                name, generate_from_labels(name, labels, seed=i, compat="stable"), labels, compat="stable"
            )[0]
        )
    assert statistics.mean(finals) >= 0.90, finals


def test_no_rules_means_no_rule_variation_and_final_equals_base() -> None:
    labels = {
        "variation_count": 8,
        "phonetic_similarity": MEDIUM,
        "orthographic_similarity": MEDIUM,
        "rule_based": {"selected_rules": [], "rule_percentage": 30},
    }
    variations = generate_from_labels("Peter Novak", labels, seed=2)
    final, base, _ = quality_from_labels("Peter Novak", variations, labels)
    assert final == base
    assert math.ceil(8 * 0.8) - 1 <= len(variations) <= math.floor(8 * 1.2) + 1  # the tolerance, one step either side


def test_three_part_names_keep_the_middle_part() -> None:
    variations = generate_variations("Maria Elena Lopez", 10, MEDIUM, MEDIUM, ["name_parts_permutations"], 20, seed=4)
    others = [v for v in variations if not evaluate_rule("name_parts_permutations", "Maria Elena Lopez", v)]
    assert others
    assert all(v.split()[1] == "Elena" and len(v.split()) == 3 for v in others)


def test_one_part_names() -> None:
    labels = {
        "variation_count": 9,
        "phonetic_similarity": {"Light": 0.5, "Medium": 0.5},
        "orthographic_similarity": {"Light": 0.5, "Medium": 0.5},
        "rule_based": {"selected_rules": ["name_parts_permutations", "remove_random_vowel"], "rule_percentage": 30},
    }
    variations = generate_from_labels("Alexander", labels, seed=5, compat="stable")
    assert all(" " not in v for v in variations)
    assert quality_from_labels("Alexander", variations, labels, compat="stable")[0] >= 0.8


def test_non_latin_seed_is_edited_in_its_own_script() -> None:
    variations = generate_variations("Иван Петров", 8, MEDIUM, MEDIUM, ["delete_random_letter"], 20, seed=1)
    assert variations
    assert not any(ch.isascii() and ch.isalpha() for v in variations for ch in v)


def test_seed_makes_it_reproducible_and_different_seeds_differ() -> None:
    first = generate_variations("Thomas Wright", 10, MEDIUM, MEDIUM, ["insert_random_letter"], 30, seed=9)
    assert first == generate_variations("Thomas Wright", 10, MEDIUM, MEDIUM, ["insert_random_letter"], 30, seed=9)
    assert first != generate_variations("Thomas Wright", 10, MEDIUM, MEDIUM, ["insert_random_letter"], 30, seed=10)


def test_zero_count_without_rules_is_empty() -> None:
    assert generate_variations("John Smith", 0, MEDIUM, MEDIUM, [], 30, seed=0) == []


@pytest.mark.parametrize(
    "kwargs",
    [
        {"name": 42},
        {"name": "   "},
        {"count": -1},
        {"count": 2.5},
        {"rule_percentage": math.nan},
        {"rule_percentage": 150},
        {"phonetic_similarity": {"Heavy": 1.0}},
        {"orthographic_similarity": {"Light": math.nan}},
        {"rules": "delete_random_letter"},
        {"rules": [1, 2]},
        {"seed": "abc"},
        {"compat": "exact"},
    ],
)
def test_bad_inputs_raise(kwargs: dict) -> None:
    arguments = {
        "name": "John Smith",
        "count": 10,
        "phonetic_similarity": MEDIUM,
        "orthographic_similarity": MEDIUM,
        "rules": ["delete_random_letter"],
        "rule_percentage": 30,
        "seed": 0,
        **kwargs,
    }
    compat = arguments.pop("compat", "miid")
    with pytest.raises(InvalidInputError):
        generate_variations(**arguments, compat=compat)


@given(
    name=st.text(alphabet="abXZ'-.é漢Жжß0 ", min_size=1, max_size=12).filter(lambda s: s.split()),
    seed=st.integers(min_value=0, max_value=1000),
)
@settings(max_examples=25, deadline=None)
def test_any_name_gives_distinct_variations_other_than_the_name(name: str, seed: int) -> None:
    labels = random_labels(random.Random(seed))
    variations = generate_from_labels(name, labels, seed=seed, compat="stable")
    assert len(variations) == len(set(variations))
    assert name not in variations
    assert all(isinstance(v, str) and v.strip() for v in variations)
