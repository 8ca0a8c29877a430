"""The Labels model and the labels forms: the same results as the positional functions, clear errors for bad labels."""

from __future__ import annotations

import math
import random

import pydantic
import pytest

from norma.errors import InvalidInputError
from norma.names import (
    DEFAULT_DISTRIBUTION,
    DEFAULT_RULE_PERCENTAGE,
    Labels,
    RuleBased,
    build_query,
    generate_from_labels,
    generate_variations,
    quality_from_labels,
    random_labels,
    score_record,
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


def test_labels_hold_the_validator_defaults() -> None:
    labels = Labels(variation_count=8)
    assert labels.phonetic_similarity == dict(DEFAULT_DISTRIBUTION) == {"Medium": 1.0}
    assert labels.orthographic_similarity == {"Medium": 1.0}
    assert labels.rule_based is None
    assert RuleBased(selected_rules=["delete_random_letter"]).rule_percentage == DEFAULT_RULE_PERCENTAGE == 30
    assert Labels.from_mapping({"variation_count": 8, "rule_based": {"selected_rules": []}}).rule_based == RuleBased(
        selected_rules=[], rule_percentage=30
    )


def test_labels_are_frozen_and_strict() -> None:
    labels = Labels(variation_count=8)
    with pytest.raises(pydantic.ValidationError):
        labels.variation_count = 9  # type: ignore[misc]
    with pytest.raises(InvalidInputError, match="unknown field colour") as caught:
        Labels(variation_count=8, colour="red")
    assert caught.value.location == "colour"
    with pytest.raises(InvalidInputError, match=r"unknown field rule_based\.rule_descriptions"):
        Labels(variation_count=8, rule_based={"selected_rules": [], "rule_descriptions": {}})
    with pytest.raises(InvalidInputError, match="unknown field percentage"):
        RuleBased(percentage=40)


def test_from_mapping_reads_a_query_as_the_validator_does() -> None:
    query = build_query("Mary Jones", seed=3)
    labels = Labels.from_mapping(query.labels)  # rule_descriptions and percentage are not read
    rule_based = query.labels["rule_based"]
    assert labels.rule_based == RuleBased(
        selected_rules=rule_based["selected_rules"], rule_percentage=rule_based["rule_percentage"]
    )
    assert Labels.from_mapping({**query.labels, "something_else": 1}) == labels
    assert Labels.from_mapping(labels.to_dict()) == labels
    assert Labels.of(labels) is labels
    # A rule_based holding only keys scoring does not read is still a rule_based (its metrics report a rule
    # compliance score); an empty one is none at all.
    only_other = Labels.from_mapping({"variation_count": 8, "rule_based": {"rule_descriptions": {}}})
    assert only_other.rule_based == RuleBased()
    assert Labels.from_mapping({"variation_count": 8, "rule_based": {}}).rule_based is None


@pytest.mark.parametrize("seed", [0, 7])
def test_labels_instances_give_the_same_results_as_dicts(seed: int) -> None:
    query = build_query("Mary Jones", seed=seed)
    labels = Labels.from_mapping(query.labels)
    variations = generate_from_labels("Mary Jones", labels, seed=seed)
    assert variations == generate_from_labels("Mary Jones", query.labels, seed=seed)
    assert quality_from_labels("Mary Jones", variations, labels) == quality_from_labels(
        "Mary Jones", variations, query.labels
    )
    assert upper_bound_from_labels("Mary Jones", labels) == upper_bound_from_labels("Mary Jones", query.labels)
    record = {"name": "Mary Jones", "variations": variations}
    assert score_record({**record, "labels": labels}) == score_record({**record, "labels": query.labels})


def test_rule_based_without_selected_rules_keeps_its_metrics() -> None:
    # No selected_rules: the final score is 0.8 * base either way, but a rule_based is reported (score 0).
    without = quality_from_labels("Mary Jones", ["Mery Jones"], {"variation_count": 1})
    other_keys = quality_from_labels(
        "Mary Jones", ["Mery Jones"], {"variation_count": 1, "rule_based": {"rule_percentage": 20}}
    )
    assert without[0] == other_keys[0]
    assert "rule_compliance" not in without[2]
    assert other_keys[2]["rule_compliance"] == {"score": 0.0, "metrics": {}}


@pytest.mark.parametrize(
    ("labels", "message", "location"),
    [
        ({"variation_count": "8"}, "labels.variation_count must be a number, not str", "labels.variation_count"),
        (
            {"variation_count": 8, "phonetic_similarity": {"Huge": 1.0}},
            "labels.phonetic_similarity has an unknown similarity level 'Huge'",
            "labels.phonetic_similarity.Huge",
        ),
        (
            {"variation_count": 8, "rule_based": {"selected_rules": [1]}},
            "labels.rule_based.selected_rules[0] must be a string, not int",
            "labels.rule_based.selected_rules[0]",
        ),
        (
            {"variation_count": 8, "rule_based": {"rule_percentage": 101}},
            "labels.rule_based.rule_percentage must be a number in [0, 100], got 101",
            "labels.rule_based.rule_percentage",
        ),
    ],
)
def test_bad_labels_are_named_the_same_by_every_function(
    labels: dict[str, object], message: str, location: str
) -> None:
    calls = [
        lambda: Labels.from_mapping(labels),
        lambda: generate_from_labels("Mary Jones", labels),  # type: ignore[arg-type]
        lambda: quality_from_labels("Mary Jones", ["Mery Jones"], labels),  # type: ignore[arg-type]
        lambda: upper_bound_from_labels("Mary Jones", labels),  # type: ignore[arg-type]
        lambda: score_record({"name": "Mary Jones", "variations": ["Mery Jones"], "labels": labels}),
    ]
    for call in calls:
        with pytest.raises(InvalidInputError) as caught:
            call()
        assert caught.value.message == message
        assert caught.value.location == location


def test_building_labels_names_the_field() -> None:
    with pytest.raises(InvalidInputError) as caught:
        Labels(variation_count=8, phonetic_similarity={"Light": 2})
    assert str(caught.value) == (
        "phonetic_similarity.Light: phonetic_similarity.Light must be a number in [0, 1], got 2 "
        "(use 0 <= phonetic_similarity.Light <= 1)"
    )
    with pytest.raises(InvalidInputError, match=r"^rule_percentage: rule_percentage must be a number in \[0, 100\]"):
        RuleBased(rule_percentage=math.nan)
    with pytest.raises(InvalidInputError, match="labels lack variation_count"):
        Labels()
