"""synth-ai 0.2.x wrote ``score`` where 0.5 writes ``reward`` (events, results, per-criterion): both keep working.

The 0.2.x names (``score_events_against_rubric``, ``score_outcome_against_rubric``) read and report ``score``;
the 0.5 names (``evaluate_*``) read and report ``reward``, and, as in synth-ai, silently skip an event that only
has ``score``: ``validate_rubric_inputs`` and ``norma rubric eval`` point that out.
"""

from __future__ import annotations

import pytest

from norma.rubrics import (
    Criterion,
    Rubric,
    evaluate_events_against_rubric,
    score_events_against_rubric,
    score_outcome_against_rubric,
    scoring,
    validate_rubric_inputs,
)

RUBRIC = Rubric(
    version="1.0",
    goal_text="Evaluate code quality",
    criteria=[
        Criterion(id="correctness", description="Code works correctly", weight=2.0, required=True),
        Criterion(id="style", description="Follows style guide", weight=1.0),
    ],
    aggregation="weighted_sum",
)
EVENTS_0_2 = [{"criterion_id": "correctness", "score": 0.9}, {"id": "style", "score": 0.8}]


def test_0_2_events_give_a_score() -> None:
    result = score_events_against_rubric(EVENTS_0_2, RUBRIC)
    assert list(result) == ["aggregation", "score", "per_criterion"]
    assert result["score"] == pytest.approx((0.9 * 2 + 0.8) / 3)
    assert result["per_criterion"] == {
        "correctness": {"score": 0.9, "weight": 2.0, "required": True},
        "style": {"score": 0.8, "weight": 1.0, "required": False},
    }


def test_0_2_outcome_gives_a_score() -> None:
    for outcome in ({"correctness": 0.9, "style": 0.8}, {"criteria": {"correctness": 0.9, "style": 0.8}}):
        result = score_outcome_against_rubric(outcome, RUBRIC)
        assert result["score"] == pytest.approx((0.9 * 2 + 0.8) / 3)
        assert "reward" not in result


def test_0_2_submodule_path() -> None:
    assert scoring.score_events_against_rubric is score_events_against_rubric
    assert scoring.score_outcome_against_rubric is score_outcome_against_rubric


def test_options_work_on_scores() -> None:
    result = score_events_against_rubric(
        [{"criterion_id": "correctness", "score": 0.4}, {"id": "style", "score": 1.0}],
        RUBRIC,
        enforce_required=True,
        pass_threshold=0.5,
    )
    assert result["score"] == pytest.approx(0.6)
    assert result["failed_required"] == ["correctness"]
    assert result["passed"] is False


def test_0_5_names_do_not_read_score_and_the_check_says_so() -> None:
    result = evaluate_events_against_rubric(EVENTS_0_2, RUBRIC)
    assert result["reward"] == 0.0  # as in synth-ai: no 'reward', the events are skipped
    issues = validate_rubric_inputs(RUBRIC, events=EVENTS_0_2)
    assert [issue.path for issue in issues] == ["[0].reward", "[1].reward", "", ""]
    assert "'score', the synth-ai 0.2.x key: rename it to 'reward'" in issues[0].message
    assert issues[2].message == "criterion 'correctness' not judged: it counts 0"


def test_the_check_reads_score_when_asked() -> None:
    assert validate_rubric_inputs(RUBRIC, events=EVENTS_0_2, key="score") == []
    issues = validate_rubric_inputs(RUBRIC, events=[{"id": "style", "score": 2}], key="score")
    assert [(issue.path, issue.message) for issue in issues] == [
        ("[0].score", "2 is outside [0, 1]"),
        ("", "criterion 'correctness' not judged: it counts 0"),
    ]
