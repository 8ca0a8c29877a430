"""``norma rubric ...``: exit codes, file and field paths in messages, JSON output."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

from tests.conftest import EXAMPLES, CliResult

Run = Callable[..., CliResult]
RUBRICS = EXAMPLES / "rubrics"
GOOD = str(RUBRICS / "code_review.json")
INVALID = str(RUBRICS / "invalid" / "negative_weight.json")


def test_validate_ok(run_cli: Run) -> None:
    result = run_cli("rubric", "validate", GOOD, str(RUBRICS / "safety_gate.yaml"))
    assert result.code == 0
    assert "ok" in result.out
    assert "safety_gate.yaml (3 criteria)" in result.out


def test_validate_checks_every_file_with_file_and_field(run_cli: Run) -> None:
    result = run_cli("rubric", "validate", GOOD, INVALID, str(RUBRICS / "does-not-exist.json"))
    assert result.code == 2  # a file that cannot be read; the others are still checked (#50)
    assert f"{INVALID}:6:65: criteria[1].weight: criterion weight must be positive" in result.out  # where it is written
    assert "does-not-exist" in result.err


def test_validate_json_output(run_cli: Run) -> None:
    result = run_cli("rubric", "validate", "--format", "json", GOOD, INVALID)
    assert result.code == 2
    payload = json.loads(result.out)
    assert payload["valid"] is False
    assert [f["valid"] for f in payload["files"]] == [True, False]
    assert payload["files"][1]["issues"] == [
        {"path": "criteria[1].weight", "message": "criterion weight must be positive"}
    ]


def test_validate_strict(run_cli: Run) -> None:
    assert run_cli("rubric", "validate", "--strict", str(RUBRICS / "verifier_strict.json")).code == 0
    result = run_cli("rubric", "validate", "--strict", GOOD)
    assert result.code == 2
    assert f"{GOOD}:6:111: criteria[0].weight: weight must be <= 1.0" in result.out


def test_validate_missing_file_exits_2(run_cli: Run, tmp_path: Path) -> None:
    missing = tmp_path / "gone.json"
    result = run_cli("rubric", "validate", str(missing))
    assert result.code == 2
    assert result.err == f"norma: error: {missing}: no such file (check the path)\n"


def test_validate_directory_and_malformed_exit_2(run_cli: Run, tmp_path: Path) -> None:
    result = run_cli("rubric", "validate", str(tmp_path))
    assert result.code == 2
    assert "is a directory" in result.err
    broken = tmp_path / "broken.yaml"
    broken.write_text("# header\nversion: [1\ncriteria: []\n", encoding="utf-8")
    result = run_cli("rubric", "validate", str(broken))
    assert result.code == 2
    assert f"norma: error: {broken}:3:9: malformed YAML: " in result.err
    assert result.err.count("\n") == 1


def test_validate_needs_a_file(run_cli: Run) -> None:
    assert run_cli("rubric", "validate").code == 2


def test_eval_events(run_cli: Run) -> None:
    result = run_cli("rubric", "eval", GOOD, "--events", str(RUBRICS / "inputs" / "code_review_events.json"))
    assert result.code == 0
    assert "reward: 0.78 (weighted_sum)" in result.out
    as_json = run_cli(
        "rubric", "eval", GOOD, "--events", str(RUBRICS / "inputs" / "code_review_events.json"), "--format", "json"
    )
    assert json.loads(as_json.out)["reward"] == 0.78


def test_eval_verdict_exit_codes(run_cli: Run) -> None:
    outcome = str(RUBRICS / "inputs" / "code_review_outcome.json")
    passing = run_cli("rubric", "eval", GOOD, "--outcome", outcome, "--pass-threshold", "0.7")
    assert passing.code == 0
    assert "verdict: PASS" in passing.out
    failing = run_cli("rubric", "eval", GOOD, "--outcome", outcome, "--pass-threshold", "0.7", "--enforce-required")
    assert failing.code == 1
    assert "verdict: FAIL" in failing.out
    assert "yes (FAILED)" in failing.out


def test_eval_custom_aggregator(run_cli: Run) -> None:
    args = [
        "rubric",
        "eval",
        str(RUBRICS / "safety_gate.yaml"),
        "--outcome",
        str(RUBRICS / "inputs" / "safety_gate_outcome.yaml"),
    ]
    assert "reward: None (custom, without an aggregator: give --aggregator NAME" in run_cli(*args).out
    result = run_cli(*args, "--aggregator", "min", "--format", "json")
    assert json.loads(result.out)["reward"] == 0.5
    unknown = run_cli(*args, "--aggregator", "median")
    assert unknown.code == 2
    assert "unknown aggregator 'median'" in unknown.err


def test_eval_usage_and_input_errors(run_cli: Run) -> None:
    assert run_cli("rubric", "eval", GOOD).code == 2
    both = run_cli("rubric", "eval", GOOD, "--events", GOOD, "--outcome", GOOD)
    assert both.code == 2
    assert "exactly one" in both.err
    invalid = run_cli("rubric", "eval", INVALID, "--outcome", str(RUBRICS / "inputs" / "code_review_outcome.json"))
    assert invalid.code == 2
    assert f"{INVALID}:criteria[1].weight: criterion weight must be positive" in invalid.err


def test_blend(run_cli: Run) -> None:
    result = run_cli("rubric", "blend", GOOD, str(RUBRICS / "code_review_override.yaml"), "--format", "json")
    assert result.code == 0
    blended = json.loads(result.out)
    assert [c["id"] for c in blended["criteria"]] == ["security", "tests", "style", "correctness", "docs"]
    assert blended["version"] == "1.1"
    table = run_cli("rubric", "blend", GOOD, str(RUBRICS / "code_review_override.yaml"))
    assert "security" in table.out
    assert run_cli("rubric", "blend", GOOD, INVALID).code == 2


def test_schema(run_cli: Run) -> None:
    flexible = json.loads(run_cli("rubric", "schema", "--format", "json").out)
    assert flexible["title"] == "Rubric"
    strict = run_cli("--format", "json", "rubric", "schema", "--strict")
    assert json.loads(strict.out)["title"] == "StrictRubric"
    table = run_cli("rubric", "schema")
    assert table.code == 0
    assert "goal_text" in table.out


def test_demo_has_a_rubrics_section(run_cli: Run) -> None:
    result = run_cli("demo", "--format", "json")
    assert result.code == 0
    section = json.loads(result.out)["sections"]["rubrics"]
    assert section["events_reward"] == 0.78
    assert section["outcome_passed"] is False
    assert section["custom_min_reward"] == 0.5
    assert section["strict_valid"] is True


def test_huge_and_non_mapping_files_exit_2(run_cli: Run, tmp_path: Path) -> None:
    huge = tmp_path / "huge.json"
    huge.write_text('{"version": "1", "pad": "' + "x" * (1024 * 1024) + '"}', encoding="utf-8")
    result = run_cli("rubric", "validate", str(huge))
    assert result.code == 2
    assert f"{huge}: rubric file is" in result.err
    listing = tmp_path / "list.json"
    listing.write_text("[1, 2]", encoding="utf-8")
    result = run_cli("rubric", "validate", str(listing))
    assert result.code == 2
    assert f"{listing}: Rubric text must decode to a mapping" in result.err


def test_wrong_types_exit_2_with_every_field_path(run_cli: Run, tmp_path: Path) -> None:
    path = tmp_path / "types.yaml"
    path.write_text("version: 3\ncriteria:\n  - id: 7\n    description: d\n    weight: heavy\n", encoding="utf-8")
    result = run_cli("rubric", "validate", str(path))
    assert result.code == 2
    for where in ("1:10: version", "3:9: criteria[0].id", "5:13: criteria[0].weight"):  # FILE:LINE:COL: field
        assert f"{path}:{where}: " in result.out
