"""SARIF 2.1.0 (the static-analysis format GitHub code scanning and most CI read).

One run; ``tool.driver.rules`` lists every rule (id IR.x.y, level from its severity, its title, condition, detection
and exceptions in the language of the first report). Each violation is a result
(``kind: fail``, level ``error`` / ``warning``); each rule that did not apply to a report (SKIP, §4.02) is a
``kind: notApplicable`` result with level ``none``; INFO findings are ``note``s. Its ``properties`` carry the
verdict and the metrics.

Locations point into the repository, so that code scanning can place them: the artifact is the audited file, as a
URI relative to the current directory (the repository root in CI) with ``uriBaseId: %SRCROOT%`` (a file outside it:
an absolute ``file://`` URI). A batch record, named ``file:line``, is located at that line of its file
(``region.startLine``); a request file is located as a whole (its lines are JSON, not the output's). The line of
the output a violation points at is always ``properties.outputLine``.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any
from urllib.parse import quote

from norma._version import __version__
from norma.audit import DEFAULT_LANG, AuditReport, RuleStatus, Severity, Violation, rule_registry, verdict_label
from norma.reports._bad import BadRecord
from norma.reports._incomplete import Incomplete, sarif_invocation

__all__ = ["SARIF_SCHEMA", "sarif_text", "to_sarif"]

SARIF_SCHEMA = "https://json.schemastore.org/sarif-2.1.0.json"
_LEVEL = {Severity.ERROR: "error", Severity.WARNING: "warning", Severity.INFO: "note"}


_RECORD = re.compile(r"(?P<path>.+):(?P<line>[0-9]+)")
"""The name of a batch record: ``file:line``."""


def _artifact(path: str) -> dict[str, Any]:
    """``artifactLocation`` of a file: relative to the current directory under ``%SRCROOT%``, else absolute."""
    target = Path(os.path.abspath(path))
    try:
        relative = target.relative_to(os.path.abspath(os.curdir))
    except ValueError:
        return {"uri": target.as_uri()}
    return {"uri": quote(relative.as_posix()), "uriBaseId": "%SRCROOT%"}


def _location(name: str, line: int | None) -> list[dict[str, Any]]:
    """Where a result of the item ``name`` is: its record's line in a batch file, else the request file as a whole
    (``line``, the output's, is no line of that file)."""
    record = _RECORD.fullmatch(name)
    physical: dict[str, Any] = {"artifactLocation": _artifact(record["path"] if record else name)}
    if record:
        physical["region"] = {"startLine": int(record["line"])}
    return [{"physicalLocation": physical}]


def _message(name: str, violation: Violation) -> str:
    if violation.line is not None:
        return f"{violation.description} (output line {violation.line})"
    return violation.description


def _properties(name: str, violation: Violation) -> dict[str, Any]:
    properties: dict[str, Any] = {"evidence": violation.evidence, "location": violation.location}
    if violation.line is not None:
        properties["outputLine"] = violation.line
    return properties


def to_sarif(
    items: Sequence[tuple[str, AuditReport]], fail_on: str = "error", *, incomplete: Incomplete | None = None
) -> dict[str, Any]:
    """The SARIF log as a dict; ``incomplete``: of a batch stopped before its end (``executionSuccessful: false``)."""
    registry = rule_registry()
    rule_ids = list(registry)
    for _, report in items:
        rule_ids += [o.rule for o in report.rules if o.rule not in rule_ids]
    index = {rule_id: position for position, rule_id in enumerate(rule_ids)}
    lang = items[0][1].lang if items else DEFAULT_LANG  # the rules' texts in the (first) report's language
    rules = []
    for rule_id in rule_ids:
        rule = registry.get(rule_id)
        entry: dict[str, Any] = {"id": rule_id}
        if rule is not None:
            text = rule.text_in(lang)
            entry.update(
                name=text.title,
                shortDescription={"text": text.title},
                fullDescription={"text": f"{text.condition}. {text.detection}"},
                defaultConfiguration={"level": _LEVEL[rule.severity]},
                properties={"version": rule.version, "exceptions": list(text.exceptions)},
            )
        rules.append(entry)
    results: list[dict[str, Any]] = []
    for name, report in items:
        common = {"verdict": verdict_label(report.result), "record": name}
        for violation in (*report.violations, *report.info):
            result: dict[str, Any] = {
                "ruleId": violation.rule,
                "kind": "fail" if violation.severity is not Severity.INFO else "informational",
                "level": _LEVEL[violation.severity],
                "message": {"text": _message(name, violation)},
                "locations": _location(name, violation.line),
                "properties": {**common, **_properties(name, violation)},
            }
            if violation.rule in index:
                result["ruleIndex"] = index[violation.rule]
            results.append(result)
        for outcome in report.rules:
            if outcome.status in (RuleStatus.NOT_APPLICABLE, RuleStatus.NOT_EVALUATED):
                results.append(
                    {
                        "ruleId": outcome.rule,
                        "ruleIndex": index[outcome.rule],
                        "kind": "notApplicable" if outcome.status is RuleStatus.NOT_APPLICABLE else "review",
                        "level": "none",
                        "message": {"text": f"{outcome.status.value}: {outcome.reason}"},
                        "locations": _location(name, None),
                        "properties": common,
                    }
                )
    run: dict[str, Any] = {
        "tool": {
            "driver": {
                "name": "norma-audit",
                "version": __version__,
                "semanticVersion": __version__,
                "informationUri": "https://github.com/norma-engineers/norma",
                "rules": rules,
            }
        },
        "invocations": [sarif_invocation(incomplete)],
        "results": results,
        "properties": {
            "reports": [
                {"name": name, "result": verdict_label(r.result), "metrics": r.metrics.model_dump(mode="json")}
                for name, r in items
            ]
        },
    }
    if incomplete is not None:
        run["properties"].update(incomplete=True, inputRecords=incomplete.total)
    return {"$schema": SARIF_SCHEMA, "version": "2.1.0", "runs": [run]}


def sarif_text(
    items: Sequence[tuple[str, AuditReport]],
    fail_on: str = "error",
    bad: Sequence[BadRecord] = (),
    *,
    incomplete: Incomplete | None = None,
) -> str:
    """The SARIF log as text (``bad`` records have no result: their errors are on stderr)."""
    return json.dumps(to_sarif(items, fail_on, incomplete=incomplete), indent=2, ensure_ascii=False) + "\n"
