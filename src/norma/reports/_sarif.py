"""SARIF 2.1.0 (the static-analysis format GitHub code scanning and most CI read).

One run; ``tool.driver.rules`` lists every rule (id IR.x.y, level from its severity, its title, condition, detection
and exceptions in the language of the first report). Each violation is a result
(``kind: fail``, level ``error`` / ``warning``, ``region.startLine`` = output line); each rule that did not apply
to a report (SKIP, §4.02) is a ``kind: notApplicable`` result with level ``none``; INFO findings are ``note``s.
The artifact of a result is the audited item's name; its ``properties`` carry the verdict and the metrics.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from norma._version import __version__
from norma.audit import DEFAULT_LANG, AuditReport, RuleStatus, Severity, Violation, rule_registry

__all__ = ["SARIF_SCHEMA", "sarif_text", "to_sarif"]

SARIF_SCHEMA = "https://json.schemastore.org/sarif-2.1.0.json"
_LEVEL = {Severity.ERROR: "error", Severity.WARNING: "warning", Severity.INFO: "note"}


def _location(name: str, violation: Violation) -> list[dict[str, Any]]:
    physical: dict[str, Any] = {"artifactLocation": {"uri": name}}
    if violation.line is not None:
        physical["region"] = {"startLine": violation.line}
    return [{"physicalLocation": physical}]


def to_sarif(items: Sequence[tuple[str, AuditReport]], fail_on: str = "error") -> dict[str, Any]:
    """The SARIF log as a dict."""
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
        common = {"verdict": report.result.value, "record": name}
        for violation in (*report.violations, *report.info):
            result: dict[str, Any] = {
                "ruleId": violation.rule,
                "kind": "fail" if violation.severity is not Severity.INFO else "informational",
                "level": _LEVEL[violation.severity],
                "message": {"text": violation.description},
                "locations": _location(name, violation),
                "properties": {**common, "evidence": violation.evidence, "location": violation.location},
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
                        "locations": [{"physicalLocation": {"artifactLocation": {"uri": name}}}],
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
        "invocations": [{"executionSuccessful": True}],
        "results": results,
        "properties": {
            "reports": [
                {"name": name, "result": r.result.value, "metrics": r.metrics.model_dump(mode="json")}
                for name, r in items
            ]
        },
    }
    return {"$schema": SARIF_SCHEMA, "version": "2.1.0", "runs": [run]}


def sarif_text(items: Sequence[tuple[str, AuditReport]], fail_on: str = "error") -> str:
    return json.dumps(to_sarif(items, fail_on), indent=2, ensure_ascii=False) + "\n"
