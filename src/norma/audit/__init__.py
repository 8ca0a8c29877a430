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

import typing as _typing

from norma._lazy import exports as _exports

if _typing.TYPE_CHECKING:
    from norma.audit._batch import BatchItem as BatchItem
    from norma.audit._batch import analyze_batch as analyze_batch
    from norma.audit._batch import read_request as read_request
    from norma.audit._batch import read_requests as read_requests
    from norma.audit._builtin import BUILTIN_RULES as BUILTIN_RULES
    from norma.audit._classify import classify_context as classify_context
    from norma.audit._classify import count_keywords as count_keywords
    from norma.audit._concepts import Concept as Concept
    from norma.audit._concepts import extract_concepts as extract_concepts
    from norma.audit._config import AuditConfig as AuditConfig
    from norma.audit._config import FormalityTolerance as FormalityTolerance
    from norma.audit._config import load_config as load_config
    from norma.audit._context import AuditContext as AuditContext
    from norma.audit._documents import DOCUMENT_PRIORITY as DOCUMENT_PRIORITY
    from norma.audit._documents import Document as Document
    from norma.audit._documents import DocumentSet as DocumentSet
    from norma.audit._documents import Section as Section
    from norma.audit._documents import load_documents as load_documents
    from norma.audit._language import DEFAULT_LANG as DEFAULT_LANG
    from norma.audit._language import Lang as Lang
    from norma.audit._language import guess_language as guess_language
    from norma.audit._limits import AuditLimits as AuditLimits
    from norma.audit._models import AuditReport as AuditReport
    from norma.audit._models import AuditRequest as AuditRequest
    from norma.audit._models import ContextType as ContextType
    from norma.audit._models import Metrics as Metrics
    from norma.audit._models import RuleOutcome as RuleOutcome
    from norma.audit._models import RuleStatus as RuleStatus
    from norma.audit._models import Severity as Severity
    from norma.audit._models import Verdict as Verdict
    from norma.audit._models import Violation as Violation
    from norma.audit._models import severity_label as severity_label
    from norma.audit._models import verdict_label as verdict_label
    from norma.audit._norms import DEFAULT_NORMS as DEFAULT_NORMS
    from norma.audit._norms import NormsConfig as NormsConfig
    from norma.audit._pipeline import analyze as analyze
    from norma.audit._registry import ENTRY_POINT_GROUP as ENTRY_POINT_GROUP
    from norma.audit._registry import builtin_rules as builtin_rules
    from norma.audit._registry import rule_registry as rule_registry
    from norma.audit._rule import AuditRule as AuditRule
    from norma.audit._rule import Finding as Finding
    from norma.audit._rule import NotEvaluated as NotEvaluated
    from norma.audit._rule import RuleText as RuleText
    from norma.audit._rules.ir4_drift import best_window_ratio as best_window_ratio
    from norma.audit._versioning import RULESET_VERSION as RULESET_VERSION
    from norma.audit._versioning import Bump as Bump
    from norma.audit._versioning import BumpReport as BumpReport
    from norma.audit._versioning import required_bump as required_bump
    from norma.audit._versioning import ruleset_snapshot as ruleset_snapshot

_PUBLIC: dict[str, str] = {
    "analyze": "_pipeline",
    "analyze_batch": "_batch",
    "AuditConfig": "_config",
    "AuditContext": "_context",
    "AuditLimits": "_limits",
    "AuditReport": "_models",
    "AuditRequest": "_models",
    "AuditRule": "_rule",
    "BUILTIN_RULES": "_builtin",
    "ContextType": "_models",
    "DEFAULT_NORMS": "_norms",
    "DocumentSet": "_documents",
    "Finding": "_rule",
    "guess_language": "_language",
    "load_config": "_config",
    "load_documents": "_documents",
    "NormsConfig": "_norms",
    "NotEvaluated": "_rule",
    "read_request": "_batch",
    "read_requests": "_batch",
    "required_bump": "_versioning",
    "rule_registry": "_registry",
    "RuleOutcome": "_models",
    "ruleset_snapshot": "_versioning",
    "RuleStatus": "_models",
    "RuleText": "_rule",
    "Violation": "_models",
}
"""What a user calls: ``__all__``; each name to the module that defines it (loaded on first use)."""

_INTERNAL: dict[str, str] = {
    "BatchItem": "_batch",
    "best_window_ratio": "_rules.ir4_drift",
    "builtin_rules": "_registry",
    "Bump": "_versioning",
    "BumpReport": "_versioning",
    "classify_context": "_classify",
    "Concept": "_concepts",
    "count_keywords": "_classify",
    "DEFAULT_LANG": "_language",
    "Document": "_documents",
    "DOCUMENT_PRIORITY": "_documents",
    "ENTRY_POINT_GROUP": "_registry",
    "extract_concepts": "_concepts",
    "FormalityTolerance": "_config",
    "Lang": "_language",
    "Metrics": "_models",
    "RULESET_VERSION": "_versioning",
    "Section": "_documents",
    "Severity": "_models",
    "severity_label": "_models",
    "Verdict": "_models",
    "verdict_label": "_models",
}
"""What norma's command line, service, MCP server and scripts use: importable from here, not in ``__all__``."""

__all__, __getattr__, __dir__ = _exports(globals(), _PUBLIC, _INTERNAL)
