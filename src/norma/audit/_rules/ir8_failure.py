"""IR.8.01 (a meta rule: an output that breaks a norm with an ERROR, or says it cannot comply, delivers no solution
anyway — an answer that cannot follow the norms says which norm stops it, rather than hand over non-compliant code)
and IR.8.03 (no FAIL for a communication misunderstanding)."""

from __future__ import annotations

from collections.abc import Sequence

from norma.audit._context import AuditContext
from norma.audit._models import Severity
from norma.audit._rule import ANY_CONTEXT, AuditRule, Finding, RuleText

__all__ = ["IR_8_01", "IR_8_03", "declared_fail"]


def declared_fail(ctx: AuditContext) -> tuple[int, str] | None:
    """The first output line where the output itself declares a FAIL (fail_markers.txt), outside code."""
    for line in ctx.output.lines:
        if line.code or line.blank:
            continue
        found = ctx.lexicon.fail_markers.search(line.text, line.folded)
        if found is not None:
            return line.number, found
    return None


def _check_8_01(ctx: AuditContext) -> Sequence[Finding]:
    if not ctx.has_solution:
        return []
    declared = declared_fail(ctx)
    if declared is not None:
        return [
            Finding(
                ctx.say("ir801.declared", phrase=declared[1]),
                declared[0],
                declared[1],
            )
        ]
    errors = [f for f in ctx.findings_so_far if f[1] == Severity.ERROR.value and f[3].startswith("output")]
    if not errors:
        return []
    rules = sorted({f[0] for f in errors})
    first_line = min((f[2] for f in errors if f[2] is not None), default=None)
    return [
        Finding(
            ctx.say("ir801.errors", rules=", ".join(rules)),
            first_line,
            ", ".join(rules),
        )
    ]


IR_8_01 = AuditRule(
    id="IR.8.01",
    title="FAIL técnico explícito",
    severity=Severity.ERROR,
    check=_check_8_01,
    condition="violación ERROR en contexto técnico, o un FAIL declarado por el propio output",
    detection=(
        "el output entrega solución (código o decisiones técnicas) pese a una violación ERROR de otra regla o "
        "a su propio FAIL declarado (fail_markers.txt); una respuesta que no puede cumplir la normativa dice qué "
        "norma se lo impide y no entrega una solución que la incumple"
    ),
    exceptions=("violaciones que no están en el output (IR.0.02: versiones de documentos)",),
    meta=True,
    translations={
        "en": RuleText(
            title="Explicit technical FAIL: no non-compliant solution",
            condition="an ERROR violation in a technical context, or a FAIL the output declares itself",
            detection=(
                "the output delivers a solution (code or technical decisions) despite an ERROR "
                "violation of another rule or its own declared FAIL (fail_markers.txt); an answer that "
                "cannot follow the norms says which norm stops it and delivers no solution that breaks them"
            ),
            exceptions=("violations that are not in the output (IR.0.02: document versions)",),
        )
    },
)


def _check_8_03(ctx: AuditContext) -> Sequence[Finding]:
    frustration = ctx.lexicon.frustration.search(ctx.request.input, ctx.input.folded)
    if frustration is None:
        return []
    declared = declared_fail(ctx)
    if declared is None:
        return []
    return [
        Finding(
            ctx.say("ir803.fail", phrase=declared[1], frustration=frustration),
            declared[0],
            declared[1],
        )
    ]


IR_8_03 = AuditRule(
    id="IR.8.03",
    title="Errores conversacionales",
    severity=Severity.ERROR,
    check=_check_8_03,
    condition="el usuario expresa frustración o un malentendido (frustration_phrases.txt)",
    detection="el output responde con un FAIL declarado (fail_markers.txt) en lugar de una aclaración",
    exceptions=("sin frustración en el input no hay malentendido que juzgar",),
    contexts=ANY_CONTEXT,
    overrides=("IR.8.01",),
    translations={
        "en": RuleText(
            title="Conversational errors",
            condition="the user expresses frustration or a misunderstanding (frustration_phrases.txt)",
            detection=("the output answers with a declared FAIL (fail_markers.txt) instead of a clarification"),
            exceptions=("without frustration in the input there is no misunderstanding to judge",),
        )
    },
)
