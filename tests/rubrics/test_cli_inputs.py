"""``norma rubric eval`` warns about doubtful input on stderr; ``--strict`` makes it exit 2 with one line."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import EXAMPLES, CliResult

Run = Callable[..., CliResult]
RUBRIC = str(EXAMPLES / "rubrics" / "code_review.json")
EVENTS = str(EXAMPLES / "rubrics" / "inputs" / "code_review_events.json")
OUTCOME = str(EXAMPLES / "rubrics" / "inputs" / "code_review_outcome.json")


def _write(tmp_path: Path, name: str, data: Any) -> str:
    path = tmp_path / name
    path.write_text(json.dumps(data), encoding="utf-8")
    return str(path)


def test_example_events_warn_and_still_evaluate(run_cli: Run) -> None:
    result = run_cli("rubric", "eval", RUBRIC, "--events", EVENTS)
    assert result.code == 0
    assert result.err == (
        f"norma: warning: {EVENTS}:[4]: criterion id 'unrelated' matches no criterion\n"
        f"norma: warning: {EVENTS}:[5]: not an object, so it matches no criterion\n"
    )
    assert "reward: 0.78" in result.out


def test_json_output_stays_machine_readable(run_cli: Run) -> None:
    result = run_cli("rubric", "eval", RUBRIC, "--events", EVENTS, "--format", "json")
    assert result.code == 0
    payload = json.loads(result.out)
    assert payload["reward"] == pytest.approx(0.78)
    assert set(payload) == {"aggregation", "reward", "per_criterion"}
    assert result.err.count("norma: warning: ") == 2
    root = run_cli("--format", "json", "rubric", "eval", RUBRIC, "--events", EVENTS)
    assert json.loads(root.out) == payload


def test_clean_input_prints_no_warning(run_cli: Run) -> None:
    result = run_cli("rubric", "eval", RUBRIC, "--outcome", OUTCOME, "--strict")
    assert result.code == 0
    assert result.err == ""


@pytest.mark.parametrize(
    ("events", "line"),
    [
        ([{"criterion_id": "nope", "reward": 0.5}], "[0]: criterion id 'nope' matches no criterion"),
        ([{"criterion_id": "tests", "reward": "high"}], "[0].reward: 'high' is not a number"),
        ([{"criterion_id": "tests", "reward": 1.5}], "[0].reward: 1.5 is outside [0, 1]"),
        ([{"criterion_id": "tests", "reward": -1}], "[0].reward: -1 is outside [0, 1]"),
        (
            [{"criterion_id": "tests", "score": 0.5}],
            "[0].reward: missing (the event has 'score', the synth-ai 0.2.x key: rename it to 'reward')",
        ),
    ],
)
def test_each_event_issue_warns_and_strict_exits_2(run_cli: Run, tmp_path: Path, events: Any, line: str) -> None:
    path = _write(tmp_path, "events.json", events)
    warned = run_cli("rubric", "eval", RUBRIC, "--events", path)
    assert warned.code == 0
    assert warned.err == f"norma: warning: {path}:{line}\n"
    refused = run_cli("rubric", "eval", RUBRIC, "--events", path, "--strict", "--format", "json")
    assert refused.code == 2
    assert refused.out == ""
    assert refused.err.count("\n") == 1
    assert refused.err.startswith(f"norma: error: {path}:{line} (fix the input")


@pytest.mark.parametrize(
    ("outcome", "line"),
    [
        ({"criteria": {"tests": 0.5, "speed": 1}}, "criteria.speed: criterion id 'speed' matches no criterion"),
        ({"tests": "n/a"}, "tests: 'n/a' is not a number"),
        ({"criteria": {"docs": 7}}, "criteria.docs: 7 is outside [0, 1]"),
    ],
)
def test_each_outcome_issue_warns_and_strict_exits_2(run_cli: Run, tmp_path: Path, outcome: Any, line: str) -> None:
    path = _write(tmp_path, "outcome.json", outcome)
    warned = run_cli("rubric", "eval", RUBRIC, "--outcome", path, "--format", "json")
    assert warned.code == 0
    json.loads(warned.out)
    assert warned.err == f"norma: warning: {path}:{line}\n"
    refused = run_cli("rubric", "eval", RUBRIC, "--outcome", path, "--strict")
    assert refused.code == 2
    assert refused.err.startswith(f"norma: error: {path}:{line} (")


def test_strict_names_how_many_more(run_cli: Run) -> None:
    result = run_cli("rubric", "eval", RUBRIC, "--events", EVENTS, "--strict")
    assert result.code == 2
    assert result.err.startswith(
        f"norma: error: {EVENTS}:[4]: criterion id 'unrelated' matches no criterion (and 1 more) ("
    )


def test_strict_comes_before_the_verdict(run_cli: Run, tmp_path: Path) -> None:
    path = _write(tmp_path, "outcome.json", {"correctness": 2.0})
    assert run_cli("rubric", "eval", RUBRIC, "--outcome", path, "--pass-threshold", "0.99").code == 1
    assert run_cli("rubric", "eval", RUBRIC, "--outcome", path, "--pass-threshold", "0.99", "--strict").code == 2
