"""The validator's scoring formulas, one small function each, shared by the scorer, the upper bound and the generator.

``_quality`` and ``_compliance`` score with them, ``_bound`` maximises them and ``_generate`` / ``_plan`` aim at
them, so the three can no longer drift apart. Each function computes its formula operation for operation as the
MIID validator does (compat="miid" is pinned bit for bit against the validator's own outputs,
``tests/names/test_compat.py``): a caller that needs the same float as the scorer gets it by calling the function,
never by re-deriving it.

* count: ``E`` variations expected, tolerance ``min(0.2 + 0.05 * (E // 10), 0.4)``, ``R = E * tolerance``; full
  marks for ``n`` in ``[max(1, E - R), E + R]``, else ``exp(-deviation / E)``. With ``E = 0`` the validator divides
  by zero (compat="miid" raises before getting here); the formula gives 1.0 for no variation and ``exp(-n)`` for
  ``n`` variations (every one is one too many), which is what compat="stable" scores. The bound and the generator
  use the same answer (docs/design/012-names-generator.md, "Expected count 0").
* length: ``min(v/o, o/v) * (1 - min(1, |v - o| / o))``; an empty string scores 0.
* a similarity level with share ``p`` holding ``c`` of ``t = int(p * u)`` wanted: ``p * r`` for ``r = c / t <= 1``,
  else ``p * (1 - exp(-(r - 1)))``; every unmatched variation costs ``0.1 / u``.
* part: ``0.6 * similarity + 0.15 * count + 0.10 * uniqueness + 0.15 * length``, the similarity being the mean of
  the two kinds, times 0.1 below 0.2.
* rules: the rule fraction is ``rule_percentage / 100`` when rules are selected; the base score counts
  ``E = variation_count * (1 - fraction)`` variations; the compliance quantity peaks at
  ``max(1, int(n * fraction))`` compliant variations.
* final: ``0.8 * base + 0.2 * rule compliance``; ``base`` alone when the labels select an empty list of rules.
"""

from __future__ import annotations

import math

import numpy as np
from numpy.typing import NDArray

__all__ = [
    "COUNT_WEIGHT",
    "LENGTH_WEIGHT",
    "RULE_WEIGHT",
    "SIMILARITY_WEIGHT",
    "UNIQUENESS_WEIGHT",
    "UNMATCHED_PENALTY",
    "combined_similarity",
    "count_range",
    "count_score",
    "expected_base_count",
    "expected_compliant",
    "final_weights",
    "length_score",
    "level_credit",
    "level_credit_array",
    "part_total",
    "rule_fraction",
    "rule_quantity",
]

SIMILARITY_WEIGHT = 0.6
"""Weight of the similarity quality in a part's score."""
COUNT_WEIGHT = 0.15
"""Weight of the count score in a part's score."""
UNIQUENESS_WEIGHT = 0.1
"""Weight of the share of unique variations in a part's score."""
LENGTH_WEIGHT = 0.15
"""Weight of the mean length score in a part's score."""
UNMATCHED_PENALTY = 0.1
"""What the similarity quality of one kind loses for all its variations falling in no counted level."""
RULE_WEIGHT = 0.2
"""Weight of the rule-compliance score in the final score (the base score has the rest)."""
_LOW_SIMILARITY = 0.2
_LOW_SIMILARITY_FACTOR = 0.1


def count_range(expected: float) -> tuple[float, float]:
    """``(lower, upper)``: the numbers of variations that get full count marks for ``expected`` (``> 0``)."""
    tolerance = 0.2 + (0.05 * (expected // 10))
    tolerance = min(tolerance, 0.4)
    tolerance_range = expected * tolerance
    return max(1, expected - tolerance_range), expected + tolerance_range


def count_score(actual: int, expected: float) -> float:
    """The count score of ``actual`` variations when ``expected`` are expected (0 expected: see the module doc)."""
    if expected == 0:
        return 1.0 if actual == 0 else math.exp(-actual)
    lower, upper = count_range(expected)
    if lower <= actual <= upper:
        return 1.0
    deviation = lower - actual if actual < lower else actual - upper
    return math.exp(-deviation / expected)


def length_score(size: int, original: int) -> float:
    """The length score of a variation of ``size`` characters against an original of ``original`` characters."""
    if size == 0 or original == 0:
        return 0.0
    return min(size / original, original / size) * (1.0 - min(1.0, abs(size - original) / original))


def level_credit(ratio: float) -> float:
    """A level's credit per unit of share for holding ``ratio`` times its target: linear up to 1, then falling."""
    return ratio if ratio <= 1.0 else 1.0 - math.exp(-(ratio - 1.0))


def level_credit_array(ratios: NDArray[np.float64]) -> NDArray[np.float64]:
    """:func:`level_credit` of every element of ``ratios`` (numpy's ``exp``: may differ from ``math.exp`` in the
    last bit, so only the upper bound, which maximises over arrays, uses it)."""
    return np.where(ratios <= 1.0, ratios, 1.0 - np.exp(-(ratios - 1.0)))


def combined_similarity(phonetic: float, orthographic: float) -> float:
    """The similarity of a part: the mean of the two kinds' qualities, times 0.1 when below 0.2."""
    similarity = (phonetic + orthographic) / 2
    if similarity < _LOW_SIMILARITY:
        similarity *= _LOW_SIMILARITY_FACTOR
    return similarity


def part_total(similarity: float, count: float, uniqueness: float, length: float) -> float:
    """A part's score before the repetition filter's penalty: the weighted sum of its four components."""
    return (
        SIMILARITY_WEIGHT * similarity + COUNT_WEIGHT * count + UNIQUENESS_WEIGHT * uniqueness + LENGTH_WEIGHT * length
    )


def rule_fraction(rule_percentage: float, selected: bool) -> float:
    """The share of variations meant to follow the rules: ``rule_percentage / 100`` if any rule is selected."""
    return rule_percentage / 100.0 if selected else 0.0


def expected_base_count(variation_count: float, fraction: float) -> float:
    """How many variations the base score expects: those not meant to follow a rule."""
    return variation_count * (1.0 - fraction)


def expected_compliant(variations: int, fraction: float) -> int:
    """How many rule-compliant variations the compliance quantity peaks at: ``max(1, int(n * fraction))``."""
    return max(1, int(variations * fraction))


def rule_quantity(compliant: int, expected: int) -> float:
    """The compliance quantity of ``compliant`` variations against ``expected``: ``r`` up to 1, then
    ``max(0.5, 1.5 - 0.5 r)``."""
    ratio = compliant / expected
    if ratio <= 0.0:
        return 0.0
    if ratio <= 1.0:
        return ratio
    return max(0.5, 1.5 - 0.5 * ratio)


def final_weights(has_rules: bool, selected: bool) -> tuple[float, float]:
    """``(base weight, rule weight)``: ``(1, 0)`` when the labels list an empty ``selected_rules``, else
    ``(0.8, 0.2)`` (without ``selected_rules`` the rule score counts as 0)."""
    if has_rules and not selected:
        return 1.0, 0.0
    return 1.0 - RULE_WEIGHT, RULE_WEIGHT
