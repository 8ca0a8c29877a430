"""``norma rules coverage --turns FILE``: what a rulebook covers on recorded turns, through the real CLI (in-process)
with the real embedding model. The rulebook and the turns are those of tests/turns/test_rules_coverage.py: the
``mortgage`` rule governs nothing, the five weather messages are one cluster, the twin transfer rules compete."""

from __future__ import annotations

import io
import json
import sys
from collections.abc import Callable
from pathlib import Path

import pytest
import yaml

from tests.conftest import CliResult
from tests.turns.test_rules_coverage import MESSAGES, RULES, WEATHER

pytestmark = pytest.mark.model

Run = Callable[..., CliResult]


@pytest.fixture
def rulebook(tmp_path: Path) -> Path:
    path = tmp_path / "rules.yaml"
    rules = [
        rule.model_dump(mode="json", include={"id", "condition_text", "action_text", "examples"}) for rule in RULES
    ]
    path.write_text(yaml.safe_dump({"format": "norma.rulebook/v1", "tenant": "acme", "rules": rules}), encoding="utf-8")
    return path


@pytest.fixture
def turns(tmp_path: Path) -> Path:
    path = tmp_path / "turns.jsonl"
    lines = [json.dumps({"id": f"t{i}", "message": m, "output": "Thanks for asking."}) for i, m in enumerate(MESSAGES)]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def test_the_json_report_names_the_idle_rule_the_gap_and_the_twins(run_cli: Run, rulebook: Path, turns: Path) -> None:
    result = run_cli("rules", "coverage", "--rules", str(rulebook), "--turns", str(turns), "--format", "json")
    assert result.code == 0, result.err
    report = json.loads(result.out)
    assert (report["rulebook"], report["turns_file"], report["tenant"], report["turns"]) == (
        str(rulebook), str(turns), "acme", 19
    )  # fmt: skip
    assert "mortgage" in report["never_governs"]
    assert report["never_matched"] == ["mortgage", "transfer-abroad"]  # its near twin comes first
    weather = report["clusters"][0]
    assert sorted(MESSAGES[i] for i in weather["indexes"]) == sorted(WEATHER)
    assert weather["size"] == 5
    assert "weather" in weather["terms"]
    twins = report["competing"][0]
    assert (twins["rule_a"], twins["rule_b"]) == ("transfer-abroad", "transfer-international")
    assert {r["rule_id"] for r in report["rules"]} == {r.id for r in RULES}


def test_fail_on_ungoverned_rule_exits_1(run_cli: Run, rulebook: Path, turns: Path) -> None:
    args = ("rules", "coverage", "--rules", str(rulebook), "--turns", str(turns))
    failing = run_cli(*args, "--fail-on", "ungoverned-rule")
    assert failing.code == 1, failing.err
    assert "never governs (" in failing.out
    assert "mortgage" in failing.out
    assert run_cli(*args, "--fail-on", "never").code == 0


def test_a_file_of_messages_only_is_accepted(run_cli: Run, rulebook: Path, tmp_path: Path) -> None:
    messages = tmp_path / "messages.jsonl"
    messages.write_text("".join(json.dumps({"message": m}) + "\n" for m in MESSAGES), encoding="utf-8")
    result = run_cli("rules", "coverage", "--rules", str(rulebook), "--turns", str(messages), "--format", "json")
    assert result.code == 0, result.err
    assert json.loads(result.out)["clusters"][0]["size"] == 5


def test_stdin_is_read_with_a_dash(run_cli: Run, rulebook: Path, turns: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(turns.read_bytes()), encoding="utf-8"))
    result = run_cli("rules", "coverage", "--rules", str(rulebook), "--turns", "-", "--format", "json")
    assert result.code == 0, result.err
    assert json.loads(result.out)["turns_file"] == "<stdin>"


def test_a_line_that_is_not_json_is_file_line_column(run_cli: Run, rulebook: Path, tmp_path: Path) -> None:
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"message": "hi"}\n\n{"message": "hello" "output": "x"}\n', encoding="utf-8")
    result = run_cli("rules", "coverage", "--rules", str(rulebook), "--turns", str(bad))
    assert (result.code, result.out) == (2, "")
    assert result.err == f"norma: error: {bad}:3:21: not valid JSON: Expecting ',' delimiter\n"


@pytest.mark.parametrize(
    ("line", "error"),
    [
        ('{"message": "  "}', "message: the message is empty (give the user's message)"),
        ('{"message": "hi", "session": 3}', "session: a session must be a mapping of fields, got int"),
        ('{"message": "hi", "answer": "x"}', "unknown field 'answer' in a turn record"),
        ('["hi"]', "a turn record is a JSON object, not list"),
    ],
)
def test_a_bad_record_names_its_line(run_cli: Run, rulebook: Path, tmp_path: Path, line: str, error: str) -> None:
    bad = tmp_path / "bad.jsonl"
    bad.write_text(f'{{"message": "hi"}}\n{line}\n', encoding="utf-8")
    result = run_cli("rules", "coverage", "--rules", str(rulebook), "--turns", str(bad))
    assert (result.code, result.out) == (2, "")
    assert result.err.startswith(f"norma: error: {bad}:2: {error}")
    assert result.err.count("\n") == 1


def test_an_empty_file_is_bad_input_unless_allowed(run_cli: Run, rulebook: Path, tmp_path: Path) -> None:
    empty = tmp_path / "empty.jsonl"
    empty.write_text("\n  \n", encoding="utf-8")
    args = ("rules", "coverage", "--rules", str(rulebook), "--turns", str(empty))
    refused = run_cli(*args)
    assert refused.code == 2
    assert refused.err.startswith(f"norma: error: {empty}: no turns: the file is empty or has only blank lines")
    allowed = run_cli(*args, "--allow-empty", "--format", "json", "--fail-on", "ungoverned-rule")
    assert allowed.code == 0, allowed.err
    assert json.loads(allowed.out)["turns"] == 0


def test_the_rules_source_is_required_once(run_cli: Run, rulebook: Path, turns: Path) -> None:
    neither = run_cli("rules", "coverage", "--turns", str(turns))
    assert neither.code == 2
    assert "--rules FILE or --tenant TENANT" in neither.err
    missing = run_cli("rules", "coverage", "--rules", str(rulebook), "--turns", str(turns.with_name("none.jsonl")))
    assert missing.code == 2
    assert "cannot read it" in missing.err


def test_markdown_and_out_and_limit(run_cli: Run, rulebook: Path, turns: Path, tmp_path: Path) -> None:
    out = tmp_path / "coverage.md"
    args = ("rules", "coverage", "--rules", str(rulebook), "--turns", str(turns))
    result = run_cli(*args, "--format", "markdown", "--out", str(out), "--limit", "1")
    assert (result.code, result.out) == (0, "")
    text = out.read_text(encoding="utf-8")
    assert text.startswith("# Rule coverage\n")
    assert "| 5 | weather" in text
    assert "| `transfer-abroad`, `transfer-international` |" in text
    assert "4 more rules." in text  # --limit 1: one rule listed of five
    table = run_cli(*args, "--limit", "2")
    assert table.code == 0
    assert "rules (2 of 5)" in table.out


def test_a_stored_tenant_is_read_from_its_store(run_cli: Run, rulebook: Path, turns: Path, tmp_path: Path) -> None:
    db = f"sqlite:///{tmp_path / 'rules.db'}"
    assert run_cli("rules", "import", str(rulebook), "--db", db).code == 0
    result = run_cli("rules", "coverage", "--tenant", "acme", "--db", db, "--turns", str(turns), "--format", "json")
    assert result.code == 0, result.err
    report = json.loads(result.out)
    assert (report["rulebook"], report["rules_version"]) == ("tenant acme", 1)
    assert report["never_matched"] == ["mortgage", "transfer-abroad"]  # its near twin comes first
    unknown = run_cli("rules", "coverage", "--tenant", "nobody", "--db", db, "--turns", str(turns))
    assert unknown.code == 2
    assert "nobody" in unknown.err
