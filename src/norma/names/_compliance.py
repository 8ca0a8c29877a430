"""Rule compliance: which variations follow which rules, and the rule compliance score.

Rules that cannot apply to a name are dropped first (the validator's "impossible rules"): the four multi-part rules
for a name with fewer than two parts, the two space rules for a name without ``" "``, the double-letter rule
unless two adjacent characters are equal (lower-cased, any characters), and ``swap_adjacent_consonants`` unless
two adjacent characters are different consonants. Unknown rule ids are kept and never satisfied.

Score (``rule_compliance_score``): C unique compliant variations, X = max(1, int(len(variations) * p)),
r = C / X; quantity = r up to 1, then max(0.5, 1.5 - 0.5 r); diversity = rules satisfied at least once / effective
rules (0 when C = 0); score = quantity * diversity. No variations or no rules: 0.0; every rule impossible: 1.0.

An evaluator that raises counts the variation as not compliant with its rule, as in the validator (which logs a
warning and goes on). norma does the same and never silently: the first failure of each (rule, exception type) in a
process is logged on the ``norma.names`` logger with its traceback, later ones at debug level, and every one is
counted in :func:`evaluator_errors` (per process: each worker of a process pool counts its own).
"""

from __future__ import annotations

import logging
import threading
from collections import Counter
from collections.abc import Callable, Sequence
from functools import lru_cache
from typing import Any

from norma.names._compat import check_compat
from norma.names._evaluators import ASCII_LENGTH_CHANGE, RAW_LENGTH_CHANGE, RULE_EVALUATORS, VOWELS
from norma.names._formulas import expected_compliant, rule_quantity
from norma.names._labels import DEFAULT_RULE_PERCENTAGE
from norma.names._validate import check_fraction, check_str, check_str_list

__all__ = [
    "effective_rules",
    "evaluate_rule_compliance",
    "evaluator_errors",
    "reset_evaluator_errors",
    "rule_compliance_score",
]

logger = logging.getLogger("norma.names")
_errors: Counter[tuple[str, str]] = Counter()
_errors_lock = threading.Lock()

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
            matched = [variation for variation in variations if _safe(rule, evaluator, original, variation)]
        by_rule[rule] = matched if repeat == 1 else [v for v in matched for _ in range(repeat)]
        compliant.update(matched)
    return by_rule, len(compliant) / len(variations)


def _safe(rule: str, evaluator: Callable[[str, str], bool], original: str, variation: str) -> bool:
    """``evaluator(original, variation)``; an exception is logged, counted and means "not compliant"."""
    try:
        return bool(evaluator(original, variation))
    except Exception as exc:
        _record_error(rule, exc)
        return False


def _record_error(rule: str, exc: Exception) -> None:
    key = (rule, type(exc).__name__)
    with _errors_lock:
        _errors[key] += 1
        first = _errors[key] == 1
    if first:
        logger.warning(
            "the evaluator of rule %r raised %s: the variation counts as not compliant (as in the validator); "
            "later %s errors of this rule are logged at debug level and counted in evaluator_errors()",
            rule,
            key[1],
            key[1],
            exc_info=exc,
        )
    else:
        logger.debug("the evaluator of rule %r raised %s: %s", rule, key[1], exc)


def evaluator_errors() -> dict[tuple[str, str], int]:
    """How many times each rule's evaluator raised in this process, by ``(rule id, exception type name)``.

    Each such variation counted as not compliant with that rule (the validator's outcome); a non-empty result
    means scores may be lower than they should: an evaluator has a bug or was given input it cannot handle.
    """
    with _errors_lock:
        return dict(_errors)


def reset_evaluator_errors() -> None:
    """Forget the counts of :func:`evaluator_errors` (the next failure of each kind is logged as a warning again)."""
    with _errors_lock:
        _errors.clear()


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
    expected = expected_compliant(len(variations), target)
    quantity = rule_quantity(count, expected)
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
    target_percentage: float = DEFAULT_RULE_PERCENTAGE / 100,
    *,
    compat: str = "miid",
) -> tuple[float, dict[str, Any]]:
    """The rule compliance score in [0, 1] and its metrics (the validator's keys).

    ``target_percentage`` is a fraction (default: the validator's 30 %): 0.3 means 30 % of the variations should
    follow a rule. Same in both modes.
    """
    check_compat(compat)
    check_str(original, "original")
    items = check_str_list(variations, "variations")
    names = check_str_list(rules, "rules")
    target = check_fraction(target_percentage, "target_percentage")
    return _score(original, items, names, target)
