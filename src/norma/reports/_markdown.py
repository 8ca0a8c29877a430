"""Markdown for a CI job summary (``$GITHUB_STEP_SUMMARY``): the failures only, and one line of totals.

A failure is a violation at or above ``fail_on`` (an ERROR; with ``fail_on="warning"`` a WARNING too). Each is a
row of one table: the file, the line (a batch record's line in its file, else the output line), the rule id, the
severity and the message. Items that pass add nothing but their count. Records that could not be audited (bad
input) follow, with their line and error.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from norma.audit import AuditReport, severity_label
from norma.reports._bad import BadRecord, bad_markdown
from norma.reports._incomplete import Incomplete, markdown_incomplete
from norma.rules import FailOn, Verdict

__all__ = ["to_markdown"]

_RECORD = re.compile(r"(?P<path>.+):(?P<line>[0-9]+)")


def _cell(text: str) -> str:
    """Text safe inside a table cell: one line, pipes escaped."""
    return " ".join(text.split()).replace("|", "\\|")


def to_markdown(
    items: Sequence[tuple[str, AuditReport]],
    fail_on: str = "error",
    bad: Sequence[BadRecord] = (),
    *,
    incomplete: Incomplete | None = None,
) -> str:
    """The summary: a title, the totals (and a line saying so when the batch was stopped before its end), a table
    of the failures when there are any, and the bad records (``bad``: ``(where, error)`` of each record that was not
    audited) when there are any."""
    failing = FailOn.parse(fail_on).severities
    rows: list[str] = []
    failed_items = 0
    for name, report in items:
        record = _RECORD.fullmatch(name)
        found = [v for v in report.violations if v.severity in failing]
        failed_items += bool(found) or report.result is Verdict.FAIL
        for violation in found:
            path = record["path"] if record else name
            line = record["line"] if record else (str(violation.line) if violation.line is not None else "")
            message = violation.description
            if record and violation.line is not None:
                message += f" (output line {violation.line})"
            rows.append(
                f"| {_cell(path)} | {line} | {violation.rule} | {severity_label(violation.severity)}"
                f" | {_cell(message)} |"
            )
    counts = {verdict: sum(1 for _, r in items if r.result is verdict) for verdict in Verdict}
    total = (
        f"{failed_items} of {len(items)} audited {'item' if len(items) == 1 else 'items'} failed, "
        f"{len(rows)} {'failure' if len(rows) == 1 else 'failures'} "
        f"({counts[Verdict.PASS]} PASS, {counts[Verdict.FAIL]} FAIL, {counts[Verdict.SKIP]} SKIP; fail on {fail_on})"
    )
    lines = ["## norma audit", "", total, *markdown_incomplete(incomplete), ""]
    if rows:
        lines += ["| file | line | rule | severity | message |", "|---|---|---|---|---|", *rows, ""]
    if bad:
        lines += [*bad_markdown(bad, "audited"), ""]
    return "\n".join(lines)
