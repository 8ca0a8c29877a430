"""Evaluation of events and outcomes: compatible results, then the opt-in verdicts and aggregators."""

from __future__ import annotations

import math
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from norma.errors import RubricError
from norma.rubrics import (
    Criterion,
    Rubric,
    evaluate_events_against_rubric,
    evaluate_outcome_against_rubric,
    score_events_against_rubric,
    score_outcome_against_rubric,
)


def _rubric(aggregation: str = "weighted_sum") -> Rubric:
    return Rubric(
        version="1",
        criteria=[
            Criterion(id="correctness", description="c", weight=2.0, required=True),
            Criterion(id="style", description="s", weight=1.0),
        ],
        aggregation=aggregation,
    )


def test_readme_example() -> None:
    events = [{"criterion_id": "correctness", "reward": 0.9}, {"criterion_id": "style", "reward": 0.8}]
    result = evaluate_events_against_rubric(events, _rubric())
    assert result == {
        "aggregation": "weighted_sum",
        "reward": pytest.approx((0.9 * 2 + 0.8) / 3),
        "per_criterion": {
            "correctness": {"reward": 0.9, "weight": 2.0, "required": True},
            "style": {"reward": 0.8, "weight": 1.0, "required": False},
        },
    }


def test_no_rubric() -> None:
    expected_reward = {"aggregation": "none", "reward": None, "per_criterion": {}}
    assert evaluate_events_against_rubric([{"id": "a", "reward": 1}], None) == expected_reward
    assert evaluate_outcome_against_rubric({"a": 1}, None) == expected_reward
    expected_score = {"aggregation": "none", "score": None, "per_criterion": {}}
    assert score_events_against_rubric([], None) == expected_score
    assert score_outcome_against_rubric({}, None) == expected_score


def test_event_ids_values_and_skipping() -> None:
    events: list[Any] = [
        "not a dict",
        None,
        ["criterion_id", "style"],
        {"criterion_id": "", "id": "style", "reward": 0.2},  # first truthy id wins
        {"criterion": "correctness", "reward": "0.5"},  # strings convertible to float count
        {"criterion_id": "correctness", "reward": "high"},  # not convertible: skipped
        {"criterion_id": "correctness", "reward": None},  # skipped
        {"reward": 1.0},  # no id: skipped
        {"criterion_id": "unknown", "reward": 1.0},  # not in the rubric: ignored
        {"id": "style", "reward": 0.6},  # the last event for an id wins
    ]
    result = evaluate_events_against_rubric(events, _rubric("sum"))
    assert result["per_criterion"]["correctness"]["reward"] == 0.5
    assert result["per_criterion"]["style"]["reward"] == 0.6
    assert result["reward"] == pytest.approx(1.1)
    assert set(result["per_criterion"]) == {"correctness", "style"}


def test_events_none_or_empty() -> None:
    for events in (None, []):
        result = evaluate_events_against_rubric(events, _rubric())
        assert result["reward"] == 0.0
        assert result["per_criterion"]["style"] == {"reward": 0.0, "weight": 1.0, "required": False}


def test_events_read_their_own_key() -> None:
    events = [{"criterion_id": "style", "score": 0.4, "reward": 0.9}]
    assert evaluate_events_against_rubric(events, _rubric("sum"))["reward"] == 0.9
    scored = score_events_against_rubric(events, _rubric("sum"))
    assert scored["score"] == 0.4
    assert scored["per_criterion"]["style"] == {"score": 0.4, "weight": 1.0, "required": False}
    assert "reward" not in scored


def test_outcome_nested_and_flat() -> None:
    rubric = _rubric()
    flat = evaluate_outcome_against_rubric({"correctness": 1.0, "style": "0.5", "other": 9}, rubric)
    assert flat["reward"] == pytest.approx(2.5 / 3)
    nested = evaluate_outcome_against_rubric({"criteria": {"style": 1.0}, "correctness": 1.0}, rubric)
    assert nested["reward"] == pytest.approx(1 / 3)
    assert nested["per_criterion"]["correctness"]["reward"] == 0.0
    not_nested = evaluate_outcome_against_rubric({"criteria": [1, 2], "style": 1.0}, rubric)
    assert not_nested["reward"] == pytest.approx(1 / 3)
    assert evaluate_outcome_against_rubric("nonsense", rubric)["reward"] == 0.0
    assert score_outcome_against_rubric({"style": 0.3}, rubric)["score"] == pytest.approx(0.1)


def test_sum_inherit_custom_and_no_clamping() -> None:
    outcome = {"correctness": 1.5, "style": -0.5}
    assert evaluate_outcome_against_rubric(outcome, _rubric("sum"))["reward"] == 1.0
    inherit = evaluate_outcome_against_rubric(outcome, _rubric("inherit"))
    assert inherit["aggregation"] == "weighted_sum"
    assert inherit["reward"] == pytest.approx((3.0 - 0.5) / 3)
    custom = evaluate_outcome_against_rubric(outcome, _rubric("custom"))
    assert custom["aggregation"] == "custom"
    assert custom["reward"] is None
    assert custom["per_criterion"]["style"]["reward"] == -0.5


def test_empty_rubric() -> None:
    for aggregation in ("sum", "weighted_sum", "inherit"):
        result = evaluate_outcome_against_rubric({"a": 1}, Rubric(version="1", aggregation=aggregation))
        assert result["reward"] == 0.0
        assert result["per_criterion"] == {}


def test_defaults_add_no_keys() -> None:
    result = evaluate_outcome_against_rubric({"style": 1}, _rubric())
    assert set(result) == {"aggregation", "reward", "per_criterion"}


def test_pass_threshold() -> None:
    outcome = {"correctness": 0.9, "style": 0.3}  # reward 0.7
    assert evaluate_outcome_against_rubric(outcome, _rubric(), pass_threshold=0.7)["passed"] is True
    failed = evaluate_outcome_against_rubric(outcome, _rubric(), pass_threshold=0.71)
    assert failed["passed"] is False
    assert "failed_required" not in failed
    assert evaluate_outcome_against_rubric(outcome, _rubric("custom"), pass_threshold=0.0)["passed"] is False
    assert evaluate_outcome_against_rubric(outcome, None, pass_threshold=0.0)["passed"] is False


def test_enforce_required() -> None:
    outcome = {"correctness": 0.4, "style": 1.0}  # reward 0.6, required correctness below 0.5
    result = evaluate_outcome_against_rubric(outcome, _rubric(), enforce_required=True)
    assert result["failed_required"] == ["correctness"]
    assert result["passed"] is False
    ok = evaluate_outcome_against_rubric({"correctness": 0.5}, _rubric(), enforce_required=True)
    assert (ok["failed_required"], ok["passed"]) == ([], True)
    missing = evaluate_events_against_rubric([{"id": "style", "reward": 1}], _rubric(), enforce_required=True)
    assert missing["failed_required"] == ["correctness"]


def test_required_threshold_defaults_to_pass_threshold() -> None:
    outcome = {"correctness": 0.8, "style": 1.0}  # reward 0.8667
    both = evaluate_outcome_against_rubric(outcome, _rubric(), enforce_required=True, pass_threshold=0.85)
    assert (both["failed_required"], both["passed"]) == (["correctness"], False)
    explicit = evaluate_outcome_against_rubric(
        outcome, _rubric(), enforce_required=True, pass_threshold=0.85, required_threshold=0.8
    )
    assert (explicit["failed_required"], explicit["passed"]) == ([], True)


@pytest.mark.parametrize("bad", [math.nan, math.inf, True])
def test_thresholds_must_be_finite(bad: float) -> None:
    with pytest.raises(RubricError, match="pass_threshold must be a finite number"):
        evaluate_outcome_against_rubric({}, _rubric(), pass_threshold=bad)


def test_custom_with_named_aggregator() -> None:
    outcome = {"correctness": 0.25, "style": 1.0}
    for name, expected in [("min", 0.25), ("max", 1.0), ("geometric_mean", 0.25 ** (2 / 3))]:
        result = evaluate_outcome_against_rubric(outcome, _rubric("custom"), aggregator=name)
        assert result["reward"] == pytest.approx(expected)
        assert result["aggregator"] == name
        assert result["aggregation"] == "custom"


def test_custom_with_a_function_and_scores() -> None:
    def spread(values: Any, weights: Any) -> float:
        return float(max(values) - min(values))

    result = score_events_against_rubric(
        [{"id": "correctness", "score": 0.2}, {"id": "style", "score": 0.9}], _rubric("custom"), aggregator=spread
    )
    assert result["score"] == pytest.approx(0.7)
    assert result["aggregator"] == "spread"


def test_aggregator_is_ignored_for_other_aggregations() -> None:
    result = evaluate_outcome_against_rubric({"correctness": 0.0, "style": 1.0}, _rubric(), aggregator="max")
    assert result["reward"] == pytest.approx(1 / 3)
    assert "aggregator" not in result


def test_unknown_aggregator() -> None:
    with pytest.raises(RubricError, match="unknown aggregator 'nope'"):
        evaluate_outcome_against_rubric({}, _rubric("custom"), aggregator="nope")


_values = st.floats(min_value=0.0, max_value=1.0)
_weights = st.floats(min_value=1e-6, max_value=1e6)


@given(st.lists(st.tuples(_values, _weights), min_size=1, max_size=20))
def test_weighted_sum_of_unit_values_stays_in_unit_interval(pairs: list[tuple[float, float]]) -> None:
    rubric = Rubric(
        version="1", criteria=[Criterion(id=f"c{i}", description="d", weight=w) for i, (_, w) in enumerate(pairs)]
    )
    outcome = {f"c{i}": v for i, (v, _) in enumerate(pairs)}
    reward = evaluate_outcome_against_rubric(outcome, rubric)["reward"]
    assert 0.0 <= reward <= 1.0
    assert min(v for v, _ in pairs) - 1e-9 <= reward <= max(v for v, _ in pairs) + 1e-9


@given(
    st.lists(st.tuples(_values, _weights), min_size=1, max_size=10),
    st.sampled_from(["min", "max", "geometric_mean", "harmonic_mean"]),
)
def test_builtin_aggregators_stay_within_the_values(pairs: list[tuple[float, float]], name: str) -> None:
    rubric = Rubric(
        version="1",
        aggregation="custom",
        criteria=[Criterion(id=f"c{i}", description="d", weight=w) for i, (_, w) in enumerate(pairs)],
    )
    outcome = {f"c{i}": v for i, (v, _) in enumerate(pairs)}
    reward = evaluate_outcome_against_rubric(outcome, rubric, aggregator=name)["reward"]
    values = [v for v, _ in pairs]
    assert min(values) - 1e-9 <= reward <= max(values) + 1e-9
