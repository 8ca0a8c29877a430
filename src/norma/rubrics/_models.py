"""The flexible rubric format: :class:`Criterion` and :class:`Rubric`, compatible with synth-ai task rubrics.

These models follow the format they copy rather than norma's own conventions: unknown keys are ignored (not
forbidden), weights have no upper bound and need not sum to 1, and validation failures are pydantic
``ValidationError``\\ s whose messages match the original ones ("criterion weight must be positive",
"duplicate criterion id: X", "aggregation must be one of [...]").

The fields synth-ai 0.9.11 added are accepted and kept: ``Criterion.scale_max``, ``Criterion.examples``
(:class:`CriterionExample`), ``Rubric.metadata`` and the aggregations ``mean`` and ``weighted_mean``. A dump
(``model_dump()``, ``--format json``) leaves those fields out while they hold their defaults, so rubrics that do
not use them dump exactly as before.
"""

from __future__ import annotations

from typing import Any

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    SerializerFunctionWrapHandler,
    field_validator,
    model_serializer,
)

__all__ = ["AGGREGATIONS", "Criterion", "CriterionExample", "Rubric"]

AGGREGATIONS: frozenset[str] = frozenset({"sum", "weighted_sum", "mean", "weighted_mean", "custom", "inherit"})
"""Aggregation names a flexible :class:`Rubric` accepts (``mean`` and ``weighted_mean`` since synth-ai 0.9.11)."""


def _without_defaults(dumped: Any, defaults: dict[str, Any]) -> Any:
    if isinstance(dumped, dict):
        for name, default in defaults.items():
            if name in dumped and dumped[name] == default:
                del dumped[name]
    return dumped


class CriterionExample(BaseModel):
    """A worked example for a criterion: some content and the score a judge should give it (synth-ai 0.9.11)."""

    model_config = ConfigDict(use_attribute_docstrings=True)

    content: str
    """The content being judged."""

    expected_score: float
    """The score the content should get."""

    explanation: str | None = None
    """Why it gets that score, if said."""


class Criterion(BaseModel):
    """One weighted criterion of a flexible rubric."""

    model_config = ConfigDict(use_attribute_docstrings=True)

    id: str
    """Identifier of the criterion, unique within its rubric (a string; a number is rejected)."""

    description: str
    """What the criterion judges, for people."""

    weight: float = Field(default=1.0, json_schema_extra={"exclusiveMinimum": 0})
    """Relative weight; any positive number (no upper bound, no need to sum to 1)."""

    required: bool = False
    """Whether the criterion must be met; only enforced when an evaluation asks for it (``enforce_required``)."""

    scale_max: float | None = Field(default=None, json_schema_extra={"exclusiveMinimum": 0})
    """The top of the scale the judge scores on (e.g. 10), if said; positive. Kept, not used in evaluation."""

    examples: list[CriterionExample] = Field(default_factory=list)
    """Worked examples for the judge; kept, not used in evaluation."""

    @field_validator("weight")
    @classmethod
    def _positive_weight(cls, value: float) -> float:
        if value <= 0:
            raise ValueError("criterion weight must be positive")
        return value

    @field_validator("scale_max")
    @classmethod
    def _positive_scale_max(cls, value: float | None) -> float | None:
        if value is not None and value <= 0:
            raise ValueError("criterion scale_max must be positive")
        return value

    @model_serializer(mode="wrap")
    def _dump(self, handler: SerializerFunctionWrapHandler) -> Any:
        return _without_defaults(handler(self), {"scale_max": None, "examples": []})


class Rubric(BaseModel):
    """A flexible rubric: a version, an optional goal and weighted criteria combined by an aggregation."""

    model_config = ConfigDict(use_attribute_docstrings=True)

    version: str
    """Version of the rubric (a string; a number is rejected)."""

    goal_text: str | None = None
    """What the rubric is for, if said."""

    criteria: list[Criterion] = Field(default_factory=list)
    """The criteria, with unique ids; may be empty."""

    aggregation: str = Field(
        default="weighted_sum",
        json_schema_extra={"enum": ["custom", "inherit", "mean", "sum", "weighted_mean", "weighted_sum"]},
    )
    """How criterion values combine: ``sum``, ``weighted_sum`` (default), ``mean``, ``weighted_mean``, ``custom``
    or ``inherit``."""

    metadata: dict[str, Any] = Field(default_factory=dict)
    """Free-form data about the rubric (an author, a source, tags); kept, not used in evaluation."""

    @field_validator("aggregation")
    @classmethod
    def _known_aggregation(cls, value: str) -> str:
        if value not in AGGREGATIONS:
            raise ValueError(f"aggregation must be one of {sorted(AGGREGATIONS)}")
        return value

    @field_validator("criteria")
    @classmethod
    def _unique_ids(cls, criteria: list[Criterion]) -> list[Criterion]:
        seen: set[str] = set()
        for criterion in criteria:
            if criterion.id in seen:
                raise ValueError(f"duplicate criterion id: {criterion.id}")
            seen.add(criterion.id)
        return criteria

    @model_serializer(mode="wrap")
    def _dump(self, handler: SerializerFunctionWrapHandler) -> Any:
        return _without_defaults(handler(self), {"metadata": {}})
