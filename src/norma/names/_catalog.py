"""The MIID rule catalog: rule ids, their descriptions and how a list of rules reads in a query.

The catalog holds the 19 rules a validator samples from, in the validator's order (its categories flattened:
character replacement, swapping, removal, insertion, name formatting, structure change). Three more rules have
evaluators but are never selected: ``remove_title``, ``remove_random_special_character`` and
``replace_random_special_character_with_random_special_character``; none of the three has a description.
"""

from __future__ import annotations

from collections.abc import Sequence

from norma.names._validate import check_str, check_str_list

__all__ = [
    "EXTRA_RULES",
    "RULE_CATALOG",
    "RULE_DESCRIPTIONS",
    "format_rules_for_query",
    "rule_description",
]

RULE_CATALOG: tuple[str, ...] = (
    "replace_spaces_with_random_special_characters",
    "replace_double_letters_with_single_letter",
    "replace_random_vowel_with_random_vowel",
    "replace_random_consonant_with_random_consonant",
    "swap_adjacent_consonants",
    "swap_adjacent_syllables",
    "swap_random_letter",
    "delete_random_letter",
    "remove_random_vowel",
    "remove_random_consonant",
    "remove_all_spaces",
    "duplicate_random_letter_as_double_letter",
    "insert_random_letter",
    "add_random_leading_title",
    "add_random_trailing_title",
    "initial_only_first_name",
    "shorten_name_to_initials",
    "shorten_name_to_abbreviations",
    "name_parts_permutations",
)
"""The 19 rules a query may select, in catalog order (``random.sample`` draws from this flat list)."""

EXTRA_RULES: tuple[str, ...] = (
    "remove_title",
    "remove_random_special_character",
    "replace_random_special_character_with_random_special_character",
)
"""Rules with an evaluator that queries never select."""

RULE_DESCRIPTIONS: dict[str, str] = {
    "replace_spaces_with_random_special_characters": "Replace spaces with special characters",
    "replace_double_letters_with_single_letter": "Replace double letters with a single letter",
    "replace_random_vowel_with_random_vowel": "Replace random vowels with different vowels",
    "replace_random_consonant_with_random_consonant": "Replace random consonants with different consonants",
    "swap_adjacent_consonants": "Swap adjacent consonants",
    "swap_adjacent_syllables": "Swap adjacent syllables",
    "swap_random_letter": "Swap random adjacent letters",
    "delete_random_letter": "Delete a random letter",
    "remove_random_vowel": "Remove a random vowel",
    "remove_random_consonant": "Remove a random consonant",
    "remove_all_spaces": "Remove all spaces",
    "duplicate_random_letter_as_double_letter": "Duplicate a random letter",
    "insert_random_letter": "Insert a random letter",
    "add_random_leading_title": "Add a title prefix (Mr., Dr., etc.)",
    "add_random_trailing_title": "Add a title suffix (Jr., PhD, etc.)",
    "initial_only_first_name": "Use first name initial with last name",
    "shorten_name_to_initials": "Convert name to initials",
    "shorten_name_to_abbreviations": "Abbreviate name parts",
    "name_parts_permutations": "Reorder name parts",
}
"""Human-readable description of each rule, as queries show it: exactly the 19 catalog rules, as in the validator's
``rule_extractor.py`` (62bb538). Every other rule, ``remove_title`` included, reads ``"Apply the {rule}
transformation"``."""


def rule_description(rule: str) -> str:
    """The description of ``rule``; an unknown rule reads ``"Apply the {rule} transformation"``."""
    check_str(rule, "rule")
    return RULE_DESCRIPTIONS.get(rule, f"Apply the {rule} transformation")


def format_rules_for_query(rules: Sequence[str]) -> str:
    """The sentence a query uses for ``rules``.

    No rules give ``""``; one rule ``"Additionally, generate variations that: {d1}."``; more rules
    ``"Additionally, generate variations that perform these transformations: {d1}, {d2}, and {d3}."`` (two rules
    read ``"d1, and d2"``, as in the validator).
    """
    names = check_str_list(rules, "rules")
    if not names:
        return ""
    descriptions = [rule_description(rule) for rule in names]
    if len(descriptions) == 1:
        return f"Additionally, generate variations that: {descriptions[0]}."
    joined = ", ".join(descriptions[:-1]) + f", and {descriptions[-1]}"
    return f"Additionally, generate variations that perform these transformations: {joined}."
