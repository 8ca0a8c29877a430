"""The shared formulas: their values, and the scorer, the upper bound and the generator agreeing on them."""

from __future__ import annotations

import math

import numpy as np
from hypothesis import given
from hypothesis import strategies as st

from norma.names import generate_variations, part_score, score_upper_bound, variation_quality
from norma.names._formulas import (
    combined_similarity,
    count_range,
    count_score,
    expected_compliant,
    final_weights,
    length_score,
    level_credit,
    level_credit_array,
    part_total,
    rule_fraction,
    rule_quantity,
)

FLAT = {"Light": 0.2, "Medium": 0.6, "Far": 0.2}


def test_count_range_and_score() -> None:
    assert count_range(10) == (7.5, 12.5)  # tolerance 25 % at E = 10
    assert count_range(5) == (4.0, 6.0)
    assert count_range(1) == (1, 1.2)  # the lower bound is floored at 1
    assert count_range(40) == (24.0, 56.0)  # tolerance capped at 40 %
    assert count_score(8, 10) == 1.0
    assert count_score(7, 10) == math.exp(-0.5 / 10)
    assert count_score(57, 40) == math.exp(-1 / 40)


def test_zero_expected_is_what_the_scorer_gives_in_stable() -> None:
    # The validator divides by zero here (compat="miid" raises); the shared answer is stable's: every variation
    # is one too many. The bound and the generator use the same function.
    assert count_score(0, 0) == 1.0
    assert count_score(3, 0) == math.exp(-3)
    metrics = part_score("John", ["Jon", "Jhn", "Jo"], FLAT, FLAT, 0, compat="stable")[1]
    assert metrics["count"]["score"] == count_score(3, 0)


def test_zero_expected_in_the_bound_and_the_generator() -> None:
    # Every variation should follow a rule (100 %): the base score expects none. The scorer gives a base of 1.0
    # for no other variation; the bound allows exactly that, and the generator returns rule variations only.
    rules = {"selected_rules": ["delete_random_letter"], "rule_percentage": 100}
    assert score_upper_bound("John Smith", 5, FLAT, FLAT, rules) == 0.8 * 1.0 + 0.2
    variations = generate_variations("John Smith", 5, FLAT, FLAT, ["delete_random_letter"], 100, seed=1)
    final, base, metrics = variation_quality("John Smith", variations, FLAT, FLAT, 5, rules)
    assert metrics["non_rule_compliant_variations_count"] == 0
    assert base == 1.0
    assert final <= score_upper_bound("John Smith", 5, FLAT, FLAT, rules)


@given(st.integers(0, 60), st.integers(0, 60))
def test_length_score(size: int, original: int) -> None:
    score = length_score(size, original)
    if size == 0 or original == 0:
        assert score == 0.0
    else:
        assert score == min(size / original, original / size) * (1.0 - min(1.0, abs(size - original) / original))
        assert 0.0 <= score <= 1.0
        assert (score == 1.0) == (size == original)


@given(st.floats(0.0, 10.0))
def test_level_credit_scalar_and_array_agree(ratio: float) -> None:
    scalar = level_credit(ratio)
    assert math.isclose(scalar, float(level_credit_array(np.array([ratio]))[0]), rel_tol=1e-15, abs_tol=1e-300)
    assert scalar == (ratio if ratio <= 1.0 else 1.0 - math.exp(-(ratio - 1.0)))


def test_similarity_and_part_total() -> None:
    assert combined_similarity(0.6, 0.4) == 0.5
    assert combined_similarity(0.2, 0.1) == ((0.2 + 0.1) / 2) * 0.1  # below 0.2: times 0.1
    assert part_total(1.0, 1.0, 1.0, 1.0) == 0.6 + 0.15 + 0.1 + 0.15
    metrics = part_score("John", ["Jon", "Jhon", "Jonh"], FLAT, FLAT, 3)[1]
    assert metrics["score"] == part_total(
        metrics["similarity"]["combined"], metrics["count"]["score"], metrics["uniqueness"]["score"],
        metrics["length"]["score"],
    )  # fmt: skip


def test_rule_formulas() -> None:
    assert rule_fraction(30, True) == 0.3
    assert rule_fraction(30, False) == 0.0
    assert expected_compliant(10, 0.3) == 3
    assert expected_compliant(2, 0.3) == 1  # at least one
    assert rule_quantity(0, 3) == 0.0
    assert rule_quantity(2, 4) == 0.5
    assert rule_quantity(4, 4) == 1.0
    assert rule_quantity(5, 4) == 1.5 - 0.5 * 5 / 4
    assert rule_quantity(40, 4) == 0.5  # floored at 0.5
    assert final_weights(True, True) == (0.8, 0.2)
    assert final_weights(False, False) == (0.8, 0.2)  # no selected_rules: the rule score counts as 0
    assert final_weights(True, False) == (1.0, 0.0)  # an empty list of rules: the base score alone
