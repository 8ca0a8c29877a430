"""Reports CI reads: SARIF locations code scanning can place, the Markdown job summary, ``--report FORMAT=FILE`` and
a batch of several files."""

from __future__ import annotations

import json
import re
import xml.etree.ElementTree as ET
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from norma.audit import AuditConfig, AuditReport, DocumentSet, analyze
from norma.reports import render, to_sarif
from tests.audit.conftest import AUDIT
from tests.audit.test_reports import CHATTY, FAILING, PASSING, WARNING
from tests.conftest import CliResult

Run = Callable[..., CliResult]
DOCS = str(AUDIT / "docs")
CHEAP = AuditConfig(embeddings=False)
_RELATIVE_URI = re.compile(r"[A-Za-z0-9._~%!$&'()*+,;=@/-]+")  # a relative reference, percent-encoded (RFC 3986)


def check_sarif_structure(log: dict[str, Any]) -> None:
    """What SARIF 2.1.0 and code scanning require of the parts norma writes (no schema file ships with norma)."""
    assert log["version"] == "2.1.0"
    assert log["$schema"].endswith("sarif-2.1.0.json")
    (run,) = log["runs"]
    rules = run["tool"]["driver"]["rules"]
    assert run["tool"]["driver"]["name"]
    for result in run["results"]:
        assert result["message"]["text"]
        assert result["level"] in ("none", "note", "warning", "error")
        if "ruleIndex" in result:
            assert rules[result["ruleIndex"]]["id"] == result["ruleId"]
        for location in result["locations"]:
            physical = location["physicalLocation"]
            artifact = physical["artifactLocation"]
            if "uriBaseId" in artifact:
                assert artifact["uriBaseId"] == "%SRCROOT%"
                assert _RELATIVE_URI.fullmatch(artifact["uri"]), artifact["uri"]
                assert not artifact["uri"].startswith(("/", "../"))
            else:
                assert artifact["uri"].startswith("file:///")
            if "region" in physical:
                assert isinstance(physical["region"]["startLine"], int)
                assert physical["region"]["startLine"] >= 1


def _physical(result: dict[str, Any]) -> dict[str, Any]:
    physical: dict[str, Any] = result["locations"][0]["physicalLocation"]
    return physical


@pytest.fixture
def batch(docs: DocumentSet) -> list[tuple[str, AuditReport]]:
    """Records as a batch names them: ``file:line`` (line 2 is blank in the file)."""
    lines = (1, 3, 4, 5)
    requests = (PASSING, WARNING, FAILING, CHATTY)
    return [(f"outputs/run 1.jsonl:{n}", analyze(r, docs, CHEAP)) for n, r in zip(lines, requests, strict=True)]


def test_sarif_locates_a_batch_record_at_its_line_in_its_file(batch: list[tuple[str, AuditReport]]) -> None:
    log = to_sarif(batch)
    check_sarif_structure(log)
    results = log["runs"][0]["results"]
    ir001 = next(r for r in results if r["ruleId"] == "IR.0.01" and r["kind"] == "fail")
    assert _physical(ir001) == {
        "artifactLocation": {"uri": "outputs/run%201.jsonl", "uriBaseId": "%SRCROOT%"},
        "region": {"startLine": 4},
    }
    assert ir001["properties"]["outputLine"] == 3
    assert ir001["message"]["text"].endswith("(output line 3)")
    skipped = [r for r in results if r["kind"] == "notApplicable"]
    assert {_physical(r)["region"]["startLine"] for r in skipped} == {5}


def test_sarif_of_a_file_outside_the_current_directory_is_an_absolute_uri(
    docs: DocumentSet, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "repo").mkdir()
    monkeypatch.chdir(tmp_path / "repo")
    inside = str(tmp_path / "repo" / "o.jsonl") + ":2"
    outside = str(tmp_path / "elsewhere" / "o.jsonl") + ":2"
    failing = analyze(FAILING, docs, CHEAP)
    log = to_sarif([(inside, failing), (outside, failing)])
    check_sarif_structure(log)
    uris = {_physical(r)["artifactLocation"]["uri"] for r in log["runs"][0]["results"]}
    assert uris == {"o.jsonl", (tmp_path / "elsewhere" / "o.jsonl").as_uri()}


def test_markdown_lists_the_failures_only(batch: list[tuple[str, AuditReport]]) -> None:
    text = render("markdown", batch)
    rows = [line for line in text.splitlines() if line.startswith("| outputs/")]
    assert [row.split(" | ")[1:4] for row in rows] == [["4", "IR.0.01", "ERROR"], ["4", "IR.8.01", "ERROR"]]
    assert "(output line 3)" in rows[0]
    assert "1 of 4 audited items failed, 2 failures (2 PASS, 1 FAIL, 1 SKIP; fail on error)" in text
    strict = render("markdown", batch, "warning")
    assert "| outputs/run 1.jsonl | 3 | IR.7.02 | WARNING |" in strict
    assert "2 of 4 audited items failed, 3 failures" in strict


def test_markdown_without_failures_is_the_total_alone(batch: list[tuple[str, AuditReport]]) -> None:
    text = render("markdown", [batch[0], batch[3]])
    assert "|" not in text
    assert "0 of 2 audited items failed, 0 failures (1 PASS, 0 FAIL, 1 SKIP; fail on error)" in text


def test_markdown_cells_stay_in_their_column(docs: DocumentSet) -> None:
    report = analyze(FAILING, docs, CHEAP)
    text = render("markdown", [("a|b.json", report)])
    row = next(line for line in text.splitlines() if line.startswith("| a"))
    assert row.startswith("| a\\|b.json | 3 | IR.0.01 |")


def _write_outputs(folder: Path) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "outputs.jsonl"
    lines = [json.dumps(PASSING), "", json.dumps(FAILING), json.dumps(CHATTY)]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def test_cli_batch_writes_sarif_junit_and_markdown_in_one_run(
    run_cli: Run, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    _write_outputs(tmp_path / "kept")
    reports = ["--report", "junit=audit.xml", "--report", "markdown=summary.md", "--report", "sarif=audit.sarif"]
    args = ["audit", "--batch", "kept/outputs.jsonl", "--docs", DOCS, "--no-embeddings", "--format", "sarif"]
    result = run_cli(*args, *reports)
    assert result.code == 1, result.err
    log = json.loads(result.out)
    assert (tmp_path / "audit.sarif").read_text(encoding="utf-8") == result.out
    check_sarif_structure(log)
    failure = next(r for r in log["runs"][0]["results"] if r["kind"] == "fail")
    assert _physical(failure) == {
        "artifactLocation": {"uri": "kept/outputs.jsonl", "uriBaseId": "%SRCROOT%"},
        "region": {"startLine": 3},
    }
    junit = ET.fromstring((tmp_path / "audit.xml").read_text(encoding="utf-8"))
    assert [s.get("name") for s in junit.findall("testsuite")] == [f"kept/outputs.jsonl:{n}" for n in (1, 3, 4)]
    assert junit.get("failures") == "2"
    summary = (tmp_path / "summary.md").read_text(encoding="utf-8")
    assert "| kept/outputs.jsonl | 3 | IR.0.01 | ERROR |" in summary
    assert "1 of 3 audited items failed" in summary


def test_cli_audits_several_files_as_one_batch(run_cli: Run, tmp_path: Path) -> None:
    first = _write_outputs(tmp_path / "a")
    second = tmp_path / "one.json"
    second.write_text(json.dumps(PASSING), encoding="utf-8")
    result = run_cli("audit", str(first), str(second), "--docs", DOCS, "--no-embeddings", "--format", "json")
    assert result.code == 1, result.err
    names = [r["name"] for r in json.loads(result.out)["reports"]]
    assert names == [f"{first}:1", f"{first}:3", f"{first}:4", str(second)]
    both = run_cli("audit", "--batch", str(first), str(second), "--docs", DOCS, "--no-embeddings", "--format", "json")
    assert both.out == result.out
    passing = run_cli("audit", str(second), str(second), "--docs", DOCS, "--no-embeddings", "--format", "json")
    assert passing.code == 0


def test_cli_rejects_a_bad_report_spec_and_an_unwritable_file(run_cli: Run, tmp_path: Path) -> None:
    path = str(_write_outputs(tmp_path))
    bad = run_cli("audit", path, "--docs", DOCS, "--no-embeddings", "--report", "html=x.html")
    assert bad.code == 2
    assert "FORMAT=FILE" in bad.err
    missing = tmp_path / "no" / "such" / "dir" / "s.md"
    unwritable = run_cli("audit", path, "--docs", DOCS, "--no-embeddings", "--report", f"markdown={missing}")
    assert unwritable.code == 2
    assert unwritable.err.count("\n") == 1
    assert "cannot write the markdown report" in unwritable.err
