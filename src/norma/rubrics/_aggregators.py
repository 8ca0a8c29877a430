"""Named aggregators for ``custom`` rubrics: a plain registry from name to function.

An aggregator takes the criterion values and their weights (same length, in rubric order) and returns one number.
The built-in ones: ``min``, ``max``, ``geometric_mean`` (weighted) and ``harmonic_mean`` (weighted). Each returns
0.0 for an empty rubric, as ``weighted_sum`` does. Register your own with :func:`register_aggregator`.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence

from norma.errors import RubricError

__all__ = ["Aggregator", "aggregator_names", "get_aggregator", "register_aggregator"]

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


_REGISTRY: dict[str, Aggregator] = {
    "geometric_mean": _geometric_mean,
    "harmonic_mean": _harmonic_mean,
    "max": _max,
    "min": _min,
}


def register_aggregator(name: str, fn: Aggregator, *, replace: bool = False) -> None:
    """Make ``fn`` available as the aggregator ``name`` (e.g. for ``aggregator="name"`` or ``--aggregator``).

    Raises:
        RubricError: ``name`` is empty, or already taken and ``replace`` is false.
    """
    if not name or not name.strip():
        raise RubricError("an aggregator needs a non-empty name")
    if name in _REGISTRY and not replace:
        raise RubricError(f"aggregator {name!r} is already registered", hint="pass replace=True to replace it")
    _REGISTRY[name] = fn


def get_aggregator(name: str) -> Aggregator:
    """The aggregator registered as ``name``.

    Raises:
        RubricError: no aggregator has that name (the message lists the known ones).
    """
    try:
        return _REGISTRY[name]
    except KeyError:
        raise RubricError(
            f"unknown aggregator {name!r}",
            hint=f"known aggregators: {', '.join(aggregator_names())}; add one with register_aggregator()",
        ) from None


def aggregator_names() -> list[str]:
    """Names of the registered aggregators, sorted."""
    return sorted(_REGISTRY)
