"""The flexible rubric format: :class:`Criterion` and :class:`Rubric`, compatible with synth-ai task rubrics.

These models follow the format they copy rather than norma's own conventions: unknown keys are ignored (not
forbidden), weights have no upper bound and need not sum to 1, and validation failures are pydantic
``ValidationError``\\ s whose messages match the original ones ("criterion weight must be positive",
"duplicate criterion id: X", "aggregation must be one of [...]").
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field, field_validator

__all__ = ["AGGREGATIONS", "Criterion", "Rubric"]

AGGREGATIONS: frozenset[str] = frozenset({"sum", "weighted_sum", "custom", "inherit"})
"""Aggregation names a flexible :class:`Rubric` accepts."""


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

    @field_validator("weight")
    @classmethod
    def _positive_weight(cls, value: float) -> float:
        if value <= 0:
            raise ValueError("criterion weight must be positive")
        return value


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
        default="weighted_sum", json_schema_extra={"enum": ["custom", "inherit", "sum", "weighted_sum"]}
    )
    """How criterion values combine: ``sum``, ``weighted_sum`` (default), ``custom`` or ``inherit``."""

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
