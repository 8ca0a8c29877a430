"""norma.reports on several reports (a batch): JSON summary, SARIF results per record, JUnit suites, exit codes."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET

import pytest
from rich.console import Console

from norma.audit import AuditConfig, AuditReport, DocumentSet, analyze
from norma.errors import InvalidInputError
from norma.reports import RENDERERS, exit_code, render, render_table, to_sarif

CHEAP = AuditConfig(embeddings=False)
PASSING = {"input": "Implementa la clase FlowShaper", "output": "Creo `FlowShaper` según DNS §2.01."}
WARNING = {"input": "Implementa la clase FlowShaper", "output": "Creo `FlowShaper` según DNS §2.01: robusto."}
FAILING = {"input": "Implementa la clase FlowShaper", "output": "Hola.\n\nCreo `FlowShaper`."}
CHATTY = {"input": "Hola, gracias", "output": "¡De nada!"}


@pytest.fixture
def items(docs: DocumentSet) -> list[tuple[str, AuditReport]]:
    return [(f"r{i}", analyze(r, docs, CHEAP)) for i, r in enumerate((PASSING, WARNING, FAILING, CHATTY))]


def test_verdicts_of_the_fixture(items: list[tuple[str, AuditReport]]) -> None:
    assert [r.model_dump(mode="json")["result"] for _, r in items] == ["PASS", "PASS", "FAIL", "SKIP"]


def test_json_batch_summary(items: list[tuple[str, AuditReport]]) -> None:
    payload = json.loads(render("json", items))
    assert payload["summary"] == {"total": 4, "PASS": 2, "FAIL": 1, "SKIP": 1, "records": 4, "bad": 0}
    assert [r["name"] for r in payload["reports"]] == ["r0", "r1", "r2", "r3"]
    single = json.loads(render("json", items[:1]))
    assert single["result"] == "PASS"
    assert "reports" not in single


def test_sarif_results_carry_record_and_line(items: list[tuple[str, AuditReport]]) -> None:
    log = to_sarif(items)
    results = log["runs"][0]["results"]
    ir001 = next(r for r in results if r["ruleId"] == "IR.0.01" and r["kind"] == "fail")
    assert ir001["properties"]["record"] == "r2"
    assert ir001["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] == "r2"
    # a request file is located as a whole: its lines are JSON, the output's line is a property
    assert "region" not in ir001["locations"][0]["physicalLocation"]
    assert ir001["properties"]["outputLine"] == 3
    warning = next(r for r in results if r["ruleId"] == "IR.7.02" and r["kind"] == "fail")
    assert warning["level"] == "warning"
    not_applicable = [r for r in results if r["kind"] == "notApplicable"]
    assert {r["properties"]["record"] for r in not_applicable} == {"r3"}
    assert all(r["level"] == "none" for r in not_applicable)
    rule_ids = [rule["id"] for rule in log["runs"][0]["tool"]["driver"]["rules"]]
    assert all(rule_ids[r["ruleIndex"]] == r["ruleId"] for r in results if "ruleIndex" in r)


def test_junit_suites_and_fail_on(items: list[tuple[str, AuditReport]]) -> None:
    root = ET.fromstring(render("junit", items))
    assert [s.get("name") for s in root.findall("testsuite")] == ["r0", "r1", "r2", "r3"]
    assert root.get("failures") == "2"  # IR.0.01 and the meta rule IR.8.01 of r2
    strict = ET.fromstring(render("junit", items, "warning"))
    assert strict.get("failures") == "3"  # + IR.7.02 of r1


def test_exit_codes(items: list[tuple[str, AuditReport]]) -> None:
    reports = [r for _, r in items]
    assert exit_code([reports[0], reports[3]]) == 0
    assert exit_code([reports[1]]) == 0
    assert exit_code([reports[1]], "warning") == 1
    assert exit_code(reports) == 1
    with pytest.raises(InvalidInputError):
        exit_code(reports, "info")


def test_table_and_registry(items: list[tuple[str, AuditReport]]) -> None:
    console = Console(record=True, width=140)
    render_table(console, items)
    text = console.export_text()
    assert "4 audits: 2 PASS, 1 FAIL, 1 SKIP" in text
    assert "IR.0.01" in text
    assert set(RENDERERS) == {"json", "sarif", "junit", "markdown"}
    with pytest.raises(InvalidInputError, match="unknown report format"):
        render("html", items)


def test_the_audit_verdict_is_the_one_verdict_written_in_capitals() -> None:
    """One pass/fail/skip type (issue #48): ``result`` is a :class:`norma.rules.Verdict`; JSON says PASS/FAIL/SKIP."""
    from norma.audit import AuditReport, ContextType
    from norma.rules import Verdict

    report = AuditReport(result=Verdict.FAIL, context_type_detected=ContextType.TECHNICAL)
    assert type(report.result) is Verdict
    dumped = report.model_dump(mode="json")
    assert dumped["result"] == "FAIL"
    assert AuditReport.model_validate(dumped).result is Verdict.FAIL  # read back from capitals (norma merge)
    assert AuditReport.model_validate_json(report.model_dump_json()).result is Verdict.FAIL
    assert AuditReport.model_json_schema()["$defs"]["Verdict"]["enum"] == ["PASS", "FAIL", "SKIP"]
    with pytest.raises(ValueError, match="PASS"):
        AuditReport.model_validate({**dumped, "result": "MAYBE"})
