"""IR.0.01 (a reference per major technical decision), IR.0.02 (document versions) and IR.0.03 (references that
resolve to a section of an active document)."""

from __future__ import annotations

from collections.abc import Sequence

from norma.audit._context import AuditContext
from norma.audit._documents import section_key
from norma.audit._models import Severity
from norma.audit._rule import AuditRule, Finding, NotEvaluated
from norma.audit._rules.decisions import uncovered_decision_line
from norma.audit._text import shorten

__all__ = ["IR_0_01", "IR_0_02", "IR_0_03"]


def _check_0_01(ctx: AuditContext) -> Sequence[Finding]:
    majors = ctx.major_decisions
    references = ctx.references
    if not majors or len(references) >= len(majors):
        return []
    line = uncovered_decision_line(ctx, major_only=True)
    decision = next((d for d in majors if d.line == line), majors[0])
    if not references:
        text = f"Output técnico sin referencias normativas: {len(majors)} decisión(es) técnica(s) mayor(es) sin citar"
    else:
        text = (
            f"{len(majors)} decisiones técnicas mayores y solo {len(references)} referencia(s) normativa(s): "
            "mínimo 1 por decisión mayor"
        )
    return [Finding(text, line, shorten(decision.text))]


IR_0_01 = AuditRule(
    id="IR.0.01",
    title="Referencia obligatoria (técnico)",
    severity=Severity.ERROR,
    check=_check_0_01,
    condition="output técnico (generación de código / auditoría) con decisiones técnicas mayores",
    detection=(
        "referencias (DNS|DR|ICR|RED|IRA) §N.N o RN.N fuera de código; al menos 1 por decisión técnica mayor "
        "(tipos declarados en código, frases con verbos de diseño mayores)"
    ),
    exceptions=("sintaxis C# obvia (using, namespace)", "respuesta a una consulta conversacional pura"),
    overrides=("IR.5.02",),
)


def _check_0_02(ctx: AuditContext) -> Sequence[Finding] | NotEvaluated:
    expected = ctx.request.document_versions
    if not expected:
        return []
    if ctx.documents is None:
        return NotEvaluated("no documents were given to compare document_versions with")
    findings = []
    for key, version in expected.items():
        document = ctx.documents.by_acronym(key) or ctx.documents.by_name(key)
        if document is None:  # the pipeline rejects unknown keys; kept for rules run on their own
            continue
        if document.version is None:
            findings.append(
                Finding(
                    f"document_versions pide {key} {version} pero {document.name} no declara versión",
                    None,
                    f"{key}={version}",
                    "documents",
                )
            )
        elif str(document.version).strip() != str(version).strip():
            findings.append(
                Finding(
                    f"document_versions pide {key} {version} pero {document.name} es la versión {document.version}",
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
)


def _check_0_03(ctx: AuditContext) -> Sequence[Finding] | NotEvaluated:
    if not ctx.references:
        return []
    if ctx.documents is None:
        return NotEvaluated("no documents were given to resolve the references against")
    findings: list[Finding] = []
    seen: set[str] = set()
    for reference in ctx.references:
        if reference.key in seen:
            continue
        seen.add(reference.key)
        if reference.document is not None and ctx.documents.by_acronym(reference.document) is None:
            findings.append(
                Finding(
                    f"{reference.text} cita un documento que no está entre los documentos activos",
                    reference.line,
                    reference.text,
                )
            )
            continue
        sections = ctx.documents.resolve(reference.document, reference.section)
        if not sections:
            findings.append(
                Finding(
                    f"{reference.text} no existe en la normativa activa (alucinación normativa)",
                    reference.line,
                    reference.text,
                )
            )
        elif reference.document is None and len(sections) > 1:
            top = min(ctx.documents.by_acronym(s.document).priority for s in sections)  # type: ignore[union-attr]
            tied = [s for s in sections if ctx.documents.by_acronym(s.document).priority == top]  # type: ignore[union-attr]
            if len(tied) > 1:
                findings.append(
                    Finding(
                        f"{reference.text} ({section_key(reference.section)}) está en "
                        f"{', '.join(s.document for s in tied)} con la misma prioridad: conflicto no resuelto (§6)",
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
        "resuelve por prioridad (§6) y un empate de prioridad es un conflicto no resuelto"
    ),
    exceptions=(),
    needs=("documents",),
)
