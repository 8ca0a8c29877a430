"""JSON Schema export of both formats."""

from __future__ import annotations

import json

from norma.rubrics import rubric_json_schema


def test_flexible_schema() -> None:
    schema = rubric_json_schema()
    assert schema["$schema"] == "https://json-schema.org/draft/2020-12/schema"
    assert schema["title"] == "Rubric"
    assert schema["required"] == ["version"]
    aggregations = ["custom", "inherit", "mean", "sum", "weighted_mean", "weighted_sum"]
    assert schema["properties"]["aggregation"]["enum"] == aggregations
    assert schema["properties"]["aggregation"]["default"] == "weighted_sum"
    criterion = schema["$defs"]["Criterion"]
    assert criterion["required"] == ["id", "description"]
    assert criterion["properties"]["weight"]["exclusiveMinimum"] == 0
    assert "maximum" not in criterion["properties"]["weight"]
    assert "unique" in schema["description"]
    json.dumps(schema)  # serialisable as is


def test_strict_schema() -> None:
    schema = rubric_json_schema(strict=True)
    assert schema["title"] == "StrictRubric"
    assert schema["required"] == ["version", "goal_text", "aggregation", "criteria"]
    assert schema["properties"]["aggregation"]["const"] == "weighted_sum"
    assert schema["properties"]["criteria"]["minItems"] == 1
    weight = schema["$defs"]["StrictCriterion"]["properties"]["weight"]
    assert (weight["exclusiveMinimum"], weight["maximum"]) == (0, 1)
    assert schema["$defs"]["StrictCriterion"]["required"] == ["id", "description", "weight"]
    assert "sum" in schema["description"]
