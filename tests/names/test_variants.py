"""Candidate strings: every constructive rule variation follows its rule; edit pools are clean."""

from __future__ import annotations

import random
import re

import pytest

from norma.names import RULE_CATALOG, evaluate_rule, evaluate_rule_compliance
from norma.names._similarity import phonetic_codes
from norma.names._variants import alphabet_of, edit_pool, onset_variants, rule_pool

NAMES = ["John Smith", "Anna Lee Hall", "Matthew", "Mary-Jane Watson", "Иван Петров"]


@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize("rule", RULE_CATALOG)
def test_rule_candidates_follow_their_rule(name: str, rule: str) -> None:
    effective = evaluate_rule_compliance(name, [name], [rule])[0]
    candidates = rule_pool(name, rule)
    if rule not in effective:
        assert not any(evaluate_rule(rule, name, c) for c in candidates)
        return
    vowel_rules = ("replace_random_vowel_with_random_vowel", "remove_random_vowel")
    if rule in vowel_rules and not any(ch in "aeiou" for ch in name.lower()):
        assert candidates == []
        return
    assert candidates, f"no candidate for {rule} on {name!r}"
    failing = [c for c in candidates if not evaluate_rule(rule, name, c)]
    assert not failing, failing[:5]
    assert len(candidates) == len(set(candidates))
    assert name not in candidates


def test_unknown_and_extra_rules_have_no_constructor() -> None:
    assert rule_pool("John Smith", "no_such_rule") == []
    assert rule_pool("John Smith", "remove_title") == []


@pytest.mark.parametrize("part", ["Smith", "Anna", "Jean-Luc", "Петров", "Li"])
def test_edit_pool_is_clean(part: str) -> None:
    pool = edit_pool(part, random.Random(3))
    assert pool[0] == part
    assert len(pool) == len(set(pool))
    assert len(pool) > 20
    assert not [p for p in pool if re.search(r"(?i)(.)\1{2,}", p)]
    same_length = [p for p in pool if len(p) == len(part)]
    assert all(p[i] == part[i] for p in same_length for i, ch in enumerate(part) if not ch.isalpha())
    letters = set(alphabet_of(part))
    assert all(ch.lower() in letters or not ch.isalpha() for p in pool for ch in p)
    assert edit_pool(part, random.Random(3)) == pool


def test_non_latin_alphabet_stays_in_its_script() -> None:
    assert alphabet_of("Smith") == "abcdefghijklmnopqrstuvwxyz"
    cyrillic = alphabet_of("Петров")
    assert cyrillic
    assert all("\u0400" <= ch <= "\u04ff" for ch in cyrillic)


def _matching_codes(part: str, text: str) -> int:
    """Bit 0 Soundex, bit 1 Metaphone, bit 2 NYSIIS: which codes of ``text`` equal ``part``'s."""
    a, b = phonetic_codes(part), phonetic_codes(text)
    return sum(1 << i for i in range(3) if a[i] == b[i])


@pytest.mark.parametrize(
    ("part", "wanted"),
    [
        ("Baker", {0, 1, 2, 3, 4, 5, 7}),  # NYSIIS alone: a final "s" ("Bakers")
        ("Adams", {0, 1, 2, 3, 4, 5, 7}),  # Metaphone alone: a silent "gh" ("Aghdams")
        ("Carter", {0, 1, 2, 3, 5, 6, 7}),  # Metaphone and NYSIIS without Soundex: "Karter"
        ("carter", {6}),  # the same for the lower-case seeds the validator sends
        ("Nancy", {6}),  # "Knancy"
        ("frank", {6}),  # "phrank"
    ],
)
def test_edit_pool_reaches_every_partial_phonetic_match(part: str, wanted: set[int]) -> None:
    pool = edit_pool(part, random.Random(0))
    assert {_matching_codes(part, text) for text in pool} >= wanted


@pytest.mark.parametrize(
    ("part", "respelled"),
    [("Karen", "Caren"), ("karen", "caren"), ("Nancy", "Knancy"), ("Frank", "Phrank"), ("KING", "CKING")],
)
def test_onset_variants_respell_the_first_sound(part: str, respelled: str) -> None:
    variants = onset_variants(part)
    assert respelled in variants
    assert part not in variants
    # Metaphone and NYSIIS hear the respelling as the part, Soundex (which keeps the first letter) does not.
    assert _matching_codes(part, respelled) == 6


def test_onset_variants_leave_non_latin_and_non_letter_starts_alone() -> None:
    assert onset_variants("Иван") == []
    assert onset_variants("'Abdallah") == []
    assert onset_variants("") == []
