"""Variation quality: the score of one name part (``part_score``) and of a whole name (``variation_quality``).

part_score (empty variations -> ``(0.0, {})``), with the formulas of :mod:`norma.names._formulas` (shared with the
upper bound and the generator):

* count: tolerance = min(0.2 + 0.05 * (E // 10), 0.4), R = E * tolerance, lo = max(1, E - R), hi = E + R; 1.0 for
  n in [lo, hi], else exp(-deviation / E).
* variations matching ``(?i)(.)\\1{2,}`` are dropped; filter_penalty = min(0.2, 0.05 * dropped).
* a kept variation is a duplicate when, for an earlier unique u, 0.7 * phonetic(var, u) + 0.3 * orthographic(var, u)
  > 0.99; uniqueness = unique / len(all variations).
* length: mean over unique variations of min(v/o, o/v) * (1 - min(1, |v - o| / o)).
* similarity per kind: for Light, Medium, Far with target p > 0: c = scores in range, t = int(p * unique); if t > 0:
  r = c / t, quality += p * (r if r <= 1 else 1 - exp(-(r - 1))), matched += c; then minus
  0.1 * unmatched / unique, floored at 0. sim = mean of the two kinds, times 0.1 below 0.2.
* part = (0.60 sim + 0.15 count + 0.10 uniqueness + 0.15 length) * (1 - filter_penalty).

variation_quality: rule-compliant variations are scored by the rule compliance score; the others are split into
first and last name parts and scored with ``part_score`` against E = expected_count * (1 - rule fraction).
"""

from __future__ import annotations

import math
import re
from bisect import bisect_left, bisect_right
from collections.abc import Mapping, Sequence
from functools import lru_cache
from typing import Any

from rapidfuzz.distance import Levenshtein
from unidecode import unidecode

from norma.errors import InvalidInputError
from norma.names._compat import (
    MAX_FULL_MIID,
    SIMILARITY_LEVELS,
    Compat,
    check_compat,
    name_part_weights,
    phonetic_plan,
    string_seed,
)
from norma.names._compliance import _score as _rule_score
from norma.names._formulas import (
    UNMATCHED_PENALTY,
    combined_similarity,
    count_score,
    expected_base_count,
    final_weights,
    length_score,
    level_credit,
    part_total,
    rule_fraction,
)
from norma.names._labels import DEFAULT_RULE_PERCENTAGE, check_distribution, check_rule_based
from norma.names._pyhash import check_hash_seed
from norma.names._similarity import _orthographic, _phonetic, phonetic_codes
from norma.names._validate import check_count, check_str, check_str_list

__all__ = ["part_score", "variation_quality"]

_REPEATED = re.compile(r"(.)\1{2,}", re.IGNORECASE)
_DUPLICATE_THRESHOLD = 0.99
_distance = Levenshtein.distance

_Range = tuple[str, float, float, bool]
_RANGES: dict[str, tuple[tuple[_Range, ...], tuple[_Range, ...]]] = {
    mode: tuple(  # type: ignore[misc]
        tuple((level, r.lower, r.upper, r.upper_inclusive) for level, r in SIMILARITY_LEVELS[mode][kind].items())
        for kind in ("phonetic", "orthographic")
    )
    for mode in ("miid", "stable")
}


def _plain_sum(values: Sequence[float]) -> float:
    total = 0.0
    for value in values:
        total += value
    return total


def _safe_length(full_score: float) -> int:
    """Largest m such that two *different* strings of length <= m are never duplicates when the phonetic score
    cannot exceed ``full_score``: for distance d >= 1, orthographic <= 1 - 1/m, and float arithmetic is monotone."""
    m = 0
    while full_score * 0.7 + (1.0 - 1.0 / (m + 1)) * 0.3 <= _DUPLICATE_THRESHOLD:
        m += 1
    return m


_SAFE_LENGTH = _safe_length(MAX_FULL_MIID)
"""30: strings up to this length are near-duplicates only when identical (both modes: stable never exceeds 1.0)."""


_length_score = lru_cache(maxsize=4096)(length_score)
"""The length score, cached: a validator scores the same lengths over and over."""


def _distribution_quality(scores: list[float], ranges: tuple[_Range, ...], targets: Mapping[str, float]) -> float:
    total = len(scores)
    ordered = sorted(scores)
    quality = 0.0
    matched = 0
    for level, lower, upper, inclusive in ranges:
        target = targets.get(level, 0.0)
        if target == 0.0:
            continue
        wanted = int(target * total)
        if wanted > 0:
            # scores in [lower, upper] (or [lower, upper)), counted on the sorted list
            top = bisect_right(ordered, upper) if inclusive else bisect_left(ordered, upper)
            count = max(0, top - bisect_left(ordered, lower))
            quality += target * level_credit(count / wanted)
            matched += count
    unmatched = total - matched
    if unmatched > 0:
        quality = max(0.0, quality - UNMATCHED_PENALTY * (unmatched / total))
    return quality


@lru_cache(maxsize=1 << 16)
def _repeats(text: str) -> bool:
    """Does ``text`` repeat a character three times in a row (case-insensitive), ``(?i)(.)\\1{2,}``? Cached."""
    return _REPEATED.search(text) is not None


def _dedupe(variations: list[str], compat: Compat, hash_seed: int | None) -> tuple[list[str], int]:
    """Drop excessive repetition, then near-duplicates; returns (unique variations, number dropped by the filter).

    A kept variation is a duplicate of an earlier unique one when 0.7 * phonetic + 0.3 * orthographic > 0.99. The
    phonetic score never exceeds the plan's full score (float addition is monotone), so that bound decides most
    pairs without computing the phonetic score; two different strings of length <= ``_SAFE_LENGTH`` are never
    duplicates; identical non-empty strings always are.
    """
    repeats = [_repeats(var) for var in variations]
    # Fast path: no variation repeats a character 3 times and all are non-empty and short: then only identical
    # strings are duplicates, first occurrence kept.
    if not any(repeats) and all(variations) and max(map(len, variations)) <= _SAFE_LENGTH:
        return list(dict.fromkeys(variations)), 0
    unique: list[str] = []
    seen: set[str] = set()
    longest = 0
    filtered = 0
    miid = compat == "miid"
    for var, repeated in zip(variations, repeats, strict=True):
        if repeated:
            filtered += 1
            continue
        if unique:
            if var in seen and var:
                continue  # identical: phonetic = full score, orthographic = 1.0, so above the threshold
            if len(var) > _SAFE_LENGTH or longest > _SAFE_LENGTH or not var:
                full = phonetic_plan(string_seed(var, compat, hash_seed)).full_miid if miid else 1.0
                duplicate = False
                for other in unique:
                    if var != other and len(var) <= _SAFE_LENGTH and len(other) <= _SAFE_LENGTH:
                        continue
                    ortho = _orthographic(var, other, compat)
                    if full * 0.7 + ortho * 0.3 <= _DUPLICATE_THRESHOLD:
                        continue
                    if _phonetic(var, other, compat, hash_seed) * 0.7 + ortho * 0.3 > _DUPLICATE_THRESHOLD:
                        duplicate = True
                        break
                if duplicate:
                    continue
        unique.append(var)
        seen.add(var)
        if len(var) > longest:
            longest = len(var)
    return unique, filtered


def _part_score(
    original: str,
    variations: list[str],
    phonetic_targets: Mapping[str, float],
    orthographic_targets: Mapping[str, float],
    expected: float,
    compat: Compat,
    hash_seed: int | None,
) -> tuple[float, dict[str, Any]]:
    if not variations:
        return 0.0, {}
    if compat == "miid":
        if expected == 0:
            raise InvalidInputError(
                "expected count is 0 but there are variations to score: the MIID validator raises here",
                location="expected_count",
                hint="use compat='stable' to score this case, or expect at least one non-rule variation",
            )
        if not original or "" in variations:
            what = "the name part" if not original else "a variation"
            raise InvalidInputError(
                f"{what} is empty: the MIID validator divides by its length (ZeroDivisionError)",
                location="original_part" if not original else f"variations[{variations.index('')}]",
                hint="drop empty strings, or use compat='stable'",
            )
    elif not original.strip():
        raise InvalidInputError("the name part is empty", location="original_part", hint="pass a non-empty name part")

    count = count_score(len(variations), expected)
    unique, filtered = _dedupe(variations, compat, hash_seed)
    filter_penalty = min(0.2, filtered * 0.05) if filtered > 0 else 0.0
    uniqueness = len(unique) / len(variations)

    miid = compat == "miid"
    plan = phonetic_plan(string_seed(original, compat, hash_seed))
    by_mask = plan.by_mask if miid else plan.by_mask_stable
    code0, code1, code2 = phonetic_codes(original)
    olen = len(original)
    sizes = [len(var) for var in unique]
    lengths = [_length_score(size, olen) for size in sizes]
    others = [phonetic_codes(var) for var in unique]
    phonetic_scores = [by_mask[(code0 == c[0]) | (code1 == c[1]) << 1 | (code2 == c[2]) << 2] for c in others]
    distance = _distance
    orthographic_scores = [
        (1.0 - (distance(original, var) / (olen if olen >= size else size))) if (olen or size) else 1.0
        for var, size in zip(unique, sizes, strict=True)
    ]
    mean_length = ((_plain_sum(lengths) if miid else math.fsum(lengths)) / len(lengths)) if lengths else 0.0

    phonetic_ranges, orthographic_ranges = _RANGES[compat]
    phonetic_quality = _distribution_quality(phonetic_scores, phonetic_ranges, phonetic_targets)
    orthographic_quality = _distribution_quality(orthographic_scores, orthographic_ranges, orthographic_targets)
    similarity = combined_similarity(phonetic_quality, orthographic_quality)
    score = part_total(similarity, count, uniqueness, mean_length)
    if filter_penalty > 0:
        score = max(0.0, score * (1.0 - filter_penalty))
    metrics: dict[str, Any] = {
        "similarity": {"phonetic": phonetic_quality, "orthographic": orthographic_quality, "combined": similarity},
        "count": {"actual": len(variations), "expected": expected, "score": count},
        "uniqueness": {"unique_count": len(unique), "total_count": len(variations), "score": uniqueness},
        "length": {"score": mean_length},
        "filter": {"filtered_count": filtered, "penalty": filter_penalty},
        "unique_variations": unique,
        "phonetic_scores": phonetic_scores,
        "orthographic_scores": orthographic_scores,
        "length_scores": lengths,
        "score": score,
    }
    return score, metrics


def part_score(
    original_part: str,
    variations: Sequence[str],
    phonetic_similarity: Mapping[str, float] | None,
    orthographic_similarity: Mapping[str, float] | None,
    expected_count: float,
    *,
    compat: str = "miid",
    transliterate: bool = False,
    hash_seed: int | None = None,
) -> tuple[float, dict[str, Any]]:
    """Score the variations of one name part (first or last name) against it: ``(score, metrics)``.

    ``phonetic_similarity`` / ``orthographic_similarity`` are target distributions such as
    ``{"Light": 0.2, "Medium": 0.6, "Far": 0.2}`` (``None``: ``{"Medium": 1.0}``, the validator's default). In
    compat="miid", an expected count of 0, an empty part or an empty variation raise :class:`InvalidInputError`
    where the validator raises. ``transliterate=True`` runs the part and the variations through ``unidecode``.
    ``hash_seed``: as in :func:`variation_quality`.
    """
    mode = check_compat(compat)
    original = check_str(original_part, "original_part")
    items = check_str_list(variations, "variations")
    phonetic_targets = check_distribution(phonetic_similarity, "phonetic_similarity")
    orthographic_targets = check_distribution(orthographic_similarity, "orthographic_similarity")
    expected = check_count(expected_count, "expected_count")
    seed = check_hash_seed(hash_seed)
    if transliterate:
        original = unidecode(original)
        items = [unidecode(item) for item in items]
    return _part_score(original, items, phonetic_targets, orthographic_targets, expected, mode, seed)


def _split_parts(name: str, variations: list[str], compat: Compat) -> tuple[str, str | None, list[str], list[str]]:
    parts = name.split()
    if len(parts) < 2:
        # The validator keeps the unsplit name (surrounding spaces included) for a one-part name; stable strips it.
        first, last = (name if compat == "miid" or not parts else parts[0]), None
    else:
        first, last = parts[0], parts[-1]
    firsts: list[str] = []
    lasts: list[str] = []
    for variation in variations:
        pieces = variation.split()
        if len(pieces) >= 2:
            firsts.append(pieces[0])
            lasts.append(pieces[-1])
        elif pieces:
            firsts.append(pieces[0])
    return first, last, firsts, lasts


def _variation_quality(
    name: str,
    variations: list[str],
    phonetic_targets: Mapping[str, float],
    orthographic_targets: Mapping[str, float],
    expected_count: float,
    rule_based: Mapping[str, Any] | None,
    compat: Compat,
    hash_seed: int | None,
) -> tuple[float, float, dict[str, Any]]:
    rule_score = 0.0
    rule_metrics: dict[str, Any] = {}
    compliant: set[str] = set()
    fraction = 0.0
    has_rules = bool(rule_based) and "selected_rules" in rule_based  # type: ignore[operator]
    selected: list[str] = list(rule_based.get("selected_rules", [])) if has_rules else []  # type: ignore[union-attr]
    if selected:
        percentage = rule_based.get("rule_percentage", DEFAULT_RULE_PERCENTAGE)  # type: ignore[union-attr]
        fraction = rule_fraction(percentage, True)
        rule_score, rule_metrics = _rule_score(name, variations, selected, fraction)
        compliant = set(rule_metrics["rules_satisfied_by_variation"])
    others = [variation for variation in variations if variation not in compliant]
    first, last, firsts, lasts = _split_parts(name, others, compat)
    first_weight, last_weight = name_part_weights(name, compat, hash_seed)
    expected = expected_base_count(expected_count, fraction)

    first_score, first_metrics = _part_score(
        first, firsts, phonetic_targets, orthographic_targets, expected, compat, hash_seed
    )
    last_score = 0.0
    last_metrics: dict[str, Any] = {}
    if last:
        last_score, last_metrics = _part_score(
            last, lasts, phonetic_targets, orthographic_targets, expected, compat, hash_seed
        )
        if len(lasts) < len(others):
            missing = (len(others) - len(lasts)) / len(others)
            last_score *= 1.0 - missing
    base = first_weight * first_score + last_weight * last_score if last else first_score
    if expected == 0 and (compat == "miid" or not others):
        base = 1.0
    base_weight, rule_weight = final_weights(has_rules, bool(selected))
    final = base_weight * base + rule_weight * rule_score
    if compat == "stable":
        base, final = min(1.0, base), min(1.0, final)
    metrics: dict[str, Any] = {
        "first_name": {"score": first_score, "metrics": first_metrics},
        "base_score": base,
        "final_score": final,
        "variation_count": len(variations),
        "non_rule_compliant_variations_count": len(others),
        "rule_compliant_variations_count": len(compliant),
        "expected_base_count": expected,
        "rule_fraction": fraction,
        "part_weights": {"first": first_weight, "last": last_weight if last else 0.0},
        "weights": {"base": base_weight, "rule_compliance": rule_weight},
        "compat": compat,
    }
    if last:
        metrics["last_name"] = {"score": last_score, "metrics": last_metrics}
    if rule_based:
        metrics["rule_compliance"] = {"score": rule_score, "metrics": rule_metrics}
    return final, base, metrics


def variation_quality(
    name: str,
    variations: Sequence[str],
    phonetic_similarity: Mapping[str, float] | None,
    orthographic_similarity: Mapping[str, float] | None,
    expected_count: float,
    rule_based: Mapping[str, Any] | None = None,
    *,
    compat: str = "miid",
    transliterate: bool = False,
    hash_seed: int | None = None,
) -> tuple[float, float, dict[str, Any]]:
    """The validator's quality of ``variations`` for seed ``name``: ``(final, base, metrics)``.

    ``rule_based`` is the query's labels (``{"selected_rules": [...], "rule_percentage": 30}``). Without
    ``selected_rules`` the final score is 0.8 * base (the rule score counts as 0); with an empty ``selected_rules``
    list it is the base score; otherwise 0.8 * base + 0.2 * rule compliance score.

    ``transliterate=True`` scores non-Latin names: the seed name and every variation go through ``unidecode``
    before anything else (rules, splitting, phonetic and orthographic scores, seeds).

    In compat="miid" the validator seeds its phonetic and part weights with ``hash()`` of strings, so its score
    depends on the ``PYTHONHASHSEED`` of its process. ``hash_seed=N`` (0..4294967295) gives the score under
    ``PYTHONHASHSEED=N``, the same in every process; ``None`` (the default) uses this process's own ``hash()``, so
    the result varies between processes unless ``PYTHONHASHSEED`` is set. No effect in compat="stable".
    """
    mode = check_compat(compat)
    seed_name = check_str(name, "name")
    items = check_str_list(variations, "variations")
    phonetic_targets = check_distribution(phonetic_similarity, "phonetic_similarity")
    orthographic_targets = check_distribution(orthographic_similarity, "orthographic_similarity")
    expected = check_count(expected_count, "expected_count")
    labels = check_rule_based(rule_based)
    seed = check_hash_seed(hash_seed)
    if transliterate:
        seed_name = unidecode(seed_name)
        items = [unidecode(item) for item in items]
    if mode == "stable" and not seed_name.strip():
        raise InvalidInputError("the name is empty", location="name", hint="pass a non-empty seed name")
    final, base, metrics = _variation_quality(
        seed_name, items, phonetic_targets, orthographic_targets, expected, labels, mode, seed
    )
    if transliterate:
        metrics["transliterated_name"] = seed_name
    return final, base, metrics
