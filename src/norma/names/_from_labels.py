"""The names functions called with a query's labels, as the validator draws them and ``build_query`` returns them.

The functions required by the validator's interface take the labels as separate positional arguments; these take
the labels dict (``query.labels``) or a :class:`~norma.names.Labels`, so that code holding a query (a miner, a
benchmark, a test) does not spell out the unpacking each time. A dict is checked once, by
:meth:`Labels.from_mapping <norma.names.Labels.from_mapping>`: a bad label raises
:class:`~norma.errors.InvalidInputError` naming it as ``labels.<field>``.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping
from typing import Any

from norma.names._bound import score_upper_bound
from norma.names._compat import check_compat
from norma.names._generate import generate_variations
from norma.names._labels import DEFAULT_RULE_PERCENTAGE, Labels, check_labels
from norma.names._quality import variation_quality
from norma.names._validate import check_str, check_str_list

__all__ = ["generate_from_labels", "quality_from_labels", "upper_bound_from_labels"]


def _rule_based(labels: Labels) -> dict[str, Any] | None:
    return labels.rule_based.to_dict() if labels.rule_based is not None else None


def quality_from_labels(
    name: str,
    variations: list[str],
    labels: Labels | Mapping[str, Any],
    *,
    compat: str = "miid",
    transliterate: bool = False,
    hash_seed: int | None = None,
) -> tuple[float, float, dict[str, Any]]:
    """:func:`variation_quality` of ``variations`` for the query ``labels``: ``(final, base, metrics)``."""
    # The labels' shape, then the other arguments, then the labels' values: the first error is the one
    # variation_quality raises for the same values given one by one.
    if not isinstance(labels, Labels):
        check_labels(labels)
    check_compat(compat)
    check_str(name, "name")
    check_str_list(variations, "variations")
    checked = Labels.of(labels)
    return variation_quality(
        name,
        variations,
        checked.phonetic_similarity,
        checked.orthographic_similarity,
        checked.variation_count,
        _rule_based(checked),
        compat=compat,
        transliterate=transliterate,
        hash_seed=hash_seed,
    )


def generate_from_labels(
    name: str,
    labels: Labels | Mapping[str, Any],
    *,
    seed: int | None = None,
    compat: str = "miid",
    hash_seed: int | None = None,
) -> list[str]:
    """:func:`generate_variations` for the query ``labels`` (no ``rule_based`` or no selected rules: no rules)."""
    checked = Labels.of(labels)
    rule_based = checked.rule_based
    return generate_variations(
        name,
        checked.variation_count,  # type: ignore[arg-type]  # a float count is rejected there, by name
        checked.phonetic_similarity,
        checked.orthographic_similarity,
        rule_based.selected_rules or () if rule_based is not None else (),
        rule_based.rule_percentage if rule_based is not None else DEFAULT_RULE_PERCENTAGE,
        seed=seed,
        compat=compat,
        hash_seed=hash_seed,
    )


def upper_bound_from_labels(
    name: str,
    labels: Labels | Mapping[str, Any],
    *,
    compat: str = "miid",
    phonetic_masks: Collection[int] = range(8),
    hash_seed: int | None = None,
) -> float:
    """:func:`score_upper_bound` for the query ``labels``: no variations score above it."""
    checked = Labels.of(labels)
    return score_upper_bound(
        name,
        checked.variation_count,
        checked.phonetic_similarity,
        checked.orthographic_similarity,
        _rule_based(checked),
        compat=compat,
        phonetic_masks=phonetic_masks,
        hash_seed=hash_seed,
    )
