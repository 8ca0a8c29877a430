"""JSON Schema (draft 2020-12) of both rubric formats, for editors, CI and other languages."""

from __future__ import annotations

from typing import Any

from norma.rubrics._models import Rubric
from norma.rubrics._strict import StrictRubric

__all__ = ["JSON_SCHEMA_DIALECT", "rubric_json_schema"]

JSON_SCHEMA_DIALECT = "https://json-schema.org/draft/2020-12/schema"


def rubric_json_schema(strict: bool = False) -> dict[str, Any]:
    """The JSON Schema of the flexible :class:`Rubric` format, or of :class:`StrictRubric` when ``strict``.

    The schema describes what the models accept; rules a schema cannot state (unique criterion ids in the
    flexible format, weights summing to 1 in the strict one) are written in each schema's ``description``.
    """
    model = StrictRubric if strict else Rubric
    schema = model.model_json_schema(mode="validation")
    rule = (
        "Strict rubric: weighted_sum only, weights in (0, 1] summing to 1 (within 1e-6), at least one criterion."
        if strict
        else "Flexible rubric: criterion ids are unique; weights are positive and need not sum to 1."
    )
    return {"$schema": JSON_SCHEMA_DIALECT, **schema, "description": rule}
