"""IR.4.01 (semantic drift: every technical term is in the norms, literally or by embedding similarity) and
IR.4.02 (quotations of the norms are literal: best-window Indel ratio against the cited section)."""

from __future__ import annotations

import re
from collections.abc import Sequence

from rapidfuzz import fuzz

from norma.audit._context import AuditContext
from norma.audit._models import Severity
from norma.audit._rule import AuditRule, Finding, NotEvaluated, RuleText
from norma.audit._text import fold, shorten

__all__ = ["IR_4_01", "IR_4_02", "best_window_ratio", "normalise_quote"]

_PUNCT = re.compile(r"[^\w\s]")


def _check_4_01(ctx: AuditContext) -> Sequence[Finding] | NotEvaluated:
    if not ctx.concepts:
        ctx.shared["novel_concepts"] = ()
        return []
    if ctx.documents is None:
        return NotEvaluated(ctx.say("why.no_documents.terms"))
    unknown = [c for c in ctx.concepts if not ctx.documents.contains(c.term)]
    if not unknown:
        ctx.shared["novel_concepts"] = ()
        return []
    if ctx.embedder is None:
        ctx.shared["novel_concepts"] = tuple(c.term for c in unknown)
        ctx.shared["drift_method"] = "literal"
        return NotEvaluated(
            ctx.say(
                "why.terms_need_embeddings",
                count=len(unknown),
                problem=ctx.embedder_problem,
                terms=", ".join(c.term for c in unknown[:5]),
            )
        )
    ctx.prefetch_concepts()
    vocabulary = ctx.documents.vocabulary_vectors(ctx.embedder)
    threshold = ctx.config.ir_4_01_embedding_threshold
    if len(vocabulary) == 0:
        best = [0.0] * len(unknown)
    else:
        best = (ctx.embed([c.phrase for c in unknown]) @ vocabulary.T).max(axis=1).tolist()
    novel = [(c, score) for c, score in zip(unknown, best, strict=True) if score < threshold]
    ctx.shared["novel_concepts"] = tuple(c.term for c, _ in novel)
    return [
        Finding(
            ctx.say("ir401.term", term=c.term, score=score, threshold=threshold),
            c.line,
            c.term,
        )
        for c, score in novel
    ]


IR_4_01 = AuditRule(
    id="IR.4.01",
    title="Deriva semántica",
    severity=Severity.ERROR,
    check=_check_4_01,
    condition="output técnico con términos de dominio",
    detection=(
        "cada término técnico del output está en DNS/DR/ICR/RED literalmente o tiene similitud coseno "
        ">= ir_4_01_embedding_threshold con el vocabulario normativo (all-MiniLM-L6-v2 por defecto)"
    ),
    exceptions=(
        "whitelist manual: términos C#, .NET, patrones estándar (whitelist.txt)",
        "nombres que el output introduce: los declara su propio código y ni el input ni la normativa los usan",
    ),
    version="1.1",
    thresholds=("ir_4_01_embedding_threshold",),
    needs=("documents", "embeddings"),
    translations={
        "en": RuleText(
            title="Semantic drift",
            condition="technical output with domain terms",
            detection=(
                "each technical term of the output is in the active documents literally or has a "
                "cosine similarity >= ir_4_01_embedding_threshold with their vocabulary "
                "(all-MiniLM-L6-v2 by default)"
            ),
            exceptions=(
                "manual whitelist: C# and .NET terms, standard patterns (whitelist.txt)",
                "names the output introduces: its own code declares them and neither the input nor the norms use them",
            ),
        )
    },
)


def normalise_quote(text: str) -> str:
    """Folded, punctuation (quotes, backticks) removed, whitespace collapsed."""
    return " ".join(_PUNCT.sub(" ", fold(text)).split())


def best_window_ratio(quote: str, source: str) -> float:
    """Indel-normalised similarity of ``quote`` with the best-matching window of ``source``, in [0, 1].

    rapidfuzz's ``partial_ratio``: the ratio of the shorter text against every window of the longer one of the
    same length, the best kept. Where difflib's ``SequenceMatcher.ratio`` is right (short texts, no autojunk)
    the per-window value equals it.
    """
    a, b = normalise_quote(quote), normalise_quote(source)
    if not a or not b:
        return 0.0
    return float(fuzz.partial_ratio(a, b)) / 100.0


def _check_4_02(ctx: AuditContext) -> Sequence[Finding] | NotEvaluated:
    claims = [c for c in ctx.claims if not c.reformulation]
    if not claims:
        return []
    if ctx.documents is None:
        return NotEvaluated(ctx.say("why.no_documents.quotes"))
    threshold = ctx.config.ir_4_02_fuzzy_match_threshold
    findings = []
    for claim in claims:
        if claim.section is not None:
            sections = ctx.documents.resolve(claim.document, claim.section)
            if not sections:
                continue  # IR.0.03 reports the unresolvable reference
            source = sections[0].text
            where = sections[0].ref
        else:
            document = ctx.documents.by_acronym(claim.document or "")
            if document is None:
                continue
            source, where = document.text, document.acronym
        ratio = best_window_ratio(claim.quoted, source)
        if ratio < threshold:
            findings.append(
                Finding(
                    ctx.say("ir402.quote", where=where, ratio=ratio, threshold=threshold),
                    claim.line,
                    shorten(claim.quoted, 80),
                )
            )
    return findings


IR_4_02 = AuditRule(
    id="IR.4.02",
    title="Parafraseo normativo prohibido",
    severity=Severity.ERROR,
    check=_check_4_02,
    condition="output que atribuye un texto a una norma ('DNS dice que...', 'según RED §1.01, ...')",
    detection=(
        "ratio Indel normalizado (rapidfuzz) del texto citado contra la mejor ventana de la sección citada; "
        "umbral ir_4_02_fuzzy_match_threshold"
    ),
    exceptions=("reformulación marcada con 'en otras palabras' / 'in other words' (reformulation_markers.txt)",),
    thresholds=("ir_4_02_fuzzy_match_threshold",),
    version="1.1",
    needs=("documents",),
    translations={
        "en": RuleText(
            title="Normative paraphrasing forbidden",
            condition=(
                "output that attributes a text to a norm ('the DNS says that...', 'according to RED §1.01, ...')"
            ),
            detection=(
                "normalised Indel ratio (rapidfuzz) of the quoted text against the best window of the "
                "cited section; threshold ir_4_02_fuzzy_match_threshold"
            ),
            exceptions=(
                "reformulation marked with 'in other words' / 'en otras palabras' (reformulation_markers.txt)",
            ),
        )
    },
)
