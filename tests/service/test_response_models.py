"""The responses are the library's models: every JSON route documents a named model, and the models the service
and the MCP tools share describe the library's own JSON exactly (an optional key absent, not null)."""

from __future__ import annotations

from typing import Any

import pytest

from norma.names import NameScore, score_record
from norma.rubrics import RubricScore, evaluate_rubric
from norma.service import create_app
from tests.service.conftest import make_settings

RUBRIC: dict[str, Any] = {
    "version": "1",
    "goal_text": "answer well",
    "aggregation": "weighted_sum",
    "criteria": [
        {"id": "a", "description": "A", "weight": 2, "required": True},
        {"id": "b", "description": "B", "weight": 1},
    ],
}
LABELS = {"variation_count": 2, "phonetic_similarity": {"Medium": 1.0}, "orthographic_similarity": {"Medium": 1.0}}


def test_every_json_route_answers_a_named_model() -> None:
    paths = create_app(make_settings()).openapi()["paths"]
    untyped = []
    for path, item in paths.items():
        for method, op in item.items():
            ok = op["responses"].get("200") or op["responses"].get("201")
            schema = (ok or {}).get("content", {}).get("application/json", {}).get("schema")
            if schema is not None and "$ref" not in schema:
                untyped.append(f"{method.upper()} {path}: {schema}")
    assert untyped == []
    shared = ("/v1/rubrics/evaluate", "/v1/names/score", "/v1/audit")
    refs = {path: paths[path]["post"]["responses"]["200"]["content"]["application/json"]["schema"]["$ref"]
            for path in shared}  # fmt: skip
    assert refs == {
        "/v1/rubrics/evaluate": "#/components/schemas/RubricScore",
        "/v1/names/score": "#/components/schemas/NameScore",
        "/v1/audit": "#/components/schemas/AuditReport",
    }


@pytest.mark.parametrize(
    ("options", "keys"),
    [
        ({"outcome": {"a": 1, "b": 0.25}}, ["aggregation", "reward", "per_criterion"]),
        (
            {"outcome": {"a": 0.2}, "enforce_required": True, "pass_threshold": 0.5},
            ["aggregation", "reward", "per_criterion", "failed_required", "passed"],
        ),
    ],
)
def test_rubric_score_is_the_evaluation_json(options: dict[str, Any], keys: list[str]) -> None:
    scored = evaluate_rubric(RUBRIC, **options)
    dumped = RubricScore.model_validate(scored).model_dump(mode="json")
    assert list(dumped) == keys
    assert dumped == scored


def test_a_custom_rubric_score_names_its_aggregator() -> None:
    custom = {**RUBRIC, "aggregation": "custom"}
    scored = evaluate_rubric(custom, events=[{"criterion_id": "a", "reward": 1}], aggregator="min")
    dumped = RubricScore.model_validate(scored).model_dump(mode="json")
    assert (dumped["aggregator"], list(dumped)) == ("min", ["aggregation", "reward", "per_criterion", "aggregator"])


@pytest.mark.parametrize("metrics", [False, True])
def test_name_score_is_the_record_json(metrics: bool) -> None:
    record = {"name": "John Smith", "variations": ["Jon Smith", "John Smyth"], "labels": LABELS}
    scored = score_record(record, metrics=metrics, hash_seed=0)
    dumped = NameScore.model_validate(scored).model_dump(mode="json")
    assert dumped == scored
    assert list(dumped)[:2] == ["name", "final"]
    assert ("metrics" in dumped) is metrics
    mcp = NameScore.model_validate({"compat": "miid", "hash_seed": 0, **scored}).model_dump(mode="json")
    assert list(mcp)[:3] == ["compat", "hash_seed", "name"]
