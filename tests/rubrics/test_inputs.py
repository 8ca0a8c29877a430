"""check_rubric_inputs: what an evaluation silently skips or takes as is; evaluate_rubric_file reports it."""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import pytest

from norma.errors import RubricError
from norma.rubrics import (
    Criterion,
    Rubric,
    RubricIssue,
    check_rubric_inputs,
    evaluate_events_against_rubric,
    evaluate_outcome_against_rubric,
    evaluate_rubric_file,
)

RUBRIC = Rubric(
    version="1",
    criteria=[Criterion(id="a", description="A"), Criterion(id="b", description="B", weight=2)],
)


def _issues(**inputs: Any) -> list[tuple[str, str]]:
    return [(issue.path, issue.message) for issue in check_rubric_inputs(RUBRIC, **inputs)]


def test_clean_input_has_no_issues() -> None:
    events = [{"criterion_id": "a", "reward": 0}, {"id": "b", "reward": "1"}, {"criterion": "a", "reward": 0.5}]
    assert _issues(events=events) == []
    assert _issues(outcome={"a": 1.0, "b": "0.25"}) == []
    assert _issues(outcome={"criteria": {"a": 1}, "judge": "v2"}) == []  # only the nested mapping is read
    assert _issues(events=[]) == []


def test_every_event_issue_in_order() -> None:
    events = [
        {"criterion_id": "a", "reward": 0.5},
        {"criterion_id": "zzz", "reward": 0.5},
        "free text",
        {"reward": 1.0},
        {"criterion_id": "a", "reward": "high"},
        {"criterion_id": "b", "reward": None},
        {"criterion_id": "b"},
        {"criterion_id": "a", "reward": 1.5},
        {"id": "b", "reward": -0.25},
        {"id": "b", "reward": float("nan")},
        {"criterion_id": 7, "reward": 1},
    ]
    assert _issues(events=events) == [
        ("[1]", "criterion id 'zzz' matches no criterion"),
        ("[2]", "not an object, so it matches no criterion"),
        ("[3]", "no criterion id (criterion_id, id or criterion)"),
        ("[4].reward", "'high' is not a number"),
        ("[5].reward", "None is not a number"),
        ("[6].reward", "missing"),
        ("[7].reward", "1.5 is outside [0, 1]"),
        ("[8].reward", "-0.25 is outside [0, 1]"),
        ("[9].reward", "nan is outside [0, 1]"),
        ("[10]", "criterion id '7' matches no criterion"),
    ]


def test_outcome_issues_flat_and_nested() -> None:
    assert _issues(outcome={"a": 2, "b": "x", "judge": "v2"}) == [
        ("a", "2 is outside [0, 1]"),
        ("b", "'x' is not a number"),
        ("judge", "criterion id 'judge' matches no criterion"),
    ]
    assert _issues(outcome={"criteria": {"a": [1], "c": 0.5}}) == [
        ("criteria.a", "[1] is not a number"),
        ("criteria.c", "criterion id 'c' matches no criterion"),
    ]


def test_the_evaluation_itself_stays_silent(recwarn: pytest.WarningsRecorder) -> None:
    events = [{"criterion_id": "zzz", "reward": 5}, {"criterion_id": "a", "reward": "high"}]
    assert evaluate_events_against_rubric(events, RUBRIC)["reward"] == 0.0
    assert evaluate_outcome_against_rubric({"a": 3.0}, RUBRIC)["reward"] == pytest.approx(1.0)
    assert len(recwarn) == 0


def _files(tmp_path: Path, events: Any) -> tuple[Path, Path]:
    rubric = tmp_path / "rubric.json"
    rubric.write_text(RUBRIC.model_dump_json(), encoding="utf-8")
    path = tmp_path / "events.json"
    path.write_text(json.dumps(events), encoding="utf-8")
    return rubric, path


def test_evaluate_rubric_file_reports_issues_before_evaluating(tmp_path: Path) -> None:
    rubric, events = _files(tmp_path, [{"id": "a", "reward": 2}, {"id": "q", "reward": 1}, {"id": "b", "reward": 1}])
    seen: list[RubricIssue] = []
    result = evaluate_rubric_file(rubric, events_path=events, on_issue=seen.append)
    assert [issue.path for issue in seen] == ["[0].reward", "[1]"]
    assert result["reward"] == pytest.approx((2 + 2) / 3)  # unchanged: the value is used as is
    assert result == evaluate_rubric_file(rubric, events_path=events)


def test_strict_inputs_raise_at_the_first_issue(tmp_path: Path) -> None:
    rubric, events = _files(tmp_path, [{"id": "a", "reward": 2}, {"id": "q", "reward": 1}])
    seen: list[RubricIssue] = []
    with pytest.raises(RubricError) as caught:
        evaluate_rubric_file(rubric, events_path=events, strict_inputs=True, on_issue=seen.append)
    assert seen == []
    error = caught.value
    assert (error.source, error.location) == (str(events), "[0].reward")
    assert error.message == "2 is outside [0, 1] (and 1 more)"
    outcome = tmp_path / "outcome.yaml"
    outcome.write_text("criteria:\n  a: .nan\n", encoding="utf-8")
    with pytest.raises(RubricError, match=r"outcome.yaml:criteria.a: nan is outside \[0, 1\]"):
        evaluate_rubric_file(rubric, outcome_path=outcome, strict_inputs=True)
    clean = tmp_path / "clean.json"
    clean.write_text('{"a": 1, "b": 0}', encoding="utf-8")
    assert evaluate_rubric_file(rubric, outcome_path=clean, strict_inputs=True)["reward"] == pytest.approx(1 / 3)
    assert math.isnan(evaluate_rubric_file(rubric, outcome_path=outcome)["reward"])
