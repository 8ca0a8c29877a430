"""The highest final score any variations can get for a name and a query: an upper bound, exact for its relaxation.

``variation_quality`` is a sum of terms that each have a best case. This module takes every term at the best value
the validator's formulas allow, given only what no variation can change:

* the part weights (``hash(name)`` in compat="miid"; for a three-part name they add to less than 1);
* the phonetic scores a part can give: the weights drawn from ``hash(part)`` only allow the sums of subsets of
  three weights, so a level none of the eight subsets falls in (or only the one at 1.0000000000000002, above every
  range) is lost whatever the variations are;
* how the similarity quality counts: ``int(p * n)`` per level, the overflow curve, the unmatched penalty.

Everything else is assumed to go the variations' way: every orthographic level is reachable, every length score is
1.0, the rule-compliance score is 1.0, no variation is filtered, every variation has a last part. The similarity
quality of each kind is then maximised exactly over how many of ``u`` unique variations fall in each level (a
max-plus convolution over the three levels), and the part score over ``u <= n`` (unique and all variations) and
``n`` (the count score). The result is an upper bound of the final score: no list of variations scores above it.
"""

from __future__ import annotations

import math
from collections.abc import Collection, Mapping
from functools import lru_cache
from typing import Any

import numpy as np
from numpy.typing import NDArray

from norma.errors import InvalidInputError
from norma.names._compat import SIMILARITY_LEVELS, Compat, check_compat, name_part_weights, phonetic_plan, string_seed
from norma.names._formulas import (
    COUNT_WEIGHT,
    LENGTH_WEIGHT,
    SIMILARITY_WEIGHT,
    UNIQUENESS_WEIGHT,
    UNMATCHED_PENALTY,
    combined_similarity,
    count_range,
    count_score,
    expected_base_count,
    final_weights,
    level_credit_array,
    rule_fraction,
)
from norma.names._labels import DEFAULT_RULE_PERCENTAGE, LEVELS, check_distribution
from norma.names._pyhash import check_hash_seed
from norma.names._validate import check_count, check_fraction, check_str

__all__ = ["score_upper_bound"]

_NEG = -math.inf
_COUNT_TAIL = 3.0
"""Count scores are enumerated up to ``3 * E`` past the tolerance; beyond it the count score is below ``e**-3``
and the rest is bounded in closed form."""


def score_upper_bound(
    name: str,
    variation_count: float,
    phonetic_similarity: Mapping[str, float] | None,
    orthographic_similarity: Mapping[str, float] | None,
    rule_based: Mapping[str, Any] | None = None,
    *,
    compat: str = "miid",
    phonetic_masks: Collection[int] = range(8),
    hash_seed: int | None = None,
) -> float:
    """An upper bound of ``variation_quality(name, variations, ...)[0]`` over every list of variations.

    Takes the arguments of :func:`norma.names.variation_quality` without the variations. ``phonetic_masks`` are
    the sets of equal phonetic codes (bit 0 Soundex, bit 1 Metaphone, bit 2 NYSIIS) the variations may reach; the
    default, all eight, makes the result a bound for any variations. Passing fewer gives the bound for variations
    limited to those (for instance without ``6``, Metaphone and NYSIIS equal but Soundex not, which only a
    respelled first sound reaches). ``hash_seed``: as in :func:`norma.names.variation_quality` (the part weights
    and phonetic weights are those of that ``PYTHONHASHSEED``).

    Raises:
        InvalidInputError: the same bad inputs :func:`variation_quality` rejects, and masks outside 0-7.
    """
    mode = check_compat(compat)
    name = check_str(name, "name")
    expected_count = check_count(variation_count, "variation_count")
    pdist = check_distribution(phonetic_similarity, "phonetic_similarity")
    odist = check_distribution(orthographic_similarity, "orthographic_similarity")
    masks = sorted(set(phonetic_masks))
    if not masks or any(isinstance(m, bool) or not isinstance(m, int) or not 0 <= m <= 7 for m in masks):
        raise InvalidInputError(
            f"phonetic_masks must be integers 0-7, not {list(phonetic_masks)!r}",
            location="phonetic_masks",
            hint="bit 0 Soundex, bit 1 Metaphone, bit 2 NYSIIS; range(8) allows every subset",
        )
    seed = check_hash_seed(hash_seed)
    has_rules = bool(rule_based) and "selected_rules" in rule_based  # type: ignore[operator]
    selected = bool(has_rules and list(rule_based.get("selected_rules", [])))  # type: ignore[union-attr]
    fraction = 0.0
    if selected:
        percentage = rule_based.get("rule_percentage", DEFAULT_RULE_PERCENTAGE)  # type: ignore[union-attr]
        fraction = rule_fraction(check_fraction(percentage, "rule_percentage", upper=100.0), True)
    return _upper_bound(name, expected_count, pdist, odist, has_rules, selected, fraction, mode, masks, seed)


def _upper_bound(
    name: str,
    variation_count: float,
    pdist: Mapping[str, float],
    odist: Mapping[str, float],
    has_rules: bool,
    selected: bool,
    fraction: float,
    mode: Compat,
    masks: list[int],
    hash_seed: int | None,
) -> float:
    """:func:`score_upper_bound` on checked arguments: ``has_rules`` (the labels have ``selected_rules``),
    ``selected`` (and they are not empty), the rule fraction."""
    expected = expected_base_count(variation_count, fraction)
    parts = name.split()
    if expected == 0 or not parts:
        base = 1.0 if expected == 0 else 0.0
    else:
        first_weight, last_weight = name_part_weights(name, mode, hash_seed)
        base = first_weight * _part_bound(parts[0], pdist, odist, expected, mode, masks, hash_seed)
        if len(parts) >= 2:
            base += last_weight * _part_bound(parts[-1], pdist, odist, expected, mode, masks, hash_seed)
    # The rule-compliance score is at most 1.0, and 0 without selected rules.
    base_weight, rule_weight = final_weights(has_rules, selected)
    return base_weight * base + rule_weight * (1.0 if selected else 0.0)


def _reachable_levels(part: str, masks: list[int], compat: Compat, hash_seed: int | None) -> set[int]:
    """Phonetic level indexes (0-2, and 3 for "in no level") that some mask's score falls in."""
    plan = phonetic_plan(string_seed(part, compat, hash_seed))
    scores = plan.by_mask if compat == "miid" else plan.by_mask_stable
    ranges = SIMILARITY_LEVELS[compat]["phonetic"]
    out = set()
    for mask in masks:
        index = next((i for i, level in enumerate(LEVELS) if ranges[level].contains(scores[mask])), 3)
        out.add(index)
    return out


def _max_plus(a: NDArray[np.float64], b: NDArray[np.float64]) -> NDArray[np.float64]:
    """``out[s] = max(a[i] + b[s - i])`` over ``0 <= i <= s`` (both of length ``u + 1``)."""
    out = np.full(a.shape[0], _NEG)
    for i, value in enumerate(a):
        if value == _NEG:
            continue
        np.maximum(out[i:], value + b[: a.shape[0] - i], out=out[i:])
    return out


@lru_cache(maxsize=1 << 14)
def _kind_quality(u: int, distribution: tuple[tuple[str, float], ...], reachable: frozenset[int]) -> float:
    """The best similarity quality of one kind for ``u`` unique variations, each falling in a reachable level.

    Counted levels (share > 0 and ``int(share * u) > 0``) earn ``share * r`` (``r = c / t``), or
    ``share * (1 - exp(-(r - 1)))`` past the target; every variation outside them costs ``0.1 / u``. A level with a
    share whose target floors to 0 counts as "no level" (its variations are unmatched), as in the validator.
    """
    counts = np.arange(u + 1, dtype=np.float64)
    total = np.zeros(u + 1)
    total[1:] = _NEG  # the sum over counted levels, by how many variations they hold
    unmatched_room = 3 in reachable
    for index, level in enumerate(LEVELS):
        share = float(dict(distribution).get(level, 0.0))
        target = int(share * u) if share > 0 else 0
        if target == 0:
            unmatched_room = unmatched_room or index in reachable
            continue
        if index not in reachable:
            continue
        gain = share * level_credit_array(counts / target) + UNMATCHED_PENALTY * counts / u
        total = _max_plus(total, gain)
    # Variations in no counted level need a reachable place to go; otherwise all u are in counted levels.
    best = float(np.max(total)) if unmatched_room else float(total[u])
    return max(0.0, best - UNMATCHED_PENALTY) if best != _NEG else 0.0


def _part_bound(
    part: str,
    pdist: Mapping[str, float],
    odist: Mapping[str, float],
    expected: float,
    compat: Compat,
    masks: list[int],
    hash_seed: int | None,
) -> float:
    """The best part score: ``0.6 * sim(u) + 0.15 * count(n) + 0.10 * u / n + 0.15`` over ``1 <= u <= n`` (the
    length score at its best, 1.0)."""
    reachable = frozenset(_reachable_levels(part, masks, compat, hash_seed))
    every = frozenset({0, 1, 2, 3})
    pkey, okey = tuple(sorted(pdist.items())), tuple(sorted(odist.items()))
    last_n = math.ceil(count_range(expected)[1] + _COUNT_TAIL * expected) + 1
    sims = [0.0]
    for u in range(1, last_n + 1):
        sims.append(combined_similarity(_kind_quality(u, pkey, reachable), _kind_quality(u, okey, every)))
    best = 0.0
    for n in range(1, last_n + 1):
        similarity = max(SIMILARITY_WEIGHT * sims[u] + UNIQUENESS_WEIGHT * u / n for u in range(1, n + 1))
        best = max(best, similarity + COUNT_WEIGHT * count_score(n, expected) + LENGTH_WEIGHT)
    # Past last_n: the similarity quality is at most the shares of the reachable levels (orthographic: all of them).
    phonetic_cap = sum(float(pdist.get(level, 0.0)) for i, level in enumerate(LEVELS) if i in reachable)
    cap = combined_similarity(min(1.0, phonetic_cap), 1.0)
    tail = (
        SIMILARITY_WEIGHT * cap + UNIQUENESS_WEIGHT + COUNT_WEIGHT * count_score(last_n + 1, expected) + LENGTH_WEIGHT
    )
    return max(best, tail)
