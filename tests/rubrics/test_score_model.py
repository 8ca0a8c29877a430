"""A rubric evaluated has a typed model (issue #57): :class:`RubricScore`, a :class:`CriterionScore` per criterion.
The mappings every evaluation function returns, their value keyed ``reward`` or ``score`` (or any ``key`` of
:func:`evaluate_values`), read into it (``from_dict(data, key)``) and are written back by it (``to_dict(key)``)
exactly; and they are what they were before it (the literals below were captured from that code, then written
here)."""

from __future__ import annotations

import json
from typing import Any

import pytest
from pydantic import ValidationError

from norma.rubrics import (
    RubricScore,
    evaluate_events_against_rubric,
    evaluate_outcome_against_rubric,
    evaluate_rubric,
    evaluate_values,
    load_rubric,
    score_events_against_rubric,
    score_outcome_against_rubric,
)
from norma.rubrics._evaluation import CriterionScore

RUBRIC: dict[str, Any] = {
    "version": "1",
    "goal_text": "g",
    "aggregation": "weighted_sum",
    "criteria": [
        {"id": "a", "description": "A", "weight": 2, "required": True},
        {"id": "b", "description": "B", "weight": 1},
        {"id": "c", "description": "C", "weight": 0.5},
    ],
}


def _text(data: Any) -> str:
    return json.dumps(data, ensure_ascii=False)


@pytest.mark.parametrize(
    ("scored", "expected"),
    [
        (
            lambda: evaluate_rubric(RUBRIC, outcome={"a": 1, "b": 0.25}, enforce_required=True, pass_threshold=0.5),
            '{"aggregation": "weighted_sum", "reward": 0.6428571428571429, "per_criterion": {"a": {"reward": 1.0, '
            '"weight": 2.0, "required": true}, "b": {"reward": 0.25, "weight": 1.0, "required": false}, "c": '
            '{"reward": 0.0, "weight": 0.5, "required": false}}, "failed_required": [], "passed": true}',
        ),
        (
            lambda: evaluate_rubric(
                {**RUBRIC, "aggregation": "custom"}, events=[{"criterion_id": "a", "reward": 1}], aggregator="max"
            ),
            '{"aggregation": "custom", "reward": 1.0, "per_criterion": {"a": {"reward": 1.0, "weight": 2.0, '
            '"required": true}, "b": {"reward": 0.0, "weight": 1.0, "required": false}, "c": {"reward": 0.0, '
            '"weight": 0.5, "required": false}}, "aggregator": "max"}',
        ),
        (
            lambda: score_outcome_against_rubric(
                {"criteria": {"a": 0.75}}, load_rubric({**RUBRIC, "aggregation": "weighted_mean"}), pass_threshold=0.4
            ),
            '{"aggregation": "weighted_mean", "score": 0.42857142857142855, "per_criterion": {"a": {"score": 0.75, '
            '"weight": 2.0, "required": true}, "b": {"score": 0.0, "weight": 1.0, "required": false}, "c": '
            '{"score": 0.0, "weight": 0.5, "required": false}}, "passed": true}',
        ),
        (
            lambda: score_events_against_rubric(
                [{"criterion": "b", "score": 1}],
                load_rubric({**RUBRIC, "aggregation": "custom"}),
                enforce_required=True,
                pass_threshold=0.9,
                required_threshold=0.1,
            ),
            '{"aggregation": "custom", "score": null, "per_criterion": {"a": {"score": 0.0, "weight": 2.0, '
            '"required": true}, "b": {"score": 1.0, "weight": 1.0, "required": false}, "c": {"score": 0.0, '
            '"weight": 0.5, "required": false}}, "failed_required": ["a"], "passed": false}',
        ),
        (
            lambda: evaluate_values(
                load_rubric(RUBRIC).criteria,
                {"a": 0.5},
                "weighted_mean",
                key="points",
                pass_threshold=0.1,
                enforce_required=True,
            ),
            '{"aggregation": "weighted_mean", "points": 0.2857142857142857, "per_criterion": {"a": {"points": 0.5, '
            '"weight": 2.0, "required": true}, "b": {"points": 0.0, "weight": 1.0, "required": false}, "c": '
            '{"points": 0.0, "weight": 0.5, "required": false}}, "failed_required": [], "passed": true}',
        ),
    ],
    ids=["evaluate-rubric", "custom-aggregator", "score-outcome", "score-events-verdict", "any-key"],
)
def test_the_mappings_are_what_they_were(scored: Any, expected: str) -> None:
    assert _text(scored()) == expected


def test_the_values_are_kept_as_given() -> None:
    """The arithmetic's parts are not validated again: an int given stays an int in its criterion's entry."""
    scored = evaluate_values(load_rubric(RUBRIC).criteria, {"a": 1}, "weighted_sum")
    assert _text(scored["per_criterion"]["a"]) == '{"reward": 1, "weight": 2.0, "required": true}'


@pytest.mark.parametrize(
    "options",
    [{}, {"enforce_required": True}, {"pass_threshold": 0.3}, {"enforce_required": True, "pass_threshold": 0.9}],
)
@pytest.mark.parametrize("aggregation", ["sum", "weighted_sum", "mean", "weighted_mean", "custom", "inherit"])
def test_every_evaluation_reads_into_the_typed_score_and_back(aggregation: str, options: dict[str, Any]) -> None:
    rubric = load_rubric({**RUBRIC, "aggregation": aggregation})
    values = {"a": 0.75, "c": 1.0}
    events = [{"id": k, "reward": v} for k, v in values.items()]
    scored = {
        "reward": [
            evaluate_outcome_against_rubric(values, rubric, **options),
            evaluate_events_against_rubric(events, rubric, **options),
            evaluate_outcome_against_rubric(values, rubric, aggregator="min", **options),
        ],
        "score": [
            score_outcome_against_rubric(values, rubric, **options),
            score_events_against_rubric([{"id": k, "score": v} for k, v in values.items()], rubric, **options),
        ],
        "points": [evaluate_values(rubric.criteria, values, rubric.aggregation, key="points", **options)],
    }
    for key, results in scored.items():
        for result in results:
            typed = RubricScore.from_dict(result, key)
            assert all(isinstance(c, CriterionScore) for c in typed.per_criterion.values())
            assert _text(typed.to_dict(key)) == _text(result)
            assert typed.to_dict() == RubricScore.from_dict(typed.to_dict()).to_dict()
            # keyed "reward", the typed score's JSON is the mapping: what the service and the MCP tool answer
            assert _text(typed.model_dump(mode="json")) == _text(typed.to_dict())
    assert RubricScore.from_dict(scored["score"][0], "score") == RubricScore.from_dict(scored["reward"][0])


def test_a_mapping_that_is_not_an_evaluation_is_refused() -> None:
    scored = score_outcome_against_rubric({"a": 1}, load_rubric(RUBRIC))
    with pytest.raises(ValidationError):
        RubricScore.from_dict(scored)  # its values are under "score"
    with pytest.raises(ValidationError):
        RubricScore.from_dict({"aggregation": "sum", "score": 1.0, "per_criterion": []}, "score")
