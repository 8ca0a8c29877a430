"""The names functions called with a query's labels dict, as the validator draws it and ``build_query`` returns it.

A MIID query's labels are ``{"variation_count", "phonetic_similarity", "orthographic_similarity", "rule_based":
{"selected_rules", "rule_percentage", ...}}``. The functions required by the validator's interface take these as
separate positional arguments; these take the dict, so that code holding a query (a miner, a benchmark, a test)
does not spell out the unpacking each time.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping
from typing import Any

from norma.errors import InvalidInputError
from norma.names._bound import score_upper_bound
from norma.names._generate import generate_variations
from norma.names._quality import variation_quality

__all__ = ["check_labels", "generate_from_labels", "quality_from_labels", "upper_bound_from_labels"]

DEFAULT_RULE_PERCENTAGE = 30
"""The validator's rule percentage when ``rule_based`` has selected rules but no ``rule_percentage``."""


def check_labels(labels: object) -> Mapping[str, Any]:
    """Return ``labels`` if it is a mapping with a ``variation_count``; else raise :class:`InvalidInputError`."""
    if not isinstance(labels, Mapping):
        raise InvalidInputError(
            f"labels must be an object, not {type(labels).__name__}",
            location="labels",
            hint='pass {"variation_count": 10, "phonetic_similarity": {...}, ...}, as build_query returns',
        )
    if "variation_count" not in labels:
        raise InvalidInputError("labels lack variation_count", location="labels.variation_count")
    return labels


def quality_from_labels(
    name: str, variations: list[str], labels: Mapping[str, Any], *, compat: str = "miid", transliterate: bool = False
) -> tuple[float, float, dict[str, Any]]:
    """:func:`variation_quality` of ``variations`` for the query ``labels``: ``(final, base, metrics)``."""
    labels = check_labels(labels)
    return variation_quality(
        name,
        variations,
        labels.get("phonetic_similarity"),
        labels.get("orthographic_similarity"),
        labels["variation_count"],
        labels.get("rule_based"),
        compat=compat,
        transliterate=transliterate,
    )


def generate_from_labels(
    name: str, labels: Mapping[str, Any], *, seed: int | None = None, compat: str = "miid"
) -> list[str]:
    """:func:`generate_variations` for the query ``labels`` (no ``rule_based`` or no selected rules: no rules)."""
    labels = check_labels(labels)
    rule_based = labels.get("rule_based") or {}
    if not isinstance(rule_based, Mapping):
        raise InvalidInputError(
            f"labels.rule_based must be an object, not {type(rule_based).__name__}", location="labels.rule_based"
        )
    return generate_variations(
        name,
        labels["variation_count"],
        labels.get("phonetic_similarity"),
        labels.get("orthographic_similarity"),
        rule_based.get("selected_rules", []),
        rule_based.get("rule_percentage", DEFAULT_RULE_PERCENTAGE),
        seed=seed,
        compat=compat,
    )


def upper_bound_from_labels(
    name: str, labels: Mapping[str, Any], *, compat: str = "miid", phonetic_masks: Collection[int] = range(8)
) -> float:
    """:func:`score_upper_bound` for the query ``labels``: no variations score above it."""
    labels = check_labels(labels)
    return score_upper_bound(
        name,
        labels["variation_count"],
        labels.get("phonetic_similarity"),
        labels.get("orthographic_similarity"),
        labels.get("rule_based"),
        compat=compat,
        phonetic_masks=phonetic_masks,
    )
