"""IR.5.02: contextual exhaustiveness — distinct references per technical decision."""

from __future__ import annotations

from collections.abc import Sequence

from norma.audit._context import AuditContext
from norma.audit._models import Severity
from norma.audit._rule import AuditRule, Finding, RuleText
from norma.audit._rules.decisions import uncovered_decision_line

__all__ = ["IR_5_02", "coverage_ratio"]


def coverage_ratio(ctx: AuditContext) -> float | None:
    """§7.01: distinct references / technical decisions (``None`` without decisions)."""
    decisions = len(ctx.decisions)
    return ctx.rules_referenced / decisions if decisions else None


def _check(ctx: AuditContext) -> Sequence[Finding]:
    ratio = coverage_ratio(ctx)
    threshold = ctx.config.ir_5_02_coverage_ratio
    if ratio is None or ratio >= threshold:
        return []
    line = uncovered_decision_line(ctx, major_only=False)
    return [
        Finding(
            ctx.say(
                "ir502.coverage",
                ratio=ratio,
                threshold=threshold,
                referenced=ctx.rules_referenced,
                decisions=len(ctx.decisions),
            ),
            line,
            f"{ctx.rules_referenced}/{len(ctx.decisions)}",
        )
    ]


IR_5_02 = AuditRule(
    id="IR.5.02",
    title="Exhaustividad contextual",
    severity=Severity.WARNING,
    check=_check,
    condition="output técnico con decisiones técnicas (SKIP en contexto conversacional)",
    detection="ratio = reglas distintas citadas / decisiones técnicas; umbral ir_5_02_coverage_ratio",
    exceptions=("sin decisiones técnicas no hay ratio",),
    thresholds=("ir_5_02_coverage_ratio",),
    translations={
        "en": RuleText(
            title="Contextual exhaustiveness",
            condition="technical output with technical decisions (SKIP in a conversational context)",
            detection="ratio = distinct rules cited / technical decisions; threshold ir_5_02_coverage_ratio",
            exceptions=("without technical decisions there is no ratio",),
        )
    },
)
