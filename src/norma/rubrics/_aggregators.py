"""Named aggregators for ``custom`` rubrics: a fixed table from name to function (:data:`BUILTIN_AGGREGATORS`).

An aggregator takes the criterion values and their weights (same length, in rubric order) and returns one number.
The built-in ones: ``min``, ``max``, ``geometric_mean`` (weighted) and ``harmonic_mean`` (weighted). Each returns
0.0 for an empty rubric, as ``weighted_sum`` does. The table is read-only: a caller with an aggregator of its own
passes the function where the rubric is evaluated (``aggregator=fn``; the result names it by its ``__name__``).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from types import MappingProxyType

from norma.errors import RubricError

__all__ = ["BUILTIN_AGGREGATORS", "Aggregator", "aggregator_names", "get_aggregator"]

Aggregator = Callable[[Sequence[float], Sequence[float]], float]
"""``fn(values, weights) -> float``: combines criterion values (weights are positive, in the same order)."""


def _require_non_negative(name: str, values: Sequence[float]) -> None:
    negative = [value for value in values if value < 0]
    if negative:
        raise RubricError(
            f"{name} is undefined for negative values (got {negative[0]!r})",
            hint="use weighted_sum, min or max for values below 0",
        )


def _min(values: Sequence[float], weights: Sequence[float]) -> float:
    """The lowest value: a rubric is as good as its worst criterion."""
    return min(values, default=0.0)


def _max(values: Sequence[float], weights: Sequence[float]) -> float:
    """The highest value: a rubric is as good as its best criterion."""
    return max(values, default=0.0)


def _geometric_mean(values: Sequence[float], weights: Sequence[float]) -> float:
    """Weighted geometric mean, exp(Σ w·ln v / Σ w); 0.0 when any value is 0."""
    _require_non_negative("geometric_mean", values)
    if not values:
        return 0.0
    if any(value == 0 for value in values):
        return 0.0
    total = math.fsum(weights)
    return math.exp(math.fsum(w * math.log(v) for v, w in zip(values, weights, strict=True)) / total)


def _harmonic_mean(values: Sequence[float], weights: Sequence[float]) -> float:
    """Weighted harmonic mean, Σ w / Σ (w / v); 0.0 when any value is 0."""
    _require_non_negative("harmonic_mean", values)
    if not values:
        return 0.0
    if any(value == 0 for value in values):
        return 0.0
    return math.fsum(weights) / math.fsum(w / v for v, w in zip(values, weights, strict=True))


BUILTIN_AGGREGATORS: Mapping[str, Aggregator] = MappingProxyType(
    {
        "geometric_mean": _geometric_mean,
        "harmonic_mean": _harmonic_mean,
        "max": _max,
        "min": _min,
    }
)
"""The aggregators a name picks (``aggregator="min"``, ``--aggregator min``, a request's ``"aggregator"``):
read-only."""


def get_aggregator(name: str) -> Aggregator:
    """The built-in aggregator ``name``.

    Raises:
        RubricError: no aggregator has that name (the message lists the known ones).
    """
    try:
        return BUILTIN_AGGREGATORS[name]
    except KeyError:
        raise RubricError(
            f"unknown aggregator {name!r}",
            hint=f"known aggregators: {', '.join(aggregator_names())}; in Python, pass a function as aggregator=",
        ) from None


def aggregator_names() -> list[str]:
    """Names of the built-in aggregators, sorted."""
    return sorted(BUILTIN_AGGREGATORS)
