"""File helpers for the CLI and CI: checks with field paths, loading, evaluating and blending files."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from norma.errors import RubricError
from norma.rubrics import (
    RubricIssue,
    blend_rubric_files,
    check_rubric_file,
    evaluate_rubric_file,
    field_path,
    load_rubric_file,
)
from tests.conftest import EXAMPLES

RUBRICS = EXAMPLES / "rubrics"


@pytest.mark.parametrize(
    ("loc", "path"),
    [((), ""), (("version",), "version"), (("criteria", 1, "weight"), "criteria[1].weight"), ((0, "a"), "[0].a")],
)
def test_field_path(loc: tuple[int | str, ...], path: str) -> None:
    assert field_path(loc) == path


def test_check_valid_and_invalid_examples() -> None:
    ok = check_rubric_file(RUBRICS / "code_review.json")
    assert (ok.valid, ok.criteria, ok.issues) == (True, 4, [])
    bad = check_rubric_file(RUBRICS / "invalid" / "negative_weight.json")
    assert bad.valid is False
    assert bad.issues == [RubricIssue(path="criteria[1].weight", message="criterion weight must be positive")]


def test_check_strict_reads_yaml_too(tmp_path: Path) -> None:
    path = tmp_path / "strict.yaml"
    path.write_text(
        "version: '1'\ngoal_text: g\naggregation: weighted_sum\ncriteria:\n"
        "  - {id: a, description: A, weight: 0.7}\n  - {id: b, description: B, weight: 0.7}\n",
        encoding="utf-8",
    )
    check = check_rubric_file(path, strict=True)
    assert check.issues == [RubricIssue(path="", message="criterion weights must sum to 1 (got 1.400000)")]
    assert check_rubric_file(RUBRICS / "verifier_strict.json", strict=True).valid


def test_check_backend_judge_is_invalid(tmp_path: Path) -> None:
    path = tmp_path / "judge.json"
    path.write_text('{"event": [], "outcome": []}', encoding="utf-8")
    check = check_rubric_file(path)
    assert check.valid is False
    assert "backend judge format" in check.issues[0].message


def test_check_raises_for_unreadable_input(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError):
        check_rubric_file(tmp_path / "missing.json")
    with pytest.raises(RubricError, match="is a directory"):
        check_rubric_file(tmp_path)
    broken = tmp_path / "broken.json"
    broken.write_text("{", encoding="utf-8")
    with pytest.raises(json.JSONDecodeError):
        check_rubric_file(broken)
    listing = tmp_path / "list.yaml"
    listing.write_text("- 1\n", encoding="utf-8")
    with pytest.raises(RubricError, match="Rubric YAML must produce a mapping"):
        check_rubric_file(listing, strict=True)


def test_load_rubric_file_names_file_and_field(tmp_path: Path) -> None:
    path = tmp_path / "r.json"
    path.write_text(json.dumps({"version": 2, "criteria": [{"id": "a", "description": "A", "weight": 0}]}), "utf-8")
    with pytest.raises(RubricError) as caught:
        load_rubric_file(path)
    error = caught.value
    assert error.source == str(path)
    assert error.location == "version"
    assert "(and 1 more)" in str(error)
    with pytest.raises(FileNotFoundError):
        load_rubric_file(tmp_path / "nope.json")


def test_evaluate_files() -> None:
    events = evaluate_rubric_file(
        RUBRICS / "code_review.json", events_path=RUBRICS / "inputs" / "code_review_events.json"
    )
    assert events["reward"] == pytest.approx((0.9 * 2 + 0.6 * 1.5 + 1.0 + 0.4 * 0.5) / 5)
    outcome = evaluate_rubric_file(
        RUBRICS / "code_review.json",
        outcome_path=RUBRICS / "inputs" / "code_review_outcome.json",
        enforce_required=True,
        pass_threshold=0.7,
    )
    assert outcome["reward"] == pytest.approx(0.75)
    assert (outcome["failed_required"], outcome["passed"]) == (["correctness"], False)
    custom = evaluate_rubric_file(
        RUBRICS / "safety_gate.yaml", outcome_path=RUBRICS / "inputs" / "safety_gate_outcome.yaml", aggregator="min"
    )
    assert custom["reward"] == 0.5


def test_evaluate_jsonl_events_and_bad_inputs(tmp_path: Path) -> None:
    jsonl = tmp_path / "events.jsonl"
    jsonl.write_text('{"id": "style", "reward": 1}\n\n{"id": "docs", "reward": 1}\n', encoding="utf-8")
    result = evaluate_rubric_file(RUBRICS / "code_review.json", events_path=jsonl)
    assert result["reward"] == pytest.approx(1.5 / 5)
    jsonl.write_text('{"id": "style", "reward": 1}\n{oops\n', encoding="utf-8")
    with pytest.raises(RubricError, match="malformed JSON") as caught:
        evaluate_rubric_file(RUBRICS / "code_review.json", events_path=jsonl)
    assert (caught.value.line, caught.value.column, caught.value.location) == (2, 2, None)
    with pytest.raises(RubricError, match="events must be a list"):
        evaluate_rubric_file(RUBRICS / "code_review.json", events_path=RUBRICS / "inputs" / "code_review_outcome.json")
    with pytest.raises(RubricError, match="an outcome must be a mapping"):
        evaluate_rubric_file(RUBRICS / "code_review.json", outcome_path=RUBRICS / "inputs" / "code_review_events.json")
    with pytest.raises(RubricError, match="exactly one"):
        evaluate_rubric_file(RUBRICS / "code_review.json")


def test_a_raw_line_separator_inside_an_event_stays_in_its_record(tmp_path: Path) -> None:
    jsonl = tmp_path / "events.jsonl"
    jsonl.write_text(
        '{"id": "style", "reward": 1, "note": "a\u2028b"}\n{"id": "docs", "reward": 1, "note": "c\u2029d"}\n',
        encoding="utf-8",
    )
    result = evaluate_rubric_file(RUBRICS / "code_review.json", events_path=jsonl)
    assert result["reward"] == pytest.approx(1.5 / 5)  # as the same two events without the separators, above


def test_blend_files() -> None:
    blended = blend_rubric_files(RUBRICS / "code_review.json", RUBRICS / "code_review_override.yaml")
    assert [c.id for c in blended.criteria] == ["security", "tests", "style", "correctness", "docs"]
