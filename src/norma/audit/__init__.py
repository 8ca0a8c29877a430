"""Audit AI outputs against executable rules IR.x.y (IA_RULES_ANALYZER v2.0): PASS / FAIL / SKIP, violations
with severity and output line, coverage / determinism / drift metrics.

* :func:`analyze` — one audit; stateless and re-entrant. :func:`analyze_batch` — many, in worker processes.
  :func:`read_request` / :func:`read_requests` — a request file, a JSON Lines batch (bounded reads).
* :class:`AuditRequest` / :class:`AuditReport` — §1 and §2, same field names (``AuditReport.verdict``).
* :func:`load_documents` / :class:`DocumentSet` — the normative documents, their sections and priority (§6).
* :class:`AuditConfig` / :func:`load_config` — §8.02's thresholds (and IR.3.01's 0.70), extra reference patterns
  (RE2), :class:`AuditLimits` (sizes checked before any work starts), the report's language (``lang``, or
  :func:`guess_language` of the input) and :class:`NormsConfig` — whose norms: acronyms, priority, rule ids,
  keywords (:data:`DEFAULT_NORMS`, the spec's NetShaper set, by default).
* :class:`AuditRule` / :data:`BUILTIN_RULES` / :func:`rule_registry` — the rules are data: the built-ins are a
  tuple, and the registry merges the rules it is given (the built-ins by default) with those of the entry-point
  group ``norma.audit_rules`` (plugins). :func:`ruleset_snapshot` / :func:`required_bump` — §9.02 versioning.
* :func:`classify_context` / :func:`count_keywords` — §4.01.

See docs/audit.md and docs/design/060-audit.md.
"""

from __future__ import annotations

from norma.audit._batch import BatchItem, analyze_batch, read_request, read_requests
from norma.audit._builtin import BUILTIN_RULES
from norma.audit._classify import classify_context, count_keywords
from norma.audit._concepts import Concept, extract_concepts
from norma.audit._config import AuditConfig, FormalityTolerance, load_config
from norma.audit._context import AuditContext
from norma.audit._documents import DOCUMENT_PRIORITY, Document, DocumentSet, Section, load_documents
from norma.audit._language import DEFAULT_LANG, Lang, guess_language
from norma.audit._limits import AuditLimits
from norma.audit._models import (
    AuditReport,
    AuditRequest,
    ContextType,
    Metrics,
    RuleOutcome,
    RuleStatus,
    Severity,
    Verdict,
    Violation,
    severity_label,
    verdict_label,
)
from norma.audit._norms import DEFAULT_NORMS, NormsConfig
from norma.audit._pipeline import analyze
from norma.audit._registry import ENTRY_POINT_GROUP, builtin_rules, rule_registry
from norma.audit._rule import AuditRule, Finding, NotEvaluated, RuleText
from norma.audit._rules.ir4_drift import best_window_ratio
from norma.audit._versioning import RULESET_VERSION, Bump, BumpReport, required_bump, ruleset_snapshot

__all__ = [
    "AuditConfig",
    "AuditContext",
    "AuditLimits",
    "AuditReport",
    "AuditRequest",
    "AuditRule",
    "BUILTIN_RULES",
    "BatchItem",
    "Bump",
    "BumpReport",
    "Concept",
    "ContextType",
    "DEFAULT_LANG",
    "DEFAULT_NORMS",
    "DOCUMENT_PRIORITY",
    "Document",
    "DocumentSet",
    "ENTRY_POINT_GROUP",
    "Finding",
    "FormalityTolerance",
    "Lang",
    "Metrics",
    "NormsConfig",
    "NotEvaluated",
    "RULESET_VERSION",
    "RuleOutcome",
    "RuleStatus",
    "RuleText",
    "Section",
    "Severity",
    "Verdict",
    "Violation",
    "analyze",
    "analyze_batch",
    "best_window_ratio",
    "builtin_rules",
    "classify_context",
    "count_keywords",
    "extract_concepts",
    "guess_language",
    "load_config",
    "load_documents",
    "read_request",
    "read_requests",
    "required_bump",
    "rule_registry",
    "ruleset_snapshot",
    "severity_label",
    "verdict_label",
]
