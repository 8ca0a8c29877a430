"""The query builder: random labels in the documented draw order, the fallback template, the template validator."""

from __future__ import annotations

import math
import random
from collections import Counter

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from norma.errors import InvalidInputError
from norma.names import (
    QUERY_DISTRIBUTIONS,
    RULE_CATALOG,
    RULE_DESCRIPTIONS,
    build_query,
    query_template,
    query_template_issues,
    random_labels,
    render_distribution,
    validate_query_template,
)

OPTIONS = [
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
WEIGHTS = [0.25, 0.20, 0.15, 0.12, 0.10, 0.08, 0.05, 0.03, 0.02]

LABELS = {
    "variation_count": 10,
    "phonetic_similarity": {"Medium": 0.6, "Light": 0.2, "Far": 0.2},
    "orthographic_similarity": {"Light": 0.5, "Medium": 0.5},
    "rule_based": {
        "rule_percentage": 30,
        "selected_rules": ["replace_double_letters_with_single_letter", "swap_adjacent_consonants"],
        "percentage": 30,
    },
}


def test_distributions_are_the_issue_table() -> None:
    assert [dict(d) for d, _ in QUERY_DISTRIBUTIONS] == OPTIONS
    assert [w for _, w in QUERY_DISTRIBUTIONS] == WEIGHTS
    assert math.isclose(sum(WEIGHTS), 1.0)


@pytest.mark.parametrize("seed", [0, 1, 7, 12345])
def test_draws_follow_the_documented_order(seed: int) -> None:
    rng = random.Random(seed)
    n = rng.randint(1, 3)
    rules = rng.sample(list(RULE_CATALOG), n)
    count = rng.randint(6, 15)
    phonetic = rng.choices(OPTIONS, weights=WEIGHTS)[0]
    orthographic = rng.choices(OPTIONS, weights=WEIGHTS)[0]
    percentage = rng.randint(10, 60)
    labels = random_labels(random.Random(seed))
    assert labels == {
        "variation_count": count,
        "phonetic_similarity": phonetic,
        "orthographic_similarity": orthographic,
        "rule_based": {
            "rule_percentage": percentage,
            "selected_rules": rules,
            "rule_descriptions": {rule: RULE_DESCRIPTIONS[rule] for rule in rules},
            "percentage": percentage,
        },
    }
    assert list(labels) == ["variation_count", "phonetic_similarity", "orthographic_similarity", "rule_based"]


def test_random_labels_never_touch_the_global_generator() -> None:
    random.seed(99)
    expected = random.random()
    random.seed(99)
    random_labels(random.Random(1))
    build_query("John Smith", seed=3)
    assert random.random() == expected


def test_label_frequencies_match_the_weights() -> None:
    rng = random.Random(2024)
    draws = [random_labels(rng) for _ in range(20000)]
    phonetic = Counter(tuple(sorted(d["phonetic_similarity"].items())) for d in draws)
    for option, weight in zip(OPTIONS, WEIGHTS, strict=True):
        share = phonetic[tuple(sorted(option.items()))] / len(draws)
        assert abs(share - weight) < 0.012, (option, share)
    rule_counts = Counter(len(d["rule_based"]["selected_rules"]) for d in draws)
    assert set(rule_counts) == {1, 2, 3}
    assert all(abs(c / len(draws) - 1 / 3) < 0.02 for c in rule_counts.values())
    counts = Counter(d["variation_count"] for d in draws)
    assert set(counts) == set(range(6, 16))
    percentages = {d["rule_based"]["rule_percentage"] for d in draws}
    assert percentages == set(range(10, 61))
    same = sum(d["phonetic_similarity"] == d["orthographic_similarity"] for d in draws) / len(draws)
    assert abs(same - sum(w * w for w in WEIGHTS)) < 0.015  # drawn independently


@given(st.integers(min_value=0, max_value=2**32))
@settings(max_examples=60, deadline=None)
def test_labels_are_well_formed(seed: int) -> None:
    labels = random_labels(random.Random(seed))
    rules = labels["rule_based"]["selected_rules"]
    assert 1 <= len(rules) <= 3
    assert len(set(rules)) == len(rules)
    assert set(rules) <= set(RULE_CATALOG)
    assert 6 <= labels["variation_count"] <= 15
    assert labels["rule_based"]["percentage"] == labels["rule_based"]["rule_percentage"]


@given(st.integers(min_value=0, max_value=2**32))
@settings(max_examples=60, deadline=None)
def test_the_fallback_template_passes_its_own_check(seed: int) -> None:
    query = build_query("Anna Kowalski", seed=seed)
    assert query_template_issues(query.template, query.labels) == []
    assert validate_query_template(query.template, query.labels) == query.template
    assert "{name}" not in query.text
    assert query.text.count("Anna Kowalski") == 2


def test_template_text_is_exact() -> None:
    assert query_template(LABELS) == (
        "The following name is the seed name to generate variations for: {name}. Generate 10 variations of the "
        "name {name}, ensuring phonetic similarity: 20% Light, 60% Medium, 20% Far, and orthographic similarity: "
        "50% Light, 50% Medium, and also include 30% of variations that follow: Additionally, generate variations "
        "that perform these transformations: Replace double letters with a single letter, and Swap adjacent "
        "consonants."
    )


def test_one_rule_reads_additionally() -> None:
    labels = {**LABELS, "rule_based": {"rule_percentage": 45, "selected_rules": ["remove_all_spaces"]}}
    assert query_template(labels).endswith(
        "include 45% of variations that follow: Additionally, generate variations that: Remove all spaces."
    )


@pytest.mark.parametrize(
    ("distribution", "text"),
    [
        ({"Medium": 0.6, "Light": 0.2, "Far": 0.2}, "20% Light, 60% Medium, 20% Far"),
        ({"Far": 1.0}, "100% Far"),
        ({"Light": 0.7, "Medium": 0.3}, "70% Light, 30% Medium"),
        ({"Light": 0.1, "Medium": 0.3, "Far": 0.6}, "10% Light, 30% Medium, 60% Far"),
    ],
)
def test_render_distribution(distribution: dict[str, float], text: str) -> None:
    assert render_distribution(distribution) == text


def test_rephrased_template_gets_hints_for_what_it_lost() -> None:
    rephrased = "Please write 10 spellings of {name}: 20% Light and 60% Medium sound-alikes, 30% following rules."
    result = validate_query_template(rephrased, LABELS)
    assert result.startswith(rephrased + "\n[VALIDATION HINTS]: ")
    hints = result.split("\n[VALIDATION HINTS]: ", 1)[1].split("; ")
    assert "state the phonetic similarity '20% Far'" in hints
    assert "state the orthographic similarity '50% Light'" in hints
    assert "state the orthographic similarity '50% Medium'" in hints  # "60% Medium" does not stand for it
    assert "state the phonetic similarity '60% Medium'" not in hints
    assert not any("rule-based percentage" in hint for hint in hints)
    assert any("Replace double letters" in hint and "double" in hint for hint in hints)
    assert not any("number of variations" in hint for hint in hints)
    assert not any("{name}" in hint for hint in hints)


def test_missing_name_count_and_percentage_are_reported() -> None:
    issues = query_template_issues("Generate variations of the name.", LABELS)
    assert "keep the {name} placeholder for the seed name" in issues
    assert "state the number of variations (10)" in issues
    assert "state the rule-based percentage (30%)" in issues
    assert query_template_issues("Generate 100 variations of {name}", LABELS).count(
        "state the number of variations (10)"
    )


@pytest.mark.parametrize(
    "labels",
    [
        {**LABELS, "phonetic_similarity": {"Heavy": 1.0}},
        {**LABELS, "orthographic_similarity": {"Light": float("nan")}},
        {**LABELS, "rule_based": {"rule_percentage": float("nan"), "selected_rules": []}},
        {**LABELS, "variation_count": "ten"},
        {"variation_count": 5},
        ["not", "a", "mapping"],
    ],
)
def test_bad_labels_raise(labels: object) -> None:
    with pytest.raises(InvalidInputError):
        query_template(labels)  # type: ignore[arg-type]


def test_bad_arguments_raise() -> None:
    with pytest.raises(InvalidInputError):
        build_query(42)  # type: ignore[arg-type]
    with pytest.raises(InvalidInputError):
        build_query("John", seed="x")  # type: ignore[arg-type]
    with pytest.raises(InvalidInputError):
        query_template_issues(None, LABELS)  # type: ignore[arg-type]


def test_same_seed_same_query_and_no_name_keeps_placeholder() -> None:
    assert build_query(seed=5) == build_query(seed=5)
    assert build_query(seed=5).text == build_query(seed=5).template
    assert "{name}" in build_query(seed=5).text
    assert {str(build_query(seed=s).labels) for s in range(10)}.__len__() > 5
