"""Every labelled case of examples/audit/cases (the spec's Spanish NetShaper norms) and of
examples/audit/policies/cases (Acme's English norms, from its own configuration) gives its labelled verdict and
exactly its labelled rules."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from norma.audit import AuditConfig, AuditReport, DocumentSet, RuleStatus, analyze, load_config, load_documents
from tests.audit.conftest import AUDIT

CASES = sorted((AUDIT / "cases").glob("*.json"))
POLICIES = AUDIT / "policies"
POLICY_CASES = sorted((POLICIES / "cases").glob("*.json"))


def test_there_are_enough_cases_covering_every_rule_and_verdict() -> None:
    assert len(CASES) >= 30
    labels = [json.loads(p.read_text(encoding="utf-8"))["expect"] for p in CASES]
    assert {label["result"] for label in labels} == {"PASS", "FAIL", "SKIP"}
    fired = {rule for label in labels for rule in label["violations"]}
    spec_rules = {"IR.0.01", "IR.3.01", "IR.3.02", "IR.4.01", "IR.4.02", "IR.5.02", "IR.6.02", "IR.7.01", "IR.7.02"}
    assert spec_rules | {"IR.8.01", "IR.8.03", "IR.0.02", "IR.0.03"} <= fired


def _check(case: dict[str, Any], report: AuditReport) -> None:
    expect = case["expect"]
    assert report.model_dump(mode="json")["result"] == expect["result"], report.violations
    assert sorted({v.rule for v in report.violations}) == sorted(expect["violations"]), report.violations
    not_evaluated = {o.rule for o in report.rules if o.status is RuleStatus.NOT_EVALUATED}
    assert set(expect.get("not_evaluated", [])) <= not_evaluated
    not_applicable = {o.rule for o in report.rules if o.status is RuleStatus.NOT_APPLICABLE}
    assert set(expect.get("not_applicable", [])) <= not_applicable
    assert set(expect.get("info", [])) <= {i.rule for i in report.info}
    for violation in report.violations:
        if violation.line is not None:
            assert violation.location == f"output line {violation.line}"
            assert 1 <= violation.line <= len(case["request"]["output"].split("\n"))


@pytest.mark.parametrize("path", CASES, ids=[p.stem for p in CASES])
def test_case(path: Path, docs: DocumentSet) -> None:
    case = json.loads(path.read_text(encoding="utf-8"))
    _check(case, analyze(case["request"], docs, case.get("config")))


@pytest.fixture(scope="module")
def policies_config() -> AuditConfig:
    return load_config(POLICIES / "config.json")


@pytest.fixture(scope="module")
def policies(policies_config: AuditConfig) -> DocumentSet:
    return load_documents(POLICIES / "docs", norms=policies_config.norms)


def test_the_english_example_set_is_configured_not_assumed(policies: DocumentSet) -> None:
    """Acronyms from the configured file names, POL-n sections from the configured prefix, SEC over POL."""
    assert policies.acronyms == ("SEC", "POL")
    assert [s.label for s in policies.by_acronym("POL").sections] == ["POL-7", "POL-12", "POL-15", "POL-21"]  # type: ignore[union-attr]
    labels = [json.loads(p.read_text(encoding="utf-8"))["expect"] for p in POLICY_CASES]
    assert {label["result"] for label in labels} == {"PASS", "FAIL", "SKIP"}
    assert {"IR.0.01", "IR.0.03", "IR.3.01", "IR.4.02", "IR.7.01", "IR.8.03"} <= {
        rule for label in labels for rule in label["violations"]
    }


@pytest.mark.parametrize("path", POLICY_CASES, ids=[p.stem for p in POLICY_CASES])
def test_english_policy_case(path: Path, policies: DocumentSet, policies_config: AuditConfig) -> None:
    case = json.loads(path.read_text(encoding="utf-8"))
    report = analyze(case["request"], policies, policies_config.model_copy(update=case.get("config", {})))
    _check(case, report)
    assert report.lang == "en"  # English requests, English messages
