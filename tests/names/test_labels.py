"""The labels-dict forms: the same results as the positional functions, and clear errors for bad labels."""

from __future__ import annotations

import random

import pytest

from norma.errors import InvalidInputError
from norma.names import (
    generate_from_labels,
    generate_variations,
    quality_from_labels,
    random_labels,
    score_upper_bound,
    upper_bound_from_labels,
    variation_quality,
)


@pytest.mark.parametrize("seed", [0, 7, 31])
def test_labels_forms_equal_the_positional_calls(seed: int) -> None:
    labels = random_labels(random.Random(seed))
    rules = labels["rule_based"]["selected_rules"]
    percentage = labels["rule_based"]["rule_percentage"]
    pdist, odist = labels["phonetic_similarity"], labels["orthographic_similarity"]
    count = labels["variation_count"]
    variations = generate_from_labels("Mary Jones", labels, seed=seed, compat="stable")
    assert variations == generate_variations(
        "Mary Jones", count, pdist, odist, rules, percentage, seed=seed, compat="stable"
    )
    assert quality_from_labels("Mary Jones", variations, labels) == variation_quality(
        "Mary Jones", variations, pdist, odist, count, labels["rule_based"]
    )
    assert upper_bound_from_labels("Mary Jones", labels) == score_upper_bound(
        "Mary Jones", count, pdist, odist, labels["rule_based"]
    )


def test_missing_parts_take_the_validator_defaults() -> None:
    # No distributions: {"Medium": 1.0} each; no rule_based: no rules (and a final of 0.8 * base when scored).
    labels = {"variation_count": 8}
    variations = generate_from_labels("Mary Jones", labels, seed=1)
    assert variations == generate_variations("Mary Jones", 8, {"Medium": 1.0}, {"Medium": 1.0}, [], 30, seed=1)
    final, base, _ = quality_from_labels("Mary Jones", variations, labels)
    assert final == pytest.approx(0.8 * base)
    # Selected rules without a percentage: the validator's 30 %.
    with_rules = {"variation_count": 8, "rule_based": {"selected_rules": ["delete_random_letter"]}}
    assert generate_from_labels("Mary Jones", with_rules, seed=1) == generate_variations(
        "Mary Jones", 8, None, None, ["delete_random_letter"], 30, seed=1
    )


@pytest.mark.parametrize(
    ("labels", "location"),
    [
        (["variation_count", 8], "labels"),
        ({"phonetic_similarity": {"Light": 1.0}}, "labels.variation_count"),
        ({"variation_count": 8, "rule_based": ["delete_random_letter"]}, "labels.rule_based"),
    ],
)
def test_bad_labels_name_the_field(labels: object, location: str) -> None:
    with pytest.raises(InvalidInputError) as caught:
        generate_from_labels("Mary Jones", labels)  # type: ignore[arg-type]
    assert caught.value.location == location
