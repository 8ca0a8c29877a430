"""Strict validation: weights in (0, 1] summing to 1, weighted_sum only, non-empty fields, file helpers."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import given
from hypothesis import strategies as st

from norma.errors import RubricError
from norma.rubrics import (
    RubricCriterion,
    RubricSpec,
    StrictCriterion,
    StrictRubric,
    ValidationError,
    validate_rubric_dict,
    validate_rubric_file,
    validate_rubric_files,
)
from tests.conftest import CliResult

Run = Callable[..., CliResult]


def _payload(**changes: Any) -> dict[str, Any]:
    payload: dict[str, Any] = {
        "version": "1.0",
        "goal_text": "Evaluate X",
        "aggregation": "weighted_sum",
        "criteria": [
            {"id": "a", "description": "A", "weight": 0.6},
            {"id": "b", "description": "B", "weight": 0.4},
        ],
    }
    payload.update(changes)
    return payload


def test_aliases() -> None:
    assert RubricSpec is StrictRubric
    assert RubricCriterion is StrictCriterion


def test_valid_payload() -> None:
    rubric = validate_rubric_dict(_payload())
    assert [c.weight for c in rubric.criteria] == [0.6, 0.4]
    assert rubric.criteria[0].scale is None


def test_strings_are_stripped() -> None:
    rubric = validate_rubric_dict(
        _payload(
            version=" 2 ",
            goal_text="  goal\n",
            criteria=[{"id": " a ", "description": " A ", "weight": 1.0, "scale": "0-1"}],
        )
    )
    assert (rubric.version, rubric.goal_text) == ("2", "goal")
    assert (rubric.criteria[0].id, rubric.criteria[0].description) == ("a", "A")


def test_weight_is_required() -> None:
    with pytest.raises(ValidationError, match="weight"):
        StrictCriterion.model_validate({"id": "a", "description": "A"})


@pytest.mark.parametrize(
    ("weight", "message"),
    [
        (float("nan"), "weight must be a finite number"),
        (float("inf"), "weight must be a finite number"),
        (float("-inf"), "weight must be a finite number"),
        (0.0, "weight must be positive"),
        (-0.5, "weight must be positive"),
        (1.0000001, "weight must be <= 1.0"),
        (3, "weight must be <= 1.0"),
    ],
)
def test_weight_errors_in_order(weight: float, message: str) -> None:
    with pytest.raises(ValidationError) as caught:
        StrictCriterion(id="a", description="A", weight=weight)
    errors = caught.value.errors()
    assert len(errors) == 1
    assert message in errors[0]["msg"]


def test_weights_must_sum_to_one_message() -> None:
    payload = _payload(
        criteria=[{"id": "a", "description": "A", "weight": 0.6}, {"id": "b", "description": "B", "weight": 0.6}]
    )
    with pytest.raises(ValidationError) as caught:
        validate_rubric_dict(payload)
    assert "criterion weights must sum to 1 (got 1.200000)" in str(caught.value)


def test_sum_tolerance_is_1e_6() -> None:
    ok = _payload(
        criteria=[{"id": "a", "description": "A", "weight": 0.5}, {"id": "b", "description": "B", "weight": 0.5000009}]
    )
    assert validate_rubric_dict(ok)
    off = _payload(
        criteria=[{"id": "a", "description": "A", "weight": 0.5}, {"id": "b", "description": "B", "weight": 0.500003}]
    )
    with pytest.raises(ValidationError, match="must sum to 1"):
        validate_rubric_dict(off)


def test_only_weighted_sum() -> None:
    with pytest.raises(ValidationError, match="weighted_sum"):
        validate_rubric_dict(_payload(aggregation="sum"))
    with pytest.raises(ValidationError, match="aggregation"):
        validate_rubric_dict({k: v for k, v in _payload().items() if k != "aggregation"})


@pytest.mark.parametrize(
    ("field", "message"),
    [("version", "version string must not be empty"), ("goal_text", "goal_text must not be empty")],
)
def test_empty_strings_rejected(field: str, message: str) -> None:
    with pytest.raises(ValidationError, match=message):
        validate_rubric_dict(_payload(**{field: "   "}))


def test_goal_text_is_required() -> None:
    with pytest.raises(ValidationError, match="goal_text"):
        validate_rubric_dict({k: v for k, v in _payload().items() if k != "goal_text"})


def test_at_least_one_criterion() -> None:
    with pytest.raises(ValidationError, match="rubric must declare at least one criterion"):
        validate_rubric_dict(_payload(criteria=[]))


def test_duplicate_ids_allowed() -> None:
    rubric = validate_rubric_dict(
        _payload(
            criteria=[{"id": "a", "description": "A", "weight": 0.5}, {"id": "a", "description": "B", "weight": 0.5}]
        )
    )
    assert [c.id for c in rubric.criteria] == ["a", "a"]


@pytest.mark.parametrize("payload", [[], "rubric", None, 3])
def test_non_dict_is_a_type_error(payload: Any) -> None:
    with pytest.raises(TypeError, match="rubric payload must be a dictionary"):
        validate_rubric_dict(payload)


@given(st.lists(st.floats(min_value=1e-3, max_value=1e3), min_size=1, max_size=30))
def test_any_positive_weights_normalised_to_one_are_accepted(raw: list[float]) -> None:
    total = sum(raw)
    criteria = [{"id": f"c{i}", "description": "d", "weight": w / total} for i, w in enumerate(raw)]
    rubric = validate_rubric_dict(_payload(criteria=criteria))
    assert len(rubric.criteria) == len(raw)


def _write(path: Path, payload: Any) -> Path:
    path.write_text(json.dumps(payload), encoding="utf-8")
    return path


def test_validate_rubric_file_accepts_json_in_any_case(tmp_path: Path) -> None:
    for name in ("r.json", "R.JSON", "r.Json"):
        assert validate_rubric_file(_write(tmp_path / name, _payload())).version == "1.0"
    assert validate_rubric_file(str(tmp_path / "r.json")).goal_text == "Evaluate X"


@pytest.mark.parametrize("name", ["r.yaml", "r.yml", "R.YAML", "r.txt", "r"])
def test_validate_rubric_file_reads_what_the_cli_reads(run_cli: Run, tmp_path: Path, name: str) -> None:
    path = tmp_path / name
    path.write_text(yaml.safe_dump(_payload()), encoding="utf-8")
    assert validate_rubric_file(path).criteria[1].weight == 0.4
    assert run_cli("rubric", "validate", "--strict", str(path)).code == 0
    path.write_text(yaml.safe_dump(_payload(aggregation="sum")), encoding="utf-8")
    with pytest.raises(ValidationError, match="Input should be 'weighted_sum'"):
        validate_rubric_file(path)
    assert run_cli("rubric", "validate", "--strict", str(path)).code == 2


def test_validate_rubric_file_refuses_yaml_that_is_not_a_mapping(run_cli: Run, tmp_path: Path) -> None:
    path = tmp_path / "r.yaml"
    path.write_text("- a\n- b\n", encoding="utf-8")
    with pytest.raises(RubricError) as caught:
        validate_rubric_file(path)
    assert str(caught.value) == f"{path}: Rubric YAML must produce a mapping (write key: value pairs)"
    result = run_cli("rubric", "validate", "--strict", str(path))
    assert (result.code, result.err) == (2, f"norma: error: {caught.value}\n")


def test_a_json_file_is_read_as_json_only_by_both(run_cli: Run, tmp_path: Path) -> None:
    path = tmp_path / "r.json"
    path.write_text(yaml.safe_dump(_payload()), encoding="utf-8")  # YAML in a .json file: synth-ai refuses it
    with pytest.raises(json.JSONDecodeError):
        validate_rubric_file(path)
    result = run_cli("rubric", "validate", "--strict", str(path))
    assert (result.code, result.err) == (2, f"norma: error: {path}:1:1: not valid JSON: Expecting value\n")


def test_validate_rubric_file_errors(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError):
        validate_rubric_file(tmp_path / "missing.json")
    bad = tmp_path / "bad.json"
    bad.write_text("{not json", encoding="utf-8")
    with pytest.raises(json.JSONDecodeError) as caught:
        validate_rubric_file(bad)
    assert str(bad) in str(caught.value)
    with pytest.raises(TypeError, match="rubric payload must be a dictionary"):
        validate_rubric_file(_write(tmp_path / "list.json", [1, 2]))
    with pytest.raises(ValidationError, match="must sum to 1"):
        validate_rubric_file(
            _write(tmp_path / "sum.json", _payload(criteria=[{"id": "a", "description": "A", "weight": 0.5}]))
        )


def test_validate_rubric_files(tmp_path: Path) -> None:
    assert validate_rubric_files([]) == []
    first = _write(tmp_path / "a.json", _payload(version="a"))
    second = _write(tmp_path / "b.json", _payload(version="b"))
    broken = _write(tmp_path / "c.json", _payload(aggregation="sum"))
    assert [r.version for r in validate_rubric_files([second, first])] == ["b", "a"]
    with pytest.raises(ValidationError):
        validate_rubric_files([first, broken, tmp_path / "never-read.yaml"])
    with pytest.raises(RubricError, match=r"x\.yaml: no such file"):
        validate_rubric_files([first, tmp_path / "x.yaml", broken])
