"""A source that decodes to something other than a mapping: pydantic's ValidationError, as synth-ai raises.

synth-ai's ``load_rubric`` hands whatever JSON decodes to (or a non-string object turned into JSON text) to
``Rubric.model_validate``, which refuses it with "Input should be a valid dictionary or instance of Rubric".
The CLI and the file helpers still refuse such a file with one readable line (exit 2).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pydantic
import pytest

from norma.errors import RubricError
from norma.rubrics import (
    evaluate_rubric,
    evaluate_rubric_file,
    load_rubric,
    load_rubric_file,
    parse_rubric_text,
    validate_rubric,
)
from tests.conftest import EXAMPLES, CliResult

Run = Callable[..., CliResult]
MESSAGE = "Input should be a valid dictionary or instance of Rubric"
OUTCOME = str(EXAMPLES / "rubrics" / "inputs" / "code_review_outcome.json")

# each source and the value Rubric.model_validate receives
TEXTS: list[tuple[Any, Any]] = [
    ("[1, 2]", [1, 2]),
    ("5", 5),
    ("null", None),
    ('"abc"', "abc"),
    (5, 5),
    ([], []),
    ("3.5", 3.5),
    ("true", True),
    ('  [{"version": "1"}]\n', [{"version": "1"}]),
]


def _only_error(caught: pytest.ExceptionInfo[pydantic.ValidationError]) -> dict[str, Any]:
    errors = caught.value.errors(include_url=False)
    assert len(errors) == 1
    assert caught.value.title == "Rubric"
    return dict(errors[0])


@pytest.mark.parametrize(("source", "value"), TEXTS)
def test_text_and_objects_raise_pydantics_validation_error(source: Any, value: Any) -> None:
    with pytest.raises(pydantic.ValidationError) as caught:
        load_rubric(source)
    error = _only_error(caught)
    assert error["msg"] == MESSAGE
    assert error["type"] == "model_type"
    assert error["loc"] == ()
    assert error["input"] == value
    assert not isinstance(caught.value, RubricError)
    assert isinstance(caught.value, ValueError)  # pydantic's error is a ValueError, as RubricError is


@pytest.mark.parametrize("content", ["[1]", "5", "null", '"abc"', "[]"])
@pytest.mark.parametrize("as_path", [True, False])
def test_json_file_holding_a_non_mapping(tmp_path: Path, content: str, as_path: bool) -> None:
    path = tmp_path / "rubric.json"
    path.write_text(content, encoding="utf-8")
    with pytest.raises(pydantic.ValidationError) as caught:
        load_rubric(path if as_path else str(path))
    error = _only_error(caught)
    assert error["msg"] == MESSAGE
    assert error["input"] == json.loads(content)


@pytest.mark.parametrize("suffix", [".txt", ""])
def test_any_non_yaml_file_suffix_is_read_the_same_way(tmp_path: Path, suffix: str) -> None:
    path = tmp_path / f"rubric{suffix}"
    path.write_text("[1]", encoding="utf-8")
    with pytest.raises(pydantic.ValidationError, match=MESSAGE):
        load_rubric(path)


def test_evaluate_rubric_lets_the_same_error_through() -> None:
    with pytest.raises(pydantic.ValidationError, match=MESSAGE):
        evaluate_rubric([1, 2], outcome={})  # type: ignore[arg-type]


@pytest.mark.parametrize(
    "source",
    ["just words", "- a\n- b", "[a, b]", ["not", "json"], [{"version": "1"}]],
)
def test_text_that_is_not_json_keeps_the_yaml_message(source: Any) -> None:
    # the YAML fallback checks for a mapping itself, in synth-ai too ("Rubric text must decode to a mapping")
    with pytest.raises(RubricError, match="Rubric text must decode to a mapping"):
        load_rubric(source)


def test_yaml_file_keeps_its_message(tmp_path: Path) -> None:
    path = tmp_path / "rubric.yaml"
    path.write_text("[1]", encoding="utf-8")
    with pytest.raises(RubricError, match="Rubric YAML must produce a mapping"):
        load_rubric(path)


@pytest.mark.parametrize("text", ["[1, 2]", "5", "null", '"abc"'])
def test_parse_rubric_text_still_promises_a_mapping(text: str) -> None:
    with pytest.raises(RubricError, match="Rubric text must decode to a mapping"):
        parse_rubric_text(text)


@pytest.mark.parametrize("content", ["[1]", "5", "null", '"abc"'])
def test_file_helpers_refuse_a_non_mapping_with_the_file(tmp_path: Path, content: str) -> None:
    path = tmp_path / "rubric.json"
    path.write_text(content, encoding="utf-8")
    for attempt in (
        lambda: validate_rubric(path),
        lambda: validate_rubric(path, strict=True),
        lambda: load_rubric_file(path),
        lambda: evaluate_rubric_file(path, outcome_path=OUTCOME),
    ):
        with pytest.raises(RubricError) as caught:
            attempt()
        assert str(caught.value) == f"{path}: Rubric text must decode to a mapping"


@pytest.mark.parametrize("content", ["[1]", "5", "null", '"abc"', "[]"])
@pytest.mark.parametrize("command", ["validate", "eval", "blend"])
def test_cli_exits_2_with_one_line(run_cli: Run, tmp_path: Path, content: str, command: str) -> None:
    path = tmp_path / "rubric.json"
    path.write_text(content, encoding="utf-8")
    args = {
        "validate": ["rubric", "validate", str(path)],
        "eval": ["rubric", "eval", str(path), "--outcome", OUTCOME],
        "blend": ["rubric", "blend", str(path), str(path)],
    }[command]
    result = run_cli(*args)
    assert result.code == 2
    assert result.out == ""
    assert result.err == f"norma: error: {path}: Rubric text must decode to a mapping\n"
