"""The terminal view: verdict, violations by line, metrics, rules not evaluated."""

from __future__ import annotations

from collections.abc import Sequence

from rich.console import Console
from rich.table import Table

from norma.audit import AuditReport, RuleStatus, severity_label, verdict_label
from norma.rules import Verdict

__all__ = ["render_table"]

_STYLE = {Verdict.PASS: "green", Verdict.FAIL: "bold red", Verdict.SKIP: "yellow"}


def _metric(value: float | None) -> str:
    return "n/a" if value is None else f"{value:.2f}"


def render_table(console: Console, items: Sequence[tuple[str, AuditReport]], *, summary: bool = True) -> None:
    """Print each report; several end with a summary line (unless ``summary`` is False: a batch prints its own)."""
    for name, report in items:
        style = _STYLE[report.result]
        console.print(
            f"[{style}]{verdict_label(report.result)}[/{style}]  {name}  "
            f"(context {report.context_type_applied.value}, detected {report.context_type_detected.value})"
        )
        if report.violations:
            grid = Table("line", "rule", "severity", "description")
            for violation in report.violations:
                grid.add_row(
                    str(violation.line) if violation.line is not None else violation.location,
                    violation.rule,
                    severity_label(violation.severity),
                    violation.description,
                )
            console.print(grid)
        m = report.metrics
        console.print(
            f"rules_referenced {m.rules_referenced}, technical_decisions {m.technical_decisions}, "
            f"coverage_ratio {_metric(m.coverage_ratio)}, determinism_score {_metric(m.determinism_score)}, "
            f"drift_score {_metric(m.drift_score)}"
        )
        skipped = [o for o in report.rules if o.status is RuleStatus.NOT_EVALUATED]
        for outcome in skipped:
            console.print(f"[dim]{outcome.rule} not evaluated: {outcome.reason}[/dim]")
        for finding in report.info:
            console.print(f"[dim]INFO {finding.rule}: {finding.description}[/dim]")
    if summary and len(items) > 1:
        counts = {v: sum(1 for _, r in items if r.result is v) for v in Verdict}
        n_pass, n_fail, n_skip = counts[Verdict.PASS], counts[Verdict.FAIL], counts[Verdict.SKIP]
        console.print(f"{len(items)} audits: {n_pass} PASS, {n_fail} FAIL, {n_skip} SKIP")
