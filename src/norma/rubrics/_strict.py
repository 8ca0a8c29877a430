"""The strict rubric format for step-wise verifiers: :class:`StrictCriterion` and :class:`StrictRubric`.

Stricter than the flexible models: every weight is in (0, 1] and the weights sum to 1 (within 1e-6, absolute and
relative), the only aggregation is ``weighted_sum``, ``version`` and ``goal_text`` are non-empty after stripping and
there is at least one criterion. Duplicate criterion ids are allowed (as in synth-ai). Failures are pydantic
``ValidationError``\\ s, re-exported here as :data:`ValidationError`.
"""

from __future__ import annotations

import json
import math
import os
from collections.abc import Iterable
from pathlib import Path
from typing import Any, Literal

import pydantic
from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from norma.rubrics._errors import RubricJSONError
from norma.rubrics._fetch import DEFAULT_MAX_BYTES
from norma.rubrics._loaders import parse_rubric_text, read_rubric_file, unicode_checked

__all__ = [
    "StrictCriterion",
    "StrictRubric",
    "ValidationError",
    "validate_rubric_dict",
    "validate_rubric_file",
    "validate_rubric_files",
]

ValidationError = pydantic.ValidationError
"""pydantic's ``ValidationError``, raised when a rubric breaks a strict rule."""

_TOLERANCE = 1e-6


class StrictCriterion(BaseModel):
    """One criterion of a strict rubric: a weight in (0, 1] is required."""

    model_config = ConfigDict(use_attribute_docstrings=True)

    id: str
    """Identifier of the criterion (surrounding whitespace stripped)."""

    description: str
    """What the criterion judges (surrounding whitespace stripped)."""

    weight: float = Field(json_schema_extra={"exclusiveMinimum": 0, "maximum": 1})
    """Weight in (0, 1]; the rubric's weights sum to 1."""

    scale: str | None = None
    """How the criterion is judged (e.g. ``"0-1"``), if said."""

    @field_validator("id", "description", mode="before")
    @classmethod
    def _strip(cls, value: Any) -> Any:
        return value.strip() if isinstance(value, str) else value

    @field_validator("weight")
    @classmethod
    def _weight_in_range(cls, value: float) -> float:
        if not math.isfinite(value):
            raise ValueError("weight must be a finite number")
        if value <= 0.0:
            raise ValueError("weight must be positive")
        if value > 1.0:
            raise ValueError("weight must be <= 1.0")
        return value


class StrictRubric(BaseModel):
    """A strict rubric: weighted_sum of criteria whose weights sum to 1."""

    model_config = ConfigDict(use_attribute_docstrings=True)

    version: str = Field(json_schema_extra={"pattern": r"\S"})
    """Version of the rubric: non-empty after stripping."""

    goal_text: str = Field(json_schema_extra={"pattern": r"\S"})
    """What the rubric is for: non-empty after stripping."""

    aggregation: Literal["weighted_sum"]
    """Always ``weighted_sum``."""

    criteria: list[StrictCriterion] = Field(json_schema_extra={"minItems": 1})
    """At least one criterion; the weights sum to 1 within 1e-6."""

    @field_validator("version")
    @classmethod
    def _version_not_empty(cls, value: str) -> str:
        value = value.strip()
        if not value:
            raise ValueError("version string must not be empty")
        return value

    @field_validator("goal_text")
    @classmethod
    def _goal_not_empty(cls, value: str) -> str:
        value = value.strip()
        if not value:
            raise ValueError("goal_text must not be empty")
        return value

    @model_validator(mode="after")
    def _weights_sum_to_one(self) -> StrictRubric:
        if not self.criteria:
            raise ValueError("rubric must declare at least one criterion")
        total = sum(criterion.weight for criterion in self.criteria)
        if not math.isclose(total, 1.0, rel_tol=_TOLERANCE, abs_tol=_TOLERANCE):
            raise ValueError(f"criterion weights must sum to 1 (got {total:.6f})")
        return self


def validate_rubric_dict(payload: dict[str, Any]) -> StrictRubric:
    """Validate a rubric mapping against the strict rules.

    Raises:
        TypeError: ``payload`` is not a dict.
        ValidationError: the rubric breaks a strict rule.
    """
    if not isinstance(payload, dict):
        raise TypeError("rubric payload must be a dictionary")
    return StrictRubric.model_validate(payload)


def read_strict_rubric_file(path: str | os.PathLike[str], *, max_bytes: int = DEFAULT_MAX_BYTES) -> Any:
    """The data of a rubric file as the strict checks read it (:func:`validate_rubric_file` and ``norma rubric
    validate --strict`` alike): a ``.json`` file (any case) as JSON only, whatever value it holds, as synth-ai
    reads it; any other file as the flexible loader reads a file: YAML for ``.yaml``/``.yml``, else JSON, then YAML,
    which must give a mapping.

    Raises:
        RubricError: the file cannot be read (a ``RubricFileError``, also the matching ``OSError``); malformed JSON
            in a ``.json`` file (also ``json.JSONDecodeError``) or YAML (also ``yaml.YAMLError``); text in another
            file that is not a mapping.
    """
    file = Path(path)
    text = read_rubric_file(file, max_bytes=max_bytes)
    suffix = file.suffix.lower()
    if suffix != ".json":
        return parse_rubric_text(text, suffix, source=str(path), fetch=False)
    try:
        return unicode_checked(json.loads(text), str(path))
    except json.JSONDecodeError as exc:
        raise RubricJSONError(exc, source=str(path)) from exc


def validate_rubric_file(path: str | os.PathLike[str], *, max_bytes: int = DEFAULT_MAX_BYTES) -> StrictRubric:
    """Read a rubric file (JSON or YAML, as ``norma rubric validate --strict`` does) and validate it strictly.

    A ``.json`` file is read as synth-ai reads it; norma also reads the files synth-ai refused with "Unsupported
    rubric file type" (``.yaml``, ``.yml``, any other name), the way :func:`read_strict_rubric_file` says.

    Raises:
        RubricError: the file cannot be read (a ``RubricFileError``, also the matching ``OSError``); malformed JSON
            (also ``json.JSONDecodeError``) or YAML (also ``yaml.YAMLError``); YAML or text in a file not named
            ``.json`` that is not a mapping.
        TypeError: the JSON of a ``.json`` file is not an object.
        ValidationError: the rubric breaks a strict rule.
    """
    return validate_rubric_dict(read_strict_rubric_file(path, max_bytes=max_bytes))


def validate_rubric_files(paths: Iterable[str | os.PathLike[str]]) -> list[StrictRubric]:
    """Validate each file with :func:`validate_rubric_file`, in order; raises at the first failure."""
    return [validate_rubric_file(path) for path in paths]
