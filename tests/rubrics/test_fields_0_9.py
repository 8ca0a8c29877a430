"""The fields synth-ai 0.9.11 added: accepted, kept, dumped only when used; mean and weighted_mean computed."""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import given
from hypothesis import strategies as st

from norma.rubrics import (
    AGGREGATIONS,
    Criterion,
    CriterionExample,
    Rubric,
    StrictRubric,
    ValidationError,
    blend_rubrics,
    evaluate_events_against_rubric,
    evaluate_outcome_against_rubric,
    load_rubric,
    models,
    rubric_json_schema,
    score_outcome_against_rubric,
    validate_rubric_dict,
)

FULL: dict[str, Any] = {
    "version": "2",
    "goal_text": "Review a change",
    "aggregation": "weighted_mean",
    "metadata": {"author": "qa", "tags": ["code", "review"]},
    "criteria": [
        {
            "id": "correctness",
            "description": "Does what it claims",
            "weight": 2.0,
            "required": True,
            "scale_max": 10,
            "examples": [
                {"content": "fixes the bug, adds a test", "expected_score": 9, "explanation": "complete"},
                {"content": "compiles", "expected_score": 2.5},
            ],
        },
        {"id": "style", "description": "Reads well"},
    ],
}


def test_fields_are_accepted_and_kept() -> None:
    rubric = Rubric.model_validate(FULL)
    first, second = rubric.criteria
    assert first.scale_max == 10.0
    assert first.examples == [
        CriterionExample(content="fixes the bug, adds a test", expected_score=9.0, explanation="complete"),
        CriterionExample(content="compiles", expected_score=2.5, explanation=None),
    ]
    assert (second.scale_max, second.examples) == (None, [])
    assert rubric.metadata == {"author": "qa", "tags": ["code", "review"]}
    assert rubric.aggregation == "weighted_mean"


def test_a_full_rubric_round_trips_through_a_dump() -> None:
    rubric = Rubric.model_validate(FULL)
    dumped = rubric.model_dump()
    assert Rubric.model_validate(dumped) == rubric
    assert Rubric.model_validate_json(rubric.model_dump_json()) == rubric
    assert dumped["metadata"] == FULL["metadata"]
    assert dumped["criteria"][0]["examples"][1] == {"content": "compiles", "expected_score": 2.5, "explanation": None}
    assert "scale_max" not in dumped["criteria"][1]


def test_dumps_of_rubrics_without_the_new_fields_are_unchanged() -> None:
    rubric = Rubric(version="1", criteria=[Criterion(id="a", description="A", weight=2)])
    assert rubric.model_dump() == {
        "version": "1",
        "goal_text": None,
        "criteria": [{"id": "a", "description": "A", "weight": 2.0, "required": False}],
        "aggregation": "weighted_sum",
    }
    assert json.loads(rubric.model_dump_json()) == rubric.model_dump()


@pytest.mark.parametrize("scale_max", [0, -1, -0.5])
def test_scale_max_must_be_positive(scale_max: float) -> None:
    with pytest.raises(ValidationError, match="criterion scale_max must be positive"):
        Criterion(id="a", description="A", scale_max=scale_max)


def test_examples_need_content_and_an_expected_score() -> None:
    with pytest.raises(ValidationError, match="expected_score"):
        Criterion.model_validate({"id": "a", "description": "A", "examples": [{"content": "x"}]})
    with pytest.raises(ValidationError, match="content"):
        Criterion.model_validate({"id": "a", "description": "A", "examples": [{"expected_score": 1}]})


def test_metadata_must_be_a_mapping() -> None:
    with pytest.raises(ValidationError, match="metadata"):
        Rubric.model_validate({"version": "1", "metadata": ["a"]})


@pytest.mark.parametrize("suffix", [".json", ".yaml"])
def test_files_keep_the_fields(tmp_path: Path, suffix: str) -> None:
    path = tmp_path / f"rubric{suffix}"
    path.write_text(json.dumps(FULL) if suffix == ".json" else yaml.safe_dump(FULL), encoding="utf-8")
    assert load_rubric(path) == Rubric.model_validate(FULL)


def test_submodule_path_exports_the_example_model() -> None:
    assert models.CriterionExample is CriterionExample


def test_blend_keeps_the_fields() -> None:
    base = Rubric.model_validate(FULL)
    override = Rubric.model_validate(
        {
            "version": "",
            "aggregation": "inherit",
            "metadata": {"author": "lead", "reviewed": True},
            "criteria": [
                {"id": "correctness", "description": "", "weight": 3.0, "examples": []},
                {"id": "style", "description": "", "scale_max": 5},
                {"id": "tests", "description": "Has tests", "scale_max": 4},
            ],
        }
    )
    blended = blend_rubrics(base, override)
    assert blended is not None
    criteria = {criterion.id: criterion for criterion in blended.criteria}
    assert criteria["correctness"].scale_max == 10.0  # the override leaves it unset: the base's
    assert criteria["correctness"].examples == base.criteria[0].examples  # the override's are empty
    assert criteria["correctness"].weight == 6.0
    assert criteria["style"].scale_max == 5.0
    assert criteria["tests"].scale_max == 4.0
    assert blended.metadata == {"author": "lead", "tags": ["code", "review"], "reviewed": True}
    assert blended.aggregation == "weighted_mean"


def test_strict_models_accept_and_ignore_the_fields() -> None:
    payload = {
        "version": "1",
        "goal_text": "g",
        "aggregation": "weighted_sum",
        "metadata": {"a": 1},
        "criteria": [{"id": "a", "description": "A", "weight": 1.0, "scale_max": 10, "examples": []}],
    }
    rubric = validate_rubric_dict(payload)
    assert isinstance(rubric, StrictRubric)
    assert rubric.model_dump() == {
        "version": "1",
        "goal_text": "g",
        "aggregation": "weighted_sum",
        "criteria": [{"id": "a", "description": "A", "weight": 1.0, "scale": None}],
    }


def test_strict_format_keeps_weighted_sum_only() -> None:
    with pytest.raises(ValidationError, match="weighted_sum"):
        StrictRubric.model_validate(
            {
                "version": "1",
                "goal_text": "g",
                "aggregation": "weighted_mean",
                "criteria": [{"id": "a", "description": "A", "weight": 1.0}],
            }
        )


def test_schema_describes_the_fields() -> None:
    schema = rubric_json_schema()
    assert schema["properties"]["metadata"]["type"] == "object"
    criterion = schema["$defs"]["Criterion"]["properties"]
    assert criterion["scale_max"]["exclusiveMinimum"] == 0
    assert criterion["examples"]["items"] == {"$ref": "#/$defs/CriterionExample"}
    example = schema["$defs"]["CriterionExample"]
    assert example["required"] == ["content", "expected_score"]
    assert set(example["properties"]) == {"content", "expected_score", "explanation"}
    strict = rubric_json_schema(strict=True)
    assert "metadata" not in strict["properties"]
    assert "scale_max" not in strict["$defs"]["StrictCriterion"]["properties"]


def _rubric(aggregation: str, weights: list[float]) -> Rubric:
    criteria = [Criterion(id=f"c{i}", description="d", weight=w) for i, w in enumerate(weights)]
    return Rubric(version="1", criteria=criteria, aggregation=aggregation)


def test_mean_and_weighted_mean_are_computed() -> None:
    # synth-ai 0.9.11 reports 0.0 for both: its aggregator only knows sum and weighted_sum
    outcome = {"c0": 1.0, "c1": 0.5}
    mean = evaluate_outcome_against_rubric(outcome, _rubric("mean", [2.0, 1.0]))
    assert mean["aggregation"] == "mean"
    assert mean["reward"] == pytest.approx(0.75)
    weighted = evaluate_outcome_against_rubric(outcome, _rubric("weighted_mean", [2.0, 1.0]))
    assert weighted["aggregation"] == "weighted_mean"
    assert weighted["reward"] == pytest.approx((1.0 * 2 + 0.5) / 3)
    assert weighted["per_criterion"]["c0"] == {"reward": 1.0, "weight": 2.0, "required": False}


def test_a_missing_criterion_counts_zero_in_the_mean() -> None:
    events = [{"criterion_id": "c0", "reward": 0.9}]
    assert evaluate_events_against_rubric(events, _rubric("mean", [1, 1, 1]))["reward"] == pytest.approx(0.3)


@pytest.mark.parametrize("aggregation", ["mean", "weighted_mean"])
def test_empty_rubrics_give_zero(aggregation: str) -> None:
    assert evaluate_outcome_against_rubric({"x": 1.0}, _rubric(aggregation, []))["reward"] == 0.0


def test_score_functions_report_the_means_under_score() -> None:
    result = score_outcome_against_rubric({"c0": 0.2, "c1": 0.6}, _rubric("mean", [1, 3]))
    assert result["score"] == pytest.approx(0.4)
    assert "reward" not in result


values_and_weights = st.lists(
    st.tuples(
        st.floats(min_value=-10, max_value=10, allow_nan=False),
        st.floats(min_value=0.01, max_value=100, allow_nan=False),
    ),
    min_size=1,
    max_size=8,
)


@given(values_and_weights)
def test_means_match_their_formulas(pairs: list[tuple[float, float]]) -> None:
    outcome = {f"c{i}": v for i, (v, _) in enumerate(pairs)}
    weights = [w for _, w in pairs]
    mean = evaluate_outcome_against_rubric(outcome, _rubric("mean", weights))["reward"]
    assert mean == pytest.approx(math.fsum(v for v, _ in pairs) / len(pairs), abs=1e-9)
    weighted = evaluate_outcome_against_rubric(outcome, _rubric("weighted_mean", weights))
    expected = math.fsum(v * w for v, w in pairs) / math.fsum(weights)
    assert weighted["reward"] == pytest.approx(expected, abs=1e-9)
    # weighted_mean is the number weighted_sum gives (synth-ai's weighted_sum already divides by the weights)
    assert weighted["reward"] == evaluate_outcome_against_rubric(outcome, _rubric("weighted_sum", weights))["reward"]


def test_schema_enum_is_the_accepted_set() -> None:
    assert rubric_json_schema()["properties"]["aggregation"]["enum"] == sorted(AGGREGATIONS)
