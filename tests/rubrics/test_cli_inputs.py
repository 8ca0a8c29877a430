"""``norma rubric eval`` warns about doubtful input on stderr; ``--strict-inputs`` makes it exit 2 with one line."""

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


JUDGED = {"correctness": 0.5, "tests": 0.5, "style": 0.5, "docs": 0.5}  # every criterion of RUBRIC


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
    result = run_cli("rubric", "eval", RUBRIC, "--outcome", OUTCOME, "--strict-inputs")
    assert result.code == 0
    assert result.err == ""


@pytest.mark.parametrize(
    ("event", "line"),
    [
        ({"criterion_id": "nope", "reward": 0.5}, "[4]: criterion id 'nope' matches no criterion"),
        ({"criterion_id": "tests", "reward": "high"}, "[4].reward: 'high' is not a number"),
        ({"criterion_id": "tests", "reward": 1.5}, "[4].reward: 1.5 is outside [0, 1]"),
        ({"criterion_id": "tests", "reward": -1}, "[4].reward: -1 is outside [0, 1]"),
        (
            {"criterion_id": "tests", "score": 0.5},
            "[4].reward: missing (the event has 'score', the synth-ai 0.2.x key: rename it to 'reward')",
        ),
    ],
)
def test_each_event_issue_warns_and_strict_exits_2(run_cli: Run, tmp_path: Path, event: Any, line: str) -> None:
    events = [{"criterion_id": cid, "reward": value} for cid, value in JUDGED.items()] + [event]
    path = _write(tmp_path, "events.json", events)
    warned = run_cli("rubric", "eval", RUBRIC, "--events", path)
    assert warned.code == 0
    assert warned.err == f"norma: warning: {path}:{line}\n"
    refused = run_cli("rubric", "eval", RUBRIC, "--events", path, "--strict-inputs", "--format", "json")
    assert refused.code == 2
    assert refused.out == ""
    assert refused.err.count("\n") == 1
    assert refused.err.startswith(f"norma: error: {path}:{line} (fix the input")


@pytest.mark.parametrize(
    ("outcome", "lines"),
    [
        (
            {"criteria": {**JUDGED, "speed": 1}},
            ["criteria.speed: criterion id 'speed' matches no criterion"],
        ),
        (
            {**JUDGED, "tests": "n/a"},
            ["tests: 'n/a' is not a number", ": criterion 'tests' not judged: it counts 0"],
        ),
        ({"criteria": {**JUDGED, "docs": 7}}, ["criteria.docs: 7 is outside [0, 1]"]),
        (
            {"criteria": {**JUDGED, "tets": 1}},
            ["criteria.tets: criterion id 'tets' matches no criterion (did you mean 'tests'?)"],
        ),
    ],
)
def test_each_outcome_issue_warns_and_strict_exits_2(
    run_cli: Run, tmp_path: Path, outcome: Any, lines: list[str]
) -> None:
    path = _write(tmp_path, "outcome.json", outcome)
    warned = run_cli("rubric", "eval", RUBRIC, "--outcome", path, "--format", "json")
    assert warned.code == 0
    json.loads(warned.out)
    assert warned.err == "".join(f"norma: warning: {path}{'' if line[0] == ':' else ':'}{line}\n" for line in lines)
    refused = run_cli("rubric", "eval", RUBRIC, "--outcome", path, "--strict-inputs")
    assert refused.code == 2
    assert refused.err.startswith(f"norma: error: {path}:{lines[0]}")


def test_a_criterion_not_judged_warns_and_strict_refuses(run_cli: Run, tmp_path: Path) -> None:
    path = _write(tmp_path, "outcome.json", {"correctness": 1, "style": 1})
    warned = run_cli("rubric", "eval", RUBRIC, "--outcome", path, "--format", "json")
    assert (warned.code, json.loads(warned.out)["per_criterion"]["tests"]["reward"]) == (0, 0.0)
    assert warned.err == (
        f"norma: warning: {path}: criterion 'tests' not judged: it counts 0\n"
        f"norma: warning: {path}: criterion 'docs' not judged: it counts 0\n"
    )
    refused = run_cli("rubric", "eval", RUBRIC, "--outcome", path, "--strict-inputs", "--format", "json")
    assert (refused.code, refused.out) == (2, "")
    assert refused.err == (
        f"norma: error: {path}: criterion 'tests' not judged: it counts 0 (and 1 more) (fix the input, or drop the "
        "strict check to evaluate it as synth-ai does)\n"
    )


def test_json_lines_events_are_reported_by_line(run_cli: Run, tmp_path: Path) -> None:
    path = tmp_path / "events.jsonl"
    lines = [{"criterion_id": cid, "reward": value} for cid, value in JUDGED.items()]
    lines.insert(2, {"criterion_id": "corectness", "reward": 1})
    text = [json.dumps(line) for line in lines]
    path.write_text("\n".join([*text[:2], "", *text[2:]]) + "\n", encoding="utf-8")  # a blank line 3
    warned = run_cli("rubric", "eval", RUBRIC, "--events", str(path))
    assert warned.code == 0
    assert warned.err == (
        f"norma: warning: {path}:4: criterion id 'corectness' matches no criterion (did you mean 'correctness'?)\n"
    )
    refused = run_cli("rubric", "eval", RUBRIC, "--events", str(path), "--strict-inputs")
    assert refused.code == 2
    assert refused.err == (
        f"norma: error: {path}:4: criterion id 'corectness' matches no criterion (did you mean 'correctness'?) "
        "(fix the input, or drop the strict check to evaluate it as synth-ai does)\n"
    )


def test_strict_names_how_many_more(run_cli: Run) -> None:
    result = run_cli("rubric", "eval", RUBRIC, "--events", EVENTS, "--strict-inputs")
    assert result.code == 2
    assert result.err.startswith(
        f"norma: error: {EVENTS}:[4]: criterion id 'unrelated' matches no criterion (and 1 more) ("
    )


def test_strict_comes_before_the_verdict(run_cli: Run, tmp_path: Path) -> None:
    path = _write(tmp_path, "outcome.json", {"correctness": 2.0})
    assert run_cli("rubric", "eval", RUBRIC, "--outcome", path, "--pass-threshold", "0.99").code == 1
    assert run_cli("rubric", "eval", RUBRIC, "--outcome", path, "--pass-threshold", "0.99", "--strict-inputs").code == 2


def test_strict_on_eval_is_the_deprecated_spelling_of_strict_inputs(run_cli: Run, tmp_path: Path) -> None:
    path = _write(tmp_path, "outcome.json", {"correctness": 1, "style": 1})
    deprecated = run_cli("rubric", "eval", RUBRIC, "--outcome", path, "--strict", "--format", "json")
    assert (deprecated.code, deprecated.out) == (2, "")
    assert deprecated.err.splitlines() == [
        "norma: warning: `rubric eval --strict` is deprecated and goes in the next release: use --strict-inputs",
        run_cli("rubric", "eval", RUBRIC, "--outcome", path, "--strict-inputs").err.rstrip("\n"),
    ]
    clean = run_cli("rubric", "eval", RUBRIC, "--outcome", OUTCOME, "--strict")
    assert clean.code == 0
    assert "--strict" not in run_cli("rubric", "eval", "--help").out.replace("--strict-inputs", "")
