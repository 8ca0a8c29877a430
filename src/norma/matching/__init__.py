"""Which of a tenant's rules apply to a user message (ADR-002): hybrid vector + BM25, priority and scope.

* :class:`Rule`, :class:`Scope` (from :mod:`norma.rules`), :class:`SessionState` — the rule and the conversation.
* :class:`RuleMatcher` — a tenant's rules compiled into in-memory indexes; ``match`` / ``match_many`` / ``amatch``
  return a :class:`MatchResult` of :class:`MatchedRule` with a :class:`MatchExplanation` each (``explain=True``:
  the :class:`DroppedRule` list too) and an :class:`Enforcement` (whether the rule governs the turn, and why).
  :func:`load_rules` reads a YAML / JSON rulebook; :func:`file_matcher` is a
  rulebook file's matcher, compiled once and cached.
* :class:`MatchConfig` — every weight and threshold; ``MatchConfig.adr()`` is ADR-002 exactly.
* The gate, one typed value per kind (:class:`Gate`: :class:`ConfidenceGate`, the default, :class:`CalibratedGate`,
  :class:`FixedGate`, :class:`NoGate`), on every result; :func:`calibrate_gate` sets it from labelled messages;
  :class:`HeldOut` / :func:`read_held_out` — what an adapted encoder stored of the examples it held out.
* :func:`tenant_matcher` / :class:`TenantMatchers` / :func:`tenant_matchers` — a stored tenant's matcher, cached
  and refreshed; :func:`candidate_matcher` — push-down over the nearest stored rules, with the tenant's gate
  (:func:`tenant_gate`); :func:`snapshot_matcher` — the tenant as stored, for read-only tools.
* :func:`load_labelled` / :class:`LabelledMessage` — labelled messages; :func:`evaluate_rulebook` /
  :class:`RulebookEvaluation`; :func:`diagnose_rulebook` / :class:`Diagnosis`; :func:`generate_examples`,
  :func:`fill_examples`, :func:`synthesize_labelled` — examples and labels written by an LLM.

Names are imported on first use, so ``import norma.matching`` is cheap. See docs/matching.md.
"""

from __future__ import annotations

import typing as _typing

from norma._lazy import exports as _exports

if _typing.TYPE_CHECKING:
    from norma.matching import _explain, _pipeline
    from norma.matching._calibrate import calibrate_gate as calibrate_gate
    from norma.matching._confidence import GOVERNS as GOVERNS
    from norma.matching._confidence import Refit as Refit
    from norma.matching._confidence import RulebookStats as RulebookStats
    from norma.matching._confidence import fit_refit as fit_refit
    from norma.matching._config import MatchConfig as MatchConfig
    from norma.matching._doctor import Diagnosis as Diagnosis
    from norma.matching._doctor import diagnose_rulebook as diagnose_rulebook
    from norma.matching._enforce import Enforcement as Enforcement
    from norma.matching._enforce import EnforcementReason as EnforcementReason
    from norma.matching._enforce import enforcement as enforcement
    from norma.matching._evaluate import RulebookEvaluation as RulebookEvaluation
    from norma.matching._evaluate import evaluate_rulebook as evaluate_rulebook
    from norma.matching._examples import fill_examples as fill_examples
    from norma.matching._examples import generate_examples as generate_examples
    from norma.matching._files import load_rules as load_rules
    from norma.matching._gate import CalibratedGate as CalibratedGate
    from norma.matching._gate import ConfidenceGate as ConfidenceGate
    from norma.matching._gate import FixedGate as FixedGate
    from norma.matching._gate import Gate as Gate
    from norma.matching._gate import HeldOut as HeldOut
    from norma.matching._gate import NoGate as NoGate
    from norma.matching._gate import read_held_out as read_held_out
    from norma.matching._labelled import LabelledMessage as LabelledMessage
    from norma.matching._labelled import LabelledMessagesError as LabelledMessagesError
    from norma.matching._labelled import load_labelled as load_labelled
    from norma.matching._lexical import tokenize as tokenize
    from norma.matching._matcher import RuleMatcher as RuleMatcher
    from norma.matching._models import SessionState as SessionState
    from norma.matching._packed import SCAN_KERNEL as SCAN_KERNEL
    from norma.matching._packed import cpu_flags as cpu_flags
    from norma.matching._query import embed_messages as embed_messages
    from norma.matching._results import DroppedRule as DroppedRule
    from norma.matching._results import EnforcementData as EnforcementData
    from norma.matching._results import ExplanationData as ExplanationData
    from norma.matching._results import MatchedRule as MatchedRule
    from norma.matching._results import MatchedRuleData as MatchedRuleData
    from norma.matching._results import MatchExplanation as MatchExplanation
    from norma.matching._results import MatchResult as MatchResult
    from norma.matching._snapshot import file_matcher as file_matcher
    from norma.matching._synthetic import synthesize_labelled as synthesize_labelled
    from norma.matching._tenants import TenantMatchers as TenantMatchers
    from norma.matching._tenants import candidate_matcher as candidate_matcher
    from norma.matching._tenants import snapshot_matcher as snapshot_matcher
    from norma.matching._tenants import tenant_gate as tenant_gate
    from norma.matching._tenants import tenant_matcher as tenant_matcher
    from norma.matching._tenants import tenant_matchers as tenant_matchers
    from norma.rules import Rule as Rule
    from norma.rules import Scope as Scope

    explain_module = _explain  # the stage that decides enforcement (benchmarks/check_enforcement.py times it)
    pipeline_module = _pipeline  # the stage with the scan switch (benchmarks/matching_scan.py)

_PUBLIC: dict[str, str] = {
    "calibrate_gate": "_calibrate",
    "CalibratedGate": "_gate",
    "ConfidenceGate": "_gate",
    "candidate_matcher": "_tenants",
    "diagnose_rulebook": "_doctor",
    "Diagnosis": "_doctor",
    "DroppedRule": "_results",
    "Enforcement": "_enforce",
    "evaluate_rulebook": "_evaluate",
    "file_matcher": "_snapshot",
    "fill_examples": "_examples",
    "FixedGate": "_gate",
    "Gate": "_gate",
    "generate_examples": "_examples",
    "HeldOut": "_gate",
    "LabelledMessagesError": "_labelled",
    "load_labelled": "_labelled",
    "load_rules": "_files",
    "MatchConfig": "_config",
    "MatchedRule": "_results",
    "MatchExplanation": "_results",
    "MatchResult": "_results",
    "NoGate": "_gate",
    "read_held_out": "_gate",
    "Rule": "norma.rules",
    "RuleMatcher": "_matcher",
    "Scope": "norma.rules",
    "SessionState": "_models",
    "snapshot_matcher": "_tenants",
    "synthesize_labelled": "_synthetic",
    "tenant_matcher": "_tenants",
    "tenant_matchers": "_tenants",
    "TenantMatchers": "_tenants",
}
"""What a user calls: ``__all__``; each name to the module that defines it (loaded on first use)."""

_INTERNAL: dict[str, str] = {
    "cpu_flags": "_packed",
    "embed_messages": "_query",
    "EnforcementReason": "_enforce",
    "enforcement": "_enforce",
    "GOVERNS": "_confidence",
    "RulebookStats": "_confidence",
    "Refit": "_confidence",
    "fit_refit": "_confidence",
    "explain_module": "_explain:*",
    "LabelledMessage": "_labelled",
    "pipeline_module": "_pipeline:*",
    "RulebookEvaluation": "_evaluate",
    "SCAN_KERNEL": "_packed",
    "tenant_gate": "_tenants",
    "tokenize": "_lexical",
    "MatchedRuleData": "_results",
    "EnforcementData": "_results",
    "ExplanationData": "_results",
}
"""What norma's command line, service, MCP server and scripts use: importable from here, not in ``__all__``."""

__all__, __getattr__, __dir__ = _exports(globals(), _PUBLIC, _INTERNAL)
