"""load_rubric: the compatible decision order, its error texts, and the documented errors for bad files."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest
import yaml

from norma.errors import NormaError, RubricError
from norma.rubrics import Criterion, Rubric, ValidationError, load_rubric, parse_rubric_text, read_rubric_file
from tests.conftest import EXAMPLES

RUBRIC = {
    "version": "1.0",
    "goal_text": "Evaluate code",
    "criteria": [{"id": "correctness", "description": "Works", "weight": 2.0}],
}
YAML_TEXT = """
version: "1.0"
goal_text: Evaluate code
criteria:
  - id: correctness
    description: Works
    weight: 2.0
"""


def test_none_and_rubric_pass_through() -> None:
    assert load_rubric(None) is None
    rubric = Rubric(version="1")
    assert load_rubric(rubric) is rubric


def test_dict_is_validated() -> None:
    rubric = load_rubric(RUBRIC)
    assert rubric is not None
    assert rubric.criteria == [Criterion(id="correctness", description="Works", weight=2.0)]
    with pytest.raises(ValidationError, match="criterion weight must be positive"):
        load_rubric({"version": "1", "criteria": [{"id": "a", "description": "A", "weight": 0}]})


@pytest.mark.parametrize("suffix", [".json", ".JSON", ".txt", ""])
def test_json_file(tmp_path: Path, suffix: str) -> None:
    path = tmp_path / f"rubric{suffix}"
    path.write_text(json.dumps(RUBRIC), encoding="utf-8")
    for source in (path, str(path)):
        rubric = load_rubric(source)
        assert rubric is not None
        assert rubric.goal_text == "Evaluate code"


@pytest.mark.parametrize("suffix", [".yaml", ".yml", ".YAML", ".Yml"])
def test_yaml_file(tmp_path: Path, suffix: str) -> None:
    path = tmp_path / f"rubric{suffix}"
    path.write_text(YAML_TEXT, encoding="utf-8")
    rubric = load_rubric(str(path))
    assert rubric is not None
    assert rubric.criteria[0].weight == 2.0


def test_yaml_in_a_file_without_yaml_suffix_falls_back_from_json(tmp_path: Path) -> None:
    path = tmp_path / "rubric.txt"
    path.write_text(YAML_TEXT, encoding="utf-8")
    rubric = load_rubric(path)
    assert rubric is not None
    assert rubric.version == "1.0"


def test_text_sources() -> None:
    from_json = load_rubric(json.dumps(RUBRIC))
    from_yaml = load_rubric(YAML_TEXT)
    assert from_json == from_yaml
    assert from_json is not None
    assert from_json.criteria[0].id == "correctness"
    padded = load_rubric("\n\n   " + json.dumps(RUBRIC) + "  \n")
    assert padded == from_json


@pytest.mark.parametrize("text", ["", "   ", "\n\t\n"])
def test_empty_text(text: str) -> None:
    with pytest.raises(ValueError, match="Rubric source is empty") as caught:
        load_rubric(text)
    assert str(caught.value) == "Rubric source is empty"


def test_empty_file_names_the_file(tmp_path: Path) -> None:
    path = tmp_path / "empty.json"
    path.write_text("  \n", encoding="utf-8")
    with pytest.raises(RubricError, match="Rubric source is empty") as caught:
        load_rubric(path)
    assert str(path) in str(caught.value)


@pytest.mark.parametrize("text", ["- a\n- b\n", "just a string", "42"])
def test_yaml_file_must_be_a_mapping(tmp_path: Path, text: str) -> None:
    path = tmp_path / "r.yaml"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(ValueError, match="Rubric YAML must produce a mapping"):
        load_rubric(path)


@pytest.mark.parametrize("text", ["just words", "- a\n- b", "[a, b]", "'quoted'"])
def test_text_must_be_a_mapping(text: str) -> None:
    # YAML (the fallback for text that is not JSON) must be a mapping; JSON that is not one: test_non_mapping.py
    with pytest.raises(ValueError, match="Rubric text must decode to a mapping") as caught:
        load_rubric(text)
    assert isinstance(caught.value, RubricError)


def test_missing_file_name_is_text_with_a_hint() -> None:
    with pytest.raises(RubricError) as caught:
        load_rubric("no/such/rubric.json")
    assert "Rubric text must decode to a mapping" in str(caught.value)
    assert "no file named 'no/such/rubric.json' exists" in str(caught.value)


def test_text_starting_with_brace_is_json_only() -> None:
    # valid YAML flow mapping, but not JSON: the compatible loader does not fall back to YAML
    with pytest.raises(json.JSONDecodeError) as caught:
        load_rubric("{version: '1'}")
    assert isinstance(caught.value, RubricError)
    assert "Expecting property name enclosed in double quotes: line 1 column 2 (char 1)" in str(caught.value)


def test_malformed_json_file_names_file_and_line(tmp_path: Path) -> None:
    path = tmp_path / "broken.json"
    path.write_text('{\n  "version": "1",\n  "criteria": [\n}', encoding="utf-8")
    with pytest.raises(json.JSONDecodeError) as caught:
        load_rubric(path)
    text = str(caught.value)
    assert text.startswith(f"{path}:4:1: ")  # then the decoder's own words
    assert "line 4 column 1" in text
    assert (caught.value.lineno, caught.value.line, caught.value.column) == (4, 4, 1)


def test_malformed_yaml_file_names_file_and_line(tmp_path: Path) -> None:
    path = tmp_path / "broken.yaml"
    path.write_text('version: "1"\ncriteria:\n  - id: a\n   description: [oops\n', encoding="utf-8")
    with pytest.raises(yaml.YAMLError) as caught:
        load_rubric(path)
    error = caught.value
    assert isinstance(error, RubricError)
    assert str(path) in str(error)
    assert "malformed YAML" in str(error)
    assert (error.line, error.location) == (4, None)
    assert str(error).startswith(f"{path}:4:4: malformed YAML: ")


def test_backend_judge_format() -> None:
    data = {"event": [{"id": "x"}], "outcome": [{"id": "y"}]}
    with pytest.raises(ValueError, match="backend judge format") as caught:
        load_rubric(data)
    assert "(" + json.dumps(data) + ")" not in str(caught.value)
    text = json.dumps(data)
    with pytest.raises(ValueError, match="backend judge format") as caught_text:
        load_rubric(text)
    assert f"({text})" in str(caught_text.value)


def test_backend_judge_format_from_a_string_path(tmp_path: Path) -> None:
    path = tmp_path / "judge_backend_judge.json"
    path.write_text(json.dumps({"event": {}, "outcome": {}}), encoding="utf-8")
    with pytest.raises(ValueError, match="backend judge format") as caught:
        load_rubric(str(path))
    assert f"({path})" in str(caught.value)


@pytest.mark.parametrize("extra", [{"version": "1"}, {"goal_text": "g"}, {"criteria": []}])
def test_event_and_outcome_with_rubric_keys_is_a_rubric(extra: dict[str, object]) -> None:
    data = {"event": 1, "outcome": 2, "version": "1", **extra}
    rubric = load_rubric(data)
    assert rubric is not None
    assert rubric.version == "1"


def test_wrong_types_raise_validation_error() -> None:
    with pytest.raises(ValidationError) as caught:
        load_rubric('{"version": 1, "criteria": [{"id": 2, "description": "x", "weight": "heavy"}]}')
    locations = {tuple(error["loc"]) for error in caught.value.errors()}
    assert locations == {("version",), ("criteria", 0, "id"), ("criteria", 0, "weight")}


def test_directory_is_a_documented_error(tmp_path: Path) -> None:
    with pytest.raises(RubricError, match="is a directory") as caught:
        load_rubric(tmp_path)
    assert isinstance(caught.value, IsADirectoryError)
    assert str(tmp_path) in str(caught.value)


def test_huge_file_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "huge.json"
    path.write_text(json.dumps({**RUBRIC, "padding": "x" * 2_000_000}), encoding="utf-8")
    with pytest.raises(RubricError, match="over the limit of 1048576 bytes") as caught:
        load_rubric(path)
    assert str(path) in str(caught.value)
    rubric = load_rubric(path, max_bytes=4_000_000)
    assert rubric is not None
    assert rubric.version == "1.0"


def test_non_utf8_file(tmp_path: Path) -> None:
    path = tmp_path / "latin1.json"
    path.write_bytes('{"version": "1", "goal_text": "caf\xe9"}'.encode("latin-1"))
    with pytest.raises(RubricError, match="not UTF-8") as caught:
        load_rubric(path)
    assert str(path) in str(caught.value)


_UNREADABLE = """
import os, sys
from norma.rubrics import load_rubric
os.setgid(65534); os.setuid(65534)
try:
    load_rubric(sys.argv[1])
except PermissionError as exc:
    print(type(exc).__name__, exc)
"""


def test_unreadable_file(tmp_path: Path) -> None:
    folder = Path(tempfile.mkdtemp(prefix="norma-unreadable-"))
    try:
        folder.chmod(0o755)
        path = folder / "secret.json"
        path.write_text(json.dumps(RUBRIC), encoding="utf-8")
        path.chmod(0o000)
        if os.geteuid() == 0:  # root reads anything: drop to nobody in a real child process
            src = str(Path(__file__).resolve().parents[2] / "src")
            proc = subprocess.run(
                [sys.executable, "-c", _UNREADABLE, str(path)],
                capture_output=True,
                text=True,
                check=False,
                env={**os.environ, "PYTHONPATH": src},
            )
            assert proc.returncode == 0, proc.stderr
            assert proc.stdout.startswith("RubricPermissionError")
            assert f"{path}: permission denied" in proc.stdout
        else:
            with pytest.raises(PermissionError) as caught:
                load_rubric(path)
            assert isinstance(caught.value, NormaError)
            assert f"{path}: permission denied" in str(caught.value)
    finally:
        path.chmod(0o644)
        path.unlink()
        folder.rmdir()


def test_read_rubric_file_missing(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError) as caught:
        read_rubric_file(tmp_path / "gone.json")
    assert isinstance(caught.value, RubricError)
    assert "gone.json: no such file" in str(caught.value)


def test_very_long_text_is_not_taken_for_a_path() -> None:
    long_name = {"version": "1", "goal_text": "g" * 5000}
    rubric = load_rubric(json.dumps(long_name))
    assert rubric is not None
    assert len(rubric.goal_text or "") == 5000
    with pytest.raises(yaml.YAMLError, match="malformed YAML"):  # not "embedded null byte" from a path check
        load_rubric("nul\x00byte")


def test_parse_rubric_text_without_fetch_keeps_urls_as_text() -> None:
    with pytest.raises(RubricError, match="Rubric text must decode to a mapping"):
        parse_rubric_text("https://example.invalid/rubric.json", fetch=False)


def test_other_url_schemes_are_text_with_a_hint() -> None:
    with pytest.raises(RubricError) as caught:
        load_rubric("file:///etc/passwd")
    assert "Rubric text must decode to a mapping" in str(caught.value)
    assert "only http:// and https:// URLs are fetched" in str(caught.value)


@pytest.mark.parametrize("name", ["code_review.json", "code_review_override.yaml", "safety_gate.yaml"])
def test_examples_load(name: str) -> None:
    rubric = load_rubric(EXAMPLES / "rubrics" / name)
    assert rubric is not None
    assert rubric.criteria
