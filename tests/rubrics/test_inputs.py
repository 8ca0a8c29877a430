"""validate_rubric_inputs: what an evaluation silently skips or takes as is; evaluate_rubric_file reports it."""

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
    evaluate_events_against_rubric,
    evaluate_outcome_against_rubric,
    evaluate_rubric_file,
    validate_rubric_inputs,
)

RUBRIC = Rubric(
    version="1",
    criteria=[Criterion(id="a", description="A"), Criterion(id="b", description="B", weight=2)],
)


def _issues(**inputs: Any) -> list[tuple[str, str]]:
    return [(issue.path, issue.message) for issue in validate_rubric_inputs(RUBRIC, **inputs)]


def test_clean_input_has_no_issues() -> None:
    events = [{"criterion_id": "a", "reward": 0}, {"id": "b", "reward": "1"}, {"criterion": "a", "reward": 0.5}]
    assert _issues(events=events) == []
    assert _issues(outcome={"a": 1.0, "b": "0.25"}) == []
    assert _issues(outcome={"criteria": {"a": 1, "b": 0}, "judge": "v2"}) == []  # only the nested mapping is read


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
        ("", "criterion 'b' not judged: it counts 0"),
    ]
    assert _issues(outcome={"criteria": {"a": [1], "c": 0.5}}) == [
        ("criteria.a", "[1] is not a number"),
        ("criteria.c", "criterion id 'c' matches no criterion"),
        ("", "criterion 'a' not judged: it counts 0"),
        ("", "criterion 'b' not judged: it counts 0"),
    ]


def test_criteria_nothing_judged_are_named_in_the_rubric_order() -> None:
    assert _issues(outcome={"b": 1}) == [("", "criterion 'a' not judged: it counts 0")]
    assert (
        _issues(outcome={})
        == _issues(events=[])
        == [
            ("", "criterion 'a' not judged: it counts 0"),
            ("", "criterion 'b' not judged: it counts 0"),
        ]
    )
    # judged once with a number is enough, whatever else came for it; the evaluation gives 0 to what is named
    assert _issues(events=[{"id": "a", "reward": 0.5}, {"id": "b", "reward": "x"}, {"id": "b", "reward": 1}]) == [
        ("[1].reward", "'x' is not a number")
    ]
    assert evaluate_outcome_against_rubric({"b": 1}, RUBRIC)["per_criterion"]["a"]["reward"] == 0.0


def test_an_unknown_id_near_a_criterion_id_gets_a_did_you_mean() -> None:
    criteria = [Criterion(id="correctness", description="C"), Criterion(id="style", description="S")]
    rubric = Rubric(version="1", criteria=criteria)
    events = [{"id": "corectness", "reward": 1}, {"id": "Style", "reward": 1}, {"id": "speed", "reward": 1}]
    issues = validate_rubric_inputs(rubric, events=events)
    assert [(issue.path, issue.message) for issue in issues] == [
        ("[0]", "criterion id 'corectness' matches no criterion (did you mean 'correctness'?)"),
        ("[1]", "criterion id 'Style' matches no criterion (did you mean 'style'?)"),
        ("[2]", "criterion id 'speed' matches no criterion"),
        ("", "criterion 'correctness' not judged: it counts 0"),
        ("", "criterion 'style' not judged: it counts 0"),
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
    assert error.message == "2 is outside [0, 1] (and 2 more)"
    outcome = tmp_path / "outcome.yaml"
    outcome.write_text("criteria:\n  a: .nan\n", encoding="utf-8")
    with pytest.raises(RubricError, match=r"outcome.yaml:criteria.a: nan is outside \[0, 1\]"):
        evaluate_rubric_file(rubric, outcome_path=outcome, strict_inputs=True)
    clean = tmp_path / "clean.json"
    clean.write_text('{"a": 1, "b": 0}', encoding="utf-8")
    assert evaluate_rubric_file(rubric, outcome_path=clean, strict_inputs=True)["reward"] == pytest.approx(1 / 3)
    assert math.isnan(evaluate_rubric_file(rubric, outcome_path=outcome)["reward"])


def test_strict_inputs_refuse_a_criterion_not_judged(tmp_path: Path) -> None:
    rubric, _ = _files(tmp_path, [])
    outcome = tmp_path / "outcome.json"
    outcome.write_text('{"b": 1}', encoding="utf-8")
    with pytest.raises(RubricError) as caught:
        evaluate_rubric_file(rubric, outcome_path=outcome, strict_inputs=True)
    assert str(caught.value) == (
        f"{outcome}: criterion 'a' not judged: it counts 0 (fix the input, or drop the strict check to evaluate it "
        "as synth-ai does)"
    )
    assert caught.value.location is None


def test_json_lines_events_are_placed_by_line(tmp_path: Path) -> None:
    rubric, _ = _files(tmp_path, [])
    events = tmp_path / "events.jsonl"
    events.write_text(
        '{"id": "a", "reward": 1}\n\n{"id": "bb", "reward": 1}\n"free text"\n{"id": "b", "reward": 7}\n',
        encoding="utf-8",
    )
    seen: list[RubricIssue] = []
    evaluate_rubric_file(rubric, events_path=events, on_issue=seen.append)
    assert [(issue.path, issue.message) for issue in seen] == [
        ("line 3", "criterion id 'bb' matches no criterion (did you mean 'b'?)"),
        ("line 4", "not an object, so it matches no criterion"),
        ("line 5, reward", "7 is outside [0, 1]"),
    ]
    with pytest.raises(RubricError) as caught:
        evaluate_rubric_file(rubric, events_path=events, strict_inputs=True)
    assert str(caught.value).startswith(
        f"{events}:3: criterion id 'bb' matches no criterion (did you mean 'b'?) (and 2 more) ("
    )
