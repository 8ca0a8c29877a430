"""IR.7.01 (no unrequested inference) and IR.7.02 (register fits the context)."""

from __future__ import annotations

from collections.abc import Sequence

from norma.audit._context import AuditContext
from norma.audit._models import Severity
from norma.audit._rule import ANY_CONTEXT, AuditRule, Finding, RuleText

__all__ = ["IR_7_01", "IR_7_02"]


def _marked_lines(ctx: AuditContext) -> set[int]:
    """Lines covered by a "Sugerencia no-normativa:" marker: the marker's paragraph, and the next paragraph
    when the marker stands alone on its line."""
    marked: set[int] = set()
    paragraphs = ctx.output.paragraphs
    for paragraph in paragraphs:
        for line in paragraph.lines:
            if ctx.lexicon.suggestion_markers.search(line.text, line.folded) is None:
                continue
            marked.update(item.number for item in paragraph.lines)
            if line.text.strip().rstrip(":").strip("*_ ").count(" ") <= 2 and paragraph.index + 1 < len(paragraphs):
                marked.update(item.number for item in paragraphs[paragraph.index + 1].lines)
    return marked


def _check_7_01(ctx: AuditContext) -> Sequence[Finding]:
    marked = _marked_lines(ctx)
    input_modals = set(ctx.lexicon.modals.find(ctx.request.input, ctx.input.folded))
    findings = []
    for line in ctx.output.lines:
        if line.code or line.blank or line.number in marked:
            continue
        found = ctx.lexicon.requirements.search(line.text, line.folded)
        if found is None and line.number in ctx.technical_lines:
            found = next((m for m in ctx.lexicon.modals.find(line.text, line.folded) if m not in input_modals), None)
        if found is not None:
            findings.append(
                Finding(
                    ctx.say("ir701.inference", phrase=found),
                    line.number,
                    found,
                )
            )
    return findings


IR_7_01 = AuditRule(
    id="IR.7.01",
    title="Inferencia no solicitada prohibida",
    severity=Severity.ERROR,
    check=_check_7_01,
    condition="output técnico; en contexto conversacional solo los requisitos introducidos",
    detection=(
        "verbos modales que el input no usa ('debe', 'debería', 'podría', 'sería mejor', 'must'...) y "
        "requisitos introducidos ('también necesitas', 'además debes'...) fuera de código"
    ),
    exceptions=(
        "contexto conversacional: sugerencias (modales) permitidas",
        "marcadas explícitamente: 'Sugerencia no-normativa:' / 'Non-normative suggestion:'",
    ),
    contexts=ANY_CONTEXT,
    version="1.1",
    translations={
        "en": RuleText(
            title="Unrequested inference forbidden",
            condition="technical output; in a conversational context only introduced requirements",
            detection=(
                "modal verbs the input does not use ('must', 'should', 'could', 'would be better'...) and "
                "introduced requirements ('you also need', 'you must also'...) outside code"
            ),
            exceptions=(
                "conversational context: suggestions (modals) allowed",
                "explicitly marked: 'Non-normative suggestion:' / 'Sugerencia no-normativa:'",
            ),
        )
    },
)


def _check_7_02(ctx: AuditContext) -> Sequence[Finding]:
    findings = []
    formal: list[tuple[int, str]] = []
    for line in ctx.output.lines:
        if line.code or line.blank:
            continue
        if line.number in ctx.technical_lines:
            found = ctx.lexicon.evaluative.search(line.text, line.folded)
            if found is not None:
                findings.append(Finding(ctx.say("ir702.adornment", phrase=found), line.number, found))
        elif line.number in ctx.conversational_lines:
            formal.extend((line.number, m) for m in ctx.lexicon.formal.find(line.text, line.folded))
    tolerance = ctx.config.ir_7_02_formality_tolerance
    if len(formal) > tolerance.allowed:
        findings.append(
            Finding(
                ctx.say(
                    "ir702.formal",
                    count=len(formal),
                    markers=", ".join(m for _, m in formal[:3]),
                    tolerance=tolerance.value,
                ),
                formal[0][0],
                formal[0][1],
            )
        )
    return findings


IR_7_02 = AuditRule(
    id="IR.7.02",
    title="Comunicación por contexto",
    severity=Severity.WARNING,
    check=_check_7_02,
    condition="cualquier output",
    detection=(
        "técnico: lista negra de términos valorativos (evaluative_terms.txt); conversacional: marcas de "
        "formalidad excesiva (formal_markers.txt) por encima de ir_7_02_formality_tolerance"
    ),
    exceptions=("el código no se revisa",),
    thresholds=("ir_7_02_formality_tolerance",),
    contexts=ANY_CONTEXT,
    translations={
        "en": RuleText(
            title="Communication by context",
            condition="any output",
            detection=(
                "technical: a blacklist of evaluative terms (evaluative_terms.txt); conversational: "
                "markers of excessive formality (formal_markers.txt) above "
                "ir_7_02_formality_tolerance"
            ),
            exceptions=("code is not reviewed",),
        )
    },
)
