"""§7: coverage_ratio, determinism_score, drift_score, and the INFO findings when they miss their optimum."""

from __future__ import annotations

from norma.audit._context import AuditContext
from norma.audit._models import Metrics, Severity, Violation

__all__ = ["compute_metrics", "metric_findings"]


def _rounded(value: float | None) -> float | None:
    return None if value is None else round(value, 4)


def compute_metrics(ctx: AuditContext) -> Metrics:
    """The metrics of an audit whose rules have run (they leave drift and determinism in ``ctx.shared``)."""
    decisions = len(ctx.decisions)
    coverage = ctx.rules_referenced / decisions if decisions else None
    total = len(ctx.all_concepts)
    novel = ctx.shared.get("novel_concepts")
    drift = None
    novel_terms: tuple[str, ...] = ()
    if isinstance(novel, tuple) and total:
        novel_terms = tuple(str(t) for t in novel)
        drift = len(novel_terms) / total
    determinism = ctx.shared.get("determinism_score")
    return Metrics(
        rules_referenced=ctx.rules_referenced,
        technical_decisions=decisions,
        coverage_ratio=_rounded(coverage),
        determinism_score=_rounded(determinism) if isinstance(determinism, float) else None,
        drift_score=_rounded(drift),
        major_decisions=len(ctx.major_decisions),
        references=len(ctx.references),
        technical_concepts=total,
        novel_concepts=novel_terms,
    )


def metric_findings(metrics: Metrics, ctx: AuditContext) -> list[Violation]:
    """INFO findings (§8.01: no effect on the result) for metrics off their §7 optimum."""
    config = ctx.config
    found = []
    if metrics.coverage_ratio is not None and metrics.coverage_ratio < config.coverage_optimum:
        found.append(
            Violation(
                rule="§7.01",
                severity=Severity.INFO,
                description=ctx.say("info.coverage", value=metrics.coverage_ratio, optimum=config.coverage_optimum),
                location="output",
            )
        )
    if metrics.determinism_score is not None and metrics.determinism_score < config.determinism_optimum:
        found.append(
            Violation(
                rule="§7.02",
                severity=Severity.INFO,
                description=ctx.say(
                    "info.determinism", value=metrics.determinism_score, optimum=config.determinism_optimum
                ),
                location="output",
            )
        )
    if metrics.drift_score is not None and metrics.drift_score > config.drift_optimum:
        found.append(
            Violation(
                rule="§7.03",
                severity=Severity.INFO,
                description=ctx.say("info.drift", value=metrics.drift_score, optimum=config.drift_optimum),
                location="output",
            )
        )
    return found
