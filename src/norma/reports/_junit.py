"""JUnit XML: one ``<testsuite>`` per audited item, one ``<testcase>`` per rule.

A rule with a violation at or above ``fail_on`` is a ``<failure>`` (type = severity); a rule that did not apply
or could not be evaluated is ``<skipped>`` with the reason; the others pass (WARNING violations under
``fail_on=error`` go to ``<system-out>``). A batch record that could not be audited (bad input) is a suite of
one ``<testcase>`` with an ``<error>``.
"""

from __future__ import annotations

from collections.abc import Sequence
from xml.etree import ElementTree as ET

from norma.audit import AuditReport, RuleStatus, Violation, severity_label, verdict_label
from norma.reports._bad import BadRecord, bad_junit
from norma.reports._incomplete import Incomplete, junit_incomplete
from norma.rules import FailOn

__all__ = ["to_junit"]


def _line(violation: Violation) -> str:
    return f"{violation.location}: [{severity_label(violation.severity)}] {violation.description}"


def to_junit(
    items: Sequence[tuple[str, AuditReport]],
    fail_on: str = "error",
    bad: Sequence[BadRecord] = (),
    *,
    incomplete: Incomplete | None = None,
) -> str:
    """The JUnit XML document; each of ``bad`` (``(where, error)`` of a record not audited) is an ``<error>``, and
    so is a batch stopped before its end (``incomplete``: one more suite)."""
    failing = FailOn.parse(fail_on).severities
    root = ET.Element("testsuites", name="norma audit")
    total = failures = skipped = 0
    for name, report in items:
        suite = ET.SubElement(root, "testsuite", name=name)
        suite_failures = suite_skipped = 0
        for outcome in report.rules:
            case = ET.SubElement(
                suite, "testcase", classname=f"norma.audit.{name}", name=f"{outcome.rule} {outcome.title}"
            )
            violations = [v for v in report.violations if v.rule == outcome.rule]
            if outcome.status in (RuleStatus.NOT_APPLICABLE, RuleStatus.NOT_EVALUATED):
                ET.SubElement(case, "skipped", message=f"{outcome.status.value}: {outcome.reason}")
                suite_skipped += 1
            elif any(v.severity in failing for v in violations):
                worst = violations[0]
                failure = ET.SubElement(case, "failure", message=worst.description, type=severity_label(worst.severity))
                failure.text = "\n".join(map(_line, violations))
                suite_failures += 1
            elif violations:
                out = ET.SubElement(case, "system-out")
                out.text = "\n".join(map(_line, violations))
        suite.set("tests", str(len(report.rules)))
        suite.set("failures", str(suite_failures))
        suite.set("errors", "0")
        suite.set("skipped", str(suite_skipped))
        props = ET.Element("properties")
        ET.SubElement(props, "property", name="result", value=verdict_label(report.result))
        ET.SubElement(props, "property", name="context_type_detected", value=report.context_type_detected.value)
        suite.insert(0, props)
        total += len(report.rules)
        failures += suite_failures
        skipped += suite_skipped
    errors = bad_junit(root, bad, "audit") + junit_incomplete(root, incomplete, "audit")
    root.set("tests", str(total + errors))
    root.set("failures", str(failures))
    root.set("errors", str(errors))
    root.set("skipped", str(skipped))
    ET.indent(root)
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(root, encoding="unicode") + "\n"
