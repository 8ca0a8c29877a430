"""``norma rules validate``: rulebooks checked as ``rules import`` would, with no store."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.conftest import EXAMPLES, CliResult

Run = Callable[..., CliResult]
GOOD = str(EXAMPLES / "rulebooks" / "banking-support.yaml")


def test_valid_rulebooks_exit_0_and_create_no_store(
    run_cli: Run, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    result = run_cli("rules", "validate", GOOD, "--format", "json")
    assert result.code == 0, result.err
    assert json.loads(result.out)["files"] == [{"file": GOOD, "valid": True, "tenant": "northwind-bank", "rules": 28}]
    assert list(tmp_path.iterdir()) == []


def test_every_file_and_every_problem_is_listed(run_cli: Run, tmp_path: Path) -> None:
    bad = tmp_path / "bad.yaml"
    bad.write_text("rules:\n  - id: x\n    condition_text: ''\n    priority: lots\n", encoding="utf-8")
    result = run_cli("rules", "validate", str(bad), GOOD)
    assert result.code == 2  # a bad rulebook exits 2 from every command
    assert f"\n{bad}:3:21: rules[0] (x).condition_text: must not be empty\n" in result.out
    assert f"\n{bad}:4:15: rules[0] (x).priority: " in result.out
    assert f"valid    {GOOD}" in result.out
    payload = json.loads(run_cli("rules", "validate", str(bad), "--format", "json").out)
    assert payload["valid"] is False
    problems = payload["files"][0]["problems"]
    assert [(p["field"], p["line"], p["column"]) for p in problems] == [("condition_text", 3, 21), ("priority", 4, 15)]


def test_an_unreadable_file_exits_2_with_one_line(run_cli: Run, tmp_path: Path) -> None:
    broken = tmp_path / "broken.yaml"
    broken.write_text("rules: [\n", encoding="utf-8")
    result = run_cli("rules", "validate", str(broken))
    assert result.code == 2
    assert result.err.count("\n") == 1
    assert "not valid YAML" in result.err
    assert run_cli("rules", "validate", str(tmp_path / "missing.yaml")).code == 2
