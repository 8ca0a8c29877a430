"""Rule compliance: which variations follow which rules, and the rule compliance score.

Rules that cannot apply to a name are dropped first (the validator's "impossible rules"): the four multi-part rules
for a name with fewer than two parts, the two space rules for a name without ``" "``, the double-letter rule
unless two adjacent characters are equal (lower-cased, any characters), and ``swap_adjacent_consonants`` unless
two adjacent characters are different consonants. Unknown rule ids are kept and never satisfied.

Score (``rule_compliance_score``): C unique compliant variations, X = max(1, int(len(variations) * p)),
r = C / X; quantity = r up to 1, then max(0.5, 1.5 - 0.5 r); diversity = rules satisfied at least once / effective
rules (0 when C = 0); score = quantity * diversity. No variations or no rules: 0.0; every rule impossible: 1.0.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from functools import lru_cache
from typing import Any

from norma.names._compat import check_compat
from norma.names._evaluators import ASCII_LENGTH_CHANGE, RAW_LENGTH_CHANGE, RULE_EVALUATORS, VOWELS
from norma.names._validate import check_fraction, check_str, check_str_list

__all__ = [
    "effective_rules",
    "evaluate_rule_compliance",
    "rule_compliance_score",
]

_MULTI_PART_RULES = frozenset(
    {"name_parts_permutations", "initial_only_first_name", "shorten_name_to_initials", "shorten_name_to_abbreviations"}
)
_SPACE_RULES = frozenset({"replace_spaces_with_random_special_characters", "remove_all_spaces"})


@lru_cache(maxsize=1 << 14)
def _has_double_letters(name: str) -> bool:
    lower = name.lower()
    return any(lower[i] == lower[i + 1] for i in range(len(lower) - 1))


@lru_cache(maxsize=1 << 14)
def _has_different_adjacent_consonants(name: str) -> bool:
    lower = name.lower()
    for i in range(len(lower) - 1):
        a = lower[i]
        b = lower[i + 1]
        if a.isalpha() and a not in VOWELS and b.isalpha() and b not in VOWELS and a != b:
            return True
    return False


def effective_rules(original: str, rules: Sequence[str]) -> list[str]:
    """``rules`` without the ones that are impossible for ``original`` (duplicates and unknown ids are kept)."""
    kept: list[str] = []
    parts: int | None = None
    for rule in rules:
        if rule in _MULTI_PART_RULES:
            if parts is None:
                parts = len(original.split())
            if parts < 2:
                continue
        if rule in _SPACE_RULES and " " not in original:
            continue
        if rule == "replace_double_letters_with_single_letter" and not _has_double_letters(original):
            continue
        if rule == "swap_adjacent_consonants" and not _has_different_adjacent_consonants(original):
            continue
        kept.append(rule)
    return kept


def _evaluate(original: str, variations: list[str], rules: Sequence[str]) -> tuple[dict[str, list[str]], float]:
    effective = effective_rules(original, rules)
    if not variations or not effective:
        return {}, 0.0
    times: dict[str, int] = {}
    for rule in effective:
        times[rule] = times.get(rule, 0) + 1
    by_rule: dict[str, list[str]] = {}
    compliant: set[str] = set()
    for rule, repeat in times.items():
        # Rule-major is faster; the validator loops variation-major, which matters only for a rule listed twice:
        # each matching variation then appears ``repeat`` times in a row.
        evaluator = RULE_EVALUATORS.get(rule)
        if evaluator is None:
            by_rule[rule] = []
            continue
        change = RAW_LENGTH_CHANGE.get(evaluator)
        ascii_change = ASCII_LENGTH_CHANGE.get(evaluator) if original.isascii() else None
        try:
            if change is not None:  # skip the call where the raw lengths already rule the variation out
                length = len(original) + change
                matched = [v for v in variations if len(v) == length and evaluator(original, v)]
            elif ascii_change is not None:  # same, when lower() cannot change the lengths
                length = len(original) + ascii_change
                matched = [v for v in variations if (len(v) == length or not v.isascii()) and evaluator(original, v)]
            else:
                matched = [variation for variation in variations if evaluator(original, variation)]
        except Exception:  # the validator logs and counts the variation as not compliant: redo one by one
            matched = [variation for variation in variations if _safe(evaluator, original, variation)]
        by_rule[rule] = matched if repeat == 1 else [v for v in matched for _ in range(repeat)]
        compliant.update(matched)
    return by_rule, len(compliant) / len(variations)


def _safe(evaluator: Callable[[str, str], bool], original: str, variation: str) -> bool:
    try:
        return bool(evaluator(original, variation))
    except Exception:
        return False


def _score(original: str, variations: list[str], rules: Sequence[str], target: float) -> tuple[float, dict[str, Any]]:
    if not variations or not rules:
        return 0.0, _summary({}, {}, 0.0, 0, 0, 0.0, 0.0, 0, len(rules), 0.0)
    by_rule, ratio = _evaluate(original, variations, rules)
    if not by_rule:
        # Every rule is impossible for this name: not penalised.
        return 1.0, _summary({}, {}, 0.0, 0, 0, 1.0, 1.0, 0, len(rules), 1.0)
    satisfied_by: dict[str, list[str]] = {}
    for rule, matched in by_rule.items():
        for variation in matched:
            rules_of = satisfied_by.get(variation)
            if rules_of is None:
                satisfied_by[variation] = [rule]
            elif rule not in rules_of:
                rules_of.append(rule)
    count = len(satisfied_by)
    expected = max(1, int(len(variations) * target))
    ratio_to_expected = count / expected
    if ratio_to_expected <= 0.0:
        quantity = 0.0
    elif ratio_to_expected <= 1.0:
        quantity = ratio_to_expected
    else:
        quantity = max(0.5, 1.5 - 0.5 * ratio_to_expected)
    if count == 0:
        met = 0
        diversity = 0.0
    else:
        met = sum(1 for matched in by_rule.values() if matched)
        diversity = met / len(by_rule)
    score = quantity * diversity
    return score, _summary(by_rule, satisfied_by, ratio, count, expected, quantity, diversity, met, len(rules), score)


def _summary(
    by_rule: dict[str, list[str]],
    satisfied_by: dict[str, list[str]],
    ratio: float,
    count: int,
    expected: int,
    quantity: float,
    diversity: float,
    met: int,
    total_rules: int,
    score: float,
) -> dict[str, Any]:
    return {
        "compliant_variations_by_rule": by_rule,
        "rules_satisfied_by_variation": satisfied_by,
        "compliance_ratio_overall_variations": ratio,
        "overall_compliant_unique_variations_count": count,
        "expected_compliant_variations_count": expected,
        "quantity_score": float(quantity),
        "rule_diversity_factor": float(diversity),
        "num_target_rules_met": met,
        "total_target_rules": total_rules,
        "score": float(score),
    }


def evaluate_rule_compliance(
    original: str, variations: Sequence[str], rules: Sequence[str], *, compat: str = "miid"
) -> tuple[dict[str, list[str]], float]:
    """Which variations follow which (possible) rules.

    Returns ``({rule: compliant variations}, unique compliant / len(variations))``; ``({}, 0.0)`` when there are no
    variations or no rule is possible. A rule listed twice lists each matching variation twice; an unknown rule
    maps to an empty list. Same in both modes.
    """
    check_compat(compat)
    check_str(original, "original")
    items = check_str_list(variations, "variations")
    names = check_str_list(rules, "rules")
    return _evaluate(original, items, names)


def rule_compliance_score(
    original: str,
    variations: Sequence[str],
    rules: Sequence[str],
    target_percentage: float = 0.3,
    *,
    compat: str = "miid",
) -> tuple[float, dict[str, Any]]:
    """The rule compliance score in [0, 1] and its metrics (the validator's keys).

    ``target_percentage`` is a fraction: 0.3 means 30 % of the variations should follow a rule. Same in both modes.
    """
    check_compat(compat)
    check_str(original, "original")
    items = check_str_list(variations, "variations")
    names = check_str_list(rules, "rules")
    target = check_fraction(target_percentage, "target_percentage")
    return _score(original, items, names, target)
