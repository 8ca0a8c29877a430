"""IR.0.01 (a technical output cites the norms, then a reference per major technical decision), IR.0.02 (document
versions) and IR.0.03 (references that resolve to a section of an active document)."""

from __future__ import annotations

from collections.abc import Sequence

from norma.audit._context import AuditContext
from norma.audit._documents import section_key
from norma.audit._models import Severity
from norma.audit._rule import AuditRule, Finding, NotEvaluated, RuleText
from norma.audit._rules.decisions import uncovered_decision_line
from norma.audit._text import shorten

__all__ = ["IR_0_01", "IR_0_02", "IR_0_03"]


def _check_0_01(ctx: AuditContext) -> Sequence[Finding]:
    content = ctx.technical_content
    if content is None:  # explanations without decisions, obvious syntax only: not a technical output
        return []
    majors = ctx.major_decisions
    references = ctx.references
    if not references:  # "Output técnico sin referencias", whatever the decision count
        first, kind, evidence = content
        what = ctx.say(f"ir001.what.{kind}", count=len(ctx.decisions))
        return [Finding(ctx.say("ir001.none", what=what), first, evidence)]
    if len(references) >= len(majors):
        return []
    line = uncovered_decision_line(ctx, major_only=True)
    decision = next((d for d in majors if d.line == line), majors[0])
    text = ctx.say("ir001.few", majors=len(majors), references=len(references))
    return [Finding(text, line, shorten(decision.text))]


IR_0_01 = AuditRule(
    id="IR.0.01",
    title="Referencia obligatoria (técnico)",
    severity=Severity.ERROR,
    check=_check_0_01,
    condition=(
        "output técnico (generación de código / auditoría): código, decisiones técnicas o un veredicto de auditoría"
    ),
    detection=(
        "referencias (acrónimo de la normativa configurada o declarado por un documento) §N.N o RN.N fuera de "
        "código; ninguna referencia en un "
        "output técnico es una violación (en su primera línea técnica); después, al menos 1 por decisión técnica "
        "mayor (bloques de código, tipos y miembros declarados, frases con verbos de diseño mayores)"
    ),
    exceptions=("sintaxis C# obvia (using, namespace)", "respuesta a una consulta conversacional pura"),
    version="1.2",
    overrides=("IR.5.02",),
    translations={
        "en": RuleText(
            title="Mandatory reference (technical)",
            condition=("technical output (code generation / audit): code, technical decisions or an audit verdict"),
            detection=(
                "references (an acronym of the configured norms or one a document declares) §N.N or RN.N "
                "outside code; a technical output without any reference is a violation (at its first technical line); "
                "then at least 1 per major technical decision (code blocks, declared types and "
                "members, sentences with a major design verb)"
            ),
            exceptions=(
                "obvious C# syntax (using, namespace)",
                "answer to a purely conversational query",
            ),
        )
    },
)


def _check_0_02(ctx: AuditContext) -> Sequence[Finding] | NotEvaluated:
    expected = ctx.request.document_versions
    if not expected:
        return []
    if ctx.documents is None:
        return NotEvaluated(ctx.say("why.no_documents.versions"))
    findings = []
    for key, version in expected.items():
        document = ctx.documents.by_acronym(key) or ctx.documents.by_name(key)
        if document is None:  # the pipeline rejects unknown keys; kept for rules run on their own
            continue
        if document.version is None:
            findings.append(
                Finding(
                    ctx.say("ir002.unversioned", key=key, version=version, name=document.name),
                    None,
                    f"{key}={version}",
                    "documents",
                )
            )
        elif str(document.version).strip() != str(version).strip():
            findings.append(
                Finding(
                    ctx.say("ir002.mismatch", key=key, version=version, name=document.name, actual=document.version),
                    None,
                    f"{key}={version}",
                    "documents",
                )
            )
    return findings


IR_0_02 = AuditRule(
    id="IR.0.02",
    title="Versión de documento normativo",
    severity=Severity.ERROR,
    check=_check_0_02,
    condition="la petición declara document_versions (§1)",
    detection="cada versión declarada es igual a la versión que declara el documento cargado",
    exceptions=("sin document_versions no hay nada que comparar",),
    needs=("documents",),
    translations={
        "en": RuleText(
            title="Normative document version",
            condition="the request declares document_versions (§1)",
            detection="each declared version equals the version the loaded document declares",
            exceptions=("without document_versions there is nothing to compare",),
        )
    },
)


def _check_0_03(ctx: AuditContext) -> Sequence[Finding] | NotEvaluated:
    if not ctx.references:
        return []
    if ctx.documents is None:
        return NotEvaluated(ctx.say("why.no_documents.references"))
    findings: list[Finding] = []
    seen: set[str] = set()
    for reference in ctx.references:
        if reference.key in seen:
            continue
        seen.add(reference.key)
        acronym = reference.document
        if acronym is not None and ctx.documents.by_acronym(acronym) is None:
            known = acronym in ctx.config.norms.priority or acronym in ctx.declared_acronyms
            key = "ir003.inactive" if known else "ir003.unknown"
            findings.append(
                Finding(ctx.say(key, reference=reference.text, acronym=acronym), reference.line, reference.text)
            )
            continue
        sections = ctx.documents.resolve(reference.document, reference.section)
        if not sections:
            findings.append(
                Finding(
                    ctx.say("ir003.missing", reference=reference.text),
                    reference.line,
                    reference.text,
                )
            )
        elif reference.document is None and len(sections) > 1:
            top = min(ctx.documents.rank(s.document) for s in sections)
            tied = [s for s in sections if ctx.documents.rank(s.document) == top]
            if len(tied) > 1:
                findings.append(
                    Finding(
                        ctx.say(
                            "ir003.conflict",
                            reference=reference.text,
                            section=section_key(reference.section),
                            documents=", ".join(s.document for s in tied),
                        ),
                        reference.line,
                        reference.text,
                    )
                )
    return findings


IR_0_03 = AuditRule(
    id="IR.0.03",
    title="Referencia normativa resoluble",
    severity=Severity.ERROR,
    check=_check_0_03,
    condition="output técnico con referencias normativas",
    detection=(
        "cada referencia apunta a una sección existente de un documento activo; una regla RN.N sin sigla se "
        "resuelve por prioridad (§6) y un empate de prioridad es un conflicto no resuelto; la cita de una norma "
        "que ningún documento declara (SIGLA §N) dice qué la haría conocida"
    ),
    version="1.1",
    exceptions=(),
    needs=("documents",),
    translations={
        "en": RuleText(
            title="Resolvable normative reference",
            condition="technical output with normative references",
            detection=(
                "each reference points to an existing section of an active document; a bare rule id "
                "RN.N is resolved by priority (§6) and a priority tie is an unresolved conflict; the "
                "citation of a norm no document declares (ACRONYM §N) says what would make it known"
            ),
            exceptions=(),
        )
    },
)
