"""The rule catalog, descriptions and the query sentence."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from norma.errors import InvalidInputError
from norma.names import RULE_CATALOG, RULE_DESCRIPTIONS, format_rules_for_query, rule_description
from norma.names._catalog import EXTRA_RULES

EXPECTED = [
    ("replace_spaces_with_random_special_characters", "Replace spaces with special characters"),
    ("replace_double_letters_with_single_letter", "Replace double letters with a single letter"),
    ("replace_random_vowel_with_random_vowel", "Replace random vowels with different vowels"),
    ("replace_random_consonant_with_random_consonant", "Replace random consonants with different consonants"),
    ("swap_adjacent_consonants", "Swap adjacent consonants"),
    ("swap_adjacent_syllables", "Swap adjacent syllables"),
    ("swap_random_letter", "Swap random adjacent letters"),
    ("delete_random_letter", "Delete a random letter"),
    ("remove_random_vowel", "Remove a random vowel"),
    ("remove_random_consonant", "Remove a random consonant"),
    ("remove_all_spaces", "Remove all spaces"),
    ("duplicate_random_letter_as_double_letter", "Duplicate a random letter"),
    ("insert_random_letter", "Insert a random letter"),
    ("add_random_leading_title", "Add a title prefix (Mr., Dr., etc.)"),
    ("add_random_trailing_title", "Add a title suffix (Jr., PhD, etc.)"),
    ("initial_only_first_name", "Use first name initial with last name"),
    ("shorten_name_to_initials", "Convert name to initials"),
    ("shorten_name_to_abbreviations", "Abbreviate name parts"),
    ("name_parts_permutations", "Reorder name parts"),
]


def test_catalog_order_and_size() -> None:
    assert isinstance(RULE_CATALOG, tuple)
    assert list(RULE_CATALOG) == [rule for rule, _ in EXPECTED]
    assert len(RULE_CATALOG) == 19


@pytest.mark.parametrize(("rule", "description"), EXPECTED)
def test_descriptions(rule: str, description: str) -> None:
    assert RULE_DESCRIPTIONS[rule] == description
    assert rule_description(rule) == description


def test_extras_are_outside_the_catalog() -> None:
    assert set(EXTRA_RULES).isdisjoint(RULE_CATALOG)
    for rule in EXTRA_RULES:
        assert rule_description(rule) == f"Apply the {rule} transformation"


def test_descriptions_are_exactly_the_catalog() -> None:
    # The validator's RULE_DESCRIPTIONS (62bb538) has the 19 catalog rules and nothing else: remove_title has an
    # evaluator but no description.
    assert list(RULE_DESCRIPTIONS) == list(RULE_CATALOG)
    assert "remove_title" not in RULE_DESCRIPTIONS
    assert format_rules_for_query(["remove_title"]) == (
        "Additionally, generate variations that: Apply the remove_title transformation."
    )
    assert format_rules_for_query(["remove_title", "remove_all_spaces"]) == (
        "Additionally, generate variations that perform these transformations: "
        "Apply the remove_title transformation, and Remove all spaces."
    )


def test_unknown_rule_description() -> None:
    assert rule_description("mirror_name") == "Apply the mirror_name transformation"


def test_format_no_rule() -> None:
    assert format_rules_for_query([]) == ""


def test_format_one_rule() -> None:
    assert format_rules_for_query(["swap_random_letter"]) == (
        "Additionally, generate variations that: Swap random adjacent letters."
    )


def test_format_two_rules_keeps_the_validator_comma() -> None:
    assert format_rules_for_query(["delete_random_letter", "remove_all_spaces"]) == (
        "Additionally, generate variations that perform these transformations: "
        "Delete a random letter, and Remove all spaces."
    )


def test_format_three_rules() -> None:
    text = format_rules_for_query(["delete_random_letter", "remove_all_spaces", "odd"])
    assert text == (
        "Additionally, generate variations that perform these transformations: "
        "Delete a random letter, Remove all spaces, and Apply the odd transformation."
    )


@pytest.mark.parametrize("bad", ["swap_random_letter", [1], None])
def test_format_rejects_non_lists(bad: object) -> None:
    with pytest.raises(InvalidInputError):
        format_rules_for_query(bad)  # type: ignore[arg-type]


@given(st.lists(st.sampled_from(RULE_CATALOG), min_size=2, max_size=3, unique=True))
def test_format_mentions_every_description_in_order(rules: list[str]) -> None:
    text = format_rules_for_query(rules)
    positions = [text.index(RULE_DESCRIPTIONS[rule]) for rule in rules]
    assert positions == sorted(positions)
    assert text.endswith(f", and {RULE_DESCRIPTIONS[rules[-1]]}.")
