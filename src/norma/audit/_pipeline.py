"""§3's pipeline: classify, normalise, run the rules (structural, semantic, determinism), resolve by priority,
emit. :func:`analyze` is stateless and re-entrant: everything of one audit lives in its own context; what is
shared (documents' vocabulary vectors, the embedder, the word lists, the registry) is built once behind locks.
"""

from __future__ import annotations

import functools
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from norma._trace import span
from norma.audit._classify import classify_context
from norma.audit._config import AuditConfig
from norma.audit._context import AuditContext
from norma.audit._documents import DocumentSet, check_document_name, load_documents
from norma.audit._language import Lang, guess_language
from norma.audit._lexicon import get_lexicon
from norma.audit._limits import check_request_limits, limit_error
from norma.audit._messages import message
from norma.audit._metrics import compute_metrics, metric_findings
from norma.audit._models import (
    AuditReport,
    AuditRequest,
    ContextType,
    RuleOutcome,
    RuleStatus,
    Severity,
    Verdict,
    Violation,
    verdict_label,
)
from norma.audit._references import syntax_for
from norma.audit._registry import select_rules
from norma.audit._rule import AuditRule, Finding, NotEvaluated
from norma.audit._segments import segment_output
from norma.audit._text import parse_text
from norma.audit._versioning import RULESET_VERSION
from norma.embeddings import Embedder
from norma.errors import InvalidInputError, MissingDependencyError

if TYPE_CHECKING:
    from norma.llm import LLMClient

__all__ = ["analyze", "default_embedder"]

CONVERSATIONAL_STRICT = frozenset({"IR.7.01", "IR.8.03"})
"""§4.02 read literally: the only rules of a conversational turn."""


@functools.cache
def default_embedder() -> Embedder:
    """The shared all-MiniLM-L6-v2 embedder, loaded once on the first audit that needs it (concurrent first calls
    get the one instance :func:`norma.embeddings.get_embedder` builds behind its lock)."""
    from norma.embeddings import get_embedder

    return get_embedder()


def _documents(
    documents: DocumentSet | str | Path | None, request: AuditRequest, config: AuditConfig
) -> tuple[DocumentSet | None, tuple[str, ...]]:
    """The active documents, and the acronyms every loaded document declares (active or not)."""
    limits = config.limits
    for index, name in enumerate(request.active_documents):  # before anything is loaded
        check_document_name(name, location=f"active_documents[{index}]")
    if documents is None:
        if request.active_documents:
            raise InvalidInputError(
                f"active_documents names {', '.join(request.active_documents)} but no documents were given",
                location="active_documents",
                hint="pass the documents folder (--docs DIR, or documents= in Python)",
            )
        return None, ()
    if isinstance(documents, DocumentSet):
        loaded = documents.configured(config.norms)  # parsed and ranked for this audit's norms
    else:
        loaded = load_documents(documents, limits=limits, norms=config.norms)
    active = loaded.select(request.active_documents)
    for document in active:  # a set loaded elsewhere (or with other limits) is held to this audit's limits
        if document.size_bytes > limits.max_document_bytes:
            raise limit_error(
                "document",
                document.size_bytes,
                "bytes",
                "max_document_bytes",
                limits.max_document_bytes,
                source=str(document.path or document.name),
            )
    for key in request.document_versions:
        if active.by_acronym(key) is None and active.by_name(key, location=f"document_versions.{key}") is None:
            raise InvalidInputError(
                f"document_versions names {key!r}, which is not an active document ({', '.join(active.acronyms)})",
                location=f"document_versions.{key}",
                hint=f"use the document's acronym ({', '.join(active.acronyms)}) or its file name",
            )
    return active, loaded.acronyms


def _applicable(rule: AuditRule, ctx: AuditContext) -> tuple[str, str] | None:
    """Why a rule does not apply here, as (kind, reason) with kind ``disabled`` or ``not_applicable``
    (``None`` when it applies)."""
    if rule.id in ctx.config.disabled_rules:
        return "disabled", ctx.say("why.disabled")
    conversational_ok = ContextType.CONVERSATIONAL in rule.contexts
    if ctx.config.strict_applicability and ctx.applied is ContextType.CONVERSATIONAL:
        conversational_ok = rule.id in CONVERSATIONAL_STRICT
        if not conversational_ok:
            return "not_applicable", ctx.say("why.strict")
    if ContextType.TECHNICAL in rule.contexts and ctx.has_technical:
        return None
    if conversational_ok:
        return None
    if ctx.applied is ContextType.MIXED:
        return "not_applicable", ctx.say("why.mixed")
    if ctx.applied is ContextType.TECHNICAL:
        return "not_applicable", ctx.say("why.empty")
    return "not_applicable", ctx.say("why.context", context=ctx.applied.value)


def _embedder_for(config: AuditConfig, embedder: Embedder | None, lang: Lang) -> tuple[Embedder | None, str]:
    if not config.embeddings:
        return None, message(lang, "why.embeddings_off")
    if embedder is not None:
        return embedder, ""
    try:
        if config.embedding_model is not None:
            from norma.embeddings import get_embedder

            return get_embedder(config.embedding_model), ""  # one shared instance per folder
        return default_embedder(), ""
    except MissingDependencyError as exc:
        return None, message(lang, "why.model_unavailable", error=exc.message)


class _LazyEmbedder:
    """Loads the default embedder on first use, so audits whose rules embed nothing never load the model."""

    def __init__(self, config: AuditConfig, given: Embedder | None, lang: Lang) -> None:
        self._config = config
        self._given = given
        self._lang: Lang = lang
        self._resolved: tuple[Embedder | None, str] | None = None

    def resolve(self) -> tuple[Embedder | None, str]:
        if self._resolved is None:
            self._resolved = _embedder_for(self._config, self._given, self._lang)
        return self._resolved


def _run(rule: AuditRule, ctx: AuditContext, lazy: _LazyEmbedder) -> Sequence[Finding] | NotEvaluated:
    if "embeddings" in rule.needs and ctx.embedder is None and not ctx.embedder_problem:
        ctx.embedder, ctx.embedder_problem = lazy.resolve()
    return rule.check(ctx)


def analyze(
    request: AuditRequest | Mapping[str, Any],
    documents: DocumentSet | str | Path | None = None,
    config: AuditConfig | Mapping[str, Any] | None = None,
    *,
    llm: LLMClient | None = None,
    embedder: Embedder | None = None,
    rules: Sequence[AuditRule] | None = None,
) -> AuditReport:
    """Audit one AI output against the executable rules and return PASS / FAIL / SKIP with violations and metrics.

    Args:
        request: §1's input (a mapping or an :class:`AuditRequest`).
        documents: the normative documents (a :class:`DocumentSet`, or a folder to load); ``None``: the rules
            that need them are reported as not evaluated.
        config: thresholds and switches (§8.02); default: the spec's values.
        llm: a client to re-run the prompt for IR.6.02 when the request has fewer ``reruns`` than wanted.
        embedder: the embedding model (default: the shared all-MiniLM-L6-v2, loaded on first need).
        rules: the rules to run (default: the registry, plugins included).

    Raises:
        InvalidInputError: a bad request, an active document named by a path or missing, document_versions
            naming no document.
        LimitExceededError: a text, list or document over ``config.limits`` (checked before any work starts).
        ConfigError: a bad configuration (an invalid reference pattern, an unknown key).
    """
    with span("norma.audit") as traced:
        parsed = AuditRequest.parse(request)
        report = _analyze(parsed, documents, config, llm, embedder, rules)
        if traced.recording:
            traced.set(
                {
                    "norma.verdict": verdict_label(report.result),
                    "norma.violations.count": len(report.violations),
                    "norma.rules.count": len(report.rules),
                    "norma.audit.context": report.context_type_applied.value,
                }
            )
            traced.content("norma.output", parsed.output)
    return report


def _analyze(
    parsed_request: AuditRequest,
    documents: DocumentSet | str | Path | None,
    config: AuditConfig | Mapping[str, Any] | None,
    llm: LLMClient | None,
    embedder: Embedder | None,
    rules: Sequence[AuditRule] | None,
) -> AuditReport:
    cfg = AuditConfig.parse(config)
    check_request_limits(parsed_request, cfg.limits)
    docs, declared = _documents(documents, parsed_request, cfg)
    lexicon = get_lexicon(cfg.data_dir, cfg.norms.technical_keywords)
    input_text = parse_text(parsed_request.input)
    output_text = parse_text(parsed_request.output)
    detected = classify_context(parsed_request.input, lexicon)
    applied = parsed_request.context_type or detected
    lang = cfg.lang or guess_language(parsed_request.input, parsed_request.output)
    syntax = syntax_for(cfg.norms, declared)
    ctx = AuditContext(
        request=parsed_request,
        config=cfg,
        lexicon=lexicon,
        documents=docs,
        input=input_text,
        output=output_text,
        detected=detected,
        applied=applied,
        segments=segment_output(output_text, applied, lexicon, cfg.reference_regexes, syntax),
        embedder=None,
        lang=lang,
        llm=llm,
        declared_acronyms=declared,
    )
    ctx.syntax = syntax
    lazy = _LazyEmbedder(cfg, embedder, lang)
    chosen = select_rules(rules)
    outcomes: dict[str, RuleOutcome] = {}
    raised: dict[str, list[Violation]] = {}
    notes: list[str] = []
    ordered = [r for r in chosen if not r.meta] + [r for r in chosen if r.meta]
    for rule in ordered:
        severity = cfg.severity_overrides.get(rule.id, rule.severity)
        why_not = _applicable(rule, ctx)
        if why_not is not None:
            status = RuleStatus.NOT_EVALUATED if why_not[0] == "disabled" else RuleStatus.NOT_APPLICABLE
            outcomes[rule.id] = _outcome(rule, severity, status, why_not[1], lang)
            continue
        result = _run(rule, ctx, lazy)
        if isinstance(result, NotEvaluated):
            outcomes[rule.id] = _outcome(rule, severity, RuleStatus.NOT_EVALUATED, result.reason, lang)
            notes.append(message(lang, "note.not_evaluated", rule=rule.id, reason=result.reason))
            continue
        violations = [
            Violation(
                rule=rule.id,
                severity=severity,
                description=finding.description,
                location=finding.location or ctx.line_location(finding.line),
                line=finding.line,
                evidence=finding.evidence,
            )
            for finding in result
        ]
        raised[rule.id] = violations
        ctx.findings_so_far.extend((v.rule, v.severity.value, v.line, v.location) for v in violations)
        status = RuleStatus.FAILED if violations else RuleStatus.PASSED
        outcomes[rule.id] = _outcome(rule, severity, status, "", lang)
    _resolve_overrides(chosen, raised, outcomes, notes, lang)
    all_violations = [v for items in raised.values() for v in items]
    violations = sorted(
        (v for v in all_violations if v.severity is not Severity.INFO),
        key=lambda v: (v.line if v.line is not None else 0, v.rule),
    )
    metrics = compute_metrics(ctx)
    info = [v for v in all_violations if v.severity is Severity.INFO] + metric_findings(metrics, ctx)
    if "rerun_note" in ctx.shared:
        notes.append(f"IR.6.02: {ctx.shared['rerun_note']}")
    if parsed_request.context_type is not None and parsed_request.context_type is not detected:
        notes.append(message(lang, "note.declared", declared=applied.value, detected=detected.value))
    return AuditReport(
        result=_verdict(violations, ctx),
        context_type_detected=detected,
        violations=tuple(violations),
        metrics=metrics,
        notes="; ".join(notes),
        context_type_applied=applied,
        info=tuple(info),
        rules=tuple(outcomes[r.id] for r in chosen),
        analyzer_version=RULESET_VERSION,
        lang=lang,
    )


def _outcome(rule: AuditRule, severity: Severity, status: RuleStatus, reason: str, lang: Lang) -> RuleOutcome:
    return RuleOutcome(
        rule=rule.id, title=rule.title_in(lang), severity=severity, version=rule.version, status=status, reason=reason
    )


def _resolve_overrides(
    rules: Sequence[AuditRule],
    raised: dict[str, list[Violation]],
    outcomes: dict[str, RuleOutcome],
    notes: list[str],
    lang: Lang,
) -> None:
    """§6, specificity: a more specific rule that fired silences the generic rules it overrides."""
    for rule in rules:
        if not raised.get(rule.id):
            continue
        for other in rule.overrides:
            dropped = raised.get(other)
            if dropped:
                raised[other] = []
                outcome = outcomes[other]
                outcomes[other] = outcome.model_copy(
                    update={"status": RuleStatus.PASSED, "reason": message(lang, "note.overridden_reason", by=rule.id)}
                )
                notes.append(message(lang, "note.overridden", count=len(dropped), rule=other, by=rule.id))


def _verdict(violations: Sequence[Violation], ctx: AuditContext) -> Verdict:
    """§2: FAIL with an ERROR; SKIP for a conversational turn (no technical audit runs there); PASS otherwise —
    a mixed turn whose output has no technical segment included (its technical rules are listed as not
    applicable), docs/design/060-audit.md."""
    if any(v.severity is Severity.ERROR for v in violations):
        return Verdict.FAIL
    if ctx.applied is ContextType.CONVERSATIONAL:
        return Verdict.SKIP
    return Verdict.PASS
