"""Blending two flexible rubrics: an override refines a base (synth-ai's ``blend_rubrics`` rules).

* ``None`` on either side returns the other side unchanged (the same object).
* Criteria come in the override's order, then the base-only ones in the base's order.
* For an id both sides have: the override's description unless it is empty; the weight is the product when both
  differ from 1.0, else whichever differs from 1.0, else the base's; ``required`` is the override's.
* ``aggregation`` is the override's unless it is ``inherit`` (then the base's); ``version`` and ``goal_text`` are
  the override's unless empty.

The synth-ai 0.9.11 fields, norma's reading (0.9.11's own blend drops them): for an id both sides have,
``scale_max`` is the override's unless unset and ``examples`` the override's unless empty; ``metadata`` is the
base's updated with the override's keys.
"""

from __future__ import annotations

from norma.rubrics._models import Criterion, Rubric

__all__ = ["blend_rubrics", "blend_weights"]

_DEFAULT_WEIGHT = 1.0


def blend_weights(base: float, override: float) -> float:
    """The weight of a criterion both rubrics define: the product of non-default weights, else the one set."""
    if base != _DEFAULT_WEIGHT and override != _DEFAULT_WEIGHT:
        return base * override
    if override != _DEFAULT_WEIGHT:
        return override
    return base


def _blend_criterion(base: Criterion, override: Criterion) -> Criterion:
    return Criterion(
        id=override.id,
        description=override.description or base.description,
        weight=blend_weights(base.weight, override.weight),
        required=override.required,
        scale_max=override.scale_max if override.scale_max is not None else base.scale_max,
        examples=override.examples or base.examples,
    )


def blend_rubrics(base: Rubric | None, override: Rubric | None) -> Rubric | None:
    """Merge ``override`` into ``base``; see the module documentation for the rules.

    Returns:
        A new :class:`Rubric`, or one of the inputs unchanged when the other is ``None`` (``None`` when both are).
    """
    if base is None:
        return override
    if override is None:
        return base
    remaining = {criterion.id: criterion for criterion in base.criteria}
    merged: list[Criterion] = []
    for criterion in override.criteria:
        shared = remaining.pop(criterion.id, None)
        merged.append(criterion if shared is None else _blend_criterion(shared, criterion))
    merged.extend(remaining.values())
    aggregation = base.aggregation if override.aggregation == "inherit" else override.aggregation
    return Rubric(
        version=override.version or base.version,
        goal_text=override.goal_text or base.goal_text,
        criteria=merged,
        aggregation=aggregation,
        metadata={**base.metadata, **override.metadata},
    )
