"""Rubric errors: each is a RubricError and the builtin the original raised, and survives pickling."""

from __future__ import annotations

import json
import pickle
from pathlib import Path

import pytest
import yaml

from norma.errors import NormaError, RubricError
from norma.rubrics import load_rubric, read_rubric_file


def _errors(tmp_path: Path) -> list[BaseException]:
    caught: list[BaseException] = []
    broken_json = tmp_path / "broken.json"
    broken_json.write_text('{"version": }', encoding="utf-8")
    broken_yaml = tmp_path / "broken.yaml"
    broken_yaml.write_text("a: [\n", encoding="utf-8")
    attempts = [
        lambda: load_rubric(broken_json),
        lambda: load_rubric(broken_yaml),
        lambda: load_rubric(tmp_path),
        lambda: read_rubric_file(tmp_path / "missing.json"),
        lambda: load_rubric("- a\n- b"),  # YAML that is not a mapping (JSON "[]" is a ValidationError)
        lambda: load_rubric({"event": 1, "outcome": 2}),
    ]
    for attempt in attempts:
        with pytest.raises(RubricError) as info:
            attempt()
        caught.append(info.value)
    return caught


def test_builtin_types_are_kept(tmp_path: Path) -> None:
    json_error, yaml_error, directory, missing, not_mapping, judge = _errors(tmp_path)
    assert isinstance(json_error, json.JSONDecodeError)
    assert (json_error.lineno, json_error.colno) == (1, 13)
    assert isinstance(yaml_error, yaml.YAMLError)
    assert isinstance(directory, IsADirectoryError)
    assert isinstance(missing, FileNotFoundError)
    assert missing.filename == str(tmp_path / "missing.json")
    for error in (not_mapping, judge, json_error, yaml_error, directory, missing):
        assert isinstance(error, ValueError)
        assert isinstance(error, NormaError)


def test_errors_pickle(tmp_path: Path) -> None:
    for error in _errors(tmp_path):
        copy = pickle.loads(pickle.dumps(error))
        assert type(copy) is type(error)
        assert str(copy) == str(error)
