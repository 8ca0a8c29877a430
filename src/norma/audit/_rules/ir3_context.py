"""IR.3.01 (no implicit context: every concept comes from the input or from a cited norm) and IR.3.02 (earlier
turns are cited)."""

from __future__ import annotations

import re
from collections.abc import Sequence

from norma.audit._context import AuditContext
from norma.audit._models import Severity
from norma.audit._rule import ANY_CONTEXT, AuditRule, Finding, NotEvaluated, RuleText

__all__ = ["IR_3_01", "IR_3_02"]

_TURN = re.compile(
    r"(?i)(?:\[\s*(?:turno|turn)\s*#?\d+\s*\]|\(\s*(?:turno|turn)\s*#?\d+\s*\)|\b(?:turno|turn)\s+#?\d+)"
)


def _check_3_01(ctx: AuditContext) -> Sequence[Finding] | NotEvaluated:
    pending = ctx.concepts_without_input_context
    if not pending:
        return []
    if ctx.embedder is None:
        return NotEvaluated(
            ctx.say(
                "why.concepts_need_embeddings",
                count=len(pending),
                problem=ctx.embedder_problem,
                terms=", ".join(c.term for c in pending[:5]),
            )
        )
    ctx.prefetch_concepts()
    pieces = ctx.input_pieces
    if not pieces:
        best = [0.0] * len(pending)
    else:
        concept_vectors = ctx.embed([c.phrase for c in pending])
        piece_vectors = ctx.embed(pieces)
        best = (concept_vectors @ piece_vectors.T).max(axis=1).tolist()
    threshold = ctx.config.ir_3_01_similarity_threshold
    return [
        Finding(
            ctx.say("ir301.concept", term=c.term, score=score, threshold=threshold),
            c.line,
            c.term,
        )
        for c, score in zip(pending, best, strict=True)
        if score < threshold
    ]


IR_3_01 = AuditRule(
    id="IR.3.01",
    title="Contexto implícito prohibido",
    severity=Severity.ERROR,
    check=_check_3_01,
    condition="output técnico",
    detection=(
        "cada concepto técnico del output (identificadores, siglas) está en el input, se deduce de él "
        "(similitud coseno de embeddings >= ir_3_01_similarity_threshold con sus frases o conceptos) o está "
        "definido en un documento que el output cita"
    ),
    exceptions=(
        "conocimiento C#/.NET estándar (ICR §9.01)",
        "patrones GoF",
        "principios SOLID",
        "nombres que el output introduce: los declara su propio código y ni el input ni la normativa los usan",
    ),
    version="1.1",
    thresholds=("ir_3_01_similarity_threshold",),
    needs=("embeddings",),
    translations={
        "en": RuleText(
            title="Implicit context forbidden",
            condition="technical output",
            detection=(
                "each technical concept of the output (identifiers, acronyms) is in the input, can be "
                "deduced from it (embedding cosine similarity >= ir_3_01_similarity_threshold with "
                "its sentences or concepts) or is defined in a document the output cites"
            ),
            exceptions=(
                "standard C#/.NET knowledge (ICR §9.01)",
                "GoF patterns",
                "SOLID principles",
                "names the output introduces: its own code declares them and neither the input nor the norms use them",
            ),
        )
    },
)


def _check_3_02(ctx: AuditContext) -> Sequence[Finding]:
    findings = []
    for line in ctx.output.lines:
        if line.code or line.blank:
            continue
        phrase = ctx.lexicon.history.search(line.text, line.folded)
        if phrase is not None and not _TURN.search(line.text):
            findings.append(
                Finding(
                    ctx.say("ir302.history", phrase=phrase),
                    line.number,
                    phrase,
                )
            )
    return findings


IR_3_02 = AuditRule(
    id="IR.3.02",
    title="Memoria histórica no referenciada",
    severity=Severity.WARNING,
    check=_check_3_02,
    condition="cualquier output",
    detection="frases que remiten a turnos anteriores (history_phrases.txt) sin '[turno N]' en la misma línea",
    exceptions=("la línea cita el turno: [turno N], (turno N), turno N, turn N",),
    contexts=ANY_CONTEXT,
    translations={
        "en": RuleText(
            title="Unreferenced conversation history",
            condition="any output",
            detection=("phrases that refer to earlier turns (history_phrases.txt) without '[turn N]' on the same line"),
            exceptions=("the line cites the turn: [turn N], (turn N), turn N, turno N",),
        )
    },
)
