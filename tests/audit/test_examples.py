"""Every labelled case of examples/audit/cases gives its labelled verdict and exactly its labelled rules."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from norma.audit import DocumentSet, RuleStatus, analyze
from tests.audit.conftest import AUDIT

CASES = sorted((AUDIT / "cases").glob("*.json"))


def test_there_are_enough_cases_covering_every_rule_and_verdict() -> None:
    assert len(CASES) >= 30
    labels = [json.loads(p.read_text(encoding="utf-8"))["expect"] for p in CASES]
    assert {label["result"] for label in labels} == {"PASS", "FAIL", "SKIP"}
    fired = {rule for label in labels for rule in label["violations"]}
    spec_rules = {"IR.0.01", "IR.3.01", "IR.3.02", "IR.4.01", "IR.4.02", "IR.5.02", "IR.6.02", "IR.7.01", "IR.7.02"}
    assert spec_rules | {"IR.8.01", "IR.8.03", "IR.0.02", "IR.0.03"} <= fired


@pytest.mark.parametrize("path", CASES, ids=[p.stem for p in CASES])
def test_case(path: Path, docs: DocumentSet) -> None:
    case = json.loads(path.read_text(encoding="utf-8"))
    report = analyze(case["request"], docs, case.get("config"))
    expect = case["expect"]
    assert report.result.value == expect["result"], report.violations
    assert sorted({v.rule for v in report.violations}) == sorted(expect["violations"]), report.violations
    not_evaluated = {o.rule for o in report.rules if o.status is RuleStatus.NOT_EVALUATED}
    assert set(expect.get("not_evaluated", [])) <= not_evaluated
    assert set(expect.get("info", [])) <= {i.rule for i in report.info}
    for violation in report.violations:
        if violation.line is not None:
            assert violation.location == f"output line {violation.line}"
            assert 1 <= violation.line <= len(case["request"]["output"].split("\n"))
