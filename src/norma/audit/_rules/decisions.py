"""Technical decisions and the references that cover them: what IR.0.01 (a reference per major decision) and
IR.5.02 (coverage ratio) both ask of an output."""

from __future__ import annotations

from norma.audit._context import AuditContext

__all__ = ["uncovered_decision_line"]


def uncovered_decision_line(ctx: AuditContext, major_only: bool) -> int | None:
    """The first decision whose paragraph (or, for code, the paragraph just before the code) cites nothing."""
    cited = {r.line for r in ctx.references}
    decisions = ctx.major_decisions if major_only else ctx.decisions
    for decision in decisions:
        paragraph = ctx.output.paragraph_of(decision.line)
        if paragraph is None:
            continue
        spans = [paragraph]
        if paragraph.code and paragraph.index > 0:
            spans.append(ctx.output.paragraphs[paragraph.index - 1])
        if not any(p.start <= line <= p.end for p in spans for line in cited):
            return decision.line
    return decisions[0].line if decisions else None
