from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.conftest import EXAMPLES, CliResult

RULES = str(EXAMPLES / "matching" / "support_rules.yaml")
pytestmark = pytest.mark.model


def test_table_with_breakdown(run_cli: Callable[..., CliResult]) -> None:
    result = run_cli("match", "--rules", RULES, "I want my money back")
    assert result.code == 0
    assert "refund-request" in result.out
    assert "hybrid" in result.out
    assert "ex.0: I" in result.out


def test_json_and_session_options(run_cli: Callable[..., CliResult]) -> None:
    result = run_cli(
        "match", "--rules", RULES, "my package never arrived", "--scenario", "delivery", "--format", "json"
    )
    assert result.code == 0
    data = json.loads(result.out)
    assert data["matches"][0]["rule_id"] == "delivery-missing"
    assert data["matches"][0]["explanation"]["matched_example"] == 0
    assert "dropped" not in data


def test_explain_and_fired(run_cli: Callable[..., CliResult]) -> None:
    result = run_cli("match", "--rules", RULES, "hello", "--fired", "greeting", "--explain", "--format", "json")
    data = json.loads(result.out)
    assert result.code == 1
    assert data["matches"] == []
    reasons = {d["rule_id"]: d["reason"] for d in data["dropped"]}
    assert reasons["greeting"] == "max_fires_per_session"


def test_no_match_exits_1(run_cli: Callable[..., CliResult]) -> None:
    result = run_cli("match", "--rules", RULES, "what is the capital of France?")
    assert result.code == 1
    assert "no rule matches" in result.out


def test_bad_input_exits_2(run_cli: Callable[..., CliResult], tmp_path: Path) -> None:
    bad = tmp_path / "bad.yaml"
    bad.write_text("rules: [{id: r}]", encoding="utf-8")
    result = run_cli("match", "--rules", str(bad), "hello")
    assert result.code == 2
    assert "condition_text" in result.err
    assert run_cli("match", "--rules", RULES, "x", "--fired", "a:b").code == 2
