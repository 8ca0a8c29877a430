"""Rule compliance: impossible-rule filtering, the per-rule lists and the score's quantity and diversity parts."""

from __future__ import annotations

import logging
import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from norma.errors import InvalidInputError
from norma.names import (
    RULE_CATALOG,
    RULE_EVALUATORS,
    evaluate_rule_compliance,
    evaluator_errors,
    reset_evaluator_errors,
    rule_compliance_score,
    variation_quality,
)
from norma.names._compliance import effective_rules


def test_impossible_rules_are_dropped() -> None:
    multi = ["name_parts_permutations", "initial_only_first_name", "shorten_name_to_initials"]
    assert effective_rules("John", [*multi, "shorten_name_to_abbreviations", "delete_random_letter"]) == [
        "delete_random_letter"
    ]
    assert effective_rules("John Smith", multi) == multi
    assert effective_rules("John", ["remove_all_spaces", "replace_spaces_with_random_special_characters"]) == []
    assert effective_rules("John\tSmith", ["remove_all_spaces"]) == []  # a tab is not " "
    assert effective_rules("John", ["replace_double_letters_with_single_letter"]) == []
    assert effective_rules("Anna", ["replace_double_letters_with_single_letter"]) == [
        "replace_double_letters_with_single_letter"
    ]
    assert effective_rules("A--B", ["replace_double_letters_with_single_letter"]) == [
        "replace_double_letters_with_single_letter"
    ]  # any two equal characters count, as in the validator
    assert effective_rules("Aeio", ["swap_adjacent_consonants"]) == []
    assert effective_rules("Anna", ["swap_adjacent_consonants"]) == []  # "nn" is not two different consonants
    assert effective_rules("Ivan Petrov", ["swap_adjacent_consonants"]) == ["swap_adjacent_consonants"]


def test_per_rule_lists() -> None:
    by_rule, ratio = evaluate_rule_compliance(
        "John Smith",
        ["Jonh Smith", "Jon Smith", "John Smiht"],
        ["replace_double_letters_with_single_letter", "swap_adjacent_consonants"],
    )
    assert by_rule == {"swap_adjacent_consonants": ["Jonh Smith", "John Smiht"]}
    assert ratio == 2 / 3


def test_duplicate_rule_ids_list_variations_twice() -> None:
    by_rule, ratio = evaluate_rule_compliance(
        "John", ["Jon", "Jn", "Jhn"], ["delete_random_letter", "delete_random_letter"]
    )
    assert by_rule == {"delete_random_letter": ["Jon", "Jon", "Jhn", "Jhn"]}  # variation by variation, as the validator
    assert ratio == 2 / 3


def test_unknown_rules_are_kept_empty() -> None:
    by_rule, ratio = evaluate_rule_compliance("John", ["Jon", "Jxhn"], ["not_a_rule", "delete_random_letter"])
    assert by_rule == {"not_a_rule": [], "delete_random_letter": ["Jon"]}
    assert ratio == 0.5
    score, metrics = rule_compliance_score("John", ["Jon", "Jxhn"], ["not_a_rule", "delete_random_letter"], 0.5)
    assert score == 0.5  # quantity 1/1, diversity 1/2
    assert metrics["rule_diversity_factor"] == 0.5


def test_empty_cases() -> None:
    assert evaluate_rule_compliance("John", [], ["delete_random_letter"]) == ({}, 0.0)
    assert evaluate_rule_compliance("John", ["Jon"], []) == ({}, 0.0)
    assert evaluate_rule_compliance("John", ["Jon"], ["remove_all_spaces"]) == ({}, 0.0)
    assert rule_compliance_score("John", [], ["delete_random_letter"], 0.3)[0] == 0.0
    assert rule_compliance_score("John", ["Jon"], [], 0.3)[0] == 0.0


def test_all_impossible_rules_score_one() -> None:
    score, metrics = rule_compliance_score("John", ["Jon"], ["name_parts_permutations", "remove_all_spaces"], 0.3)
    assert score == 1.0
    assert metrics["rules_satisfied_by_variation"] == {}


def test_quantity_branches() -> None:
    original = "Johnathan"
    compliant = ["ohnathan", "Jhnathan", "Jonathan", "Johathan", "Johnthan", "Johnahan", "Johnatan", "Johnathn"]
    other = ["Xyz", "Qrs"]

    def score(n_compliant: int, total: int, target: float) -> tuple[float, float]:
        variations = compliant[:n_compliant] + (other * total)[: total - n_compliant]
        value, metrics = rule_compliance_score(original, variations, ["delete_random_letter"], target)
        return value, metrics["quantity_score"]

    assert score(0, 2, 0.5) == (0.0, 0.0)  # nothing compliant
    assert score(3, 10, 0.5) == (3 / 5, 3 / 5)  # below target: linear
    assert score(5, 10, 0.5) == (1.0, 1.0)  # on target
    assert score(8, 10, 0.5)[1] == 1.5 - 0.5 * (8 / 5)  # above target: gentle penalty
    assert score(8, 8, 0.25)[1] == 0.5  # far above: floored at 0.5
    # X = max(1, int(n * p)): 3 * 0.3 = 0.8999999999999999 -> int 0 -> 1
    assert (
        rule_compliance_score(original, [*compliant[:2], "x"], ["delete_random_letter"], 0.3)[1][
            "expected_compliant_variations_count"
        ]
        == 1
    )


def test_unique_compliant_variations_count_once() -> None:
    score, metrics = rule_compliance_score("John", ["Jon", "Jon", "Jhn"], ["delete_random_letter"], 1.0)
    assert metrics["overall_compliant_unique_variations_count"] == 2
    assert score == 2 / 3


def test_diversity() -> None:
    rules = ["delete_random_letter", "insert_random_letter", "swap_random_letter"]
    score, metrics = rule_compliance_score("John", ["Jon", "Johns", "Jxhn"], rules, 2 / 3)
    assert metrics["num_target_rules_met"] == 2
    assert metrics["rule_diversity_factor"] == 2 / 3
    assert score == 1.0 * (2 / 3)


def test_an_evaluator_that_raises_counts_as_not_compliant(monkeypatch: pytest.MonkeyPatch) -> None:
    def explode(original: str, variation: str) -> bool:
        raise RuntimeError("boom")

    monkeypatch.setitem(RULE_EVALUATORS, "explode", explode)
    by_rule, ratio = evaluate_rule_compliance("John", ["Jon"], ["explode", "delete_random_letter"])
    assert by_rule == {"explode": [], "delete_random_letter": ["Jon"]}
    assert ratio == 1.0


def test_an_evaluator_that_raises_is_logged_and_counted(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    def fragile(original: str, variation: str) -> bool:
        """Follows the rule when the variation is the original's first three letters; cannot read digits."""
        if any(char.isdigit() for char in variation):
            raise ValueError(f"cannot read {variation!r}")
        return variation == original[:3]

    monkeypatch.setitem(RULE_EVALUATORS, "first_three_letters", fragile)
    reset_evaluator_errors()
    try:
        with caplog.at_level(logging.DEBUG, logger="norma.names"):
            score, metrics = rule_compliance_score(
                "John", ["Joh", "J0hn", "Jo1n", "Jon"], ["first_three_letters", "delete_random_letter"], 0.5
            )
            rule_compliance_score("John", ["Joh", "J2hn"], ["first_three_letters"], 0.5)
        # The outcome is the validator's: the two variations it failed on are not compliant with that rule.
        assert metrics["compliant_variations_by_rule"] == {
            "first_three_letters": ["Joh"],
            "delete_random_letter": ["Joh", "Jon"],
        }
        assert score == 1.0
        # Never silent: counted every time, logged once as a warning (with the traceback), then at debug level.
        assert evaluator_errors() == {("first_three_letters", "ValueError"): 3}
        records = [r for r in caplog.records if r.name == "norma.names"]
        warnings = [r for r in records if r.levelno == logging.WARNING]
        assert len(warnings) == 1
        assert "'first_three_letters'" in warnings[0].getMessage()
        assert "ValueError" in warnings[0].getMessage()
        assert warnings[0].exc_info is not None
        assert "cannot read 'J0hn'" in caplog.text
        assert sum(r.levelno == logging.DEBUG for r in records) == 2
        # A variation_quality call that reaches the evaluator counts too.
        variation_quality("John Smith", ["J3hn Smith"], None, None, 2, {"selected_rules": ["first_three_letters"]})
        assert evaluator_errors() == {("first_three_letters", "ValueError"): 4}
    finally:
        reset_evaluator_errors()
    assert evaluator_errors() == {}


@pytest.mark.parametrize("target", [math.nan, math.inf, -0.1, 1.5, "0.3", None, True])
def test_bad_percentages(target: object) -> None:
    with pytest.raises(InvalidInputError):
        rule_compliance_score("John", ["Jon"], ["delete_random_letter"], target)  # type: ignore[arg-type]


def test_bad_inputs_name_the_index() -> None:
    with pytest.raises(InvalidInputError, match=r"variations\[1\]"):
        evaluate_rule_compliance("John", ["Jon", 3], ["delete_random_letter"])  # type: ignore[list-item]
    with pytest.raises(InvalidInputError, match="rules"):
        evaluate_rule_compliance("John", ["Jon"], "delete_random_letter")  # type: ignore[arg-type]
    with pytest.raises(InvalidInputError, match="original"):
        rule_compliance_score(None, ["Jon"], ["delete_random_letter"], 0.3)  # type: ignore[arg-type]


names = st.sampled_from(["John Smith", "Anna", "William Lloyd", "Иван Петров", "Mr. Bob Lee", "", "A B C"])
edits = st.text(alphabet="JohnSmitAaW lyd.-", max_size=12)


@settings(max_examples=200, deadline=None)
@given(
    name=names,
    variations=st.lists(edits, max_size=10),
    rules=st.lists(st.sampled_from([*RULE_CATALOG, "remove_title", "unknown"]), max_size=4),
    target=st.floats(0.0, 1.0),
)
def test_properties(name: str, variations: list[str], rules: list[str], target: float) -> None:
    by_rule, ratio = evaluate_rule_compliance(name, variations, rules)
    union = {v for matched in by_rule.values() for v in matched}
    assert ratio == (len(union) / len(variations) if by_rule else 0.0)
    assert set(by_rule) <= set(rules)
    score, metrics = rule_compliance_score(name, variations, rules, target)
    assert 0.0 <= score <= 1.0
    if by_rule:
        assert metrics["overall_compliant_unique_variations_count"] == len(union)
