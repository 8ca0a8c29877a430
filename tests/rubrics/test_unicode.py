"""Rubric files holding text that is not valid Unicode (a lone surrogate, from a ``"\\ud800"`` escape) are refused
where they are read, naming the field (issue 23, item 2): `norma rubric eval` printed a traceback while writing
its answer. Everything else is read as synth-ai reads it."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from norma.errors import RubricError
from norma.rubrics import evaluate_rubric_file, load_rubric, validate_rubric_file
from tests.conftest import CliResult

Run = Callable[..., CliResult]
RUBRIC = '{"version": "1", "criteria": [{"id": %s, "description": "d", "weight": 1}]}'


@pytest.mark.parametrize("suffix", [".json", ".yaml"])
def test_a_rubric_file_with_a_lone_surrogate_is_refused_naming_the_field(
    run_cli: Run, tmp_path: Path, suffix: str
) -> None:
    path = tmp_path / f"r{suffix}"
    path.write_text(RUBRIC % '"\\ud800"', encoding="utf-8")  # JSON is YAML too
    result = run_cli("rubric", "validate", str(path))
    assert result.code == 2
    assert "criteria[0].id: text is not valid Unicode" in result.err
    with pytest.raises(RubricError) as info:
        load_rubric(path)
    assert info.value.location == "criteria[0].id"


def test_an_outcome_or_events_file_with_a_lone_surrogate_is_refused(run_cli: Run, tmp_path: Path) -> None:
    rubric = tmp_path / "r.json"
    rubric.write_text(RUBRIC % '"c"', encoding="utf-8")
    outcome = tmp_path / "outcome.json"
    outcome.write_text('{"\\udfff": 1}', encoding="utf-8")
    events = tmp_path / "events.jsonl"
    events.write_text('{"criterion_id": "c", "reward": 1}\n{"criterion_id": "\\ud800", "reward": 1}\n', "utf-8")
    for option, path in (("--outcome", outcome), ("--events", events)):
        result = run_cli("rubric", "eval", str(rubric), option, str(path), "--format", "json")
        assert result.code == 2, result.err
        assert "not valid Unicode" in result.err
        assert "Traceback" not in result.err
    with pytest.raises(RubricError, match="not valid Unicode"):
        evaluate_rubric_file(rubric, outcome_path=outcome)


def test_strict_rubric_files_refuse_it_too(tmp_path: Path) -> None:
    path = tmp_path / "v.json"
    path.write_text(RUBRIC % '"\\ud800"', encoding="utf-8")
    with pytest.raises(RubricError, match="not valid Unicode"):
        validate_rubric_file(path)


def test_a_surrogate_pair_is_one_character_and_reads_fine(tmp_path: Path) -> None:
    path = tmp_path / "r.json"
    path.write_text(RUBRIC % '"\\ud83d\\ude00"', encoding="utf-8")
    assert [c.id for c in load_rubric(path).criteria] == ["\U0001f600"]
