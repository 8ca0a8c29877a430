"""Reports of checked turns (``norma check``): JSON, SARIF 2.1.0, JUnit XML and a Markdown job summary.

Every renderer takes ``(name, TurnReport)`` pairs: one for one turn (the name is the output file, or ``output``),
many for a batch (each named ``file:line`` of its record). The shapes follow the audit's reports, so that
``norma merge`` and code scanning read them the same way:

* SARIF: one result per failed check (``ruleId`` ``rule-id/check-id``, level from its severity) and per violation
  of the audit when it ran; a skipped check is no result (a neighbour's requirement, reported ``skip`` and not
  enforced, included). A batch record is located at its line of the batch file and the output's line goes to
  ``properties.outputLine``; an output file is located at the evidence's line and column. ``properties.reports``
  lists every turn with its verdict (``PASS`` / ``FAIL`` / ``SKIP``) and reward.
* JUnit: one ``<testsuite>`` per turn, one ``<testcase>`` per checked rule; a rule with a failed check at or above
  ``fail_on`` is a ``<failure>`` listing the checks with their severity and line; a rule with nothing decided is
  ``<skipped>`` with the checks' messages (a rule that matched only as a neighbour: its reason, once).
* Markdown: the failures only, in one table, and a line of totals (a neighbour's skipped requirement is neither).

A batch's records that could not be checked (bad input) are listed in the Markdown and JUnit reports too.

A batch stopped before its end (Ctrl-C, SIGTERM: :class:`~norma.reports.Incomplete`) is reported from the records it
finished and marked so in every format, as every batch command's reports are (:mod:`norma.reports._incomplete`):
JSON ``"incomplete": true`` and ``input_records`` (``records`` counts the finished ones), SARIF
``executionSuccessful: false`` with the signal, the exit code and a notification (and ``incomplete`` in the run's
properties), JUnit one more ``<testsuite>`` whose test case is an ``<error>`` (a CI page shows the run red), Markdown
a line under the totals.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Sequence
from typing import Any
from xml.etree import ElementTree as ET

from norma._version import __version__
from norma.audit import severity_label
from norma.checks import CheckResult
from norma.errors import InvalidInputError
from norma.reports._bad import BadRecord, bad_junit, bad_markdown
from norma.reports._incomplete import (
    Incomplete,
    junit_incomplete,
    mark_incomplete,
    markdown_incomplete,
    sarif_invocation,
)
from norma.reports._sarif import SARIF_SCHEMA, _artifact
from norma.rules import FailOn, Severity, Verdict
from norma.turns import TurnReport

__all__ = ["TURN_FORMATS", "render_turns", "turn_document", "turns_exit_code"]

TurnItem = tuple[str, TurnReport]

_RECORD = re.compile(r"(?P<path>.+):(?P<line>[0-9]+)")
_LEVEL = {Severity.ERROR: "error", Severity.WARNING: "warning", Severity.INFO: "note"}


def _failing_checks(report: TurnReport, fail_on: FailOn | str) -> list[CheckResult]:
    policy = FailOn.parse(fail_on)
    return [r for r in report.failures if policy.counts(r.severity)]


def turns_exit_code(reports: Sequence[TurnReport], fail_on: FailOn | str = FailOn.ERROR) -> int:
    """0 when every turn passes (or is skipped), 1 when one fails under ``fail_on`` (``error`` or ``warning``)."""
    policy = FailOn.parse(fail_on)
    return 1 if any(r.failing(policy) for r in reports) else 0


def turn_document(rows: Sequence[dict[str, Any]], rules: int, bad: int = 0) -> dict[str, Any]:
    """``norma check --batch --format json``: one row per turn checked (``TurnReport.to_dict()`` and its ``line``),
    the verdict counts, the mean reward and the records that could not be checked (``bad``: they have no row);
    ``records`` counts them all. ``norma merge`` recomputes the totals from the rows with this function."""
    rewards = [row["reward"] for row in rows if isinstance(row.get("reward"), int | float)]
    return {
        "rules": rules,
        "records": len(rows) + bad,
        "turns": len(rows),
        "passed": sum(1 for row in rows if row.get("verdict") == "pass"),
        "failed": sum(1 for row in rows if row.get("verdict") == "fail"),
        "skipped": sum(1 for row in rows if row.get("verdict") == "skip"),
        "bad": bad,
        "mean_reward": math.fsum(rewards) / len(rewards) if rewards else None,
        "results": list(rows),
    }


def _json(items: Sequence[TurnItem], fail_on: str, incomplete: Incomplete | None = None) -> str:
    if len(items) == 1 and incomplete is None:
        name, report = items[0]
        return json.dumps({"name": name, **report.to_dict()}, indent=2, ensure_ascii=False) + "\n"
    rows = [{"name": name, **report.to_dict()} for name, report in items]
    rules = len({r.rule_id for _, report in items for r in report.rules})
    document = mark_incomplete(turn_document(rows, rules), incomplete)
    return json.dumps(document, indent=2, ensure_ascii=False) + "\n"


def _location(name: str, line: int | None, column: int | None) -> list[dict[str, Any]]:
    """The record's line of its batch file, or the evidence's place in the output file; none for an output no file
    holds (named in angle brackets, as ``<output>`` or ``<stdin>``: ``properties.outputLine`` still says where)."""
    if name.startswith("<") and name.endswith(">"):
        return []
    record = _RECORD.fullmatch(name)
    physical: dict[str, Any] = {"artifactLocation": _artifact(record["path"] if record else name)}
    if record:
        physical["region"] = {"startLine": int(record["line"])}
    elif line is not None:
        physical["region"] = {"startLine": line, **({"startColumn": column} if column is not None else {})}
    return [{"physicalLocation": physical}]


def _sarif(items: Sequence[TurnItem], fail_on: str, incomplete: Incomplete | None = None) -> str:
    rules: dict[str, dict[str, Any]] = {}
    results: list[dict[str, Any]] = []
    for name, report in items:
        common = {"verdict": report.verdict.value, "record": name}
        for checked in report.rules:
            for check in checked.checks:
                rule_id = f"{check.rule_id}/{check.check_id}"
                rules.setdefault(
                    rule_id,
                    {
                        "id": rule_id,
                        "name": rule_id,
                        "shortDescription": {"text": f"{check.kind} check of rule {check.rule_id}"},
                        "fullDescription": {"text": checked.description or check.rule_id},
                        "defaultConfiguration": {"level": _LEVEL[check.severity]},
                    },
                )
                if check.status is not Verdict.FAIL:
                    continue
                first = check.evidence[0] if check.evidence else None
                properties: dict[str, Any] = {**common, "kind": check.kind, "weight": check.weight}
                if first is not None:
                    properties.update(outputLine=first.line, outputColumn=first.column, evidence=first.text)
                results.append(
                    {
                        "ruleId": rule_id,
                        "kind": "fail",
                        "level": _LEVEL[check.severity],
                        "message": {"text": check.message},
                        "locations": _location(name, first.line if first else None, first.column if first else None),
                        "properties": properties,
                    }
                )
        if report.audit is not None:
            for violation in report.audit.violations:
                rules.setdefault(violation.rule, {"id": violation.rule, "name": violation.rule})
                results.append(
                    {
                        "ruleId": violation.rule,
                        "kind": "fail",
                        "level": violation.severity.value.lower(),
                        "message": {"text": violation.description},
                        "locations": _location(name, violation.line, None),
                        "properties": {**common, "evidence": violation.evidence, "location": violation.location},
                    }
                )
    index = {rule_id: position for position, rule_id in enumerate(rules)}
    for result in results:
        result["ruleIndex"] = index[result["ruleId"]]
    run_properties: dict[str, Any] = {
        "reports": [
            {"name": name, "result": report.verdict.value.upper(), "reward": report.reward} for name, report in items
        ]
    }
    if incomplete is not None:
        run_properties.update(incomplete=True, inputRecords=incomplete.total)
    run = {
        "tool": {
            "driver": {
                "name": "norma-check",
                "version": __version__,
                "semanticVersion": __version__,
                "informationUri": "https://github.com/norma-engineers/norma",
                "rules": list(rules.values()),
            }
        },
        "invocations": [sarif_invocation(incomplete)],
        "results": results,
        "properties": run_properties,
    }
    return json.dumps({"$schema": SARIF_SCHEMA, "version": "2.1.0", "runs": [run]}, indent=2, ensure_ascii=False) + "\n"


def _check_line(check: CheckResult) -> str:
    where = f"line {check.evidence[0].line}, column {check.evidence[0].column}: " if check.evidence else ""
    return f"{where}[{check.severity.value}] {check.rule_id}/{check.check_id} ({check.kind}): {check.message}"


def _skip_messages(checks: Sequence[CheckResult]) -> list[str]:
    """The messages of a skipped rule's checks, a neighbour's reason once (its requirements all give the same)."""
    said: set[str] = set()
    messages = []
    for check in checks:
        if not check.enforced:
            if check.message in said:
                continue
            said.add(check.message)
        messages.append(check.message)
    return messages


def _junit(
    items: Sequence[TurnItem],
    fail_on: str,
    bad_records: Sequence[BadRecord] = (),
    incomplete: Incomplete | None = None,
) -> str:
    root = ET.Element("testsuites", name="norma check")
    total = failures = skipped = 0
    for name, report in items:
        suite = ET.SubElement(root, "testsuite", name=name)
        suite_failures = suite_skipped = 0
        failing = {id(c) for c in _failing_checks(report, fail_on)}
        for checked in report.rules:
            case = ET.SubElement(suite, "testcase", classname=f"norma.check.{name}", name=checked.rule_id)
            bad = [c for c in checked.checks if id(c) in failing]
            if bad:
                failure = ET.SubElement(case, "failure", message=bad[0].message, type=bad[0].severity.value)
                failure.text = "\n".join(_check_line(c) for c in checked.checks if c.status is Verdict.FAIL)
                suite_failures += 1
            elif checked.verdict is Verdict.SKIP:
                ET.SubElement(case, "skipped", message="; ".join(_skip_messages(checked.checks)))
                suite_skipped += 1
            elif any(c.status is Verdict.FAIL for c in checked.checks):
                out = ET.SubElement(case, "system-out")
                out.text = "\n".join(_check_line(c) for c in checked.checks if c.status is Verdict.FAIL)
        tests = len(report.rules)
        if report.audit is not None:
            case = ET.SubElement(suite, "testcase", classname=f"norma.check.{name}", name="audit IR.x.y")
            tests += 1
            if report.audit.result is Verdict.FAIL:
                failure = ET.SubElement(case, "failure", message="the audit failed", type="error")
                failure.text = "\n".join(
                    f"{v.location}: [{severity_label(v.severity)}] {v.rule}: {v.description}"
                    for v in report.audit.violations
                )
                suite_failures += 1
        suite.set("tests", str(tests))
        suite.set("failures", str(suite_failures))
        suite.set("errors", "0")
        suite.set("skipped", str(suite_skipped))
        props = ET.Element("properties")
        ET.SubElement(props, "property", name="verdict", value=report.verdict.value)
        ET.SubElement(props, "property", name="reward", value="" if report.reward is None else f"{report.reward:.6f}")
        suite.insert(0, props)
        total += tests
        failures += suite_failures
        skipped += suite_skipped
    errors = bad_junit(root, bad_records, "check") + junit_incomplete(root, incomplete, "check")
    for key, value in (("tests", total + errors), ("failures", failures), ("errors", errors), ("skipped", skipped)):
        root.set(key, str(value))
    ET.indent(root)
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(root, encoding="unicode") + "\n"


def _cell(text: str) -> str:
    return " ".join(text.split()).replace("|", "\\|")


def _markdown(
    items: Sequence[TurnItem],
    fail_on: str,
    bad_records: Sequence[BadRecord] = (),
    incomplete: Incomplete | None = None,
) -> str:
    rows: list[str] = []
    failed = 0
    for name, report in items:
        record = _RECORD.fullmatch(name)
        bad = _failing_checks(report, fail_on)
        audit_bad = [] if report.audit is None or report.audit.result is not Verdict.FAIL else report.audit.violations
        if report.failing(fail_on):
            failed += 1
        for check in bad:
            line = record["line"] if record else (str(check.evidence[0].line) if check.evidence else "")
            where = _cell(record["path"] if record else name)
            rows.append(
                f"| {where} | {line} | {_cell(check.rule_id)}/{_cell(check.check_id)}"
                f" | {check.severity.value} | {_cell(check.message)} |"
            )
        for violation in audit_bad:
            line = record["line"] if record else ("" if violation.line is None else str(violation.line))
            rows.append(
                f"| {_cell(record['path'] if record else name)} | {line} | {violation.rule} |"
                f" {violation.severity.value.lower()} | {_cell(violation.description)} |"
            )
    lines = ["## norma check", "", f"{len(items)} turns checked, {failed} failed."]
    lines += markdown_incomplete(incomplete)
    if rows:
        lines += ["", "| file | line | rule/check | severity | message |", "|---|---|---|---|---|", *rows]
    if bad_records:
        lines += ["", *bad_markdown(bad_records, "checked")]
    return "\n".join(lines) + "\n"


TURN_FORMATS = {"json": _json, "sarif": _sarif, "junit": _junit, "markdown": _markdown}
"""The report formats of checked turns."""


def render_turns(
    fmt: str,
    items: Sequence[TurnItem],
    fail_on: str = "error",
    bad: Sequence[BadRecord] = (),
    *,
    incomplete: Incomplete | None = None,
) -> str:
    """The checked turns in one report format (``json``, ``sarif``, ``junit`` or ``markdown``); ``bad``
    (``(where, error)`` of each batch record that could not be checked) goes into ``junit`` and ``markdown``;
    ``incomplete`` marks the report of a batch stopped before its end (see the module)."""
    renderer = TURN_FORMATS.get(fmt)
    if renderer is None:
        raise InvalidInputError(f"unknown report format {fmt!r}", hint=f"one of {', '.join(sorted(TURN_FORMATS))}")
    if fmt in ("junit", "markdown"):
        return (_junit if fmt == "junit" else _markdown)(items, fail_on, bad, incomplete)
    return (_json if fmt == "json" else _sarif)(items, fail_on, incomplete)
