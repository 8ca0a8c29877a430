"""One Severity, one Verdict and one fail-on policy (issue #48), and the audit's capitals kept where it serialises."""

from __future__ import annotations

import json

import click
import pytest

import norma.audit
import norma.checks
import norma.turns
from norma.audit import AuditConfig, Violation, severity_label
from norma.cli._output import fail_on_option
from norma.errors import InvalidInputError
from norma.rules import FailOn, Severity, Verdict


def test_each_idea_is_one_type_under_its_old_names() -> None:
    assert norma.audit.Severity is Severity
    assert norma.checks.CheckStatus is Verdict
    assert norma.turns.TurnVerdict is Verdict
    assert [s.value for s in Severity] == ["error", "warning", "info"]
    assert [v.value for v in Verdict] == ["pass", "fail", "skip"]


@pytest.mark.parametrize(
    ("policy", "failed", "severities", "fails"),
    [
        ("error", True, [], True),
        ("error", False, [Severity.ERROR, Severity.WARNING], False),  # error: the verdict alone decides
        ("warning", False, [Severity.WARNING], True),
        ("warning", False, [Severity.INFO, Severity.ERROR], False),
        ("warning", True, [], True),
    ],
)
def test_fail_on_decides_whether_a_report_fails(
    policy: str, failed: bool, severities: list[Severity], fails: bool
) -> None:
    assert FailOn.parse(policy).fails(failed, severities) is fails


def test_fail_on_names_the_severities_a_report_lists_as_failures() -> None:
    assert FailOn.ERROR.severities == (Severity.ERROR,)
    assert FailOn.WARNING.severities == (Severity.ERROR, Severity.WARNING)
    assert not FailOn.WARNING.counts(Severity.INFO)


def test_a_bad_fail_on_is_refused_with_the_choices() -> None:
    with pytest.raises(InvalidInputError, match=r"^fail_on must be 'error' or 'warning', not 'fatal'$"):
        FailOn.parse("fatal")


def test_the_cli_offers_the_policies() -> None:
    """``--fail-on`` of ``norma check``, ``norma audit run`` and ``norma merge``: one option (fail_on_option)."""

    @click.command()
    @fail_on_option("which findings fail")
    def command(fail_on: str) -> None:
        del fail_on

    option = next(p for p in command.params if p.name == "fail_on")
    assert isinstance(option.type, click.Choice)
    assert list(option.type.choices) == ["error", "warning"] == [p.value for p in FailOn]


def test_the_audit_writes_and_reads_severities_in_capitals() -> None:
    violation = Violation(rule="IR.0.01", severity=Severity.WARNING, description="d", location="output line 1")
    assert json.loads(violation.model_dump_json())["severity"] == "WARNING"
    assert Violation.model_validate_json(violation.model_dump_json()).severity is Severity.WARNING
    assert AuditConfig(severity_overrides={"IR.7.02": "INFO"}).severity_overrides["IR.7.02"] is Severity.INFO
    with pytest.raises(ValueError, match="Input should be 'ERROR', 'WARNING' or 'INFO'"):
        AuditConfig(severity_overrides={"IR.7.02": "info"})
    assert [severity_label(s) for s in Severity] == ["ERROR", "WARNING", "INFO"]
