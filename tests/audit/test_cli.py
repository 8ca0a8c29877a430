"""``norma audit``: default command, formats, exit codes, stdin, batch, schema, rules, bump."""

from __future__ import annotations

import io
import json
import xml.etree.ElementTree as ET
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.audit.conftest import AUDIT
from tests.conftest import CliResult

Run = Callable[..., CliResult]
DOCS = str(AUDIT / "docs")


def _request(tmp_path: Path, case: str) -> str:
    data = json.loads((AUDIT / "cases" / f"{case}.json").read_text(encoding="utf-8"))["request"]
    path = tmp_path / f"{case}.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    return str(path)


@pytest.mark.parametrize(
    ("case", "code", "verdict"),
    [("pass_literal_quote", 0, "PASS"), ("fail_no_references", 1, "FAIL"), ("skip_greeting", 0, "SKIP")],
)
def test_exit_codes_follow_the_verdict(run_cli: Run, tmp_path: Path, case: str, code: int, verdict: str) -> None:
    result = run_cli("audit", _request(tmp_path, case), "--docs", DOCS, "--no-embeddings", "--format", "json")
    assert result.code == code, result.err
    assert json.loads(result.out)["result"] == verdict


def test_explicit_run_and_table(run_cli: Run, tmp_path: Path) -> None:
    result = run_cli("audit", "run", _request(tmp_path, "fail_no_references"), "--docs", DOCS, "--no-embeddings")
    assert result.code == 1
    assert "FAIL" in result.out
    assert "IR.0.01" in result.out


def test_fail_on_warning(run_cli: Run, tmp_path: Path) -> None:
    path = _request(tmp_path, "warn_technical_adornments")
    assert run_cli("audit", path, "--docs", DOCS, "--no-embeddings").code == 0
    assert run_cli("audit", path, "--docs", DOCS, "--no-embeddings", "--fail-on", "warning").code == 1


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ("{not json", "not valid JSON"),
        ('{"output": "x"}', "input: Field required"),
        ('{"input": "x", "output": "y", "context_type": "casual"}', "unknown context_type"),
        ('{"input": "x", "output": "y", "active_documents": ["Missing.md"]}', "Missing.md"),
    ],
)
def test_invalid_input_exits_2_with_one_line(run_cli: Run, tmp_path: Path, content: str, message: str) -> None:
    path = tmp_path / "bad.json"
    path.write_text(content, encoding="utf-8")
    result = run_cli("audit", str(path), "--docs", DOCS, "--no-embeddings")
    assert result.code == 2
    assert message in result.err
    assert result.err.count("\n") == 1


def test_stdin(run_cli: Run, monkeypatch: pytest.MonkeyPatch) -> None:
    request = json.loads((AUDIT / "cases" / "skip_greeting.json").read_text(encoding="utf-8"))["request"]
    monkeypatch.setattr("sys.stdin", io.StringIO(json.dumps(request)))
    result = run_cli("audit", "-", "--docs", DOCS, "--format", "json", "--no-embeddings")
    assert result.code == 0
    assert json.loads(result.out)["result"] == "SKIP"


def test_threshold_flags_and_config_file(run_cli: Run, tmp_path: Path) -> None:
    path = _request(tmp_path, "pass_coverage_at_threshold")
    base = ("audit", path, "--docs", DOCS, "--no-embeddings", "--format", "json")
    assert json.loads(run_cli(*base).out)["violations"] == []
    flagged = run_cli(*base, "--ir-5-02-coverage-ratio", "0.75")
    assert [v["rule"] for v in json.loads(flagged.out)["violations"]] == ["IR.5.02"]
    config = tmp_path / "thresholds.json"
    config.write_text(json.dumps({"ir_5_02_coverage_ratio": 0.75}), encoding="utf-8")
    from_file = run_cli("audit", path, "--docs", DOCS, "--config", str(config), "--no-embeddings", "--format", "json")
    assert [v["rule"] for v in json.loads(from_file.out)["violations"]] == ["IR.5.02"]
    config.write_text(json.dumps({"ir_5_02_coverage": 0.75}), encoding="utf-8")
    assert run_cli("audit", path, "--docs", DOCS, "--config", str(config)).code == 2


def test_sarif_output(run_cli: Run, tmp_path: Path) -> None:
    result = run_cli(
        "audit", _request(tmp_path, "fail_no_references"), "--docs", DOCS, "--no-embeddings", "--format", "sarif"
    )
    log = json.loads(result.out)
    assert log["version"] == "2.1.0"
    run = log["runs"][0]
    assert [r["id"] for r in run["tool"]["driver"]["rules"]][:2] == ["IR.0.01", "IR.0.02"]
    failures = [r for r in run["results"] if r["kind"] == "fail"]
    first = next(r for r in failures if r["ruleId"] == "IR.0.01")
    assert first["level"] == "error"
    physical = first["locations"][0]["physicalLocation"]
    assert physical["artifactLocation"]["uri"].endswith(".json")
    assert "region" not in physical  # the request file's lines are JSON, not the output's
    assert first["properties"]["outputLine"] == 1
    skip = run_cli("audit", _request(tmp_path, "skip_greeting"), "--docs", DOCS, "--format", "sarif")
    kinds = {r["ruleId"]: r["kind"] for r in json.loads(skip.out)["runs"][0]["results"]}
    assert kinds["IR.0.01"] == "notApplicable"


def test_junit_output(run_cli: Run, tmp_path: Path) -> None:
    result = run_cli(
        "audit", _request(tmp_path, "fail_no_references"), "--docs", DOCS, "--no-embeddings", "--format", "junit"
    )
    root = ET.fromstring(result.out)
    suite = root.find("testsuite")
    assert suite is not None
    cases = {c.get("name", "").split()[0]: c for c in suite.findall("testcase")}
    assert len(cases) == 13
    assert cases["IR.0.01"].find("failure") is not None
    assert cases["IR.6.02"].find("skipped") is not None
    assert cases["IR.7.02"].find("failure") is None
    assert root.get("failures") == "2"


def test_batch_with_workers(run_cli: Run, tmp_path: Path) -> None:
    names = ["pass_literal_quote", "fail_no_references", "skip_greeting"]
    lines = [
        json.dumps(json.loads((AUDIT / "cases" / f"{n}.json").read_text(encoding="utf-8"))["request"]) for n in names
    ]
    batch = tmp_path / "batch.jsonl"
    batch.write_text("\n".join(lines) + "\n", encoding="utf-8")
    result = run_cli(
        "audit", "--batch", str(batch), "--engine", "pool", "--workers", "2", "--docs", DOCS, "--no-embeddings",
        "--format", "json",
    )  # fmt: skip
    assert result.code == 1
    payload = json.loads(result.out)
    assert [r["result"] for r in payload["reports"]] == ["PASS", "FAIL", "SKIP"]
    assert payload["summary"] == {"total": 3, "PASS": 1, "FAIL": 1, "SKIP": 1, "records": 3, "bad": 0}
    batch.write_text(lines[0] + "\n{broken\n", encoding="utf-8")
    broken = run_cli("audit", "--batch", str(batch), "--docs", DOCS, "--no-embeddings", "--format", "json")
    assert broken.code == 2
    assert "batch.jsonl:2" in broken.err


def test_request_and_batch_together_is_a_usage_error(run_cli: Run, tmp_path: Path) -> None:
    assert run_cli("audit", "x.json", "--batch", "y.jsonl").code == 2
    assert run_cli("audit").code == 2


def test_schema(run_cli: Run) -> None:
    result = run_cli("audit", "schema", "--format", "json")
    schema = json.loads(result.out)
    assert set(schema["required"]) == {"input", "output"}
    assert {"input", "output", "context_type", "active_documents", "document_versions", "reruns"} <= set(
        schema["properties"]
    )
    report = json.loads(run_cli("audit", "schema", "--of", "report", "--format", "json").out)
    assert {"result", "context_type_detected", "violations", "metrics", "notes"} <= set(report["properties"])
    assert run_cli("audit", "schema").code == 0


def test_rules_and_bump(run_cli: Run, tmp_path: Path) -> None:
    listed = run_cli("audit", "rules", "--format", "json")
    snapshot = json.loads(listed.out)
    assert list(snapshot["rules"]) == [
        "IR.0.01", "IR.0.02", "IR.0.03", "IR.3.01", "IR.3.02", "IR.4.01", "IR.4.02",
        "IR.5.02", "IR.6.02", "IR.7.01", "IR.7.02", "IR.8.01", "IR.8.03",
    ]  # fmt: skip
    old = tmp_path / "old.json"
    old.write_text(json.dumps(snapshot), encoding="utf-8")
    config = tmp_path / "c.json"
    config.write_text(json.dumps({"ir_4_02_fuzzy_match_threshold": 0.95}), encoding="utf-8")
    new = tmp_path / "new.json"
    new.write_text(run_cli("audit", "rules", "--config", str(config), "--format", "json").out, encoding="utf-8")
    bump = run_cli("audit", "bump", str(old), str(new), "--format", "json")
    assert json.loads(bump.out)["bump"] == "major"
    assert "table" not in run_cli("audit", "rules").err
