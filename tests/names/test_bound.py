"""score_upper_bound: no variations score above it, and it equals hand-derived optima where they are known."""

from __future__ import annotations

import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from norma.errors import InvalidInputError
from norma.names import (
    generate_from_labels,
    quality_from_labels,
    random_labels,
    score_upper_bound,
    upper_bound_from_labels,
)
from norma.names._compat import SIMILARITY_LEVELS, name_part_weights, phonetic_plan, string_seed

NAMES = ["John Smith", "Maria Garcia", "Anna Lee Hall", "David", "Christopher Walker", "Nancy Cooper"]
MEDIUM_ONLY = {"Medium": 1.0}
NO_RULES = {"selected_rules": [], "rule_percentage": 30}


def _edits(name: str, rng: random.Random, count: int) -> list[str]:
    out = []
    for _ in range(count):
        chars = list(name)
        for _edit in range(rng.randint(0, 4)):
            i = rng.randrange(len(chars))
            if chars[i] != " ":
                chars[i] = rng.choice("aeiouklmnrst")
        text = "".join(chars)
        if rng.random() < 0.2:
            text = text.replace(" ", "")
        out.append(text)
    return out


@given(
    name=st.sampled_from(NAMES),
    seed=st.integers(min_value=0, max_value=100_000),
    compat=st.sampled_from(["miid", "stable"]),
    generated=st.booleans(),
)
@settings(max_examples=60, deadline=None)
def test_no_variations_score_above_the_bound(name: str, seed: int, compat: str, generated: bool) -> None:
    rng = random.Random(seed)
    labels = random_labels(rng)
    if generated:  # the generator's output is as close to the bound as we get: the sharpest check
        variations = generate_from_labels(name, labels, seed=seed, compat=compat)
    else:
        variations = _edits(name, rng, rng.randint(1, 20))
    final = quality_from_labels(name, variations, labels, compat=compat)[0]
    assert final <= upper_bound_from_labels(name, labels, compat=compat) + 1e-12


def _stable_levels(part: str) -> set[str]:
    values = phonetic_plan(string_seed(part, "stable")).by_mask_stable
    ranges = SIMILARITY_LEVELS["stable"]["phonetic"]
    return {level for level, span in ranges.items() for value in values if span.contains(value)}


def test_a_phonetic_level_the_weights_cannot_reach_caps_the_part() -> None:
    # Precondition: "David"'s stable weights put no subset sum in Medium [0.6, 0.8) (nor in Far).
    assert _stable_levels("David") == {"Light"}
    # Medium only: every variation is phonetically unmatched, quality max(0, 0 - 0.1) = 0; the orthographic
    # quality can be 1. sim = 0.5, part = 0.6 * 0.5 + 0.15 + 0.10 + 0.15 = 0.70; no rules, so final = base.
    assert score_upper_bound("David", 10, MEDIUM_ONLY, MEDIUM_ONLY, NO_RULES, compat="stable") == pytest.approx(0.70)
    # Half Light, half Medium, u even: t_L = u / 2 Light variations, the other half unmatched: 0.5 - 0.1 * 0.5 =
    # 0.45 (all u in Light overflows: 0.5 * (1 - e^-1) = 0.32). sim = (0.45 + 1) / 2, part = 0.6 * 0.725 + 0.40.
    half = {"Light": 0.5, "Medium": 0.5}
    assert score_upper_bound("David", 10, half, MEDIUM_ONLY, NO_RULES, compat="stable") == pytest.approx(0.835)
    # Light only is reachable (every code equal gives 1.0): nothing is lost.
    light = {"Light": 1.0}
    assert score_upper_bound("David", 10, light, MEDIUM_ONLY, NO_RULES, compat="stable") == pytest.approx(1.0)


def test_rules_and_their_absence_weigh_the_base_as_the_validator_does() -> None:
    light = {"Light": 1.0}
    with_rules = {"selected_rules": ["delete_random_letter"], "rule_percentage": 20}
    assert score_upper_bound("David", 10, light, light, with_rules, compat="stable") == pytest.approx(1.0)
    assert score_upper_bound("David", 10, light, light, None, compat="stable") == pytest.approx(0.8)
    assert score_upper_bound("David", 10, light, light, {}, compat="stable") == pytest.approx(0.8)
    # "David" with Medium only: base 0.70, then 0.8 * 0.70 + 0.2 with rules.
    assert score_upper_bound("David", 10, MEDIUM_ONLY, MEDIUM_ONLY, with_rules, compat="stable") == pytest.approx(0.76)


@pytest.mark.parametrize("compat", ["miid", "stable"])
def test_three_part_names_are_capped_by_their_part_weights(compat: str) -> None:
    first, last = name_part_weights("Anna Lee Hall", compat)
    light = {"Light": 1.0}
    bound = score_upper_bound("Anna Lee Hall", 10, light, light, {"selected_rules": ["x"]}, compat=compat)
    assert bound <= 0.8 * (first + last) + 0.2 + 1e-12
    if compat == "miid":
        assert first + last < 0.99  # the validator weighs the last name with the middle part's weight


def test_the_generator_reaches_the_bound_on_an_easy_query() -> None:
    labels = {
        "variation_count": 10,
        "phonetic_similarity": {"Light": 1.0},
        "orthographic_similarity": {"Light": 0.5, "Medium": 0.5},
        "rule_based": {"selected_rules": ["delete_random_letter"], "rule_percentage": 20},
    }
    bound = upper_bound_from_labels("Samantha Peterson", labels, compat="stable")
    variations = generate_from_labels("Samantha Peterson", labels, seed=0, compat="stable")
    final = quality_from_labels("Samantha Peterson", variations, labels, compat="stable")[0]
    assert final == pytest.approx(bound, abs=0.02)


ARGUMENTS = ("John Smith", 10, MEDIUM_ONLY, MEDIUM_ONLY, NO_RULES)


@pytest.mark.parametrize(
    ("index", "value"),
    [
        (0, 42),
        (1, float("nan")),
        (2, {"Loud": 1.0}),
        (3, {"Light": float("nan")}),
        (4, {"selected_rules": ["x"], "rule_percentage": float("nan")}),
    ],
)
def test_bad_arguments_raise(index: int, value: object) -> None:
    arguments = list(ARGUMENTS)
    arguments[index] = value
    with pytest.raises(InvalidInputError):
        score_upper_bound(*arguments)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    "options", [{"phonetic_masks": [8]}, {"phonetic_masks": []}, {"phonetic_masks": [True]}, {"compat": "strict"}]
)
def test_bad_options_raise(options: dict) -> None:
    with pytest.raises(InvalidInputError):
        score_upper_bound(*ARGUMENTS, **options)
